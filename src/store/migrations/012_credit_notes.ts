import type { Migration } from './index.js';

/**
 * Invoice line precision, payment terms and credit notes (issue 11, CONTRACT section 8).
 *
 * - `invoice_lines` is rebuilt: the unit price is kept exactly as `unit_amount_decimal`, a decimal
 *   string of minor units (up to 12 fractional digits); the integer `unit_amount` it replaces becomes
 *   its text ("4900"), so every existing line keeps its meaning. Nothing references invoice lines, so
 *   the table can be dropped and recreated inside the migration's transaction.
 * - `invoices.amount_paid` becomes `amount_settled`: what is no longer due, the sum of payments,
 *   credit notes issued while the invoice was open (`amount_credited`) and the customer's credit
 *   balance taken off at issue (`credit_applied`). A rename keeps the table (payment plans, payments
 *   and lines reference it, so it cannot be rebuilt while foreign keys are enforced) and rewrites its
 *   CHECKs: `amount_settled BETWEEN 0 AND gross_amount`, and a paid invoice has `amount_settled =
 *   gross_amount`. Existing rows: settled = paid, the two new parts 0.
 * - customers: `payment_term_days` (optional, 0 to 365) and `credit_balance` (minor units, >= 0).
 * - `credit_notes`, numbered `CN-<year>-000001` per organisation.
 */
export const creditNotes: Migration = {
  version: 12,
  name: 'credit_notes',
  sql: `
CREATE TABLE invoice_lines_new (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  position INTEGER NOT NULL CHECK (position >= 1),
  description TEXT NOT NULL,
  quantity TEXT NOT NULL,
  unit_amount_decimal TEXT NOT NULL,
  net_amount INTEGER NOT NULL,
  tax_rate_e4 INTEGER NOT NULL CHECK (tax_rate_e4 BETWEEN 0 AND 1000000),
  period_start TEXT,
  period_end TEXT,
  UNIQUE (invoice_id, position)
) STRICT;
INSERT INTO invoice_lines_new (id, organisation_id, invoice_id, position, description, quantity, unit_amount_decimal, net_amount,
  tax_rate_e4, period_start, period_end)
SELECT id, organisation_id, invoice_id, position, description, quantity, CAST(unit_amount AS TEXT), net_amount,
  tax_rate_e4, period_start, period_end FROM invoice_lines;
DROP TABLE invoice_lines;
ALTER TABLE invoice_lines_new RENAME TO invoice_lines;

ALTER TABLE invoices RENAME COLUMN amount_paid TO amount_settled;
ALTER TABLE invoices ADD COLUMN amount_credited INTEGER NOT NULL DEFAULT 0 CHECK (amount_credited >= 0);
ALTER TABLE invoices ADD COLUMN credit_applied INTEGER NOT NULL DEFAULT 0
  CHECK (credit_applied >= 0 AND amount_credited + credit_applied <= amount_settled);

ALTER TABLE customers ADD COLUMN payment_term_days INTEGER CHECK (payment_term_days BETWEEN 0 AND 365);
ALTER TABLE customers ADD COLUMN credit_balance INTEGER NOT NULL DEFAULT 0 CHECK (credit_balance >= 0);

CREATE TABLE credit_notes (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  number TEXT NOT NULL,
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  amount INTEGER NOT NULL CHECK (amount > 0),
  currency_code TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (organisation_id, number)
) STRICT;
CREATE INDEX credit_notes_list ON credit_notes (organisation_id, created_at, id);
CREATE INDEX credit_notes_invoice ON credit_notes (organisation_id, invoice_id, created_at, id);
CREATE INDEX credit_notes_customer ON credit_notes (organisation_id, customer_id, created_at, id);
`,
};
