import type { Migration } from './index.js';

/**
 * The parties of an issued invoice as they stood when it was issued: the customer's name, number and
 * time zone, the invoice address and the seller, and its reverse-charge notes (JSON, written once at
 * issue). The PDF, the hosted page and the e-mails show these, so an issued invoice never changes when
 * the customer, the address or the organisation does later. Invoices issued before this migration
 * have none and show the current details, as before.
 */
export const invoiceParties: Migration = {
  version: 36,
  name: 'invoice_parties',
  sql: `
CREATE TABLE invoice_parties (
  invoice_id TEXT PRIMARY KEY REFERENCES invoices(id),
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  parties TEXT NOT NULL
) STRICT;
`,
};
