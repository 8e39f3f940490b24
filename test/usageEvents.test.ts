/**
 * Usage metrics on products and usage events (issue 12), through the MCP client and real HTTP on
 * 127.0.0.1, on a real SQLite file (deduplication must survive a restart). Figures are hand-computed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fails, meteredCharge as pricedCharge, ok, setup, type TestEnv } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'usage-events-'));
const db = join(dir, 'billing.sqlite');
let env: TestEnv;
let customer: any;
let n = 0;

beforeAll(async () => {
  env = await setup({ db });
  env.setNow('2026-01-15T10:00:00Z');
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Metered', companyName: 'Metered GmbH' });
});
afterAll(async () => {
  await env.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A product with the metric and a per_unit price plan of 0.01 EUR a unit, monthly in arrears. */
async function meteredCharge(usageMetric: Record<string, unknown>): Promise<{ product: string; pricePlan: string }> {
  n += 1;
  return pricedCharge(env.mcp, { name: `Metered ${n}`, unit: 'call', usageMetric });
}

async function subscribe(charges: Array<{ product: string; pricePlan: string }>, who = customer.id): Promise<any> {
  n += 1;
  const plan = await ok(env.mcp, 'create_plan', { code: `metered-${n}`, name: `Metered ${n}`, charges });
  return ok(env.mcp, 'create_subscription', { customer: who, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
}

const ingest = (events: unknown[], extra: Record<string, unknown> = {}) => ok(env.mcp, 'ingest_usage_events', { events, ...extra });
let ids = 0;
const nextId = () => `evt-${++ids}`;

describe('usage metrics on products', () => {
  it('keeps usageMetric and unit on the product; refuses a metric beside a measurement, a property for count, none for sum', async () => {
    const { product } = await meteredCharge({ eventName: 'calls', aggregation: 'count' });
    const got = await ok(env.mcp, 'get_product', { id: product });
    expect(got.usageMetric).toEqual({ eventName: 'calls', aggregation: 'count', property: null, filters: [], type: 'metered' });
    expect(got.unit).toBe('call');
    await ok(env.mcp, 'create_unit', { name: 'm-unit' });
    const measurement = await ok(env.mcp, 'create_measurement', { unit: 'm-unit', code: 'm-code', aggregationType: 'sum', type: 'metered' });
    const both = await fails(env.mcp, 'create_product', { name: 'Both', measurement: measurement.id, usageMetric: { eventName: 'x', aggregation: 'count' } }, 422);
    expect(both.violations[0]).toMatchObject({ propertyPath: 'usageMetric', code: 'measurement_and_metric' });
    const count = await fails(env.mcp, 'create_product', { name: 'C', usageMetric: { eventName: 'x', aggregation: 'count', property: 'n' } }, 422);
    expect(count.violations[0].propertyPath).toBe('usageMetric.property');
    const sum = await fails(env.mcp, 'create_product', { name: 'S', usageMetric: { eventName: 'x', aggregation: 'sum' } }, 422);
    expect(sum.violations[0].code).toBe('property_required');
    const inUse = await fails(env.mcp, 'update_product', { id: product, usageMetric: null }, 422);
    expect(inUse.violations[0]).toMatchObject({ propertyPath: 'usageMetric', code: 'measurement_in_use' });
  });
});

describe('aggregations with filters', () => {
  it('count, sum, max, average, unique_count and latest over the events whose model is large or xl', async () => {
    const filters = [{ property: 'model', values: ['large', 'xl'] }];
    const charges = [];
    for (const [aggregation, property] of [
      ['count', undefined],
      ['sum', 'tokens'],
      ['max', 'tokens'],
      ['average', 'tokens'],
      ['unique_count', 'user'],
      ['latest', 'tokens'],
    ] as const) {
      charges.push(await meteredCharge({ eventName: 'completion', aggregation, ...(property ? { property } : {}), filters }));
    }
    const s = await subscribe(charges);
    env.setNow('2026-01-15T12:00:00Z');
    const at = (minute: number) => `2026-01-15T11:0${minute}:00Z`;
    const e = (minute: number, tokens: number, model: string, user: string) => ({
      id: nextId(),
      eventName: 'completion',
      timestamp: at(minute),
      subscription: s.number,
      properties: { tokens, model, user },
    });
    const r = await ingest([e(0, 10, 'large', 'a'), e(1, 5, 'small', 'b'), e(2, 7.5, 'xl', 'a'), e(3, 3, 'large', 'c')]);
    expect(r).toEqual({ accepted: 4, duplicates: 0, late: 0, unmatched: 0, errors: [] });
    // Same timestamp as the 3-token event, arriving later: latest takes it.
    await ingest([e(3, 4, 'large', 'd')]);
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: s.id });
    const values = usage.data.map((d: any) => [d.usageMetric.aggregation, d.value, d.eventCount]);
    // Matching: 10 (a), 7.5 (a), 3 (c), 4 (d); the small one never counts.
    expect(values).toEqual([
      ['count', '4', 4],
      ['sum', '24.5', 4],
      ['max', '10', 4],
      ['average', '6.125', 4],
      ['unique_count', '3', 4],
      ['latest', '4', 4],
    ]);
    expect(usage.data[0].events.map((x: any) => x.properties.tokens)).toEqual([4, 3, 7.5, 10]);
  });

  it('sums values exactly beyond 2^53 micro-units and past 2^63 in total; refuses a value of 10^12 or more', async () => {
    const s = await subscribe([await meteredCharge({ eventName: 'bytes', aggregation: 'sum', property: 'n' })]);
    env.setNow('2026-01-15T14:00:00Z');
    const e = (n: number | string) => ({ id: nextId(), eventName: 'bytes', timestamp: '2026-01-15T13:59:00Z', subscription: s.id, properties: { n } });
    const value = async () => (await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data[0].value;
    // 999,999,999,999,000,000 micro-units is no double (nor is the other value's): SQLite's integer sum keeps them exact.
    expect(await ingest([e(999_999_999_999), e('999999999998')])).toMatchObject({ accepted: 2, errors: [] });
    expect(await value()).toBe('1999999999997');
    // A fraction makes the sum one of micro-units; past 2^63 of them it is taken in whole units and millionths.
    const r = await ingest([e(0.5), ...Array.from({ length: 8 }, () => e(999_999_999_999)), e(1e12), e('-1000000000000.5')]);
    expect(r.accepted).toBe(9);
    expect(r.errors.map((x: any) => [x.index, x.message])).toEqual([
      [9, `events[9].properties.n is 1000000000000: product 'Metered ${n - 1}' sums n of its bytes events, whose values lie between -999999999999.999999 and 999999999999.999999 (a quantity's range)`],
      [10, `events[10].properties.n is "-1000000000000.5": product 'Metered ${n - 1}' sums n of its bytes events, whose values lie between -999999999999.999999 and 999999999999.999999 (a quantity's range)`],
    ]);
    expect(await value()).toBe('9999999999989.5');
  });

  it('compares property values as text in filters and unique_count: 7 and "7" are one value on both engines', async () => {
    const s = await subscribe([
      await meteredCharge({ eventName: 'seat', aggregation: 'unique_count', property: 'user', filters: [{ property: 'tier', values: ['2', 3] }] }),
    ]);
    env.setNow('2026-01-15T15:00:00Z');
    const e = (user: string | number, tier: string | number) => ({ id: nextId(), eventName: 'seat', timestamp: '2026-01-15T14:30:00Z', subscription: s.id, properties: { user, tier } });
    await ingest([e(7, 2), e('7', '2'), e(8, '3'), e('8', 3), e(9, 4), e(10, 2.5)]);
    const usage = (await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data[0];
    // Tiers 2 and 3, as numbers or strings, match (4 events); users 7 and 8, each as both.
    expect([usage.value, usage.eventCount]).toEqual(['2', 4]);
  });

  it('refuses an event whose value a metric it meets cannot read as a number, on every engine alike', async () => {
    const filters = [{ property: 'model', values: ['large'] }];
    const s = await subscribe([
      await meteredCharge({ eventName: 'gen', aggregation: 'sum', property: 'tokens', filters }),
      await meteredCharge({ eventName: 'gen', aggregation: 'unique_count', property: 'user' }),
      await meteredCharge({ eventName: 'gen', aggregation: 'count' }),
    ]);
    env.setNow('2026-01-15T16:00:00Z');
    const e = (tokens: unknown, model = 'large', by: Record<string, string> = { subscription: s.id }) => ({
      id: nextId(),
      eventName: 'gen',
      timestamp: '2026-01-15T15:00:00Z',
      ...by,
      properties: { tokens, model, user: 'u1' },
    });
    const r = await ingest([
      e(1200),
      e(' 2.5e1 '),
      e('12abc'),
      e('abc', 'small'),
      e('1e400'),
      { id: nextId(), eventName: 'gen', timestamp: '2026-01-15T15:00:00Z', subscription: s.id, properties: { model: 'large', user: 'u2' } },
      { ...e('many'), customer: customer.id, subscription: undefined },
    ]);
    // A string is a number as a quantity is written (no exponent, no spaces), which ' 2.5e1 ' and
    // '12abc' are not; '1e400' is no finite number; the small model's event meets no numeric metric
    // (the filter), so its tokens are never read.
    expect(r.errors.map((x: any) => [x.index, x.propertyPath])).toEqual([
      [1, 'events[1].properties.tokens'],
      [2, 'events[2].properties.tokens'],
      [4, 'events[4].properties.tokens'],
      [6, 'events[6].properties.tokens'],
    ]);
    expect(r.errors[1].message).toBe(
      `events[2].properties.tokens is "12abc", not a number: product 'Metered ${n - 3}' sums tokens of its gen events; send a number such as 1200, or a string of digits with an optional decimal point ("1200.5"; no exponent, no spaces)`,
    );
    expect(r.accepted).toBe(3);
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: s.id });
    // The event without tokens counts as an event, with no value.
    expect(usage.data.map((d: any) => [d.usageMetric.aggregation, d.value])).toEqual([
      ['sum', '1200'],
      ['unique_count', '2'],
      ['count', '3'],
    ]);
    const cloud = await env.http('POST', '/usage-events', {
      body: { specversion: '1.0', id: nextId(), source: 'gw', type: 'gen', subject: s.id, data: { tokens: 'x', model: 'large' } },
      contentType: 'application/cloudevents+json',
    });
    expect(cloud.body.errors.map((x: any) => x.propertyPath)).toEqual(['events[0].data.tokens']);
  });
});

describe('ingestion', () => {
  let s: any;
  beforeAll(async () => {
    env.setNow('2026-01-15T10:00:00Z');
    s = await subscribe([await meteredCharge({ eventName: 'api', aggregation: 'sum', property: 'n' })]);
  });

  it('takes CloudEvents over HTTP, one or a batch, with the subject as subscription or customer; a single event as the body', async () => {
    const cloud = (id: string, subject: string) => ({
      specversion: '1.0',
      id,
      source: 'gateway',
      type: 'api',
      subject,
      time: '2026-01-15T10:00:00Z',
      data: { n: 5 },
      region: 'eu',
    });
    const one = await env.http('POST', '/usage-events', { body: cloud('ce-1', s.number), contentType: 'application/cloudevents+json' });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ accepted: 1, duplicates: 0, late: 0, unmatched: 0, errors: [] });
    const batch = await env.http('POST', '/usage-events', {
      body: [cloud('ce-2', s.id), cloud('ce-3', customer.customerNumber), cloud('ce-1', s.id), { ...cloud('ce-4', s.id), specversion: '0.3' }],
      contentType: 'application/cloudevents-batch+json',
    });
    expect(batch.body).toMatchObject({ accepted: 2, duplicates: 1, errors: [{ index: 3, id: 'ce-4', propertyPath: 'events[3].specversion' }] });
    const single = await env.http('POST', '/usage-events', { body: { id: 'plain-1', eventName: 'api', subscription: s.id, properties: { n: 1 } } });
    expect(single.body).toMatchObject({ accepted: 1 });
    const wrongType = await env.http('POST', '/usage-events', { body: [cloud('ce-5', s.id)], contentType: 'text/plain' });
    expect(wrongType.status).toBe(415);
    const listed = (await env.http('GET', `/usage-events?eventName=api&subscription=${s.number}&limit=3`)).body;
    expect(listed.data.map((x: any) => x.id)).toEqual(['plain-1', 'ce-3', 'ce-2']);
    expect(listed.data[1]).toMatchObject({ subscription: s.id, customer: customer.id, timestamp: '2026-01-15T10:00:00.000Z', late: false, unmatched: false });
  });

  it('reports each bad event at its field and stores the others; atomic stores none', async () => {
    const good = { id: 'ok-1', eventName: 'api', subscription: s.id, properties: { n: 1 } };
    const bad = [
      { eventName: 'api', subscription: s.id },
      { id: 'old', eventName: 'api', subscription: s.id, timestamp: '2025-12-01T00:00:00Z' },
      { id: 'future', eventName: 'api', subscription: s.id, timestamp: '2026-01-15T10:06:00Z' },
      { id: 'props', eventName: 'api', subscription: s.id, properties: { n: { deep: 1 } } },
      { id: 'nobody', eventName: 'api', subscription: 'SUB-999999' },
      { id: 'both', eventName: 'api', subscription: s.id, customer: customer.id },
      { id: 'extra', eventName: 'api', subscription: s.id, quantity: 3 },
      'not an event',
      { id: 42, eventName: 'api', subscription: s.id },
      { id: 'nameless', eventName: 'api' },
    ];
    const atomic = await fails(env.mcp, 'ingest_usage_events', { events: [good, ...bad], atomic: true }, 422);
    expect(atomic.violations).toHaveLength(10);
    const rest = await env.http('POST', '/usage-events?atomic=true', { body: { events: [good, bad[0]] } });
    expect(rest.status).toBe(422);
    // A query parameter that is neither true nor false is a 400 naming what it takes; nothing is stored.
    const query = await env.http('POST', '/usage-events?atomic=1', { body: { events: [good] } });
    expect([query.status, query.body.violations]).toEqual([400, [{ propertyPath: 'atomic', message: "atomic must be true or false (got '1')", code: 'invalid_type' }]]);
    const r = await ingest([good, ...bad]);
    expect(r.accepted).toBe(1);
    expect(r.errors.map((e: any) => [e.index, e.id, e.propertyPath])).toEqual([
      [1, undefined, 'events[1].id'],
      [2, 'old', 'events[2].timestamp'],
      [3, 'future', 'events[3].timestamp'],
      [4, 'props', 'events[4].properties.n'],
      [5, 'nobody', 'events[5].subscription'],
      [6, 'both', 'events[6].customer'],
      [7, 'extra', 'events[7].quantity'],
      [8, undefined, 'events[8]'],
      [9, undefined, 'events[9].id'],
      [10, 'nameless', 'events[10].subscription'],
    ]);
    expect(r.errors[1].message).toContain('more than 35 days old');
    expect(r.errors[0].message).toBe('events[1].id is required: your unique id of the event, 1 to 255 characters (deduplicated per organisation)');
    expect(r.errors[5].message).toBe('events[6].customer cannot be sent with subscription: an event names exactly one of the two; drop customer to count it for that subscription');
    expect(r.errors[8].message).toBe('events[9].id must be a string (got a number): your unique id of the event, 1 to 255 characters (deduplicated per organisation)');
    expect(r.errors[9].message).toBe('events[10].subscription or customer (id or number) is required: exactly one of the two');
    expect(await ingest([good])).toMatchObject({ accepted: 0, duplicates: 1 });
  });

  it('refuses a date that does not exist instead of moving it on, and counts a repeated id as a duplicate before looking at its reference', async () => {
    env.setNow('2026-03-05T10:00:00Z');
    const r = await ingest([
      { id: 'march-4', eventName: 'api', subscription: s.id, timestamp: '2026-03-04T09:00:00Z' },
      { id: 'hour-25', eventName: 'api', subscription: s.id, timestamp: '2026-03-04T25:00:00Z' },
      { id: 'twice', eventName: 'api', subscription: s.id },
      { id: 'twice', eventName: 'api', subscription: 'SUB-999999' },
    ]);
    expect(r).toMatchObject({ accepted: 2, duplicates: 1 });
    expect(r.errors.map((e: any) => [e.index, e.propertyPath])).toEqual([[1, 'events[1].timestamp']]);
    // JavaScript would read 30 February as 2 March, within the accepted window.
    const impossible = await ingest([{ id: 'no-such-day', eventName: 'api', subscription: s.id, timestamp: '2026-02-30T09:00:00Z' }]);
    expect(impossible).toMatchObject({ accepted: 0 });
    expect(impossible.errors.map((e: any) => e.propertyPath)).toEqual(['events[0].timestamp']);
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('keeps an event from before the subscription started or after it ended as unmatched: no item would ever bill it', async () => {
    env.setNow('2026-01-16T10:00:00Z');
    const running = await subscribe([await meteredCharge({ eventName: 'window', aggregation: 'sum', property: 'n' })]);
    const draft = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: running.plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }] });
    env.setNow('2026-01-16T11:00:00Z');
    await ok(env.mcp, 'terminate_subscription', { id: running.id });
    env.setNow('2026-01-16T11:31:00Z');
    const e = (id: string, timestamp: string, subscription = running.id) => ({ id, eventName: 'window', subscription, timestamp, properties: { n: 1 } });
    const r = await ingest([
      e('w-before', '2026-01-16T09:59:59Z'),
      e('w-start', '2026-01-16T10:00:00Z'),
      e('w-last', '2026-01-16T10:59:59Z'),
      e('w-end', '2026-01-16T11:00:00Z'),
      e('w-after', '2026-01-16T11:30:00Z'),
      // A draft's events wait for the start its activation gives it.
      e('w-draft', '2026-01-16T11:30:00Z', draft.id),
    ]);
    expect(r).toMatchObject({ accepted: 6, unmatched: 3, errors: [] });
    const listed = (await ok(env.mcp, 'list_usage_events', { eventName: 'window' })).data;
    expect(listed.map((x: any) => [x.id, x.unmatched])).toEqual([
      ['w-draft', false],
      ['w-after', true],
      ['w-end', true],
      ['w-last', false],
      ['w-start', false],
      ['w-before', true],
    ]);
    // The usage read shows what a billing run bills: the period up to the termination, without the events after it.
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: running.id });
    expect(usage.data.map((d: any) => [d.periodStart, d.periodEnd, d.value, d.eventCount])).toEqual([
      ['2026-01-16T10:00:00.000Z', '2026-01-16T11:00:00.000Z', '2', 2],
    ]);
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('keeps events no product meters as unmatched and lists them', async () => {
    const r = await ingest([
      { id: 'typo-1', eventName: 'apii', subscription: s.id, properties: { n: 2 } },
      { id: 'typo-2', eventName: 'apii', customer: customer.id },
    ]);
    expect(r).toMatchObject({ accepted: 2, unmatched: 2 });
    const list = await ok(env.mcp, 'list_usage_events', { unmatched: true, eventName: 'apii' });
    expect(list.data.map((x: any) => [x.id, x.subscription, x.customer])).toEqual([
      ['typo-2', null, customer.id],
      ['typo-1', s.id, customer.id],
    ]);
  });
});

describe('customer addressing', () => {
  it('reaches every active subscription of the customer whose products meter the name; paused ones get none', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const other = await ok(env.mcp, 'create_customer', { lastName: 'Two Subscriptions' });
    const seats = () => meteredCharge({ eventName: 'seat', aggregation: 'count' });
    const a = await subscribe([await seats()], other.id);
    const b = await subscribe([await seats()], other.id);
    const paused = await subscribe([await seats()], other.id);
    await ok(env.mcp, 'pause_subscription', { id: paused.id });
    const r = await ingest([{ id: 'seat-1', eventName: 'seat', customer: other.customerNumber }]);
    expect(r).toMatchObject({ accepted: 1, unmatched: 0 });
    const list = await ok(env.mcp, 'list_usage_events', { customer: other.id });
    expect(list.data.map((x: any) => x.subscription).sort()).toEqual([a.id, b.id].sort());
    expect((await ok(env.mcp, 'get_subscription_usage', { id: paused.id })).data[0].eventCount).toBe(0);
    expect(await ingest([{ id: 'seat-1', eventName: 'seat', customer: other.id }])).toMatchObject({ accepted: 0, duplicates: 1 });
  });
});

describe('list_usage_events', () => {
  it('filters by event name and time range and pages newest first with a cursor', async () => {
    env.setNow('2026-01-16T10:00:00Z');
    const s = await subscribe([await meteredCharge({ eventName: 'page', aggregation: 'count' })]);
    const events = [0, 1, 2, 3, 4].map((i) => ({ id: `page-${i}`, eventName: 'page', subscription: s.id, timestamp: `2026-01-16T0${i}:00:00Z` }));
    await ingest(events);
    const flag = await env.http('GET', '/usage-events?unmatched=1');
    expect([flag.status, flag.body.detail]).toEqual([400, 'unmatched must be true or false']);
    const first = await ok(env.mcp, 'list_usage_events', { eventName: 'page', limit: 2 });
    expect(first.data.map((x: any) => x.id)).toEqual(['page-4', 'page-3']);
    const second = await ok(env.mcp, 'list_usage_events', { eventName: 'page', limit: 2, cursor: first.meta.nextCursor });
    expect(second.data.map((x: any) => x.id)).toEqual(['page-2', 'page-1']);
    const last = await ok(env.mcp, 'list_usage_events', { eventName: 'page', limit: 2, cursor: second.meta.nextCursor });
    expect(last).toMatchObject({ data: [{ id: 'page-0' }], meta: { nextCursor: null } });
    const range = await ok(env.mcp, 'list_usage_events', { subscription: s.number, from: '2026-01-16T01:00:00Z', to: '2026-01-16T03:00:00Z' });
    expect(range.data.map((x: any) => x.id)).toEqual(['page-2', 'page-1']);
  });
});

describe('the quantity rule', () => {
  it('refuses a quantity change on an item whose product has a usage metric, by update and by order', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const charge = await meteredCharge({ eventName: 'q', aggregation: 'count' });
    const s = await subscribe([charge]);
    const update = await fails(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 3 }, 422);
    expect(update.violations[0]).toMatchObject({ propertyPath: 'quantity', code: 'usage_metric_quantity' });
    expect(update.detail).toContain('usage events');
    const order = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ ...charge, quantity: 2 }] }, 422);
    expect(order.violations[0]).toMatchObject({ propertyPath: 'products[0].quantity', code: 'usage_metric_quantity' });
  });
});

describe('billing', () => {
  it('invoices a metric item exactly like the same usage recorded by a measurement; a later event in the billed interval is late', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    await ok(env.mcp, 'create_unit', { name: 'request' });
    const measurement = await ok(env.mcp, 'create_measurement', { unit: 'request', code: 'requests', aggregationType: 'sum', type: 'metered' });
    const measured = await ok(env.mcp, 'create_product', { name: 'Requests', measurement: measurement.id });
    const measuredPrice = await ok(env.mcp, 'create_price_plan', {
      id: measured.id,
      type: 'per_unit',
      currencyCode: 'EUR',
      price: { amount: 0.01 },
      billingInterval: '1M',
      payInAdvance: false,
    });
    const byMeasurement = await subscribe([{ product: measured.id, pricePlan: measuredPrice.id }]);
    const metric = await ok(env.mcp, 'create_product', { name: 'Requests', usageMetric: { eventName: 'requests', aggregation: 'sum', property: 'count' } });
    const metricPrice = await ok(env.mcp, 'create_price_plan', {
      id: metric.id,
      type: 'per_unit',
      currencyCode: 'EUR',
      price: { amount: 0.01 },
      billingInterval: '1M',
      payInAdvance: false,
    });
    const byMetric = await subscribe([{ product: metric.id, pricePlan: metricPrice.id }]);

    env.setNow('2026-01-20T10:00:00Z');
    await ok(env.mcp, 'create_subscription_measurements_batch', {
      values: [
        { subscriptionItem: byMeasurement.items[0].id, quantity: '1000', measuredAt: '2026-01-20T09:00:00Z' },
        { subscriptionItem: byMeasurement.items[0].id, quantity: '234.5', measuredAt: '2026-01-20T09:30:00Z' },
      ],
    });
    await ingest([
      { id: 'req-1', eventName: 'requests', subscription: byMetric.id, timestamp: '2026-01-20T09:00:00Z', properties: { count: 1000 } },
      { id: 'req-2', eventName: 'requests', subscription: byMetric.id, timestamp: '2026-01-20T09:30:00Z', properties: { count: '234.5' } },
    ]);
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: byMetric.id });
    env.setNow('2026-02-15T10:00:00Z');
    const invoices = [];
    for (const s of [byMeasurement, byMetric]) {
      const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
      invoices.push((await env.http('GET', `/invoices/${run.invoices[0]}`)).body);
    }
    // 1,234.5 units at 0.01 EUR = 12.345 EUR: 1235 cents, half-up.
    const line = (i: any) => ({ ...i.lines[0], id: undefined, invoice: undefined, createdAt: undefined, updatedAt: undefined });
    expect(line(invoices[1])).toEqual(line(invoices[0]));
    expect(invoices[1].lines[0]).toMatchObject({
      description: 'Requests (requests: 1234.5, 2026-01-15 to 2026-02-14)',
      quantity: '1234.5',
      unitAmountDecimal: '1',
      netAmount: 1235,
      periodStart: '2026-01-15T10:00:00.000Z',
      periodEnd: '2026-02-15T10:00:00.000Z',
    });
    expect(invoices[1].netAmount).toBe(1235);
    expect(estimate.netAmount).toBe(1235);

    const late = await ingest([{ id: 'req-3', eventName: 'requests', subscription: byMetric.id, timestamp: '2026-02-10T00:00:00Z', properties: { count: 5 } }]);
    expect(late).toMatchObject({ accepted: 1, late: 1 });
    const listed = await ok(env.mcp, 'list_usage_events', { subscription: byMetric.id, limit: 1 });
    expect(listed.data[0]).toMatchObject({ id: 'req-3', late: true });
    env.setNow('2026-03-15T10:00:00Z');
    const next = await ok(env.mcp, 'run_billing', { subscription: byMetric.id });
    const march = (await env.http('GET', `/invoices/${next.invoices[0]}`)).body;
    expect(march.lines[0]).toMatchObject({ quantity: '0', netAmount: 0 });
  });
});

describe('deduplication', () => {
  it('counts every id once, across batches and across a restart of the store', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([await meteredCharge({ eventName: 'restart', aggregation: 'sum', property: 'n' })]);
    const batch = [1, 2, 3].map((i) => ({ id: `dedup-${i}`, eventName: 'restart', subscription: s.id, properties: { n: i } }));
    expect(await ingest(batch)).toMatchObject({ accepted: 3, duplicates: 0 });
    expect(await ingest([...batch, { id: 'dedup-4', eventName: 'restart', subscription: s.id, properties: { n: 4 } }, batch[0]])).toMatchObject({
      accepted: 1,
      duplicates: 4,
    });
    const org = env.org;
    await env.close();
    env = await setup({ db });
    env.setNow('2026-01-15T10:00:00Z');
    env.mcp = await env.mcpFor(org.apiKey);
    expect(await ingest(batch)).toMatchObject({ accepted: 0, duplicates: 3 });
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: s.id });
    expect(usage.data[0]).toMatchObject({ value: '10', eventCount: 4 });
  });
});
