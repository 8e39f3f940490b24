import type { Migration } from './index.js';

/**
 * Coupons may discount every invoice (`frequency` `forever`, beside `once` and `limited`). SQLite
 * cannot widen a CHECK in place, so the table is rebuilt: a copy with the new CHECK takes the rows and
 * the old table's name. Foreign keys from applied discounts are deferred to the commit, when they
 * point at the same ids again.
 */
export const couponForever: Migration = {
  version: 16,
  name: 'coupon_forever',
  sql: `
PRAGMA defer_foreign_keys = ON;
CREATE TABLE coupons_new (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('percentage','fixed_amount')),
  frequency TEXT NOT NULL CHECK (frequency IN ('once','limited','forever')),
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
INSERT INTO coupons_new SELECT id, organisation_id, code, name, type, frequency, percentage_e2, fixed_amount_cents,
  fixed_amount_currency, frequency_interval, is_enabled, created_at, updated_at FROM coupons;
DROP TABLE coupons;
ALTER TABLE coupons_new RENAME TO coupons;
CREATE INDEX coupons_list ON coupons (organisation_id, created_at, id);
`,
};
