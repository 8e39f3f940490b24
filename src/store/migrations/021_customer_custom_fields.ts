import type { Migration } from './index.js';

/** Customers carry custom-field values like subscriptions and products (JSON object text; existing customers none). */
export const customerCustomFields: Migration = {
  version: 21,
  name: 'customer_custom_fields',
  sql: `ALTER TABLE customers ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';`,
};
