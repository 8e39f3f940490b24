import type { Migration } from './index.js';

/**
 * Claim segments whose filters are stored once (issue 12; docs/performance.md, "Batch ingestion
 * with claim buckets"). With 033 every bucket that closed rewrote its segment's whole filter (up to
 * 12 MiB). Now a closed bucket of the open segment stores only its ids' hashes (8 bytes an id) in
 * `usage_event_claim_hashes`, which each store adds up into a filter of its own; the segment's
 * filter is stored in `usage_event_claim_filters` once, when the segment is full, and its buckets'
 * hashes go. The filters 033 stored count as full segments: the next bucket that closes opens a new one.
 */
export const usageEventClaimHashes: Migration = {
  version: 34,
  name: 'usage_event_claim_hashes',
  sql: `
CREATE TABLE usage_event_claim_hashes (
  organisation_id TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  segment INTEGER NOT NULL,
  capacity INTEGER NOT NULL,
  hashes BLOB NOT NULL,
  PRIMARY KEY (organisation_id, bucket)
) STRICT, WITHOUT ROWID;
`,
};
