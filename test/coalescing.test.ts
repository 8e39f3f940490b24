/**
 * Concurrent single values (POST /subscription-measurements) and single usage events (POST
 * /usage-events) share units of work (Operation.coalesce): each request is answered exactly as it
 * would be alone, a request never fails for another's sake, and organisations never share a unit.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../src/errors.js';
import type { Store } from '../src/store/store.js';
import { buildFixture } from './fixtures.js';
import { ok, setup, type HttpResult, type Org, type TestEnv } from './helpers.js';

let env: TestEnv;
let other: Org;
const NOW = '2026-03-20T12:00:00Z';

interface Metered {
  subscription: string;
  item: string;
}

/** A subscription of the shared fixture's plan (test/fixtures.ts), and its item metering `api_calls<suffix>` (sum); `activate: false` leaves it a draft. */
async function meteredItem(mcp: Client, suffix: string, activate = true): Promise<Metered> {
  const f = await buildFixture(mcp, suffix);
  const s = await ok(mcp, 'create_subscription', {
    customer: f.customer.id,
    plan: f.plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
    startDate: '2026-03-01T00:00:00+01:00',
    activate,
  });
  return { subscription: s.id, item: s.items.find((i: { product: { id: string } }) => i.product.id === f.meteredProduct.id).id };
}

/** Counts the units of work the store runs while `fn` runs. */
async function countingUnits<T>(store: Store, fn: () => Promise<T>): Promise<{ result: T; units: number }> {
  const spy = vi.spyOn(store, 'transaction');
  try {
    const result = await fn();
    return { result, units: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

const post = (body: unknown, token?: string) => env.http('POST', '/subscription-measurements', { body, token });

/** A problem as the caller reads it: without the parts that differ between two requests. */
const problem = (r: HttpResult) => ({ status: r.status, type: r.body.type, detail: r.body.detail, violations: r.body.violations });

let a: Metered;
let draft: Metered;
let b: Metered;

beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  a = await meteredItem(env.mcp, 'A');
  draft = await meteredItem(env.mcp, 'Draft', false);
  other = await env.newOrg('Other');
  b = await meteredItem(await env.mcpFor(other.apiKey), 'B');
});
afterAll(() => env.close());

describe('concurrent single values', () => {
  it('share units of work, and each is answered as it would be alone', async () => {
    const bodies: unknown[] = [];
    for (let i = 1; i <= 15; i++) bodies.push({ subscriptionItem: a.item, quantity: String(i) });
    const wrong: unknown[] = [
      { subscriptionItem: 'no-such-item', quantity: '1' },
      { subscriptionItem: a.item, quantity: '1', measuredAt: '2026-03-21T12:00:00Z' },
      { subscriptionItem: draft.item, quantity: '1' },
      { subscriptionItem: a.item, quantity: '1', measurementCode: 'api_callsDraft' },
    ];
    for (const [k, body] of wrong.entries()) bodies.splice(k * 4 + 3, 0, body);

    // The first unit takes 200 ms, so that the other requests arrive while it is in flight.
    const op = env.app.catalog.find('create_subscription_measurement')!;
    const run = op.coalesce!.run;
    const slow = vi.spyOn(op.coalesce!, 'run').mockImplementationOnce(async (ctx, inputs) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return run(ctx, inputs);
    });
    const { result: answers, units } = await countingUnits(env.app.store, () => Promise.all(bodies.map((body) => post(body))));
    slow.mockRestore();
    expect(units).toBeLessThanOrEqual(3);

    const created = answers.filter((r) => r.status === 201);
    expect(created.map((r) => r.body.quantity).sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: 15 }, (_, i) => String(i + 1)));
    for (const [i, r] of answers.entries()) {
      const body = bodies[i] as { quantity: string };
      if (r.status === 201) expect(r.body).toMatchObject({ quantity: body.quantity, subscriptionItem: a.item, subscription: a.subscription, measuredAt: new Date(NOW).toISOString() });
    }
    expect(new Set(created.map((r) => r.body.id)).size).toBe(15);
    for (const r of created.slice(0, 3)) expect((await env.http('GET', `/subscription-measurements/${r.body.id}`)).body).toEqual(r.body);
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: a.subscription });
    expect(usage.data[0]).toMatchObject({ value: '120', eventCount: 15 });

    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual([422, 422, 409, 422]);
    for (const [k, body] of wrong.entries()) {
      const alone = await post(body);
      expect(problem(refused[k]!)).toEqual(problem(alone));
    }
    expect(refused.map((r) => r.body.violations?.[0]?.propertyPath)).toEqual(['subscriptionItem', 'measuredAt', undefined, 'measurementCode']);
  });

  it('of two organisations never share a unit: each value lands in its own, and one cannot reach the other’s item', async () => {
    const calls = [
      ...Array.from({ length: 10 }, () => post({ subscriptionItem: a.item, quantity: '2' })),
      ...Array.from({ length: 10 }, () => post({ subscriptionItem: b.item, quantity: '3' }, other.apiKey)),
      post({ subscriptionItem: a.item, quantity: '4' }, other.apiKey),
    ];
    const before = (await ok(env.mcp, 'get_subscription_usage', { id: a.subscription })).data[0].value;
    const answers = await Promise.all(calls);
    expect(answers.map((r) => r.status)).toEqual([...Array(20).fill(201), 422]);
    expect(answers[20]!.body.violations[0].propertyPath).toBe('subscriptionItem');
    expect((await ok(env.mcp, 'get_subscription_usage', { id: a.subscription })).data[0].value).toBe(String(Number(before) + 20));
    const usageB = await ok(await env.mcpFor(other.apiKey), 'get_subscription_usage', { id: b.subscription });
    expect(usageB.data[0]).toMatchObject({ value: '30', eventCount: 10 });
  });

  it('run again one by one when their shared unit fails as a whole: no request fails for another’s sake, none is recorded twice', async () => {
    const op = env.app.catalog.find('create_subscription_measurement')!;
    const run = op.coalesce!.run;
    let failed = 0;
    const spy = vi.spyOn(op.coalesce!, 'run').mockImplementation(async (ctx, inputs) => {
      if (inputs.length > 1 && failed === 0) {
        failed = inputs.length;
        await run(ctx, inputs);
        throw Object.assign(new Error('could not extend file'), { code: '53100' });
      }
      return run(ctx, inputs);
    });
    try {
      const before = (await ok(env.mcp, 'get_subscription_usage', { id: a.subscription })).data[0];
      const answers = await Promise.all(Array.from({ length: 19 }, () => post({ subscriptionItem: a.item, quantity: '1' })));
      expect(failed).toBeGreaterThan(1);
      expect(answers.map((r) => r.status)).toEqual(Array(19).fill(201));
      const after = (await ok(env.mcp, 'get_subscription_usage', { id: a.subscription })).data[0];
      expect([after.eventCount - before.eventCount, Number(after.value) - Number(before.value)]).toEqual([19, 19]);
    } finally {
      spy.mockRestore();
    }
  });

  it('all get the 503 of a unit the database could not take, at once, and none is recorded', async () => {
    const op = env.app.catalog.find('create_subscription_measurement')!;
    let largest = 0;
    const spy = vi.spyOn(op.coalesce!, 'run').mockImplementation(async (_ctx, inputs) => {
      // The first unit takes 200 ms, so that the other requests arrive while it is in flight.
      if (largest === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      largest = Math.max(largest, inputs.length);
      const busy = new AppError('unavailable', 'The database is busy; nothing was changed, retry');
      busy.retryAfterSeconds = 1;
      throw busy;
    });
    try {
      const before = (await ok(env.mcp, 'get_subscription_usage', { id: a.subscription })).data[0];
      const answers = await Promise.all(Array.from({ length: 10 }, () => post({ subscriptionItem: a.item, quantity: '1' })));
      expect(answers.map((r) => [r.status, r.headers.get('retry-after')])).toEqual(Array(10).fill([503, '1']));
      expect(largest).toBeGreaterThan(1);
      expect((await ok(env.mcp, 'get_subscription_usage', { id: a.subscription })).data[0].eventCount).toBe(before.eventCount);
    } finally {
      spy.mockRestore();
    }
  });

  it('with an idempotency key each run alone, and a retry replays its own answer', async () => {
    const keyed = (i: number) =>
      env.http('POST', '/subscription-measurements', { body: { subscriptionItem: a.item, quantity: String(100 + i) }, headers: { 'idempotency-key': `coalesce-${i}` } });
    const { result: first, units } = await countingUnits(env.app.store, () => Promise.all(Array.from({ length: 5 }, (_, i) => keyed(i))));
    expect(units).toBe(5);
    const again = await Promise.all(Array.from({ length: 5 }, (_, i) => keyed(i)));
    expect(again.map((r) => r.body)).toEqual(first.map((r) => r.body));
    expect(again.map((r) => r.headers.get('idempotent-replayed'))).toEqual(Array(5).fill('true'));
  });
});

describe('concurrent single usage events', () => {
  let subscription: string;
  beforeAll(async () => {
    const product = await ok(env.mcp, 'create_product', { name: 'Tokens', unit: 'token', usageMetric: { eventName: 'tokens', aggregation: 'sum', property: 'n' } });
    const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'per_unit', currencyCode: 'EUR', price: { amount: 0.01 }, billingInterval: '1M', payInAdvance: false });
    const plan = await ok(env.mcp, 'create_plan', { code: 'tokens', name: 'Tokens', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Tokens', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
    subscription = (await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true })).id;
  });

  const event = (id: string, n: number, to = subscription) => ({ id, eventName: 'tokens', subscription: to, properties: { n } });
  const send = (body: unknown, query = '') => env.http('POST', `/usage-events${query}`, { body });

  it('share units of work; each call is answered as alone, after the calls before it', async () => {
    const op = env.app.catalog.find('ingest_usage_events')!;
    const run = op.coalesce!.run;
    const slow = vi.spyOn(op.coalesce!, 'run').mockImplementationOnce(async (ctx, inputs) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return run(ctx, inputs);
    });
    const bodies = [
      ...Array.from({ length: 12 }, (_, i) => event(`single-${i}`, i + 1)),
      event('twice', 100),
      event('twice', 100),
      event('nowhere', 1, 'SUB-999999'),
    ];
    const { result: answers, units } = await countingUnits(env.app.store, () =>
      Promise.all([...bodies.map((body) => send(body)), send(event('atomic-nowhere', 1, 'SUB-999999'), '?atomic=true')]),
    );
    slow.mockRestore();
    expect(units).toBeLessThanOrEqual(3);

    expect(answers.slice(0, 12).map((r) => [r.status, r.body.accepted, r.body.duplicates])).toEqual(Array(12).fill([200, 1, 0]));
    expect(answers.slice(12, 14).map((r) => [r.body.accepted, r.body.duplicates]).sort()).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(answers[14]!.body).toMatchObject({ accepted: 0, duplicates: 0, errors: [{ index: 0, id: 'nowhere', propertyPath: 'events[0].subscription' }] });
    expect(answers[15]!.status).toBe(422);
    expect(answers[15]!.body.violations[0].propertyPath).toBe('events[0].subscription');

    const listed = await ok(env.mcp, 'list_usage_events', { subscription, limit: 100 });
    expect(listed.data.map((e: { id: string }) => e.id).sort()).toEqual([...Array.from({ length: 12 }, (_, i) => `single-${i}`), 'twice'].sort());
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: subscription });
    expect(usage.data[0]).toMatchObject({ value: '178', eventCount: 13 });
  });

  it('run a call of more than one event alone: a batch fills its own unit', async () => {
    const calls = Array.from({ length: 5 }, (_, i) => send({ events: [event(`pair-${i}-a`, 1), event(`pair-${i}-b`, 1)] }));
    const { result: answers, units } = await countingUnits(env.app.store, () => Promise.all(calls));
    expect(answers.map((r) => r.body.accepted)).toEqual(Array(5).fill(2));
    expect(units).toBe(5);
  });

  it('run their units one after another per organisation, in every instance (they all take the organisation’s event sequence)', async () => {
    const spy = vi.spyOn(env.app.store, 'transaction');
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => send({ events: [event(`seq-${i}-a`, 1), event(`seq-${i}-b`, 1)] })));
      expect(answers.map((r) => r.body.accepted)).toEqual(Array(4).fill(2));
      expect(spy.mock.calls.map((c) => c[1]?.serializeOn)).toEqual(Array(4).fill(`usage-event-sequence:${env.org.organisationId}`));
    } finally {
      spy.mockRestore();
    }
  });
});
