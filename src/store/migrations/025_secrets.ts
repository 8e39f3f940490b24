import type { Migration } from './index.js';

/**
 * Secrets of the installation, shared by every instance on the database (issue 18): `pages` keys the
 * HMAC of the tokens in page links (offer recipients, hosted invoices). Each is created on first use.
 */
export const secrets: Migration = {
  version: 25,
  name: 'secrets',
  sql: `
CREATE TABLE secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
`,
};
