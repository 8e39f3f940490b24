import type { Migration } from './index.js';

/**
 * Plan changes and trials (issue 17): a plan's trial length; an item's billing anchor (the instant its
 * periods count from when it joins a running billing cycle, as the items of a changed plan do); a
 * subscription's pending plan change; when its trial's end was announced.
 */
export const planChangesTrials: Migration = {
  version: 19,
  name: 'plan_changes_trials',
  sql: `
ALTER TABLE plans ADD COLUMN trial_period TEXT;
ALTER TABLE subscription_items ADD COLUMN billing_anchor TEXT;
ALTER TABLE subscriptions ADD COLUMN pending_plan_id TEXT REFERENCES plans (id);
ALTER TABLE subscriptions ADD COLUMN pending_plan_apply_at TEXT;
ALTER TABLE subscriptions ADD COLUMN trial_ending_notified_at TEXT;
CREATE INDEX subscriptions_pending_plan ON subscriptions (pending_plan_apply_at) WHERE pending_plan_apply_at IS NOT NULL;
CREATE INDEX subscriptions_trial_ends ON subscriptions (trial_ends_on) WHERE trial_ends_on IS NOT NULL AND trial_ending_notified_at IS NULL;
`,
};
