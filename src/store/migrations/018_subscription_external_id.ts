import type { Migration } from './index.js';

/** Subscriptions found by the id another system gave them (`list_subscriptions` `externalId`). */
export const subscriptionExternalId: Migration = {
  version: 18,
  name: 'subscription_external_id',
  sql: `CREATE INDEX subscriptions_external_id ON subscriptions (organisation_id, external_id, created_at, id) WHERE external_id IS NOT NULL;`,
};
