import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { runDueJobs } from '../src/jobs/runner.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { onPostgres } from './pgStore.js';
import { eventually, Receiver } from './webhookReceiver.js';

/**
 * Issue 16, item 3: deliveries are independent. A receiver that never answers holds at most
 * BILLING_WEBHOOK_CONCURRENCY_PER_TARGET attempts and delays only its own deliveries; another
 * target's delivery starts as soon as a global slot is free.
 */

const TIMEOUT_MS = 2000;
/** Retries far away, so that every attempt seen below is a first attempt. */
const BASE: Partial<Config> = { webhookAllowPrivate: true, webhookRetryDelaysSeconds: [3600], webhookTimeoutMs: TIMEOUT_MS };

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  // Receivers first: their hanging connections are destroyed, so the servers stop at once.
  for (const o of open.splice(0).reverse()) await o.close();
});

async function started(overrides: Partial<Config>): Promise<TestEnv> {
  const env = await setup({ ...BASE, ...overrides });
  open.unshift(env);
  return env;
}

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  open.push(r);
  return r;
}

async function orgWithWebhook(env: TestEnv, url: string, events: string[]): Promise<{ mcp: Client; webhook: any }> {
  const org = await env.newOrg();
  const mcp = await env.mcpFor(org.apiKey);
  return { mcp, webhook: await ok(mcp, 'create_webhook', { url, events }) };
}

function day(offset: number): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

/** A plan of `count` installments of 100 cents; one payment for all but the last: `count - 1` payment_plan.rate_paid events in one commit. */
async function manyRatePaidEvents(mcp: Client, count: number): Promise<void> {
  const customer = (await ok(mcp, 'create_customer', { lastName: 'Lovelace' })).id;
  const invoice = await ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Service', quantity: 1, unitAmount: count * 100 }] });
  const installments = Array.from({ length: count }, (_, i) => ({ dueAt: day(i), amount: 100 }));
  const plan = await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installments });
  await ok(mcp, 'record_payment_plan_payment', { id: plan.id, amount: (count - 1) * 100 });
}

/** One payment_plan.created event. */
async function oneEvent(mcp: Client): Promise<void> {
  const customer = (await ok(mcp, 'create_customer', { lastName: 'Hopper' })).id;
  const invoice = await ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Service', quantity: 1, unitAmount: 500 }] });
  await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: day(0), amount: 500 }] });
}

async function deliveries(mcp: Client, webhookId: string): Promise<any[]> {
  return (await ok(mcp, 'list_webhook_deliveries', { id: webhookId, limit: 100 })).data;
}

describe('independent deliveries', () => {
  it("a receiver that never answers holds only its per-target slots; another organisation's event is delivered at once", async () => {
    const env = await started({ webhookConcurrency: 32, webhookConcurrencyPerTarget: 4 });
    const hanging = await receiver();
    hanging.respond = () => 'hang';
    const healthy = await receiver();
    const a = await orgWithWebhook(env, hanging.url, ['payment_plan.rate_paid']);
    const b = await orgWithWebhook(env, healthy.url, ['payment_plan.created']);

    // 40 deliveries for A: more than the old batch of 20 and ten times the per-target limit.
    await manyRatePaidEvents(a.mcp, 41);
    expect(await deliveries(a.mcp, a.webhook.id)).toHaveLength(40);
    await hanging.waitFor(4);
    const aFirstAttempt = Date.now();

    await oneEvent(b.mcp);
    const bStored = Date.now();
    const [got] = await healthy.waitFor(1, 'payment_plan.created', TIMEOUT_MS);
    const bArrived = Date.now();
    // B went out while every connection A's receiver was given is still open, unanswered.
    expect(hanging.received).toHaveLength(4);
    expect(bArrived - aFirstAttempt).toBeLessThan(TIMEOUT_MS - 200);
    expect(bArrived - bStored).toBeLessThan(TIMEOUT_MS / 3);
    const [bDelivery] = await deliveries(b.mcp, b.webhook.id);
    expect(bDelivery.id).toBe(got!.json.event.id);
    await eventually(async () => (await deliveries(b.mcp, b.webhook.id))[0].status === 'delivered', TIMEOUT_MS);

    // Still 4 while they hang; when they time out the next 4 of A's start, never more.
    await new Promise((r) => setTimeout(r, 300));
    expect(hanging.received).toHaveLength(4);
    await hanging.waitFor(8, undefined, TIMEOUT_MS * 2);
    expect(hanging.received).toHaveLength(8);
    const timedOut = (await deliveries(a.mcp, a.webhook.id)).filter((d) => d.attempts > 0);
    expect(timedOut.length).toBeGreaterThanOrEqual(4);
    for (const d of timedOut) expect(d.lastError).toBe(`no answer within ${TIMEOUT_MS} ms (BILLING_WEBHOOK_TIMEOUT_MS)`);
    expect(new Set(hanging.received.map((r) => r.json.event.id)).size).toBe(8);
  });

  it('the per-target limit counts every webhook of one origin together', async () => {
    const env = await started({ webhookConcurrency: 32, webhookConcurrencyPerTarget: 3 });
    const hanging = await receiver();
    hanging.respond = () => 'hang';
    const one = await orgWithWebhook(env, hanging.url, ['payment_plan.rate_paid']);
    const other = await orgWithWebhook(env, `${hanging.url}/other?tenant=2`, ['payment_plan.rate_paid']);
    await manyRatePaidEvents(one.mcp, 6);
    await manyRatePaidEvents(other.mcp, 6);
    await hanging.waitFor(3);
    await new Promise((r) => setTimeout(r, 400));
    expect(hanging.received).toHaveLength(3);
  });

  it('the global limit caps attempts in flight; a freed slot goes to a target with none in flight', async () => {
    const env = await started({ webhookConcurrency: 2, webhookConcurrencyPerTarget: 4 });
    const hanging = await receiver();
    hanging.respond = () => 'hang';
    const healthy = await receiver();
    const a = await orgWithWebhook(env, hanging.url, ['payment_plan.rate_paid']);
    const b = await orgWithWebhook(env, healthy.url, ['payment_plan.created']);

    await manyRatePaidEvents(a.mcp, 11);
    await hanging.waitFor(2);
    const aFirstAttempt = Date.now();
    await oneEvent(b.mcp);
    await new Promise((r) => setTimeout(r, 300));
    // Both global slots are held by A's unanswered attempts: B waits, A gets no third one.
    expect(hanging.received).toHaveLength(2);
    expect(healthy.received).toHaveLength(0);

    // When A's two time out, B (nothing in flight) gets one of the freed slots, ahead of A's 8 older ones.
    await healthy.waitFor(1, undefined, TIMEOUT_MS * 2);
    expect(Date.now() - aFirstAttempt).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(Date.now() - aFirstAttempt).toBeLessThan(TIMEOUT_MS * 2);
    expect(hanging.received.length).toBeLessThanOrEqual(4);
  });

  // Which of the worker and the run takes each retry follows from SQLite's one writer: the counts below
  // hold there. On PostgreSQL the two claim side by side (FOR UPDATE SKIP LOCKED) and either may win a
  // delivery; that no delivery is sent twice while in flight there is test/multiInstance.test.ts's.
  it.skipIf(onPostgres())('jobs run beside the worker shares its slots and never sends a delivery that is in flight again', async () => {
    const env = await started({ webhookConcurrency: 32, webhookConcurrencyPerTarget: 4 });
    const receiver_ = await receiver();
    receiver_.respond = () => 'hang';
    const a = await orgWithWebhook(env, receiver_.url, ['payment_plan.rate_paid']);
    await manyRatePaidEvents(a.mcp, 7);
    await receiver_.waitFor(4);
    const heldAt = Date.now();
    // Two hours ahead: the leases of the 4 attempts in flight have ended by then, their retries are due.
    const run = runDueJobs(env.app, new Date(Date.now() + 2 * 3600_000));
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver_.received).toHaveLength(4);
    expect(new Set(receiver_.received.map((r) => r.json.event.id)).size).toBe(4);

    receiver_.respond = () => 204;
    const { jobs } = await run;
    expect(Date.now() - heldAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    // The 4 retries due (at the run's time) once the held attempts had timed out, and those of the 2
    // that waited for a slot which the worker did not take first.
    const { attempted, ...rest } = jobs.webhookDeliveries as Record<string, number>;
    expect(attempted).toBeGreaterThanOrEqual(4);
    expect(rest).toEqual({ delivered: attempted, retrying: 0, failed: 0, skipped: 0 });
    const ids = receiver_.received.map((r) => r.json.event.id);
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(6);
    const all = await deliveries(a.mcp, a.webhook.id);
    expect(all.map((d) => d.status)).toEqual(Array(6).fill('delivered'));
    expect(all.map((d) => d.attempts).sort()).toEqual([1, 1, 2, 2, 2, 2]);
  });
});

describe('configuration of the limits', () => {
  it('reads BILLING_WEBHOOK_CONCURRENCY and BILLING_WEBHOOK_CONCURRENCY_PER_TARGET; a bad value names the variable', () => {
    expect(loadConfig({})).toMatchObject({ webhookConcurrency: 32, webhookConcurrencyPerTarget: 4 });
    expect(loadConfig({ BILLING_WEBHOOK_CONCURRENCY: '8', BILLING_WEBHOOK_CONCURRENCY_PER_TARGET: '2' })).toMatchObject({
      webhookConcurrency: 8,
      webhookConcurrencyPerTarget: 2,
    });
    expect(() => loadConfig({ BILLING_WEBHOOK_CONCURRENCY: '0' })).toThrow(/BILLING_WEBHOOK_CONCURRENCY must be at least 1 \(got "0"\)/);
    expect(() => loadConfig({ BILLING_WEBHOOK_CONCURRENCY_PER_TARGET: 'four' })).toThrow(
      /BILLING_WEBHOOK_CONCURRENCY_PER_TARGET must be a whole number/,
    );
  });
});
