import type { Migration } from './index.js';

/**
 * Price changes of price plans: each keeps the price it replaced, so a period is billed at the price
 * in effect at its start (`update_price_plan`). A payment method's status is derived from `enabled`
 * and `expiration_date` on read, so the constant column goes.
 */
export const priceChanges: Migration = {
  version: 20,
  name: 'price_changes',
  sql: `
CREATE TABLE price_plan_price_changes (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  price_plan_id TEXT NOT NULL REFERENCES price_plans(id),
  effective_from TEXT NOT NULL,
  old_price TEXT NOT NULL,
  new_price TEXT NOT NULL
) STRICT;
CREATE INDEX price_plan_price_changes_plan ON price_plan_price_changes (price_plan_id, effective_from, id);
ALTER TABLE payment_methods DROP COLUMN status;
`,
};
