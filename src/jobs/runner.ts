import type { Config } from '../config.js';
import { runBilling } from '../domain/billing/run.js';
import { applyDunning } from '../domain/dunning.js';
import type { EmailSender } from '../email/sender.js';
import { breakIfOverdue, overdueCutoff } from '../domain/paymentPlans.js';
import { collectDueSepa } from '../domain/sepa.js';
import { announceEndingTrials, cancelDueSubscriptions } from '../domain/subscriptions/lifecycle.js';
import { applyDuePlanChange } from '../domain/subscriptions/planChange.js';
import type { Logger } from '../logger.js';
import { isUniqueViolation } from '../store/sql.js';
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
  emails: Pick<EmailSender, 'runDue'>;
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
 * Overdue invoices that reached a dunning level, each in its own unit of work. A level another run
 * applied meanwhile fails that unit on the (invoice, level) key and is not counted.
 */
async function runDunning(deps: JobsDeps, now: Date): Promise<number> {
  const candidates = await deps.store.read((tx) => tx.dunning.candidates(now.toISOString()));
  let applied = 0;
  for (const invoice of candidates) {
    try {
      if (await deps.store.transaction((tx) => applyDunning(tx, invoice.organisationId, invoice.id, now))) applied += 1;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  return applied;
}

/** SEPA direct debits due by the earliest collection date, one statement per organisation and date, each in its own unit of work. */
async function collectSepa(deps: JobsDeps, now: Date): Promise<{ statements: number; payments: number }> {
  const organisations = await deps.store.read((tx) => tx.sepa.creditorOrganisations());
  const out = { statements: 0, payments: 0 };
  for (const org of organisations) {
    const statement = await deps.store.transaction((tx) => collectDueSepa(tx, org, now, deps.config.publicUrl ?? ''));
    if (!statement) continue;
    out.statements += 1;
    out.payments += statement.numberOfTransactions;
  }
  return out;
}

/** Pending plan changes whose date has come, each applied in its own unit of work (before billing: the new plan bills from then). */
async function applyDuePlanChanges(deps: JobsDeps, now: Date): Promise<number> {
  const settings = { paymentTermDays: deps.config.paymentTermDays };
  const due = await deps.store.read((tx) => tx.subscriptions.duePlanChanges(now.toISOString()));
  let applied = 0;
  for (const { org, id } of due) {
    if (await deps.store.transaction((tx) => applyDuePlanChange(tx, org, id, now, settings))) applied += 1;
  }
  return applied;
}

/**
 * Runs every job that is due as of `now`, each in its own unit of work; no job holds a transaction
 * across network I/O. Billing runs come after due cancellations, so a subscription cancelled now has
 * its final period billed in the same run; dunning after overdue installments break their plans, so a
 * broken plan's invoice is dunned in the same run. E-mails and webhook deliveries go last, so what
 * the other jobs wrote goes out in the same run.
 */
export async function runDueJobs(deps: JobsDeps, now: Date, trigger: 'schedule' | 'cli' = 'schedule'): Promise<JobsSummary> {
  const purged = await deps.store.transaction((tx) =>
    tx.system.purgeIdempotency(new Date(now.getTime() - DAY_MS).toISOString()),
  );
  const sessionsPurged = await deps.store.transaction((tx) => tx.portalSessions.purgeExpired(now.toISOString()));
  const cancelled = await deps.store.transaction((tx) => cancelDueSubscriptions(tx, now));
  const planChanges = await applyDuePlanChanges(deps, now);
  const trialsEnding = await deps.store.transaction((tx) => announceEndingTrials(tx, now));
  const runs = await runBilling({ store: deps.store, settings: { paymentTermDays: deps.config.paymentTermDays } }, { trigger, asOf: now, now });
  const plansBroken = await breakOverduePaymentPlans(deps, now);
  const sepaCollections = await collectSepa(deps, now);
  const levelsApplied = await runDunning(deps, now);
  const emails = await deps.emails.runDue(now);
  const webhookDeliveries = await deps.deliveries.runDue(now);
  const summary: JobsSummary = {
    now: now.toISOString(),
    jobs: {
      idempotencyKeys: { purged },
      portalSessions: { purged: sessionsPurged },
      dueCancellations: { cancelled },
      planChanges: { applied: planChanges },
      trials: { announced: trialsEnding },
      billing: {
        subscriptionsBilled: runs.reduce((n, r) => n + r.subscriptionsBilled, 0),
        invoicesCreated: runs.reduce((n, r) => n + r.invoicesCreated, 0),
        subscriptionsFailed: runs.reduce((n, r) => n + r.subscriptionsFailed, 0),
      },
      overdueInstallments: { plansBroken },
      sepaCollections,
      dunning: { levelsApplied },
      emails: { ...emails },
      webhookDeliveries: { ...webhookDeliveries },
    },
  };
  deps.logger.debug(summary, 'jobs run');
  return summary;
}

/**
 * `fn` for a timer: a call while the previous one is still running is skipped (and answers false),
 * so a long run (billing thousands of subscriptions) is never overlapped by the next tick, which only
 * would find the same work taken. The next tick after it ends catches up.
 */
export function nonOverlapping(fn: () => Promise<unknown>): () => Promise<boolean> {
  let running = false;
  return async () => {
    if (running) return false;
    running = true;
    try {
      await fn();
      return true;
    } finally {
      running = false;
    }
  };
}
