import type { Migration } from './index.js';

/**
 * Measurement values recorded on subscription items. Quantities are integer micro-units (quantity x
 * 10^6, below 10^18) so that SQL aggregates are exact. The table is keyed by its time-ordered id
 * (UUIDv7) without a rowid: inserts append to both b-trees. One covering index serves every
 * aggregation of an item's measurement over an interval (range on measured_at, the quantity and the
 * count_unique identity read from the index; id breaks ties for last_value), the newest-first event
 * pages and the latest values of an item.
 *
 * The identities count_unique counts (the `id` sent with a value) are dictionary-encoded: each
 * distinct one gets an integer key per organisation, in first-seen order, and values carry the key.
 * Counting distinct integers is about 2x faster than distinct strings and, unlike strings, does not
 * slow down as the number of distinct ids grows (1M random ids: 0.2 s instead of 2.6 s).
 *
 * `instant` marks pushes of instant_metered measurements: each is billed on its own, and `billed_at`
 * stays NULL until a billing run invoices it; the partial index lists the pending ones and costs
 * nothing for other values.
 */
export const usage: Migration = {
  version: 6,
  name: 'usage',
  sql: `
CREATE TABLE measurement_value_ids (
  key INTEGER PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  value_id TEXT NOT NULL CHECK (length(value_id) BETWEEN 1 AND 255),
  UNIQUE (organisation_id, value_id)
) STRICT;

CREATE TABLE measurement_values (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  item_id TEXT NOT NULL REFERENCES subscription_items(id),
  measurement_id TEXT NOT NULL REFERENCES measurements(id),
  quantity_e6 INTEGER NOT NULL CHECK (quantity_e6 BETWEEN 0 AND 999999999999999999),
  measured_at TEXT NOT NULL,
  value_key INTEGER REFERENCES measurement_value_ids(key),
  instant INTEGER NOT NULL CHECK (instant IN (0,1)),
  billed_at TEXT CHECK (billed_at IS NULL OR instant = 1),
  created_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX measurement_values_item
  ON measurement_values (organisation_id, item_id, measurement_id, measured_at, id, quantity_e6, value_key);
CREATE INDEX measurement_values_unbilled_instant
  ON measurement_values (organisation_id, measured_at, id) WHERE instant = 1 AND billed_at IS NULL;
`,
};
