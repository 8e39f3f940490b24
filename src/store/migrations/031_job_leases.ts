import type { Migration } from './index.js';

/**
 * Job leases (issue 14): one row per job of the jobs loop that must run on one instance at a time.
 * `holder` names the run that has it, `leased_until` (ISO timestamp; '' when released) when it
 * becomes free for another instance if the holder neither renews nor releases it (it was killed).
 */
export const jobLeases: Migration = {
  version: 31,
  name: 'job_leases',
  sql: `
CREATE TABLE job_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  leased_until TEXT NOT NULL
) STRICT;
`,
};
