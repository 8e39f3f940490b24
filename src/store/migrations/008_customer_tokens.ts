import type { Migration } from './index.js';

export const customerTokens: Migration = {
  version: 8,
  name: 'customer_tokens',
  sql: `
CREATE TABLE customer_tokens (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  api_key_id TEXT NOT NULL REFERENCES api_keys(id),
  family_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  token_hash TEXT NOT NULL UNIQUE,
  expires_at TEXT NOT NULL,
  used_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX customer_tokens_family ON customer_tokens (family_id);
`,
};
