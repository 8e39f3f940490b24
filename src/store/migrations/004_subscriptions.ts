import type { Migration } from './index.js';

export const subscriptions: Migration = {
  version: 4,
  name: 'subscriptions',
  sql: `
CREATE TABLE subscriptions (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  plan_id TEXT NOT NULL REFERENCES plans(id),
  number TEXT NOT NULL,
  name TEXT,
  external_id TEXT,
  po_number TEXT,
  status TEXT NOT NULL CHECK (status IN ('draft','active','paused','cancelled','terminated','offer')),
  billing_group_id TEXT REFERENCES billing_groups(id),
  payment_method_id TEXT REFERENCES payment_methods(id),
  invoice_address_id TEXT REFERENCES invoice_addresses(id),
  start_date TEXT,
  activated_at TEXT,
  trial_ends_on TEXT,
  custom_fields TEXT NOT NULL,
  periods TEXT NOT NULL,
  cancellation_date TEXT,
  cancelled_at TEXT,
  cancellation_reason TEXT,
  paused_at TEXT,
  terminated_at TEXT,
  last_billing_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, number)
) STRICT;
CREATE INDEX subscriptions_list ON subscriptions (organisation_id, created_at, id);
CREATE INDEX subscriptions_customer ON subscriptions (organisation_id, customer_id, created_at, id);
CREATE INDEX subscriptions_due_cancellation ON subscriptions (cancellation_date) WHERE cancellation_date IS NOT NULL;

CREATE TABLE subscription_items (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
  parent_id TEXT REFERENCES subscription_items(id),
  product_id TEXT NOT NULL REFERENCES products(id),
  price_plan_id TEXT NOT NULL REFERENCES price_plans(id),
  type TEXT NOT NULL CHECK (type IN ('charge','addon')),
  name TEXT,
  description TEXT,
  further_information TEXT,
  quantity TEXT NOT NULL,
  periods TEXT,
  start_date TEXT,
  billing_start TEXT,
  billing_end TEXT,
  activated_at TEXT,
  last_billed_at TEXT,
  last_billed_from TEXT,
  last_billed_to TEXT,
  next_billing_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX subscription_items_subscription ON subscription_items (subscription_id, created_at, id);
CREATE INDEX subscription_items_price_plan ON subscription_items (organisation_id, price_plan_id);

CREATE TABLE applied_discounts (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  item_id TEXT NOT NULL REFERENCES subscription_items(id),
  coupon_id TEXT REFERENCES coupons(id),
  discount TEXT,
  status TEXT NOT NULL,
  applied_intervals INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  CHECK ((coupon_id IS NULL) <> (discount IS NULL))
) STRICT;
CREATE INDEX applied_discounts_item ON applied_discounts (item_id, created_at, id);
`,
};
