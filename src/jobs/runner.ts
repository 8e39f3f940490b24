import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';

export interface JobsSummary {
  now: string;
  jobs: Record<string, Record<string, number>>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Runs every job that is due as of `now`, each in its own unit of work; no job holds a transaction
 * across network I/O. Later issues add billing runs, cancellations, overdue installments, dunning and
 * webhook deliveries here.
 */
export async function runDueJobs(deps: { store: Store; logger: Logger }, now: Date): Promise<JobsSummary> {
  const purged = await deps.store.transaction((tx) =>
    tx.system.purgeIdempotency(new Date(now.getTime() - DAY_MS).toISOString()),
  );
  const summary: JobsSummary = { now: now.toISOString(), jobs: { idempotencyKeys: { purged } } };
  deps.logger.debug(summary, 'jobs run');
  return summary;
}
