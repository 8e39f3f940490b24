import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config.js';
import { runBilling } from '../domain/billing/run.js';
import { applyDunning } from '../domain/dunning.js';
import type { EmailSender } from '../email/sender.js';
import { breakIfOverdue, overdueCutoff } from '../domain/paymentPlans.js';
import { collectDueSepa } from '../domain/sepa.js';
import { rollUpUsage } from '../domain/usageRollups.js';
import { announceEndingTrials, cancelDueSubscriptions } from '../domain/subscriptions/lifecycle.js';
import { applyDuePlanChange } from '../domain/subscriptions/planChange.js';
import type { Logger } from '../logger.js';
import { isUniqueViolation } from '../store/sql.js';
import type { Store } from '../store/store.js';
import type { DeliveryWorker } from '../webhooks/delivery.js';

export interface JobsSummary {
  now: string;
  jobs: Record<string, Record<string, number>>;
  /**
   * Why the passes (all, or those after some point) did not run: the jobs lease was held by another
   * instance, or was lost while running. Absent when every pass ran.
   */
  notRun?: string;
}

export interface JobsDeps {
  store: Store;
  logger: Logger;
  config: Config;
  deliveries: Pick<DeliveryWorker, 'runDue'>;
  emails: Pick<EmailSender, 'runDue'>;
  /** The time leases are taken and renewed at (the server's clock); default the system's. */
  clock?: () => Date;
}

/** The job lease (`job_leases.name`) under which one instance at a time runs the passes of `runDueJobs`. */
export const JOBS_LEASE = 'due-jobs';
/** How long the jobs lease holds without a renewal: a killed holder's passes are taken over by another instance after this. */
export const JOB_LEASE_MS = 30_000;
/** How often a running holder renews it. */
const RENEW_EVERY_MS = 5_000;
/** How often `jobs run` looks again while another instance holds the lease. */
const WAIT_POLL_MS = 250;

/** The counts of a run in which no pass ran. */
function nothingDone(): Record<string, Record<string, number>> {
  return {
    idempotencyKeys: { purged: 0 },
    portalSessions: { purged: 0 },
    dueCancellations: { cancelled: 0 },
    planChanges: { applied: 0 },
    trials: { announced: 0 },
    usageRollups: { metricsUpdated: 0 },
    billing: { subscriptionsBilled: 0, invoicesCreated: 0, subscriptionsFailed: 0 },
    overdueInstallments: { plansBroken: 0 },
    sepaCollections: { statements: 0, payments: 0 },
    dunning: { levelsApplied: 0 },
    emails: { sent: 0, retrying: 0, failed: 0, notSent: 0 },
    webhookDeliveries: { attempted: 0, delivered: 0, retrying: 0, failed: 0, skipped: 0 },
  };
}

/**
 * The jobs lease as one run holds it: taken in a claim unit (on PostgreSQL READ COMMITTED with
 * `FOR UPDATE SKIP LOCKED`; on SQLite a conditional UPDATE in a unit of its own), renewed every
 * RENEW_EVERY_MS while the run goes on, released when it ends. The holder id is unique per run (host,
 * process, random), so two runs in one process exclude each other too.
 */
class HeldLease {
  lost = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly deps: JobsDeps,
    readonly holder: string,
  ) {
    this.timer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.timer.unref();
  }

  /** The lease for a new run, or the lease as another holder has it (`taken: false`). */
  static async take(deps: JobsDeps): Promise<HeldLease | { taken: false; holder: string; until: string }> {
    const clock = deps.clock ?? (() => new Date());
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    const now = clock();
    const taken = await deps.store.transaction(
      (tx) => tx.jobLeases.acquire(JOBS_LEASE, holder, now.toISOString(), new Date(now.getTime() + JOB_LEASE_MS).toISOString()),
      { claim: true },
    );
    if (taken) return new HeldLease(deps, holder);
    const other = await deps.store.read((tx) => tx.jobLeases.get(JOBS_LEASE));
    return { taken: false, holder: other?.holder ?? '(being claimed)', until: other?.leasedUntil ?? '' };
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    const until = new Date((this.deps.clock ?? (() => new Date()))().getTime() + JOB_LEASE_MS).toISOString();
    try {
      const renewed = await this.deps.store.transaction((tx) => tx.jobLeases.renew(JOBS_LEASE, this.holder, until), { claim: true });
      if (!renewed) {
        this.lost = true;
        this.deps.logger.warn({ holder: this.holder }, 'jobs lease expired and was taken over; this run stops before its next pass');
      }
    } catch (err) {
      this.deps.logger.error({ err, holder: this.holder }, 'jobs lease not renewed; trying again');
    }
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    try {
      await this.deps.store.transaction((tx) => tx.jobLeases.release(JOBS_LEASE, this.holder), { claim: true });
    } catch (err) {
      this.deps.logger.error({ err, holder: this.holder }, `jobs lease not released; it ends by itself within ${JOB_LEASE_MS} ms`);
    }
  }
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
 * its final period billed in the same run, and after the usage rollups, so that they read them up to date; dunning after overdue installments break their plans, so a
 * broken plan's invoice is dunned in the same run. E-mails and webhook deliveries go last, so what
 * the other jobs wrote goes out in the same run.
 *
 * One instance at a time: the passes run under the jobs lease (JOBS_LEASE, one lease for all of them,
 * so that their order holds across instances too). A scheduled run that finds it held by another
 * instance does nothing (that instance is doing the same work) and says so in `notRun`; `jobs run`
 * (`trigger: 'cli'`) waits for it, since its caller asked for the work as of its `now`. A killed
 * holder's lease ends JOB_LEASE_MS after its last renewal, and the next run of any instance takes it.
 * A run whose lease was taken over (it could not renew it in time) stops before its next pass. The
 * lease saves doing work twice; exactly once does not depend on it: every due thing is claimed in a
 * unit of its own on a unique key (a billed period, a dunning level, a collection).
 */
export async function runDueJobs(deps: JobsDeps, now: Date, trigger: 'schedule' | 'cli' = 'schedule'): Promise<JobsSummary> {
  let lease = await HeldLease.take(deps);
  let waiting = false;
  while (!(lease instanceof HeldLease)) {
    const notRun = `the jobs lease is held by ${lease.holder} until ${lease.until || 'it is released'}`;
    if (trigger !== 'cli') {
      deps.logger.debug({ holder: lease.holder, until: lease.until }, 'jobs run skipped: another instance runs the jobs');
      return { now: now.toISOString(), jobs: nothingDone(), notRun };
    }
    if (!waiting) deps.logger.info({ holder: lease.holder, until: lease.until }, 'jobs run waits for the jobs lease');
    waiting = true;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    lease = await HeldLease.take(deps);
  }
  const held = lease;
  try {
    return await runPasses(deps, now, trigger, held);
  } finally {
    await held.release();
  }
}

async function runPasses(deps: JobsDeps, now: Date, trigger: 'schedule' | 'cli', lease: HeldLease): Promise<JobsSummary> {
  const jobs = nothingDone();
  // Idempotency keys and portal sessions expire in real time: a run as of a later `now` (`jobs run --now`) does not end them early.
  const expired = Math.min(now.getTime(), (deps.clock ?? (() => new Date()))().getTime());
  const passes: Array<() => Promise<void>> = [
    async () => {
      jobs.idempotencyKeys = {
        purged: await deps.store.transaction((tx) => tx.system.purgeIdempotency(new Date(expired - DAY_MS).toISOString())),
      };
    },
    async () => {
      jobs.portalSessions = { purged: await deps.store.transaction((tx) => tx.portalSessions.purgeExpired(new Date(expired).toISOString())) };
    },
    async () => {
      jobs.dueCancellations = { cancelled: await deps.store.transaction((tx) => cancelDueSubscriptions(tx, now)) };
    },
    async () => {
      jobs.planChanges = { applied: await applyDuePlanChanges(deps, now) };
    },
    async () => {
      jobs.trials = { announced: await deps.store.transaction((tx) => announceEndingTrials(tx, now)) };
    },
    async () => {
      jobs.usageRollups = { metricsUpdated: await rollUpUsage(deps.store) };
    },
    async () => {
      const runs = await runBilling({ store: deps.store, settings: { paymentTermDays: deps.config.paymentTermDays } }, { trigger, asOf: now, now });
      jobs.billing = {
        subscriptionsBilled: runs.reduce((n, r) => n + r.subscriptionsBilled, 0),
        invoicesCreated: runs.reduce((n, r) => n + r.invoicesCreated, 0),
        subscriptionsFailed: runs.reduce((n, r) => n + r.subscriptionsFailed, 0),
      };
    },
    async () => {
      jobs.overdueInstallments = { plansBroken: await breakOverduePaymentPlans(deps, now) };
    },
    async () => {
      jobs.sepaCollections = await collectSepa(deps, now);
    },
    async () => {
      jobs.dunning = { levelsApplied: await runDunning(deps, now) };
    },
    async () => {
      jobs.emails = { ...(await deps.emails.runDue(now)) };
    },
    async () => {
      jobs.webhookDeliveries = { ...(await deps.deliveries.runDue(now)) };
    },
  ];
  const summary: JobsSummary = { now: now.toISOString(), jobs };
  for (const pass of passes) {
    if (lease.lost) {
      summary.notRun = `the jobs lease of this run (${lease.holder}) expired and was taken over by another instance; the remaining passes were left to it`;
      break;
    }
    await pass();
  }
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
