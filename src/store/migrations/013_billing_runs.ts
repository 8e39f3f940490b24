import type { Migration } from './index.js';

/**
 * The billing engine: every run's record, and the key that makes billing exactly once. A billed
 * charge is unique per (item, period start, kind), or for an instant charge per measurement value;
 * a run that finds its key taken rolls back, so overlapping runs, repeated runs and runs on two
 * instances never bill a period twice. Due items are found by their next billing date.
 */
export const billingRuns: Migration = {
  version: 13,
  name: 'billing_runs',
  sql: `
CREATE TABLE billing_runs (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  trigger TEXT NOT NULL CHECK (trigger IN ('api','schedule','cli')),
  status TEXT NOT NULL CHECK (status IN ('completed','failed')),
  subscription_id TEXT,
  as_of TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  subscriptions_billed INTEGER NOT NULL CHECK (subscriptions_billed >= 0),
  subscriptions_skipped INTEGER NOT NULL CHECK (subscriptions_skipped >= 0),
  subscriptions_failed INTEGER NOT NULL CHECK (subscriptions_failed >= 0),
  invoices_created INTEGER NOT NULL CHECK (invoices_created >= 0),
  invoices TEXT NOT NULL,
  skipped TEXT NOT NULL,
  failed TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX billing_runs_list ON billing_runs (organisation_id, created_at, id);

CREATE TABLE billed_charges (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  item_id TEXT NOT NULL REFERENCES subscription_items(id),
  period_key TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('flat','usage','instant')),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  PRIMARY KEY (item_id, period_key, kind)
) STRICT, WITHOUT ROWID;

CREATE INDEX subscription_items_due ON subscription_items (next_billing_at, organisation_id, subscription_id) WHERE next_billing_at IS NOT NULL;
`,
};
