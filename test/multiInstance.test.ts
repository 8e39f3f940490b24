/**
 * Several instances on one PostgreSQL database (issue 14, points 3 and 4).
 *
 * First the claims themselves, on stores as two instances would open them: job leases (on both
 * engines) and the `FOR UPDATE SKIP LOCKED` claim of due webhook deliveries (PostgreSQL). Then two
 * real `node dist/cli.js serve` processes on one database, driven at once over REST: of concurrent
 * payments of one installment, cancellations of one subscription, requests with one idempotency key,
 * billing runs of one period, exactly one has the effect; then a load spread over both while one is
 * killed (SIGKILL): no double effect, nothing acknowledged lost, and the webhook deliveries the killed
 * instance had leased are delivered by the survivor once the lease has ended.
 *
 * Needs `BILLING_TEST_PG_URL` (test/globalPostgres.ts sets it for every run) and dist/ (npm test
 * builds it first).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { JOB_LEASE_MS, JOBS_LEASE, runDueJobs } from '../src/jobs/runner.js';
import { createApp } from '../src/server.js';
import { PgStore } from '../src/store/pg/store.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { newPgDatabase } from './pgStore.js';

const PG_URL = process.env.BILLING_TEST_PG_URL;
const CLI = path.resolve('dist/cli.js');
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const iso = (ms: number) => new Date(ms).toISOString();

/** Two stores on one database, as two instances open it. */
interface TwoInstances {
  stores: [Store, Store];
  close(): Promise<void>;
}

const ENGINES: Array<[string, () => Promise<TwoInstances>]> = [
  [
    'sqlite',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-multi-'));
      const file = path.join(dir, 'billing.sqlite');
      const stores: [Store, Store] = [SqliteStore.open(file, { lockTimeoutMs: 10_000 }), SqliteStore.open(file, { lockTimeoutMs: 10_000 })];
      return {
        stores,
        close: async () => {
          for (const s of stores) await s.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'postgres',
    async () => {
      const db = await newPgDatabase();
      const stores: [Store, Store] = [await PgStore.open(db.url, { poolSize: 12 }), await PgStore.open(db.url, { poolSize: 12 })];
      return {
        stores,
        close: async () => {
          for (const s of stores) await s.close();
          await db.drop();
        },
      };
    },
  ],
];

describe.skipIf(!PG_URL).each(ENGINES)('job leases on %s, two instances on one database', (_engine, open) => {
  let two: TwoInstances;
  beforeAll(async () => {
    two = await open();
  });
  afterAll(() => two?.close());

  const acquire = (store: Store, name: string, holder: string, now: number, until: number) =>
    store.transaction((tx) => tx.jobLeases.acquire(name, holder, iso(now), iso(until)), { claim: true });

  it('of 20 claims of a free lease at the same moment, from both instances, exactly one takes it', async () => {
    const t = Date.parse('2026-11-01T00:00:00Z');
    const taken = await Promise.all(
      Array.from({ length: 20 }, (_, i) => acquire(two.stores[i % 2]!, 'race', `holder-${i}`, t, t + JOB_LEASE_MS)),
    );
    expect(taken.filter(Boolean)).toHaveLength(1);
    const winner = taken.indexOf(true);
    expect(await two.stores[1].read((tx) => tx.jobLeases.get('race'))).toEqual({ name: 'race', holder: `holder-${winner}`, leasedUntil: iso(t + JOB_LEASE_MS) });
  });

  it('a held lease is refused until it expires, then taken over; the old holder can no longer renew or release it', async () => {
    const [a, b] = two.stores;
    const t = Date.parse('2026-11-02T00:00:00Z');
    expect(await acquire(a, 'x', 'killed', t, t + JOB_LEASE_MS)).toBe(true);
    expect(await acquire(a, 'x', 'killed', t + 1000, t + 1000 + JOB_LEASE_MS)).toBe(true); // its own: extended
    expect(await acquire(b, 'x', 'survivor', t + JOB_LEASE_MS, t + 2 * JOB_LEASE_MS)).toBe(false);
    expect(await acquire(b, 'x', 'survivor', t + 1000 + JOB_LEASE_MS, t + 2 * JOB_LEASE_MS)).toBe(true);
    expect(await a.transaction((tx) => tx.jobLeases.renew('x', 'killed', iso(t + 3 * JOB_LEASE_MS)), { claim: true })).toBe(false);
    await a.transaction((tx) => tx.jobLeases.release('x', 'killed'), { claim: true });
    expect((await b.read((tx) => tx.jobLeases.get('x')))?.holder).toBe('survivor');
    expect(await b.transaction((tx) => tx.jobLeases.renew('x', 'survivor', iso(t + 3 * JOB_LEASE_MS)), { claim: true })).toBe(true);
    await b.transaction((tx) => tx.jobLeases.release('x', 'survivor'), { claim: true });
    expect(await acquire(a, 'x', 'third', t, t + JOB_LEASE_MS)).toBe(true);
  });

  it('runDueJobs: a scheduled run beside a live holder does nothing and says so; a killed holder is taken over after JOB_LEASE_MS; jobs run waits', async () => {
    const [a, b] = two.stores;
    let now = Date.parse('2026-11-03T00:00:00Z');
    const clock = () => new Date(now);
    const config = loadConfig({ LOG_LEVEL: 'silent', BILLING_JOBS_INTERVAL_MS: '0' });
    const survivor = createApp(config, { store: b, clock });
    // An instance took the lease and was killed: nobody renews or releases it.
    expect(await acquire(a, JOBS_LEASE, 'killed-instance', now, now + JOB_LEASE_MS)).toBe(true);
    const skipped = await runDueJobs(survivor, clock());
    expect(skipped.notRun).toMatch(/held by killed-instance until/);
    expect(skipped.jobs.billing).toEqual({ subscriptionsBilled: 0, invoicesCreated: 0, subscriptionsFailed: 0 });
    now += JOB_LEASE_MS - 1;
    expect((await runDueJobs(survivor, clock())).notRun).toMatch(/held by killed-instance/);
    now += 1;
    const ran = await runDueJobs(survivor, clock());
    expect(ran.notRun).toBeUndefined();
    const after = await b.read((tx) => tx.jobLeases.get(JOBS_LEASE));
    expect(after).toMatchObject({ leasedUntil: '' });
    expect(after?.holder).toMatch(new RegExp(`:${process.pid}:`));

    // `jobs run` (trigger cli) waits while another instance runs the jobs, then runs them itself.
    expect(await acquire(a, JOBS_LEASE, 'busy-instance', now, now + JOB_LEASE_MS)).toBe(true);
    const started = Date.now();
    const waiting = runDueJobs(survivor, clock(), 'cli');
    await sleep(400);
    await a.transaction((tx) => tx.jobLeases.release(JOBS_LEASE, 'busy-instance'), { claim: true });
    const waited = await waiting;
    expect(waited.notRun).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    survivor.emails.close();
    await survivor.deliveries.stop();
  });
});

describe.skipIf(!PG_URL)('claims of due webhook deliveries on PostgreSQL (FOR UPDATE SKIP LOCKED, READ COMMITTED)', () => {
  let two: TwoInstances;
  const org = 'org-claims';
  const webhook = 'wh-claims';
  const t = Date.parse('2026-11-10T00:00:00Z');
  beforeAll(async () => {
    two = await ENGINES[1]![1]();
    await two.stores[0].transaction(async (tx) => {
      await tx.system.createOrganisation({ id: org, name: 'Claims', createdAt: iso(t) });
      await tx.webhooks.insert(org, {
        id: webhook,
        url: 'http://127.0.0.1:9/hooks',
        events: ['invoice.created'],
        version: 'v1',
        enabled: true,
        secret: 'whsec_x',
        createdAt: iso(t),
        updatedAt: iso(t),
      });
      for (let i = 0; i < 10; i++) {
        const id = `ev-${i}`;
        await tx.events.insertEvent(org, { id, type: 'invoice.created', subjectId: `inv-${i}`, data: {}, createdAt: iso(t) });
        await tx.events.insertDelivery(org, {
          id: `del-${String(i).padStart(2, '0')}`,
          webhookId: webhook,
          eventId: id,
          eventType: 'invoice.created',
          eventVersion: 'v1',
          body: '{}',
          nextAttemptAt: iso(t + i),
          createdAt: iso(t),
        });
      }
    });
  });
  afterAll(() => two?.close());

  it('a claim beside another that has not committed yet takes the other deliveries at once; an expired lease is claimed again', async () => {
    const [a, b] = two.stores;
    const due = iso(t + 1000);
    const leaseUntil = iso(t + 33_000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let firstRows: string[] = [];
    let firstLocked!: () => void;
    const locked = new Promise<void>((resolve) => (firstLocked = resolve));
    const first = a.transaction(
      async (tx) => {
        firstRows = (await tx.events.dueOf(org, webhook, due, [], 6)).map((d) => d.id);
        await tx.events.lease(firstRows, leaseUntil);
        firstLocked();
        await gate; // the unit stays open, its rows locked
      },
      { claim: true },
    );
    await locked;
    const started = Date.now();
    const second = await b.transaction(
      async (tx) => {
        const rows = (await tx.events.dueOf(org, webhook, due, [], 6)).map((d) => d.id);
        await tx.events.lease(rows, leaseUntil);
        return rows;
      },
      { claim: true },
    );
    // Neither waited for the first unit (still open) nor was aborted: the rows it holds were skipped.
    expect(Date.now() - started).toBeLessThan(1000);
    release();
    await first;
    expect(firstRows).toHaveLength(6);
    expect(second).toHaveLength(4);
    expect([...firstRows, ...second].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `del-${String(i).padStart(2, '0')}`));

    // Leased: no claim takes them until the lease has passed; then any instance does (a killed holder's takeover).
    expect(await b.transaction((tx) => tx.events.dueOf(org, webhook, iso(t + 32_999), [], 20), { claim: true })).toEqual([]);
    const again = await b.transaction((tx) => tx.events.dueOf(org, webhook, iso(t + 33_000), [], 20), { claim: true });
    expect(again).toHaveLength(10);
  });
});

/* ------------------------------------------------------------------------------------------------ */
/* Two serve processes                                                                              */
/* ------------------------------------------------------------------------------------------------ */

interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  log: () => string;
}

/** Attempts are abandoned after this; a delivery is leased for it plus 30 s (LEASE_MARGIN_MS of src/webhooks/delivery.ts). */
const WEBHOOK_TIMEOUT_MS = 3000;
const LEASE_MARGIN_MS = 30_000;

async function serve(name: string, databaseUrl: string): Promise<Instance> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0'], {
    env: {
      ...process.env,
      BILLING_DATABASE_URL: databaseUrl,
      BILLING_DB_POOL_SIZE: '8',
      LOG_LEVEL: 'warn',
      BILLING_JOBS_INTERVAL_MS: '0',
      BILLING_WEBHOOK_ALLOW_PRIVATE: 'true',
      BILLING_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      BILLING_WEBHOOK_RETRY_DELAYS: '1',
      BILLING_WEBHOOK_CONCURRENCY_PER_TARGET: '6',
    },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.resume();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no listening line: ${stderr}`)), 15_000);
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}: ${stderr}`)));
    child.stderr!.on('data', () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return { name, url, child, log: () => stderr };
}

interface Answer {
  status: number;
  body: any;
  replayed: boolean;
}

/**
 * A receiver on 127.0.0.1 that, while `holding`, answers nothing (the attempts stay in flight), and
 * afterwards answers 204. It records, per delivery id, how many requests were open at once and how
 * many were answered with a 2xx.
 */
class HoldingReceiver {
  holding = true;
  readonly open = new Map<string, number>();
  readonly maxOpen = new Map<string, number>();
  readonly answered = new Map<string, number>();
  requests = 0;
  private readonly held: Array<{ id: string; res: ServerResponse }> = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HoldingReceiver> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new HoldingReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    server.on('request', (req, res) => receiver.onRequest(req, res));
    return receiver;
  }

  private onRequest(req: http.IncomingMessage, res: ServerResponse): void {
    const id = String(req.headers['x-webhook-id']);
    this.requests += 1;
    const open = (this.open.get(id) ?? 0) + 1;
    this.open.set(id, open);
    this.maxOpen.set(id, Math.max(open, this.maxOpen.get(id) ?? 0));
    res.on('close', () => this.open.set(id, (this.open.get(id) ?? 1) - 1));
    req.resume();
    req.on('end', () => {
      if (this.holding) this.held.push({ id, res });
      else this.answer(id, res);
    });
  }

  private answer(id: string, res: ServerResponse): void {
    if (res.destroyed || res.socket?.destroyed) return;
    res.writeHead(204);
    res.end();
    this.answered.set(id, (this.answered.get(id) ?? 0) + 1);
  }

  /** Answers every request still held (whose sender is still there) and every later one. */
  release(): void {
    this.holding = false;
    for (const { id, res } of this.held.splice(0)) this.answer(id, res);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe.skipIf(!PG_URL)('two serve processes on one PostgreSQL database', () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: pg.Pool;
  let A: Instance;
  let B: Instance;
  let apiKey: string;
  let organisationId: string;
  const timings: Record<string, number> = {};

  async function call(target: Instance, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${target.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  async function created(target: Instance, route: string, body: unknown): Promise<any> {
    const answer = await call(target, 'POST', route, body);
    if (answer.status !== 201) throw new Error(`POST ${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  const count = async (sql: string, ...params: unknown[]) => Number((await pool.query<{ n: string }>(sql, params)).rows[0]!.n);

  /** The same request from `perInstance` callers on each instance at once. */
  const atOnce = (perInstance: number, request: (target: Instance) => Promise<Answer>) =>
    Promise.all(Array.from({ length: 2 * perInstance }, (_, i) => request(i % 2 === 0 ? A : B)));

  let seatPlan: any;
  let meteredPlan: any;

  beforeAll(async () => {
    if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: npm test builds it first (npm run build)');
    const t0 = performance.now();
    db = await newPgDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    const init = JSON.parse((await run(process.execPath, [CLI, 'init', '--org', 'Multi', '--database-url', db.url], { env: { ...process.env, LOG_LEVEL: 'silent' } })).stdout);
    apiKey = init.apiKey;
    organisationId = init.organisationId;
    [A, B] = await Promise.all([serve('A', db.url), serve('B', db.url)]);
    timings.startMs = Math.round(performance.now() - t0);

    const seat = await created(A, '/catalogue/products', { name: 'Seat' });
    const seatPrice = await created(B, `/catalogue/products/${seat.id}/price-plans`, { type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
    seatPlan = await created(A, '/catalogue/plans', { code: 'seat', name: 'Seat', charges: [{ product: seat.id, pricePlan: seatPrice.id }] });
    await created(B, '/catalogue/units', { name: 'call' });
    const measurement = await created(A, '/catalogue/measurements', { unit: 'call', code: 'api_calls', aggregationType: 'sum', type: 'metered' });
    const api = await created(B, '/catalogue/products', { name: 'API', measurement: measurement.id });
    const apiPrice = await created(A, `/catalogue/products/${api.id}/price-plans`, {
      type: 'per_unit',
      currencyCode: 'EUR',
      price: { amount: 0.01 },
      billingInterval: '1M',
      payInAdvance: false,
    });
    meteredPlan = await created(B, '/catalogue/plans', { code: 'api', name: 'API', charges: [{ product: api.id, pricePlan: apiPrice.id }] });
  }, 60_000);

  afterAll(async () => {
    for (const instance of [A, B]) if (instance && instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGTERM');
    await Promise.all([A, B].filter(Boolean).map((i) => new Promise((resolve) => (i.child.exitCode !== null || i.child.signalCode !== null ? resolve(null) : i.child.once('exit', resolve)))));
    await pool?.end();
    await db?.drop();
    process.stderr.write(`[multiInstance] timings (ms): ${JSON.stringify(timings)}\n`);
  });

  const subscription = async (customerName: string, plan = seatPlan) => {
    const customer = await created(A, '/customers', { companyName: customerName });
    return created(B, '/subscriptions', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
  };

  it('three payments of the last installment of a payment plan on each instance at once: one is recorded, the others are 409', async () => {
    const t0 = performance.now();
    for (let round = 0; round < 3; round++) {
      const customer = await created(A, '/customers', { companyName: `Plan payer ${round}` });
      const invoice = await created(B, '/invoices', { customer: customer.id, lines: [{ description: 'Licence', quantity: 1, unitAmount: 10_000 }] });
      const plan = await created(A, '/payment-plans', {
        invoice: invoice.id,
        installments: [
          { dueAt: '2027-06-01', amount: 5000 },
          { dueAt: '2027-07-01', amount: 5000 },
        ],
      });
      expect((await call(B, 'POST', `/payment-plans/${plan.id}/payments`, { amount: 5000 })).status).toBe(200);
      const answers = await atOnce(3, (target) => call(target, 'POST', `/payment-plans/${plan.id}/payments`, { amount: 5000 }));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      expect(answers.find((a) => a.status === 200)!.body).toMatchObject({ status: 'completed' });
      const paid = (await call(A, 'GET', `/invoices/${invoice.id}`)).body;
      expect(paid).toMatchObject({ status: 'paid', amountPaid: 10_000 });
      expect(await count('SELECT count(*) AS n FROM invoice_payments WHERE invoice_id = $1', invoice.id)).toBe(2);
      expect(await count("SELECT count(*) AS n FROM events WHERE type = 'payment_plan.completed' AND subject_id = $1", plan.id)).toBe(1);
    }
    timings.paymentRacesMs = Math.round(performance.now() - t0);
  });

  it('three cancellations of one subscription on each instance at once: one schedules it, the others are 409', async () => {
    const t0 = performance.now();
    for (let round = 0; round < 3; round++) {
      const s = await subscription(`Canceller ${round}`);
      const answers = await atOnce(3, (target) => call(target, 'PUT', `/subscriptions/${s.id}/cancel`, {}));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      expect(answers.filter((a) => a.status === 409).every((a) => /already scheduled to cancel/.test(a.body.detail))).toBe(true);
      expect(await count("SELECT count(*) AS n FROM events WHERE type = 'subscription.cancellation_scheduled' AND subject_id = $1", s.id)).toBe(1);
    }
    timings.cancelRacesMs = Math.round(performance.now() - t0);
  });

  it('one request with the same Idempotency-Key and body on each instance at once: one effect, the same answer', async () => {
    const t0 = performance.now();
    for (let round = 0; round < 5; round++) {
      const key = `same-key-${round}`;
      const body = { companyName: `Idempotent ${round}` };
      const [first, second] = await atOnce(1, (target) => call(target, 'POST', '/customers', body, { 'idempotency-key': key }));
      expect([first!.status, second!.status]).toEqual([201, 201]);
      expect(second!.body).toEqual(first!.body);
      expect([first!.replayed, second!.replayed].filter(Boolean)).toHaveLength(1);
      expect(await count('SELECT count(*) AS n FROM customers WHERE company_name = $1', body.companyName)).toBe(1);
    }
    timings.idempotencyRacesMs = Math.round(performance.now() - t0);
  });

  it('three billing runs of one due period on each instance at once: one invoice', async () => {
    const t0 = performance.now();
    for (let round = 0; round < 3; round++) {
      const s = await subscription(`Billed ${round}`);
      const answers = await atOnce(3, (target) => call(target, 'POST', '/billing-runs', { subscription: s.id }));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
      expect(answers.reduce((n, a) => n + a.body.invoicesCreated, 0)).toBe(1);
      expect(await count('SELECT count(*) AS n FROM invoices WHERE subscription_id = $1', s.id)).toBe(1);
    }
    timings.billingRacesMs = Math.round(performance.now() - t0);
  });

  it('a load over both with one killed mid-run: no double effect, nothing acknowledged lost; its leased deliveries go out from the survivor after the lease', async () => {
    const t0 = performance.now();
    const receiver = await HoldingReceiver.start();
    try {
      const webhook = await created(A, '/webhooks', { url: receiver.url, events: ['invoice.created'], version: 'v1' });
      const metered = await subscription('Metered', meteredPlan);
      const item = metered.items[0].id as string;
      const invoiceCustomer = await created(B, '/customers', { companyName: 'Invoiced' });

      interface Op {
        kind: 'customer' | 'usage' | 'invoice';
        key: string;
        route: string;
        body: Record<string, unknown>;
        /** The instance that answered 201 (A before its death, or B), and the id it answered. */
        ackedBy?: string;
        id?: string;
        /** Sent to A but not answered (A died): retried on B with the same key. */
        failedOver?: boolean;
        /** B answered with the stored response of A's execution. */
        replayed?: boolean;
      }
      const OPS = 240;
      const ops: Op[] = Array.from({ length: OPS }, (_, i): Op => {
        const key = `load-${i}`;
        if (i % 3 === 0) return { kind: 'customer', key, route: '/customers', body: { companyName: `Load customer ${i}` } };
        if (i % 3 === 1) return { kind: 'usage', key, route: '/subscription-measurements', body: { subscriptionItem: item, quantity: '1' } };
        return {
          kind: 'invoice',
          key,
          route: '/invoices',
          body: { customer: invoiceCustomer.id, lines: [{ description: `Load invoice ${i}`, quantity: 1, unitAmount: 100 + i }] },
        };
      });

      let aDead = false;
      let acked = 0;
      let next = 0;
      const send = async (op: Op, index: number): Promise<void> => {
        for (let attempt = 1; ; attempt++) {
          const target = !aDead && index % 2 === 0 && !op.failedOver ? A : B;
          let answer: Answer | undefined;
          try {
            answer = await call(target, 'POST', op.route, op.body, { 'idempotency-key': op.key });
          } catch (err) {
            // A was killed with this request in flight: the client fails over to B with the same key.
            if (target === A && aDead) op.failedOver = true;
            else if (attempt >= 20) throw err;
          }
          if (answer?.status === 201) {
            op.ackedBy = target.name;
            op.id = answer.body.id;
            op.replayed = answer.replayed;
            acked += 1;
            return;
          }
          // 503 (the database aborted the unit too often) and 409 (the key still in flight) are retried with the same key.
          if (answer && ((answer.status !== 503 && answer.status !== 409) || attempt >= 20)) {
            throw new Error(`${op.route} on ${target.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
          }
          await sleep(50);
        }
      };
      const worker = async () => {
        while (next < ops.length) {
          const index = next++;
          await send(ops[index]!, index);
        }
      };

      // Deliveries an instance has leased: pending, their next attempt moved to a lease's end.
      const leased = () => count("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > $1", iso(Date.now() + 20_000));
      const killer = (async () => {
        const deadline = Date.now() + 15_000;
        while (!(acked >= OPS / 3 && (await leased()) >= 8)) {
          if (Date.now() > deadline) throw new Error(`no kill point: ${acked} acknowledged, ${await leased()} leased`);
          await sleep(10);
        }
        const exited = new Promise((resolve) => A.child.once('exit', resolve));
        A.child.kill('SIGKILL');
        aDead = true;
        const killedAt = Date.now();
        timings.killAtMs = Math.round(performance.now() - t0);
        timings.ackedAtKill = acked;
        // Only once A's connections are gone: its held requests must not count as answered.
        await exited;
        await sleep(200);
        receiver.release();
        return killedAt;
      })();
      const workers = Array.from({ length: 12 }, worker);
      const [killedAt] = await Promise.all([killer, ...workers]);
      timings.loadMs = Math.round(performance.now() - t0);
      expect(ops.every((op) => op.ackedBy)).toBe(true);
      timings.failedOver = ops.filter((op) => op.failedOver).length;
      timings.failedOverReplayed = ops.filter((op) => op.failedOver && op.replayed).length;
      timings.ackedByA = ops.filter((op) => op.ackedBy === 'A').length;
      expect(timings.ackedByA).toBeGreaterThan(0);
      expect(ops.filter((op) => op.ackedBy === 'B').length).toBeGreaterThan(0);

      // The deliveries the killed instance had leased: still pending with a lease that began before the kill.
      // (The survivor's own attempts are answered at once now, and its leases begin after the kill.)
      const leaseEndByKill = iso(killedAt + WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS + 50);
      await sleep(1000);
      const orphaned = (
        await pool.query<{ id: string; next_attempt_at: string }>(
          "SELECT id, next_attempt_at FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > $1 AND next_attempt_at <= $2 ORDER BY id",
          [iso(Date.now() + 15_000), leaseEndByKill],
        )
      ).rows;
      timings.leasedByKilled = orphaned.length;
      expect(orphaned.length).toBeGreaterThan(0);

      // No double effect, nothing acknowledged lost: the database has exactly one row per request.
      const byKind = (kind: Op['kind']) => ops.filter((op) => op.kind === kind);
      expect(await count("SELECT count(*) AS n FROM customers WHERE company_name LIKE 'Load customer %'")).toBe(byKind('customer').length);
      expect(await count("SELECT count(DISTINCT company_name) AS n FROM customers WHERE company_name LIKE 'Load customer %'")).toBe(byKind('customer').length);
      expect(await count('SELECT count(*) AS n FROM measurement_values WHERE item_id = $1', item)).toBe(byKind('usage').length);
      expect(await count("SELECT count(*) AS n FROM invoice_lines WHERE description LIKE 'Load invoice %'")).toBe(byKind('invoice').length);
      expect(await count("SELECT count(DISTINCT description) AS n FROM invoice_lines WHERE description LIKE 'Load invoice %'")).toBe(byKind('invoice').length);
      expect(await count('SELECT count(*) AS n FROM customers WHERE id = ANY($1)', byKind('customer').map((op) => op.id))).toBe(byKind('customer').length);
      expect(await count('SELECT count(*) AS n FROM invoices WHERE id = ANY($1)', byKind('invoice').map((op) => op.id))).toBe(byKind('invoice').length);
      expect(await count('SELECT count(*) AS n FROM measurement_values WHERE id = ANY($1)', byKind('usage').map((op) => op.id))).toBe(byKind('usage').length);
      const numbers = await pool.query<{ number: string; n: string }>(
        'SELECT number, count(*) AS n FROM invoices WHERE organisation_id = $1 GROUP BY number HAVING count(*) > 1',
        [organisationId],
      );
      expect(numbers.rows).toEqual([]);

      // Every delivery goes out: the orphaned ones once their lease has ended, from the survivor.
      const deliveries = byKind('invoice').length;
      const deadline = Date.now() + 45_000;
      while ((await count("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'", webhook.id)) < deliveries) {
        if (Date.now() > deadline) throw new Error(`deliveries not all delivered: ${B.log()}`);
        await sleep(200);
      }
      timings.allDeliveredMs = Math.round(performance.now() - t0);
      expect(await count('SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = $1', webhook.id)).toBe(deliveries);
      for (const { id, next_attempt_at: leaseEnd } of orphaned) {
        const success = (
          await pool.query<{ attempted_at: string }>('SELECT attempted_at FROM webhook_delivery_attempts WHERE delivery_id = $1 AND error IS NULL', [id])
        ).rows;
        expect(success).toHaveLength(1);
        expect(success[0]!.attempted_at >= leaseEnd).toBe(true);
      }
      // Each delivery was answered 2xx once, and never sent by two instances at the same time.
      const ids = (await pool.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1', [webhook.id])).rows.map((r) => r.id);
      expect(ids.filter((id) => receiver.answered.get(id) !== 1)).toEqual([]);
      expect([...receiver.maxOpen.values()].every((n) => n === 1)).toBe(true);
      timings.receiverRequests = receiver.requests;
      timings.deliveries = deliveries;
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
