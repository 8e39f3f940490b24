import type { Migration } from './index.js';

/**
 * The terms an offer froze when it left `open` that no copy holds (docs/decisions.md, "Prices freeze
 * with the terms"): when they froze (the first acceptance or signature) and the plan's trial then,
 * which activation gives the signed subscription. Offers that left open before take the instant of
 * their first acceptance or signature and their plan's trial now, the best still known.
 */
export const offerFrozenTerms: Migration = {
  version: 39,
  name: 'offer_frozen_terms',
  sql: `
ALTER TABLE offers ADD COLUMN terms_frozen_at TEXT;
ALTER TABLE offers ADD COLUMN frozen_trial_period TEXT;
UPDATE offers SET
  terms_frozen_at = (SELECT MIN(e.at) FROM offer_signing_events e WHERE e.offer_id = offers.id AND e.kind IN ('accepted', 'signed')),
  frozen_trial_period = (SELECT p.trial_period FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.id = offers.subscription_id)
WHERE status <> 'open';
`,
};
