import type { Migration } from './index.js';

/**
 * An offer found by the subscription it proposes: a change of that subscription's terms asks whether
 * its offer has left `open` (docs/decisions.md, "The terms freeze when the offer leaves open").
 */
export const offerSubscription: Migration = {
  version: 35,
  name: 'offer_subscription',
  sql: `
CREATE INDEX offers_subscription ON offers (subscription_id);
`,
};
