import type { Migration } from './index.js';

/**
 * Invoice addresses and payment methods of customers. At most one default of each per customer
 * (partial unique indexes). A SEPA method keeps the full IBAN (`sepa_iban`, for collections only)
 * beside its masked form (`sepa_iban_masked`, the only one responses show).
 */
export const billingDetails: Migration = {
  version: 3,
  name: 'billing_details',
  sql: `
CREATE TABLE invoice_addresses (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  type TEXT NOT NULL CHECK (type IN ('TYPE_DEFAULT','TYPE_BILLING')),
  is_default INTEGER NOT NULL CHECK (is_default IN (0,1)),
  status TEXT NOT NULL CHECK (status IN ('STATUS_ACTIVE')),
  vat_id TEXT,
  company_name TEXT,
  salutation TEXT,
  first_name TEXT,
  last_name TEXT,
  street TEXT NOT NULL,
  house_number TEXT,
  addition TEXT,
  zip TEXT NOT NULL,
  city TEXT NOT NULL,
  country_code TEXT NOT NULL CHECK (length(country_code) = 2),
  cost_centre TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX invoice_addresses_list ON invoice_addresses (organisation_id, customer_id, created_at, id);
CREATE UNIQUE INDEX invoice_addresses_one_default ON invoice_addresses (customer_id) WHERE is_default = 1;

CREATE TABLE payment_methods (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  gateway_name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('sepa_debit','card','paypal')),
  is_default INTEGER NOT NULL CHECK (is_default IN (0,1)),
  enabled INTEGER NOT NULL CHECK (enabled IN (0,1)),
  status TEXT NOT NULL CHECK (status IN ('active')),
  name TEXT,
  expiration_date TEXT,
  card_brand TEXT,
  card_last4 TEXT CHECK (card_last4 GLOB '[0-9][0-9][0-9][0-9]'),
  card_exp_month INTEGER CHECK (card_exp_month BETWEEN 1 AND 12),
  card_exp_year INTEGER CHECK (card_exp_year BETWEEN 1000 AND 9999),
  card_holder TEXT,
  sepa_iban TEXT,
  sepa_iban_masked TEXT,
  sepa_bic TEXT,
  sepa_mandate_reference TEXT CHECK (length(sepa_mandate_reference) BETWEEN 1 AND 35),
  sepa_signing_date TEXT,
  sepa_account_holder TEXT,
  paypal_email TEXT,
  paypal_billing_agreement_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK (enabled = 1 OR is_default = 0),
  CHECK ((type = 'card') = (card_brand IS NOT NULL AND card_last4 IS NOT NULL AND card_exp_month IS NOT NULL
    AND card_exp_year IS NOT NULL AND expiration_date IS NOT NULL)),
  CHECK ((type = 'sepa_debit') = (sepa_iban IS NOT NULL AND sepa_iban_masked IS NOT NULL AND sepa_account_holder IS NOT NULL)),
  CHECK ((type = 'paypal') = (paypal_email IS NOT NULL))
) STRICT;
CREATE INDEX payment_methods_list ON payment_methods (organisation_id, customer_id, created_at, id);
CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods (customer_id) WHERE is_default = 1;
`,
};
