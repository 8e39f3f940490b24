import type { Migration } from './index.js';

/**
 * A customer's SEPA payments in list order: `list_sepa_xml_payments` by customer (what was debited
 * from one debtor) pages through these, not through every collection the organisation made.
 */
export const sepaCustomerPayments: Migration = {
  version: 40,
  name: 'sepa_customer_payments',
  sql: `
CREATE INDEX sepa_xml_payments_customer ON sepa_xml_payments (organisation_id, customer_id, created_at, id);
`,
};
