import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Config } from '../config.js';
import { newUlid } from '../ids.js';
import type { Logger } from '../logger.js';
import type { AttemptOutcome, AttemptResult, DueDelivery, DueTarget } from '../store/ports/events.js';
import type { Store } from '../store/store.js';
import { addressRefusal, hostRefusal } from '../domain/webhooks.js';
import { deliveryHeaders } from './signing.js';

const PRIVATE_HINT = 'webhooks must target public hosts unless BILLING_WEBHOOK_ALLOW_PRIVATE=true';

/** How names are resolved: `dns.lookup` with `all: true`; a seam for tests. */
export type Resolve = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolve: Resolve = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * The connection-time DNS lookup of deliveries. Unless private targets are allowed it refuses a name
 * when any address it resolves to is not public (`addressRefusal`), so a public name that resolves
 * (or is re-pointed) to an internal address is not reached.
 */
export function deliveryLookup(resolve: Resolve = systemResolve, allowPrivate = false): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const refused = allowPrivate ? undefined : addresses.map((a) => ({ a, why: addressRefusal(a.address) })).find((r) => r.why);
      if (refused) {
        const error = Object.assign(
          new Error(`${hostname} resolves to ${refused.a.address}, which is not a public address (${refused.why}); ${PRIVATE_HINT}`),
          { code: 'EPRIVATE' },
        );
        return callback(error, '', 4);
      }
      if (options.all) return callback(null, addresses as never, 4);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      callback(null, first.address, first.family);
    });
  };
}

/** Interface section 8: after a failed delivery the service retries up to three times. */
export const MAX_RETRIES = 3;

/**
 * The state after an attempt of the current round (`roundAttempts` counts this one): delivered on a
 * 2xx; otherwise pending again after the delay of this retry (the i-th retry waits
 * `delays[i-1]`, the last delay repeating if fewer are configured), or failed once the first attempt
 * and its 3 retries have all failed.
 */
export function outcomeOf(delivered: boolean, roundAttempts: number, finishedAt: Date, delaysSeconds: readonly number[]): AttemptOutcome {
  if (delivered) return { status: 'delivered', roundAttempts, nextAttemptAt: null, deliveredAt: finishedAt.toISOString() };
  if (roundAttempts > MAX_RETRIES) return { status: 'failed', roundAttempts, nextAttemptAt: null, deliveredAt: null };
  const delay = delaysSeconds[Math.min(roundAttempts, delaysSeconds.length) - 1] ?? 0;
  return { status: 'pending', roundAttempts, nextAttemptAt: new Date(finishedAt.getTime() + delay * 1000).toISOString(), deliveredAt: null };
}

export interface DeliveryRun {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
  skipped: number;
}

/** Longest sleep between two claims, so that a clock change is noticed. */
const MAX_WAIT_MS = 60_000;
/**
 * How often a running worker looks for the earliest pending delivery of the whole store (one indexed
 * `min(next_attempt_at)`, `webhook_deliveries_due`): deliveries another process wrote (a `jobs run`,
 * another `serve` on the same database, an instance that stopped or lost its lease) are attempted at
 * most this long after they are due. 5 s is half the shortest default retry delay (10 s), and the
 * look costs one index seek per instance every 5 s.
 */
export const POLL_MS = 5_000;
const MIN_WAIT_MS = 20;
/** A delivery being sent is leased for the timeout plus this margin; a crash mid-attempt frees it after. */
const LEASE_MARGIN_MS = 30_000;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A delivery target that is not public while private targets are not allowed. */
class PrivateTarget extends Error {}

function failureOf(err: unknown, timeoutMs: number): string {
  if (err instanceof PrivateTarget) return `refused: ${err.message}`;
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || TIMEOUT_CODES.has(e.code ?? '')) {
    return `no answer within ${timeoutMs} ms (BILLING_WEBHOOK_TIMEOUT_MS)`;
  }
  const code = e.code ?? e.cause?.code;
  if (code === 'EPRIVATE') return `refused: ${e.message ?? e.cause?.message}`;
  return `could not reach the receiver: ${[code, e.message ?? e.cause?.message].filter(Boolean).join(' ')}`;
}

/**
 * The target a delivery is scheduled by: its URL's origin (scheme, host and port), so every webhook
 * pointing at one receiver shares that receiver's slots.
 */
function targetOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function byDue(a: DueDelivery, b: DueDelivery): number {
  if (a.nextAttemptAt !== b.nextAttemptAt) return a.nextAttemptAt < b.nextAttemptAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A `runDue` pass: what it attempted (each delivery once), the attempts still running, the counts. */
interface Pass {
  seen: Set<string>;
  attempts: Set<Promise<void>>;
  run: DeliveryRun;
}

interface Claim {
  send: Array<{ delivery: DueDelivery; target: string }>;
  skipped: number;
  /** Due deliveries were left waiting for a slot (of their target, or a global one). */
  blocked: boolean;
  /** The earliest pending attempt after the claim's `now`. */
  next: string | undefined;
}

/**
 * Sends stored webhook deliveries with undici, never inside a transaction: a short unit of work picks
 * and leases the due deliveries that may start, each request goes out on its own, and its own unit
 * records the attempt. Attempts are independent: at most `BILLING_WEBHOOK_CONCURRENCY` in flight, at
 * most `BILLING_WEBHOOK_CONCURRENCY_PER_TARGET` to one target (URL origin), so a receiver that never
 * answers holds only its own slots; a freed slot goes first to the targets with the fewest attempts in
 * flight, then to the earliest due. `kick()` (after a commit that wrote deliveries, and at start-up)
 * starts the worker, which claims again whenever an attempt ends or it is kicked, and sleeps until the
 * earliest pending retry on its own timer. While it runs it also looks every POLL_MS for the earliest
 * pending delivery in the store, whoever wrote it, and kicks itself when that is due; claiming stays
 * the only way to take a delivery, so a row another instance leased is not attempted twice. `runDue` attempts what is due at a given time once, for `jobs run`,
 * sharing the same slots.
 */
export class DeliveryWorker {
  private readonly agent: Agent;
  private readonly concurrency: number;
  private readonly perTarget: number;
  /** Deliveries being attempted by this worker (never two attempts of one), and how many per target. */
  private readonly inFlight = new Set<string>();
  private readonly inFlightByTarget = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  /** Claims run one after another, so that each sees the slots the previous one took. */
  private claiming: Promise<unknown> = Promise.resolve();
  private background: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The look for due deliveries every `pollMs` (`poll`), from the first kick until `stop`. */
  private poller: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private readonly pollMs: number;
  /** Bumped by every kick and every finished attempt; waiters resume on it. */
  private generation = 0;
  private waiters: Array<() => void> = [];
  private stopped = false;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      config: Config;
      logger: Logger;
      clock: () => Date;
      resolve?: Resolve | undefined;
      /** How often the running worker looks for due deliveries in the store (POLL_MS; tests shorten it). */
      pollMs?: number | undefined;
    },
  ) {
    this.pollMs = deps.pollMs ?? POLL_MS;
    this.concurrency = deps.config.webhookConcurrency;
    this.perTarget = deps.config.webhookConcurrencyPerTarget;
    this.agent = new Agent({
      connect: { timeout: deps.config.webhookTimeoutMs, lookup: deliveryLookup(deps.resolve, deps.config.webhookAllowPrivate) },
    });
  }

  /** Attempts every due delivery soon (as slots allow). */
  kick(): void {
    if (this.stopped) return;
    if (!this.background) {
      this.background = this.work();
      this.poller = setInterval(() => {
        this.polling ??= this.poll().finally(() => {
          this.polling = undefined;
        });
      }, this.pollMs);
      this.poller.unref();
    }
    this.wake();
  }

  /** Stops claiming and the timer, waits for the attempts in flight, closes the connections. Final; repeatable. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      clearTimeout(this.timer);
      this.timer = undefined;
      clearInterval(this.poller);
      this.poller = undefined;
      this.wake();
      await this.polling;
      await this.background;
      await this.claiming;
      while (this.attempts.size > 0) await Promise.all(this.attempts);
      await this.agent.close();
    })();
    return this.stopping;
  }

  /** Attempts each delivery due at `now` once (nothing once stopped), within the same limits. */
  async runDue(now: Date): Promise<DeliveryRun> {
    const pass: Pass = { seen: new Set(), attempts: new Set(), run: { attempted: 0, delivered: 0, retrying: 0, failed: 0, skipped: 0 } };
    while (!this.stopped) {
      const generation = this.generation;
      const { blocked } = await this.fill(now, pass);
      // Blocked deliveries wait for an attempt in flight to end; that wakes this pass.
      if (!blocked || this.inFlight.size === 0) break;
      if (generation === this.generation) await this.changed();
    }
    while (pass.attempts.size > 0) await Promise.all(pass.attempts);
    return pass.run;
  }

  /** The worker started by `kick()`: claims what may start, then waits for a kick, a finished attempt or its timer. */
  private async work(): Promise<void> {
    while (!this.stopped) {
      const generation = this.generation;
      try {
        const { next } = await this.fill(this.deps.clock());
        this.arm(next);
      } catch (err) {
        this.deps.logger.error({ err }, 'webhook delivery pass failed; retrying later');
        this.sleep(MAX_WAIT_MS);
      }
      if (!this.stopped && generation === this.generation) await this.changed();
    }
  }

  private fill(now: Date, pass?: Pass): Promise<Pick<Claim, 'blocked' | 'next'>> {
    const filled = this.claiming.then(async () => {
      if (this.stopped) return { blocked: false, next: undefined };
      const { send, skipped, blocked, next } = await this.claim(now, pass);
      if (pass) pass.run.skipped += skipped;
      for (const { delivery, target } of send) this.start(delivery, target, pass);
      return { blocked, next };
    });
    this.claiming = filled.catch(() => undefined);
    return filled;
  }

  /**
   * In one short unit of work: the due deliveries of disabled webhooks become skipped; of the others,
   * as many as the free slots allow are leased, so that no other pass picks them meanwhile. Targets
   * are served round-robin, those with the fewest attempts in flight first, then the earliest due.
   *
   * Isolation: a claim unit (`UnitOptions.claim`). On PostgreSQL it runs READ COMMITTED and takes the
   * due deliveries `FOR UPDATE SKIP LOCKED` (`dueOf`, `skipDue`): several instances claiming at the
   * same moment take disjoint deliveries, none waits for or aborts another, and a row is taken only
   * if its latest committed version is still pending and due. The lease it writes (the next attempt
   * moved to the attempt's timeout plus LEASE_MARGIN_MS) keeps the deliveries from every other claim
   * after the unit commits; an instance killed mid-attempt leaves them pending, and they are due, and
   * claimed by any instance, once that time has passed. Rows locked but not leased (beyond the free
   * slots) are free again at the commit. On SQLite units run one at a time, so the claim is exclusive.
   */
  private claim(now: Date, pass: Pass | undefined): Promise<Claim> {
    return this.deps.store.transaction(async (tx) => {
      const at = this.deps.clock();
      const due = now.toISOString();
      const except = [...this.inFlight, ...(pass?.seen ?? [])];
      const next = await tx.events.nextAttemptAt(due);
      let skipped = 0;
      const targets = new Map<string, DueTarget[]>();
      for (const webhook of await tx.events.dueTargets(due)) {
        if (!webhook.enabled) {
          const reason = `Not sent: webhook ${webhook.webhookId} is disabled`;
          skipped += await tx.events.skipDue(webhook.organisationId, webhook.webhookId, due, except, reason, at.toISOString());
          continue;
        }
        const target = targetOf(webhook.url);
        const webhooks = targets.get(target);
        if (webhooks) webhooks.push(webhook);
        else targets.set(target, [webhook]);
      }
      const busy = (target: string) => this.inFlightByTarget.get(target) ?? 0;
      // Earliest due first already (dueTargets is ordered); a stable sort puts the idlest targets ahead.
      const order = [...targets.keys()].sort((a, b) => busy(a) - busy(b));
      const free = this.concurrency - this.inFlight.size;
      let blocked = false;
      const queues: Array<{ target: string; due: DueDelivery[] }> = [];
      for (const target of order) {
        const room = Math.min(this.perTarget - busy(target), free);
        if (room <= 0 || queues.length >= free) {
          blocked = true;
          continue;
        }
        // A target's `room` earliest deliveries are among those of its `room` webhooks with the earliest ones.
        const webhooks = targets.get(target) ?? [];
        const rows: DueDelivery[] = [];
        for (const webhook of webhooks.slice(0, room)) {
          rows.push(...(await tx.events.dueOf(webhook.organisationId, webhook.webhookId, due, except, room + 1)));
        }
        rows.sort(byDue);
        if (rows.length > room || webhooks.length > room) blocked = true;
        if (rows.length > 0) queues.push({ target, due: rows.slice(0, room) });
      }
      const send: Claim['send'] = [];
      for (let round = 0; send.length < free; round += 1) {
        const before = send.length;
        for (const { target, due: rows } of queues) {
          const delivery = rows[round];
          if (delivery && send.length < free) send.push({ delivery, target });
        }
        if (send.length === before) break;
      }
      if (queues.reduce((n, q) => n + q.due.length, 0) > send.length) blocked = true;
      const leaseUntil = new Date(at.getTime() + this.deps.config.webhookTimeoutMs + LEASE_MARGIN_MS);
      await tx.events.lease(
        send.map((s) => s.delivery.id),
        leaseUntil.toISOString(),
      );
      return { send, skipped, blocked, next };
    }, { claim: true });
  }

  /** Takes the slots and sends; when the attempt is recorded the slots are freed and the worker woken. */
  private start(delivery: DueDelivery, target: string, pass: Pass | undefined): void {
    this.inFlight.add(delivery.id);
    this.inFlightByTarget.set(target, (this.inFlightByTarget.get(target) ?? 0) + 1);
    pass?.seen.add(delivery.id);
    const attempt = this.send(delivery, target, pass);
    this.attempts.add(attempt);
    pass?.attempts.add(attempt);
    void attempt.then(() => {
      this.attempts.delete(attempt);
      pass?.attempts.delete(attempt);
    });
  }

  private async send(delivery: DueDelivery, target: string, pass: Pass | undefined): Promise<void> {
    try {
      await this.record(delivery, await this.attempt(delivery), pass);
    } catch (err) {
      this.deps.logger.error({ err, delivery: delivery.id }, 'webhook delivery attempt not recorded; it is attempted again when its lease ends');
    } finally {
      this.inFlight.delete(delivery.id);
      const left = (this.inFlightByTarget.get(target) ?? 1) - 1;
      if (left > 0) this.inFlightByTarget.set(target, left);
      else this.inFlightByTarget.delete(target);
      this.wake();
    }
  }

  private async record(delivery: DueDelivery, result: AttemptResult, pass: Pass | undefined): Promise<void> {
    const outcome = await this.deps.store.transaction(async (tx) => {
      const delivered = result.error === null;
      const next = outcomeOf(delivered, delivery.roundAttempts + 1, this.deps.clock(), this.deps.config.webhookRetryDelaysSeconds);
      return (await tx.events.recordAttempt(delivery.organisationId, delivery.id, result, next)) ? next : undefined;
    });
    if (!outcome) return;
    if (pass) {
      pass.run.attempted += 1;
      pass.run[outcome.status === 'pending' ? 'retrying' : outcome.status] += 1;
    }
    if (result.error !== null) {
      this.deps.logger.info(
        { delivery: delivery.id, webhook: delivery.webhookId, statusCode: result.statusCode, error: result.error, next: outcome.status },
        'webhook delivery attempt failed',
      );
    }
  }

  private async attempt(delivery: DueDelivery): Promise<AttemptResult> {
    const timeoutMs = this.deps.config.webhookTimeoutMs;
    const attemptedAt = this.deps.clock();
    const started = performance.now();
    const headers = deliveryHeaders({
      id: delivery.id,
      eventType: delivery.eventType,
      eventVersion: delivery.eventVersion,
      organisationId: delivery.organisationId,
      secret: delivery.secret,
      body: delivery.body,
      timestamp: Math.floor(attemptedAt.getTime() / 1000),
    });
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const host = new URL(delivery.url).hostname;
      const refusal = this.deps.config.webhookAllowPrivate ? undefined : hostRefusal(host);
      if (refusal) throw new PrivateTarget(`${host} is not a public host (${refusal}); ${PRIVATE_HINT}`);
      const res = await request(delivery.url, {
        method: 'POST',
        headers,
        body: delivery.body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
      statusCode = res.statusCode;
      await res.body.dump().catch(() => undefined);
      if (statusCode < 200 || statusCode > 299) error = `the receiver answered HTTP ${statusCode}; only a 2xx counts as delivered`;
    } catch (err) {
      error = failureOf(err, timeoutMs);
    }
    return {
      id: newUlid(),
      attemptedAt: attemptedAt.toISOString(),
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    };
  }

  /**
   * One look at the store for the earliest pending delivery, whoever wrote it: kicks the worker when it
   * is due (the claim then takes it, unless another instance holds it). A delivery another instance
   * leased is pending at its lease's end, so it is looked at again only then.
   */
  private async poll(): Promise<void> {
    try {
      const next = await this.deps.store.read((tx) => tx.events.nextAttemptAt());
      if (next !== undefined && !this.stopped && Date.parse(next) <= this.deps.clock().getTime()) this.kick();
    } catch (err) {
      this.deps.logger.warn({ err }, 'looking for due webhook deliveries failed; looking again later');
    }
  }

  private wake(): void {
    this.generation += 1;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resume of waiters) resume();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sleeps until the earliest pending attempt after the last claim (at most MAX_WAIT_MS). */
  private arm(next: string | undefined): void {
    if (next === undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      return;
    }
    this.sleep(Date.parse(next) - this.deps.clock().getTime());
  }

  private sleep(ms: number): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.kick();
      },
      Math.min(Math.max(ms, MIN_WAIT_MS), MAX_WAIT_MS),
    );
    this.timer.unref();
  }
}
