import type { Migration } from './index.js';

/**
 * SEPA direct debit (issue 13): the organisation as creditor, mandates on SEPA payment methods,
 * collection statements (pain.008 files) and their payments. A payment is claimed once per invoice or
 * installment by the unique indexes; invoice payments remember when a direct debit came back.
 */
export const sepaDirectDebit: Migration = {
  version: 24,
  name: 'sepa_direct_debit',
  sql: `
CREATE TABLE sepa_creditors (
  organisation_id TEXT NOT NULL PRIMARY KEY REFERENCES organisations(id),
  creditor_identifier TEXT NOT NULL,
  name TEXT NOT NULL,
  iban TEXT NOT NULL,
  bic TEXT,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE sepa_mandates (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  payment_method_id TEXT NOT NULL UNIQUE REFERENCES payment_methods(id),
  creditor_identifier TEXT NOT NULL,
  mandate_reference TEXT NOT NULL,
  signature_date TEXT NOT NULL,
  sepa_type TEXT NOT NULL CHECK (sepa_type IN ('core','b2b')),
  status TEXT NOT NULL CHECK (status IN ('active')),
  created_at TEXT NOT NULL,
  UNIQUE (organisation_id, creditor_identifier, mandate_reference)
) STRICT;
CREATE INDEX sepa_mandates_customer ON sepa_mandates (organisation_id, customer_id, created_at, id);

CREATE TABLE sepa_xml_statements (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  message_id TEXT NOT NULL,
  collection_date TEXT NOT NULL,
  creditor_identifier TEXT NOT NULL,
  creditor_name TEXT NOT NULL,
  creditor_iban TEXT NOT NULL,
  creditor_bic TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (organisation_id, message_id)
) STRICT;

CREATE TABLE sepa_xml_payments (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  statement_id TEXT NOT NULL REFERENCES sepa_xml_statements(id),
  mandate_id TEXT NOT NULL REFERENCES sepa_mandates(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  payment_plan_id TEXT REFERENCES payment_plans(id),
  installment_id TEXT,
  invoice_payment_id TEXT NOT NULL,
  end_to_end_id TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount > 0),
  sequence_type TEXT NOT NULL CHECK (sequence_type IN ('FRST','RCUR')),
  remittance_information TEXT NOT NULL,
  due_date TEXT NOT NULL,
  execution_date TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('collected','returned')),
  return_reason_code TEXT,
  returned_at TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (organisation_id, end_to_end_id),
  CHECK ((payment_plan_id IS NULL) = (installment_id IS NULL)),
  CHECK ((status = 'returned') = (returned_at IS NOT NULL AND return_reason_code IS NOT NULL))
) STRICT;
CREATE UNIQUE INDEX sepa_xml_payments_invoice ON sepa_xml_payments (invoice_id) WHERE installment_id IS NULL;
CREATE UNIQUE INDEX sepa_xml_payments_installment ON sepa_xml_payments (installment_id) WHERE installment_id IS NOT NULL;
CREATE INDEX sepa_xml_payments_statement ON sepa_xml_payments (statement_id, created_at, id);
CREATE INDEX sepa_xml_payments_mandate ON sepa_xml_payments (mandate_id, status);
CREATE INDEX sepa_xml_payments_list ON sepa_xml_payments (organisation_id, created_at, id);

ALTER TABLE invoice_payments ADD COLUMN returned_at TEXT;
`,
};
