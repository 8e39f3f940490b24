import type { Migration } from './index.js';

/**
 * The delivery worker schedules per webhook (its URL origin is the target): the earliest pending
 * delivery of each webhook, and a webhook's due deliveries, are index seeks.
 */
export const deliveryTargets: Migration = {
  version: 9,
  name: 'delivery_targets',
  sql: `
CREATE INDEX webhook_deliveries_pending_by_webhook ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
`,
};
