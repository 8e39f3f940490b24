import type { Migration } from './index.js';

/** The organisation as seller (CONTRACT section 8): the details invoices, credit notes and PDFs show, and its payment terms. */
export const organisationSeller: Migration = {
  version: 15,
  name: 'organisation_seller',
  sql: `
ALTER TABLE organisations ADD COLUMN legal_name TEXT;
ALTER TABLE organisations ADD COLUMN address TEXT;
ALTER TABLE organisations ADD COLUMN vat_id TEXT;
ALTER TABLE organisations ADD COLUMN tax_number TEXT;
ALTER TABLE organisations ADD COLUMN email TEXT;
ALTER TABLE organisations ADD COLUMN payment_term_days INTEGER CHECK (payment_term_days BETWEEN 0 AND 365);
ALTER TABLE organisations ADD COLUMN invoice_footer TEXT;
ALTER TABLE organisations ADD COLUMN brand_color TEXT;
ALTER TABLE organisations ADD COLUMN updated_at TEXT;
`,
};
