import type { Migration } from './index.js';

/**
 * A subscription's invoices in list order: `list_invoices` by subscription (an agent's "what did this
 * subscription bill", the portal's history) pages through these, not through every invoice the
 * organisation issued.
 */
export const subscriptionInvoices: Migration = {
  version: 38,
  name: 'subscription_invoices',
  sql: `
CREATE INDEX invoices_subscription ON invoices (organisation_id, subscription_id, created_at, id);
`,
};
