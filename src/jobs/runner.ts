import type { Config } from '../config.js';
import { breakIfOverdue, overdueCutoff } from '../domain/paymentPlans.js';
import { cancelDueSubscriptions } from '../domain/subscriptions.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { DeliveryWorker } from '../webhooks/delivery.js';

export interface JobsSummary {
  now: string;
  jobs: Record<string, Record<string, number>>;
}

export interface JobsDeps {
  store: Store;
  logger: Logger;
  config: Config;
  deliveries: Pick<DeliveryWorker, 'runDue'>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Active payment plans with an installment still open `BILLING_PAYMENT_PLAN_GRACE_DAYS` after its due
 * date break, each in its own unit of work (with its `payment_plan.broken` event).
 */
async function breakOverduePaymentPlans(deps: JobsDeps, now: Date): Promise<number> {
  const grace = deps.config.paymentPlanGraceDays;
  const candidates = await deps.store.read((tx) => tx.paymentPlans.listWithOpenInstallmentDue(overdueCutoff(now, grace)));
  let broken = 0;
  for (const plan of candidates) {
    if (await deps.store.transaction((tx) => breakIfOverdue(tx, plan.organisationId, plan.id, grace, now))) broken += 1;
  }
  return broken;
}

/**
 * Runs every job that is due as of `now`, each in its own unit of work; no job holds a transaction
 * across network I/O. Webhook deliveries run last, so events the other jobs wrote go out in the same
 * run. Later issues add billing runs and dunning here.
 */
export async function runDueJobs(deps: JobsDeps, now: Date): Promise<JobsSummary> {
  const purged = await deps.store.transaction((tx) =>
    tx.system.purgeIdempotency(new Date(now.getTime() - DAY_MS).toISOString()),
  );
  const cancelled = await deps.store.transaction((tx) => cancelDueSubscriptions(tx, now));
  const plansBroken = await breakOverduePaymentPlans(deps, now);
  const webhookDeliveries = await deps.deliveries.runDue(now);
  const summary: JobsSummary = {
    now: now.toISOString(),
    jobs: {
      idempotencyKeys: { purged },
      dueCancellations: { cancelled },
      overdueInstallments: { plansBroken },
      webhookDeliveries: { ...webhookDeliveries },
    },
  };
  deps.logger.debug(summary, 'jobs run');
  return summary;
}
