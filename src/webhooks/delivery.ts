import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Config } from '../config.js';
import { newUlid } from '../ids.js';
import type { Logger } from '../logger.js';
import type { AttemptOutcome, AttemptResult, DueDelivery } from '../store/repos/events.js';
import type { Store } from '../store/store.js';
import { isPrivateHost } from '../domain/webhooks.js';
import { deliveryHeaders } from './signing.js';

const PRIVATE_HINT = 'webhooks must target public hosts unless BILLING_WEBHOOK_ALLOW_PRIVATE=true';

/**
 * DNS resolution that refuses private, loopback and link-local addresses at connection time, so a
 * public name that resolves (or is re-pointed) to an internal address is not reached.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 4);
    const refused = addresses.find((a) => isPrivateHost(a.address));
    if (refused) {
      const error = Object.assign(new Error(`${hostname} resolves to the private address ${refused.address}; ${PRIVATE_HINT}`), {
        code: 'EPRIVATE',
      });
      return callback(error, '', 4);
    }
    if (options.all) return callback(null, addresses as never, 4);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};

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

const BATCH = 20;
/** Longest sleep between two looks at the outbox, so a clock change or another process's rows are noticed. */
const MAX_WAIT_MS = 60_000;
const MIN_WAIT_MS = 20;
/** A delivery being sent is leased for the timeout plus this margin; a crash mid-attempt frees it after. */
const LEASE_MARGIN_MS = 30_000;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A delivery target that resolves to a private address while those are not allowed. */
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
 * Sends stored webhook deliveries with undici, never inside a transaction: a short unit of work picks
 * and leases the due ones, the requests go out, another unit records each attempt. `kick()` (after a
 * commit that wrote deliveries, and at start-up) starts a pass; after each pass the worker sleeps
 * until the earliest pending retry, on its own timer. `runDue` is the same pass for `jobs run`.
 */
export class DeliveryWorker {
  private readonly agent: Agent;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private stopping: Promise<void> | undefined;

  constructor(private readonly deps: { store: Store; config: Config; logger: Logger; clock: () => Date }) {
    this.agent = new Agent({
      connect: { timeout: deps.config.webhookTimeoutMs, ...(deps.config.webhookAllowPrivate ? {} : { lookup: publicOnlyLookup }) },
    });
  }

  /** Attempts every due delivery soon; calls while a pass runs are folded into one more pass. */
  kick(): void {
    if (this.stopped) return;
    this.again = true;
    this.draining ??= this.drain();
  }

  /** Stops the timers, waits for the attempts in flight, closes the connections. Final; repeatable. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      clearTimeout(this.timer);
      this.timer = undefined;
      await this.draining;
      await this.agent.close();
    })();
    return this.stopping;
  }

  /** One pass: attempts each delivery due at `now` once (nothing once stopped). */
  async runDue(now: Date): Promise<DeliveryRun> {
    const run: DeliveryRun = { attempted: 0, delivered: 0, retrying: 0, failed: 0, skipped: 0 };
    const seen = new Set<string>();
    while (!this.stopped) {
      const { send, skipped } = await this.claim(now, seen);
      run.skipped += skipped;
      if (send.length === 0 && skipped === 0) return run;
      for (const d of send) seen.add(d.id);
      const results = await Promise.all(send.map((d) => this.attempt(d)));
      await this.deps.store.transaction(async (tx) => {
        const finishedAt = this.deps.clock();
        for (const { delivery, result } of results) {
          const delivered = result.error === null;
          const outcome = outcomeOf(delivered, delivery.roundAttempts + 1, finishedAt, this.deps.config.webhookRetryDelaysSeconds);
          if (!(await tx.events.recordAttempt(delivery.organisationId, delivery.id, result, outcome))) continue;
          run.attempted += 1;
          run[outcome.status === 'pending' ? 'retrying' : outcome.status] += 1;
          if (!delivered) {
            this.deps.logger.info(
              { delivery: delivery.id, webhook: delivery.webhookId, statusCode: result.statusCode, error: result.error, next: outcome.status },
              'webhook delivery attempt failed',
            );
          }
        }
      });
    }
    return run;
  }

  /**
   * In one short unit of work: the next due deliveries not attempted in this pass yet; those of a
   * disabled webhook are skipped, the others leased so that no other pass picks them meanwhile.
   */
  private claim(now: Date, seen: ReadonlySet<string>): Promise<{ send: DueDelivery[]; skipped: number }> {
    return this.deps.store.transaction(async (tx) => {
      const due = (await tx.events.dueDeliveries(now.toISOString(), BATCH + seen.size)).filter((d) => !seen.has(d.id)).slice(0, BATCH);
      const at = this.deps.clock();
      const disabled = due.filter((d) => !d.webhookEnabled);
      for (const d of disabled) {
        await tx.events.skip(d.organisationId, d.id, `Not sent: webhook ${d.webhookId} is disabled`, at.toISOString());
      }
      const send = due.filter((d) => d.webhookEnabled);
      const leaseUntil = new Date(at.getTime() + this.deps.config.webhookTimeoutMs + LEASE_MARGIN_MS);
      await tx.events.lease(send.map((d) => d.id), leaseUntil.toISOString());
      return { send, skipped: disabled.length };
    });
  }

  private async attempt(delivery: DueDelivery): Promise<{ delivery: DueDelivery; result: AttemptResult }> {
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
      if (!this.deps.config.webhookAllowPrivate && isPrivateHost(host)) throw new PrivateTarget(`${host} is a private address; ${PRIVATE_HINT}`);
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
    const result: AttemptResult = {
      id: newUlid(),
      attemptedAt: attemptedAt.toISOString(),
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    };
    return { delivery, result };
  }

  private async drain(): Promise<void> {
    try {
      while (this.again && !this.stopped) {
        this.again = false;
        await this.runDue(this.deps.clock());
      }
      await this.arm();
    } catch (err) {
      this.deps.logger.error({ err }, 'webhook delivery pass failed; retrying later');
      this.sleep(MAX_WAIT_MS);
    } finally {
      this.draining = undefined;
      if (this.again && !this.stopped) this.kick();
    }
  }

  /** Sleeps until the earliest pending attempt (at most MAX_WAIT_MS). */
  private async arm(): Promise<void> {
    const next = await this.deps.store.read((tx) => tx.events.nextAttemptAt());
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
