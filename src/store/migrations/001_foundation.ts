import type { Migration } from './index.js';

export const foundation: Migration = {
  version: 1,
  name: 'foundation',
  sql: `
CREATE TABLE organisations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  permissions TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX api_keys_org ON api_keys (organisation_id, created_at, id);

CREATE TABLE idempotency_keys (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  key TEXT NOT NULL,
  operation TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  response_status INTEGER NOT NULL,
  response_body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (organisation_id, key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE counters (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  name TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (organisation_id, name)
) STRICT;

CREATE TABLE units (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, name)
) STRICT;
CREATE INDEX units_list ON units (organisation_id, created_at, id);

CREATE TABLE measurements (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  unit_id TEXT NOT NULL REFERENCES units(id),
  code TEXT NOT NULL,
  description TEXT,
  aggregation_type TEXT NOT NULL CHECK (aggregation_type IN ('count','count_unique','max','sum','last_value','average')),
  fair_billing INTEGER NOT NULL CHECK (fair_billing IN (0,1)),
  type TEXT NOT NULL CHECK (type IN ('instant_metered','metered','recurring')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, code),
  CHECK (type = 'metered' OR aggregation_type = 'last_value')
) STRICT;
CREATE INDEX measurements_list ON measurements (organisation_id, created_at, id);

CREATE TABLE tax_groups (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  internal_description TEXT NOT NULL,
  reverse_charge_type TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('standard','reduced')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX tax_groups_list ON tax_groups (organisation_id, created_at, id);

CREATE TABLE taxes (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  tax_group_id TEXT NOT NULL REFERENCES tax_groups(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  code TEXT NOT NULL,
  rate_e4 INTEGER NOT NULL CHECK (rate_e4 BETWEEN 0 AND 1000000),
  country_code TEXT NOT NULL,
  description TEXT,
  valid_from TEXT NOT NULL,
  UNIQUE (tax_group_id, country_code, valid_from)
) STRICT;

CREATE TABLE customers (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_number TEXT NOT NULL,
  time_zone TEXT NOT NULL,
  first_name TEXT,
  last_name TEXT,
  currency_code TEXT NOT NULL,
  company_name TEXT,
  datev_id TEXT,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, customer_number)
) STRICT;
CREATE INDEX customers_list ON customers (organisation_id, created_at, id);

CREATE TABLE customer_emails (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  email TEXT NOT NULL,
  receiver_name TEXT,
  is_invoice_email INTEGER NOT NULL,
  is_dunning_email INTEGER NOT NULL,
  is_default INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX customer_emails_list ON customer_emails (customer_id, created_at, id);
CREATE UNIQUE INDEX customer_emails_one_default ON customer_emails (customer_id) WHERE is_default = 1;

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  version TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_list ON webhooks (organisation_id, created_at, id);
`,
};
