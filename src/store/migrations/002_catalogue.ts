import type { Migration } from './index.js';

export const catalogue: Migration = {
  version: 2,
  name: 'catalogue',
  sql: `
CREATE TABLE products (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  type TEXT NOT NULL CHECK (type IN ('product','service')),
  measurement_id TEXT REFERENCES measurements(id),
  tax_group_id TEXT REFERENCES tax_groups(id),
  name TEXT NOT NULL,
  description TEXT,
  internal_name TEXT,
  invoice_visibility TEXT NOT NULL CHECK (invoice_visibility IN ('always','never','if_not_zero')),
  cost_centre TEXT,
  cost_centre_2 TEXT,
  custom_fields TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX products_list ON products (organisation_id, created_at, id);

CREATE TABLE price_plans (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  product_id TEXT NOT NULL REFERENCES products(id),
  type TEXT NOT NULL CHECK (type IN ('flat_fee','per_unit')),
  currency_code TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
  internal_name TEXT,
  status TEXT NOT NULL CHECK (status IN ('active','inactive','archived')),
  apply_trial INTEGER NOT NULL CHECK (apply_trial IN (0,1)),
  pay_in_advance INTEGER NOT NULL CHECK (pay_in_advance IN (0,1)),
  pro_rata INTEGER NOT NULL CHECK (pro_rata IN (0,1)),
  free_units INTEGER NOT NULL CHECK (free_units >= 0),
  billing_interval TEXT NOT NULL,
  show_price_per_interval TEXT NOT NULL,
  custom INTEGER NOT NULL CHECK (custom IN (0,1)),
  charge TEXT,
  product_set_option TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX price_plans_list ON price_plans (product_id, created_at, id);

CREATE TABLE plan_families (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE plans (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  family_id TEXT NOT NULL REFERENCES plan_families(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  status TEXT NOT NULL CHECK (status IN ('draft','active','archived')),
  allow_checkout INTEGER NOT NULL CHECK (allow_checkout IN (0,1)),
  change_behaviour TEXT NOT NULL
    CHECK (change_behaviour IN ('upgradeable_and_downgradeable','upgradeable_only','downgradeable_only','not_changeable')),
  change_apply_behaviour TEXT NOT NULL CHECK (change_apply_behaviour IN ('end_of_period','immediately')),
  origin_product_id TEXT REFERENCES products(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, code)
) STRICT;
CREATE INDEX plans_list ON plans (organisation_id, created_at, id);

-- Charges and addons of a plan; quantity in millionths (charges only).
CREATE TABLE plan_items (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  plan_id TEXT NOT NULL REFERENCES plans(id),
  kind TEXT NOT NULL CHECK (kind IN ('charge','addon')),
  position INTEGER NOT NULL,
  product_id TEXT NOT NULL REFERENCES products(id),
  price_plan_id TEXT NOT NULL REFERENCES price_plans(id),
  quantity_e6 INTEGER CHECK (quantity_e6 > 0),
  CHECK ((kind = 'charge') = (quantity_e6 IS NOT NULL))
) STRICT;
CREATE INDEX plan_items_plan ON plan_items (plan_id, kind, position);
CREATE INDEX plan_items_price_plan ON plan_items (price_plan_id);

CREATE TABLE billing_groups (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('end_of_month','custom_day','anniversary')),
  custom_day INTEGER CHECK (custom_day BETWEEN 1 AND 28),
  custom_month INTEGER CHECK (custom_month BETWEEN 1 AND 12),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((type = 'custom_day') = (custom_day IS NOT NULL)),
  CHECK (custom_month IS NULL OR type = 'custom_day')
) STRICT;
CREATE INDEX billing_groups_list ON billing_groups (organisation_id, created_at, id);

-- percentage in hundredths of a percent, fixed amounts in cents.
CREATE TABLE coupons (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('percentage','fixed_amount')),
  frequency TEXT NOT NULL CHECK (frequency IN ('once','limited')),
  percentage_e2 INTEGER CHECK (percentage_e2 BETWEEN 1 AND 10000),
  fixed_amount_cents INTEGER CHECK (fixed_amount_cents > 0),
  fixed_amount_currency TEXT,
  frequency_interval INTEGER CHECK (frequency_interval >= 1),
  is_enabled INTEGER NOT NULL CHECK (is_enabled IN (0,1)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, code),
  CHECK ((type = 'percentage') = (percentage_e2 IS NOT NULL)),
  CHECK ((type = 'fixed_amount') = (fixed_amount_cents IS NOT NULL)),
  CHECK ((fixed_amount_cents IS NULL) = (fixed_amount_currency IS NULL)),
  CHECK ((frequency = 'limited') = (frequency_interval IS NOT NULL))
) STRICT;
CREATE INDEX coupons_list ON coupons (organisation_id, created_at, id);

CREATE TABLE custom_fields (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  key TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('subscription','customer','product')),
  type TEXT NOT NULL CHECK (type IN ('string','number','boolean','date','select')),
  options TEXT,
  required INTEGER NOT NULL CHECK (required IN (0,1)),
  created_at TEXT NOT NULL,
  UNIQUE (organisation_id, entity, key),
  CHECK ((type = 'select') = (options IS NOT NULL))
) STRICT;
CREATE INDEX custom_fields_list ON custom_fields (organisation_id, created_at, id);
`,
};
