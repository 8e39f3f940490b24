import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getWebhookDelivery } from '../src/domain/events.js';
import { runDueJobs } from '../src/jobs/runner.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createApp, startHttp } from '../src/server.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { EVENT_TYPES } from '../src/schemas/webhooks.js';

/** The payment-plan events: the counts below leave out the invoice events the same calls emit. */
const PLAN_EVENTS = EVENT_TYPES.filter((t) => t.startsWith('payment_plan.'));
import { fails, ok, setup, type Org, type TestEnv } from './helpers.js';
import { newPgStore, onPostgres } from './pgStore.js';
import { eventually, expectSigned, Receiver } from './webhookReceiver.js';

const MERGE_PATCH = 'application/merge-patch+json';
const FAST = { webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 300 };

let env: TestEnv;
let receiver: Receiver;
beforeAll(async () => {
  env = await setup(FAST);
});
afterAll(() => env.close());
afterEach(async () => {
  await receiver?.close();
});

/** A fresh organisation with a webhook on a fresh receiver. */
async function world(events: string[] = [...PLAN_EVENTS], target: TestEnv = env) {
  receiver = await Receiver.start();
  const org = await target.newOrg();
  const mcp = await target.mcpFor(org.apiKey);
  const webhook = await ok(mcp, 'create_webhook', { url: receiver.url, events });
  return { org, mcp, webhook, secret: webhook.secret as string };
}

/** Creates an open invoice and a plan on it: one payment_plan.created event. */
async function createPlan(mcp: Client, amount = 1_000): Promise<any> {
  const customer = (await ok(mcp, 'create_customer', { lastName: 'Hopper' })).id;
  const invoice = await ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Service', quantity: 1, unitAmount: amount }] });
  const today = new Date().toISOString().slice(0, 10);
  return ok(mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: today, amount }] });
}

async function deliveries(mcp: Client, webhookId: string): Promise<any[]> {
  return (await ok(mcp, 'list_webhook_deliveries', { id: webhookId, limit: 100 })).data;
}

async function deliveryIn(mcp: Client, webhookId: string, status: string): Promise<any> {
  return eventually(async () => (await deliveries(mcp, webhookId)).find((d) => d.status === status));
}

/**
 * A delivery in full (with its payload and attemptLog, which list rows leave out, REST's as MCP's):
 * get_webhook_delivery over REST and MCP shows the same, and the REST list row is the rest of it.
 */
async function fullDelivery(org: Org, webhookId: string, id: string, target: TestEnv = env): Promise<any> {
  const res = await target.http('GET', `/webhooks/${webhookId}/deliveries?limit=100`, { token: org.apiKey });
  expect(res.status).toBe(200);
  const listed = res.body.data.find((d: { id: string }) => d.id === id);
  const got = await target.http('GET', `/webhook-deliveries/${id}`, { token: org.apiKey });
  const { payload: _payload, attemptLog: _attemptLog, ...row } = got.body;
  expect(listed).toEqual(row);
  expect(await ok(await target.mcpFor(org.apiKey), 'get_webhook_delivery', { id })).toEqual(got.body);
  return got.body;
}

/** A delivery whose attempt failed and that now waits for its retry (not one still on its first attempt). */
async function waitingForRetry(mcp: Client, webhookId: string): Promise<any> {
  return eventually(async () => (await deliveries(mcp, webhookId)).find((d) => d.status === 'pending' && d.attempts > 0));
}

describe('delivery', () => {
  it('posts each event once with the headers of the interface and both signatures, and records it', async () => {
    const { org, mcp, webhook, secret } = await world();
    const plan = await createPlan(mcp);
    const [r] = await receiver.waitFor(1);
    expectSigned(r!, secret, org.organisationId);
    expect(r!.headers['x-webhook-event']).toBe('payment_plan.created');
    expect(r!.json.data).toEqual({ paymentPlan: plan });
    expect(Math.abs(Number(r!.headers['x-webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);

    const delivery = await deliveryIn(mcp, webhook.id, 'delivered');
    expect(delivery).toMatchObject({
      id: r!.json.event.id,
      webhook: webhook.id,
      eventType: 'payment_plan.created',
      eventVersion: 'v1',
      attempts: 1,
      nextAttemptAt: null,
      lastStatusCode: 204,
      lastError: null,
      deliveredAt: expect.any(String),
    });
    const full = await fullDelivery(org, webhook.id, delivery.id);
    expect(full).toMatchObject({ ...delivery, payload: r!.json });
    expect(full.attemptLog).toEqual([{ attemptedAt: expect.any(String), statusCode: 204, error: null, durationMs: expect.any(Number) }]);
    await new Promise((res) => setTimeout(res, 100));
    expect(receiver.received).toHaveLength(1);
  });

  it('writes one delivery per enabled webhook subscribed to the type, each with its own id', async () => {
    const { org, mcp, webhook: all, secret } = await world();
    const second = await Receiver.start();
    try {
      const createdOnly = await ok(mcp, 'create_webhook', { url: second.url, events: ['payment_plan.created'] });
      const disabled = await ok(mcp, 'create_webhook', { url: second.url, events: [...PLAN_EVENTS], enabled: false });
      const plan = await createPlan(mcp, 500);
      await ok(mcp, 'record_payment_plan_payment', { id: plan.id, amount: 500 });
      const toAll = await receiver.waitFor(2);
      const [toCreatedOnly] = await second.waitFor(1);
      await new Promise((res) => setTimeout(res, 100));
      expect(toAll.map((r) => r.json.event.type).sort()).toEqual(['payment_plan.completed', 'payment_plan.created']);
      expect(second.received).toHaveLength(1);
      expectSigned(toCreatedOnly!, createdOnly.secret, org.organisationId);
      expect(() => expectSigned(toCreatedOnly!, secret, org.organisationId)).toThrow();
      const created = toAll.find((r) => r.json.event.type === 'payment_plan.created')!;
      expect(toCreatedOnly!.json.event.id).not.toBe(created.json.event.id);
      expect(toCreatedOnly!.json.data).toEqual(created.json.data);
      expect(await deliveries(mcp, disabled.id)).toEqual([]);
      expect(await deliveries(mcp, createdOnly.id)).toHaveLength(1);
      expect(await deliveries(mcp, all.id)).toHaveLength(2);
    } finally {
      await second.close();
    }
  });

  it('retries a receiver that fails twice with the same id and body, then succeeds', async () => {
    const { org, mcp, webhook, secret } = await world();
    receiver.respond = (_r, n) => [500, 503][n] ?? 200;
    await createPlan(mcp);
    const got = await receiver.waitFor(3);
    for (const r of got) expectSigned(r, secret, org.organisationId);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    expect(new Set(got.map((r) => r.headers['x-webhook-id'])).size).toBe(1);
    const delivery = await deliveryIn(mcp, webhook.id, 'delivered');
    expect(delivery).toMatchObject({ attempts: 3, lastStatusCode: 200, lastError: null });
    const { attemptLog } = await fullDelivery(org, webhook.id, delivery.id);
    expect(attemptLog.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 503, 200]);
    expect(attemptLog[0].error).toContain('HTTP 500');
    await new Promise((res) => setTimeout(res, 100));
    expect(receiver.received).toHaveLength(3);
  });

  it('gives up after 3 retries; retry_webhook_delivery sends the same id and body again', async () => {
    const { mcp, webhook } = await world();
    receiver.respond = () => 500;
    await createPlan(mcp);
    const failed = await deliveryIn(mcp, webhook.id, 'failed');
    expect(failed).toMatchObject({ attempts: 4, lastStatusCode: 500, nextAttemptAt: null, deliveredAt: null });
    expect(failed.lastError).toContain('HTTP 500');
    await new Promise((res) => setTimeout(res, 100));
    expect(receiver.received).toHaveLength(4);

    receiver.respond = () => 200;
    const retried = await ok(mcp, 'retry_webhook_delivery', { id: failed.id });
    expect(retried).toMatchObject({ id: failed.id, attempts: 4 });
    expect(['pending', 'delivered']).toContain(retried.status);
    await receiver.waitFor(5);
    const delivered = await deliveryIn(mcp, webhook.id, 'delivered');
    expect(delivered).toMatchObject({ attempts: 5, lastStatusCode: 200 });
    expect(receiver.received[4]!.body).toBe(receiver.received[0]!.body);
    expect(receiver.received[4]!.headers['x-webhook-id']).toBe(failed.id);
  });

  it('counts a receiver that never answers as failed after the timeout', async () => {
    const { org, mcp, webhook } = await world();
    receiver.respond = () => 'hang';
    const started = Date.now();
    await createPlan(mcp);
    const failed = await deliveryIn(mcp, webhook.id, 'failed');
    expect(failed.attempts).toBe(4);
    expect(failed.lastStatusCode).toBeNull();
    expect(failed.lastError).toBe('no answer within 300 ms (BILLING_WEBHOOK_TIMEOUT_MS)');
    const { attemptLog } = await fullDelivery(org, webhook.id, failed.id);
    expect(attemptLog).toHaveLength(4);
    for (const a of attemptLog) expect(a.durationMs).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 280);
  });

  it('counts a refused connection as a failed attempt', async () => {
    const { mcp, webhook } = await world();
    await receiver.close();
    await createPlan(mcp);
    const failed = await deliveryIn(mcp, webhook.id, 'failed');
    expect(failed.lastError).toContain('could not reach the receiver');
    expect(failed.lastError).toContain('ECONNREFUSED');
  });

  it('waits the configured delays between retries', async () => {
    const slow = await setup({ ...FAST, webhookRetryDelaysSeconds: [1, 1, 1] });
    try {
      const { mcp, webhook } = await world([...PLAN_EVENTS], slow);
      receiver.respond = (_r, n) => (n === 0 ? 500 : 200);
      await createPlan(mcp);
      await receiver.waitFor(1);
      const pending = await waitingForRetry(mcp, webhook.id);
      expect(pending.attempts).toBe(1);
      const waited = Date.parse(pending.nextAttemptAt) - Date.parse(pending.lastAttemptAt);
      expect(waited).toBeGreaterThanOrEqual(1000);
      expect(waited).toBeLessThan(1500);
      await new Promise((res) => setTimeout(res, 500));
      expect(receiver.received).toHaveLength(1);
      await receiver.waitFor(2);
      expect((await deliveryIn(mcp, webhook.id, 'delivered')).attempts).toBe(2);
    } finally {
      await slow.close();
    }
  });
});

describe('disabled and deleted webhooks', () => {
  it('a PATCH that disables a webhook stops its pending deliveries; enabled again, a retry delivers', async () => {
    const slow = await setup({ ...FAST, webhookRetryDelaysSeconds: [1] });
    try {
      const { org, mcp, webhook } = await world([...PLAN_EVENTS], slow);
      receiver.respond = () => 500;
      await createPlan(mcp);
      await receiver.waitFor(1);
      const patched = await slow.http('PATCH', `/webhooks/${webhook.id}`, { body: { enabled: false }, contentType: MERGE_PATCH, token: org.apiKey });
      expect(patched.status).toBe(200);
      const skipped = await deliveryIn(mcp, webhook.id, 'skipped');
      expect(skipped).toMatchObject({ attempts: 1, nextAttemptAt: null });
      expect(skipped.lastError).toContain('disabled');
      expect(receiver.received).toHaveLength(1);

      const refused = await fails(mcp, 'retry_webhook_delivery', { id: skipped.id }, 409);
      expect(refused.detail).toContain('update_webhook');
      await createPlan(mcp);
      await new Promise((res) => setTimeout(res, 200));
      expect(receiver.received).toHaveLength(1);
      expect(await deliveries(mcp, webhook.id)).toHaveLength(1);

      receiver.respond = () => 200;
      await ok(mcp, 'update_webhook', { id: webhook.id, enabled: true });
      await ok(mcp, 'retry_webhook_delivery', { id: skipped.id });
      const [, again] = await receiver.waitFor(2);
      expect(again!.headers['x-webhook-id']).toBe(skipped.id);
      expect((await deliveryIn(mcp, webhook.id, 'delivered')).attempts).toBe(2);
    } finally {
      await slow.close();
    }
  });

  it('deleting a webhook drops its deliveries', async () => {
    const slow = await setup({ ...FAST, webhookRetryDelaysSeconds: [1] });
    try {
      const { mcp, webhook } = await world([...PLAN_EVENTS], slow);
      receiver.respond = () => 500;
      await createPlan(mcp);
      await waitingForRetry(mcp, webhook.id);
      await ok(mcp, 'delete_webhook', { id: webhook.id });
      await fails(mcp, 'list_webhook_deliveries', { id: webhook.id }, 404);
      await new Promise((res) => setTimeout(res, 1300));
      expect(receiver.received).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });
});

describe('jobs run and restarts', () => {
  it('jobs run attempts every delivery due at its --now, once per run', async () => {
    const patient = await setup({ ...FAST, webhookRetryDelaysSeconds: [3600] });
    try {
      const { mcp, webhook } = await world([...PLAN_EVENTS], patient);
      receiver.respond = (_r, n) => (n < 2 ? 500 : 200);
      await createPlan(mcp);
      const pending = await waitingForRetry(mcp, webhook.id);
      const none = { attempted: 0, delivered: 0, retrying: 0, failed: 0, skipped: 0 };
      expect((await runDueJobs(patient.app, new Date())).jobs.webhookDeliveries).toEqual(none);
      const later = Date.parse(pending.nextAttemptAt) + 1000;
      expect((await runDueJobs(patient.app, new Date(later))).jobs.webhookDeliveries).toEqual({ ...none, attempted: 1, retrying: 1 });
      expect(receiver.received).toHaveLength(2);
      const muchLater = new Date(later + 2 * 3600 * 1000);
      expect((await runDueJobs(patient.app, muchLater)).jobs.webhookDeliveries).toEqual({ ...none, attempted: 1, delivered: 1 });
      expect(receiver.received).toHaveLength(3);
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
      expect((await deliveryIn(mcp, webhook.id, 'delivered')).attempts).toBe(3);
    } finally {
      await patient.close();
    }
  });

  it('a restarted server delivers what was stored before the stop: never attempted, and waiting for a retry', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-restart-'));
    const db = path.join(dir, 'billing.sqlite');
    try {
      const first = await setup({ ...FAST, db, webhookRetryDelaysSeconds: [1] });
      const { org, mcp, webhook, secret } = await world([...PLAN_EVENTS], first);
      receiver.respond = () => 503;
      const plan = await createPlan(mcp);
      await receiver.waitFor(1);
      const retrying = await waitingForRetry(mcp, webhook.id);
      expect(retrying.attempts).toBe(1);
      await first.server.close();
      await ok(mcp, 'cancel_payment_plan', { id: plan.id });
      const stored = await deliveries(mcp, webhook.id);
      const never = stored.find((d) => d.eventType === 'payment_plan.canceled');
      expect(never).toMatchObject({ status: 'pending', attempts: 0 });
      const { payload } = await first.app.store.read((tx) => getWebhookDelivery(tx, org.organisationId, never.id));
      expect(payload.event).toMatchObject({ id: never.id, type: 'payment_plan.canceled' });
      await new Promise((res) => setTimeout(res, 1200));
      expect(receiver.received).toHaveLength(1);
      await first.close();

      receiver.respond = () => 200;
      const second = await setup({ ...FAST, db, webhookRetryDelaysSeconds: [1] });
      try {
        const got = await receiver.waitFor(3);
        const again = await second.mcpFor(org.apiKey);
        const done = await eventually(async () => {
          const all = await deliveries(again, webhook.id);
          return all.every((d) => d.status === 'delivered') && all;
        });
        expect(done.map((d: { id: string; attempts: number }) => [d.id, d.attempts])).toEqual([
          [retrying.id, 2],
          [never.id, 1],
        ]);
        const canceled = got.find((r) => r.json.event.type === 'payment_plan.canceled')!;
        expect(canceled.headers['x-webhook-id']).toBe(never.id);
        expect(canceled.json).toEqual(payload);
        expectSigned(canceled, secret, org.organisationId);
        const created = got.filter((r) => r.json.event.type === 'payment_plan.created');
        expect(created).toHaveLength(2);
        expect(created[1]!.body).toBe(created[0]!.body);
      } finally {
        await second.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a running server retries a delivery another instance wrote and attempted, without any jobs run', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-foreign-'));
    const db = path.join(dir, 'billing.sqlite');
    const other = await setup({ ...FAST, db, webhookRetryDelaysSeconds: [1] });
    // The running server: a second app on the same database, started before the other writes anything,
    // looking for due deliveries every 100 ms. It never gets a kick for them (they are not its commits).
    const config = { ...loadConfig({ LOG_LEVEL: 'silent', BILLING_JOBS_INTERVAL_MS: '0' }), ...FAST, db, webhookRetryDelaysSeconds: [1] };
    const store = onPostgres() ? await newPgStore(db) : SqliteStore.open(db, { lockTimeoutMs: 10_000 });
    const running = createApp(config, { store, logger: createLogger('silent'), deliveryPollMs: 100 });
    const server = await startHttp(running, '127.0.0.1', 0);
    try {
      const { org, mcp, webhook, secret } = await world([...PLAN_EVENTS], other);
      receiver.respond = (_r, n) => (n === 0 ? 500 : 200);
      await createPlan(mcp);
      const retrying = await waitingForRetry(mcp, webhook.id);
      // The writer stops before its retry is due (as a `jobs run` process ends after its pass).
      await other.server.close();
      expect(retrying).toMatchObject({ attempts: 1, lastStatusCode: 500 });
      const [first, second] = await receiver.waitFor(2);
      expect(second!.headers['x-webhook-id']).toBe(retrying.id);
      expect(second!.body).toBe(first!.body);
      expectSigned(second!, secret, org.organisationId);
      const delivered = await deliveryIn(mcp, webhook.id, 'delivered');
      expect(delivered).toMatchObject({ id: retrying.id, attempts: 2, lastStatusCode: 200 });
      expect(Date.parse(delivered.lastAttemptAt)).toBeGreaterThanOrEqual(Date.parse(retrying.nextAttemptAt));
      await new Promise((res) => setTimeout(res, 300));
      expect(receiver.received).toHaveLength(2);
    } finally {
      await server.close();
      await store.close();
      await other.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('list_webhook_deliveries and retry_webhook_delivery', () => {
  it('filters by status and serves the REST routes', async () => {
    const { mcp, webhook, org } = await world();
    receiver.respond = (_r, n) => (n < 4 ? 500 : 200);
    await createPlan(mcp);
    const failed = await deliveryIn(mcp, webhook.id, 'failed');
    await createPlan(mcp);
    await deliveryIn(mcp, webhook.id, 'delivered');
    expect((await ok(mcp, 'list_webhook_deliveries', { id: webhook.id, status: 'failed' })).data.map((d: { id: string }) => d.id)).toEqual([failed.id]);
    const token = org.apiKey;
    const listed = await env.http('GET', `/webhooks/${webhook.id}/deliveries?status=delivered`, { token });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect((await env.http('GET', `/webhooks/${webhook.id}/deliveries?status=lost`, { token })).status).toBe(400);
    const retried = await env.http('POST', `/webhook-deliveries/${failed.id}/retry`, { token });
    expect(retried.status).toBe(200);
    expect(retried.body.id).toBe(failed.id);
    expect((await env.http('POST', '/webhook-deliveries/01J00000000000000000000000/retry', { token })).status).toBe(404);
    expect((await env.http('GET', '/webhooks/0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69/deliveries', { token })).status).toBe(404);
  });

  it('lists summary rows over REST and MCP: the body and attempt log are get_webhook_delivery\'s', async () => {
    const { mcp, webhook, org } = await world();
    receiver.respond = (_r, n) => (n === 0 ? 500 : 200);
    await createPlan(mcp);
    const delivery = await deliveryIn(mcp, webhook.id, 'delivered');
    const rest = await env.http('GET', `/webhooks/${webhook.id}/deliveries`, { token: org.apiKey });
    const viaMcp = (await ok(mcp, 'list_webhook_deliveries', { id: webhook.id })).data;
    const got = await env.http('GET', `/webhook-deliveries/${delivery.id}`, { token: org.apiKey });
    expect(got.body.payload.event.id).toBe(delivery.id);
    expect(got.body.attemptLog.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 200]);
    const { payload: _payload, attemptLog: _attemptLog, ...row } = got.body;
    expect(row).toMatchObject({ id: delivery.id, webhook: webhook.id, eventType: 'payment_plan.created', status: 'delivered', attempts: 2, lastStatusCode: 200 });
    for (const rows of [rest.body.data, viaMcp]) {
      expect(rows).toEqual([row]);
    }
  });

  it("answers 404 for another organisation's webhook or delivery, and 403 without the permission", async () => {
    const { mcp, webhook, org } = await world();
    await createPlan(mcp);
    const delivery = await deliveryIn(mcp, webhook.id, 'delivered');
    const stranger = await env.mcpFor((await env.newOrg()).apiKey);
    await fails(stranger, 'list_webhook_deliveries', { id: webhook.id }, 404);
    await fails(stranger, 'retry_webhook_delivery', { id: delivery.id }, 404);
    const reader = await env.newKey(org, ['webhook:read']);
    expect((await env.http('GET', `/webhooks/${webhook.id}/deliveries`, { token: reader })).status).toBe(200);
    expect((await env.http('POST', `/webhook-deliveries/${delivery.id}/retry`, { token: reader })).status).toBe(403);
    const none = await env.newKey(org, ['payment-plan:read']);
    expect((await env.http('GET', `/webhooks/${webhook.id}/deliveries`, { token: none })).status).toBe(403);
    await new Promise((res) => setTimeout(res, 100));
    expect(receiver.received).toHaveLength(1);
  });
});
