import type { Migration } from './index.js';

/**
 * Customers carry custom-field values like subscriptions and products (JSON object text; existing
 * customers none). Subscriptions of offers archived before archiving ended them leave status offer
 * for terminated, at the offer's archiving (an archived offer's subscription is never billed).
 */
export const customerFieldsWithdrawnOffers: Migration = {
  version: 21,
  name: 'customer_fields_withdrawn_offers',
  sql: `
ALTER TABLE customers ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';
UPDATE subscriptions
SET status = 'terminated',
    terminated_at = (SELECT o.archived_at FROM offers o WHERE o.subscription_id = subscriptions.id AND o.status = 'archived'),
    updated_at = (SELECT o.archived_at FROM offers o WHERE o.subscription_id = subscriptions.id AND o.status = 'archived')
WHERE status = 'offer' AND id IN (SELECT subscription_id FROM offers WHERE status = 'archived');
`,
};
