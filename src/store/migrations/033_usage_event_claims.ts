import type { Migration } from './index.js';

/**
 * Deduplication claims of usage events in buckets (issue 12; docs/performance.md, "Deduplication in
 * claim buckets"). The unique claim index on (organisation, event id, target) made every new random
 * id (UUIDv4) read and write its own leaf of an index as large as all the events stored: one random
 * read and one random write per event once it outgrew the cache.
 *
 * Now an organisation's events are claimed in one open bucket at a time: the claim index starts with
 * the bucket (`usage_events.claim_bucket`), so the open bucket is a small, hot stretch of it. A bucket
 * closes once it spans its number of arrival numbers (`usage_event_sequence.bucket_from` on); its ids
 * then join a Bloom filter (`usage_event_claim_filters`, one per segment of consecutive closed
 * buckets, each sized for as many ids as those before it) that answers "not here" for a new id
 * without reading the index. `usage_event_sequence.claim_bucket` is the open bucket's number. The
 * events stored so far are bucket 0, open: the first ingestion after the migration closes it.
 */
export const usageEventClaims: Migration = {
  version: 33,
  name: 'usage_event_claims',
  sql: `
ALTER TABLE usage_events ADD COLUMN claim_bucket INTEGER NOT NULL DEFAULT 0;
DROP INDEX usage_events_claim;
CREATE UNIQUE INDEX usage_events_claim ON usage_events (organisation_id, claim_bucket, event_id, target);
CREATE TABLE usage_event_claim_filters (
  organisation_id TEXT NOT NULL,
  segment INTEGER NOT NULL,
  first_bucket INTEGER NOT NULL,
  last_bucket INTEGER NOT NULL,
  claims INTEGER NOT NULL,
  capacity INTEGER NOT NULL,
  filter BLOB NOT NULL,
  PRIMARY KEY (organisation_id, segment)
) STRICT, WITHOUT ROWID;
ALTER TABLE usage_event_sequence ADD COLUMN claim_bucket INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_event_sequence ADD COLUMN bucket_from INTEGER NOT NULL DEFAULT 1;
`,
};
