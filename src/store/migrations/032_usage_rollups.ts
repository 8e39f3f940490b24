import type { Migration } from './index.js';

/**
 * Hourly rollups of usage events (docs/billing.md, "Usage rollups"): what a metric's aggregation
 * reads, kept by the jobs loop so that aggregating an interval reads its whole hours here and only
 * its partial first and last hour, and the events that arrived since, from `usage_events`.
 *
 * `usage_rollup_marks` has one row per organisation and metric (`metric`: the canonical text of the
 * event name, property and filters, the parts of a usage metric that decide which events count and
 * what is summed). `upto`: every event of the organisation whose arrival number (`seq`) is at most
 * it is in the rollups; NULL when the rollups were given up (a sum left 64 bits), and aggregation
 * reads the events alone. `usage_rollups` holds, per mark, subscription and hour (its first
 * millisecond, UTC), the events matching the filters, the late ones among them, those having the
 * property, the sum of the property in micro-units (exact per event: whole units and millionths
 * apart) and its largest value in micro-units. The mark leads its key (a dropped mark's rollups go
 * with it by its foreign key); the organisation is a column, as in every table.
 */
export const usageRollups: Migration = {
  version: 32,
  name: 'usage_rollups',
  sql: `
CREATE TABLE usage_rollup_marks (
  id INTEGER PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  metric TEXT NOT NULL,
  upto INTEGER,
  UNIQUE (organisation_id, metric)
) STRICT;
CREATE TABLE usage_rollups (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  mark_id INTEGER NOT NULL REFERENCES usage_rollup_marks(id) ON DELETE CASCADE,
  subscription_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  events INTEGER NOT NULL,
  late INTEGER NOT NULL,
  valued INTEGER NOT NULL,
  whole INTEGER NOT NULL,
  part INTEGER NOT NULL,
  max INTEGER,
  PRIMARY KEY (mark_id, subscription_id, hour)
) STRICT, WITHOUT ROWID;
`,
};
