import type { Migration } from './index.js';

/**
 * Customer portal sessions (issue 18): the token is shown once, in the session's URL, and only its
 * SHA-256 hash is kept. A session ends at `expires_at` (one hour), or when the API key that opened it
 * is revoked or expires.
 */
export const portalSessions: Migration = {
  version: 27,
  name: 'portal_sessions',
  sql: `
CREATE TABLE portal_sessions (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  api_key_id TEXT NOT NULL REFERENCES api_keys(id),
  token_hash TEXT NOT NULL UNIQUE,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);
`,
};
