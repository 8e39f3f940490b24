import type { Migration } from './index.js';

/**
 * Usage metrics on products and usage events (issue 12).
 *
 * Products get `usage_metric` (JSON: eventName, aggregation, property, filters, type) and `unit`.
 *
 * `usage_events` holds every event received, one row per subscription it counts for (`target` 0, 1,
 * … when a customer-addressed event reaches several), clustered by what aggregation reads: the
 * subscription, the event name and the timestamp (integer milliseconds), so aggregating an interval
 * is one range scan of the table itself. `subscription_id` is '' for an event that reached no
 * subscription (a key column cannot be NULL). `seq` is the arrival order per organisation
 * (`usage_event_sequence` hands out a range per batch): `latest` breaks timestamp ties by it and the
 * list pages by it; the organisation ends the key, so rows without a subscription of two
 * organisations never collide. The client's id is unique per organisation and target: the first row (target 0)
 * is the deduplication claim, inserted with ON CONFLICT DO NOTHING in the unit that stores the event.
 * Properties are JSONB, read by `->>` without parsing text. No foreign keys: ingestion resolves the
 * references itself, and events outlive nothing they name (subscriptions are never deleted).
 */
export const usageEvents: Migration = {
  version: 22,
  name: 'usage_events',
  sql: `
ALTER TABLE products ADD COLUMN usage_metric TEXT;
ALTER TABLE products ADD COLUMN unit TEXT;
CREATE TABLE usage_event_sequence (
  organisation_id TEXT NOT NULL PRIMARY KEY REFERENCES organisations(id),
  last INTEGER NOT NULL
) STRICT;
CREATE TABLE usage_events (
  subscription_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  ts INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  organisation_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  target INTEGER NOT NULL,
  customer_id TEXT,
  properties BLOB NOT NULL,
  unmatched INTEGER NOT NULL CHECK (unmatched IN (0,1)),
  late INTEGER NOT NULL CHECK (late IN (0,1)),
  received_at INTEGER NOT NULL,
  PRIMARY KEY (subscription_id, event_name, ts, seq, organisation_id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX usage_events_claim ON usage_events (organisation_id, event_id, target);
CREATE INDEX usage_events_arrival ON usage_events (organisation_id, seq);
`,
};
