import type { Migration } from './index.js';

/**
 * Secrets of the installation, shared by every instance on the database (issue 18): `pages` keys the
 * HMAC of the tokens in page links (offer recipients, hosted invoices): 32 random bytes in hex, made
 * here so that no read ever has to write it.
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
INSERT INTO secrets (name, value, created_at) VALUES ('pages', lower(hex(randomblob(32))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
`,
};
