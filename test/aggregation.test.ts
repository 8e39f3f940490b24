import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, setup, type TestEnv } from './helpers.js';

/**
 * Aggregations against hand-computed values. The customer lives in Europe/Berlin and the
 * subscription starts on 2026-01-15 00:00 Berlin, so its monthly intervals are
 *   P0 [2026-01-14T23:00Z, 2026-02-14T23:00Z)
 *   P1 [2026-02-14T23:00Z, 2026-03-14T23:00Z)
 *   P2 [2026-03-14T23:00Z, 2026-04-14T22:00Z)   (summer time begins on 29 March)
 */
const P0 = { periodStart: '2026-01-14T23:00:00.000Z', periodEnd: '2026-02-14T23:00:00.000Z' };
const P1 = { periodStart: '2026-02-14T23:00:00.000Z', periodEnd: '2026-03-14T23:00:00.000Z' };
const P2 = { periodStart: '2026-03-14T23:00:00.000Z', periodEnd: '2026-04-14T22:00:00.000Z' };
const START = '2026-01-15T00:00:00+01:00';

/** The same series on every metered item; `id` is the identity count_unique counts. */
const SERIES = [
  { measuredAt: '2026-01-10T00:00:00Z', quantity: '1000', id: 'e' }, // before the item started: never counts
  { measuredAt: '2026-02-20T00:00:00Z', quantity: '1', id: 'a' }, // P1
  { measuredAt: '2026-03-14T22:59:59.999Z', quantity: '100', id: 'd' }, // P1, its last millisecond
  { measuredAt: '2026-03-14T23:00:00Z', quantity: '2.5', id: 'a' }, // P2, exactly on its first instant
  { measuredAt: '2026-03-16T10:00:00Z', quantity: '7', id: 'b' },
  { measuredAt: '2026-03-18T10:00:00+01:00', quantity: '0.000002', id: 'a' },
  { measuredAt: '2026-03-20T11:00:00Z', quantity: 4, id: 'c' },
];

/** Expected values per interval: P0 holds nothing, P1 = {1, 100}, P2 = {2.5, 7, 0.000002, 4}. */
const EXPECTED: Record<string, [string, string, string]> = {
  count: ['0', '2', '4'],
  count_unique: ['0', '2', '3'],
  max: ['0', '100', '7'],
  sum: ['0', '101', '13.500002'],
  average: ['0', '50.5', '3.375001'], // 13.500002 / 4 = 3.3750005, half-up
  last_value: ['0', '100', '4'],
};
const EVENTS: [number, number, number] = [0, 2, 4];

let env: TestEnv;
let customer: any;
let plan: any;
const measurements: Record<string, any> = {};
const products: Record<string, any> = {};

const subscribe = (extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'create_subscription', {
    customer: customer.id,
    plan: plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
    startDate: START,
    activate: true,
    ...extra,
  });

const itemFor = (s: any, code: string) => s.items.find((i: any) => i.product.id === products[code].id).id as string;

async function usage(subscriptionId: string, code: string, args: Record<string, unknown> = {}) {
  const all = await ok(env.mcp, 'get_subscription_usage', { id: subscriptionId, ...args });
  return all.data.find((e: any) => e.measurement.code === code);
}

async function record(item: string, values: Array<Record<string, unknown>>) {
  return ok(env.mcp, 'create_subscription_measurements_batch', { values: values.map((v) => ({ subscriptionItem: item, ...v })) });
}

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-20T12:00:00Z');
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Aggregate', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  await ok(env.mcp, 'create_unit', { name: 'unit' });
  const kinds: Array<[string, Record<string, unknown>]> = [
    ...Object.keys(EXPECTED).map((a): [string, Record<string, unknown>] => [a, { aggregationType: a, type: 'metered' }]),
    ['seats', { aggregationType: 'last_value', type: 'recurring' }],
    ['fair_seats', { aggregationType: 'last_value', type: 'recurring', fairBilling: true }],
    ['pushes', { aggregationType: 'last_value', type: 'instant_metered' }],
  ];
  const charges = [];
  for (const [code, m] of kinds) {
    measurements[code] = await ok(env.mcp, 'create_measurement', { unit: 'unit', code, ...m });
    products[code] = await ok(env.mcp, 'create_product', { name: code, measurement: measurements[code].id });
    const pricePlan = await ok(env.mcp, 'create_price_plan', {
      id: products[code].id,
      type: 'per_unit',
      currencyCode: 'EUR',
      price: { amount: 0.1 },
      billingInterval: '1M',
      payInAdvance: false,
    });
    charges.push({ product: products[code].id, pricePlan: pricePlan.id });
  }
  plan = await ok(env.mcp, 'create_plan', { code: 'metered', name: 'Metered', charges });
});
afterAll(() => env.close());

describe('metered aggregations per billing interval', () => {
  let s: any;
  beforeAll(async () => {
    env.setNow('2026-03-20T12:00:00Z');
    s = await subscribe();
    for (const code of Object.keys(EXPECTED)) await record(itemFor(s, code), SERIES);
  });

  it.each(Object.keys(EXPECTED))('%s: boundary instants, values before the start, each interval on its own', async (code) => {
    const at: Array<[string, typeof P0, number]> = [
      ['2026-01-25T12:00:00Z', P0, 0],
      ['2026-02-20T12:00:00Z', P1, 1],
      ['2026-03-20T12:00:00Z', P2, 2],
    ];
    for (const [now, period, k] of at) {
      env.setNow(now);
      const entry = await usage(s.id, code);
      expect(entry, `${code} at ${now}`).toMatchObject({ ...period, value: EXPECTED[code]![k], eventCount: EVENTS[k], timeWeightedValue: null });
      expect(entry.subscriptionItem).toBe(itemFor(s, code));
    }
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('lists the values of the interval newest first, paginated', async () => {
    const entry = await usage(s.id, 'sum');
    expect(entry.events.map((e: any) => [e.quantity, e.measuredAt])).toEqual([
      ['4', '2026-03-20T11:00:00.000Z'],
      ['0.000002', '2026-03-18T09:00:00.000Z'],
      ['7', '2026-03-16T10:00:00.000Z'],
      ['2.5', '2026-03-14T23:00:00.000Z'],
    ]);
    const page2 = await usage(s.id, 'sum', { page: 2, limit: 3 });
    expect(page2.events.map((e: any) => e.quantity)).toEqual(['2.5']);
    expect(page2.eventCount).toBe(4);
    expect((await usage(s.id, 'sum', { limit: 0 })).events).toEqual([]);
  });

  it('last_value: of two values at the same instant, the one recorded later wins', async () => {
    const item = itemFor(s, 'last_value');
    await record(item, [{ measuredAt: '2026-03-20T11:00:00Z', quantity: '9' }]);
    expect((await usage(s.id, 'last_value')).value).toBe('9');
    await record(item, [{ measuredAt: '2026-03-20T11:00:00Z', quantity: '6' }]);
    expect((await usage(s.id, 'last_value')).value).toBe('6');
  });

  it('count_unique counts a repeated id once per interval, and again in the next one', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const item = itemFor(s, 'count_unique');
    await record(item, [
      { quantity: '1', id: 'b' },
      { quantity: '1', id: 'b' },
      { quantity: '1', id: 'z' },
    ]);
    const entry = await usage(s.id, 'count_unique');
    expect(entry).toMatchObject({ value: '4', eventCount: 7 }); // a, b, c and z
  });
});

describe('billing group alignment', () => {
  it('end_of_month: the interval is the calendar month in the customer time zone; its first instant belongs to it', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Month ends', type: 'end_of_month' });
    const s = await subscribe({ billingGroup: group.id });
    await record(itemFor(s, 'sum'), [
      { measuredAt: '2026-02-28T22:59:59.999Z', quantity: '10' }, // 28 Feb 23:59:59.999 Berlin
      { measuredAt: '2026-02-28T23:00:00Z', quantity: '1' }, // 1 Mar 00:00 Berlin
    ]);
    expect(await usage(s.id, 'sum')).toMatchObject({
      periodStart: '2026-02-28T23:00:00.000Z',
      periodEnd: '2026-03-31T22:00:00.000Z',
      value: '1',
      eventCount: 1,
    });
  });
});

describe('sums beyond 64 bits of micro-units', () => {
  it('stay exact: ten values of the largest quantity', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const s = await subscribe();
    await record(itemFor(s, 'sum'), Array.from({ length: 10 }, () => ({ quantity: '999999999999.999999' })));
    await record(itemFor(s, 'average'), Array.from({ length: 10 }, () => ({ quantity: '999999999999.999999' })));
    expect((await usage(s.id, 'sum')).value).toBe('9999999999999.99999');
    expect((await usage(s.id, 'average')).value).toBe('999999999999.999999');
  });
});

describe('recurring', () => {
  it('carries the last value into the following intervals, ignores values before the start, and resets nothing', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const s = await subscribe();
    const item = itemFor(s, 'seats');
    await record(item, [{ measuredAt: '2026-01-10T00:00:00Z', quantity: '1000' }]);
    env.setNow('2026-01-25T12:00:00Z');
    expect(await usage(s.id, 'seats')).toMatchObject({ ...P0, value: '0', eventCount: 0, timeWeightedValue: null });

    await record(item, [{ measuredAt: '2026-01-20T10:00:00Z', quantity: '5' }]);
    expect(await usage(s.id, 'seats')).toMatchObject({ ...P0, value: '5', eventCount: 1 });
    env.setNow('2026-02-20T12:00:00Z');
    expect(await usage(s.id, 'seats')).toMatchObject({ ...P1, value: '5', eventCount: 0, events: [] });
    env.setNow('2026-03-20T12:00:00Z');
    expect(await usage(s.id, 'seats')).toMatchObject({ ...P2, value: '5', eventCount: 0 });

    await record(item, [{ measuredAt: '2026-03-14T23:00:00Z', quantity: '8' }]);
    expect(await usage(s.id, 'seats')).toMatchObject({ ...P2, value: '8', eventCount: 1 });
    env.setNow('2026-02-20T12:00:00Z');
    expect((await usage(s.id, 'seats')).value).toBe('5');
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('fairBilling: time-weighted over the interval, only for the time the item was active', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const s = await subscribe();
    await record(itemFor(s, 'fair_seats'), [
      { measuredAt: '2026-01-20T10:00:00Z', quantity: '5' },
      { measuredAt: '2026-03-17T23:00:00Z', quantity: '8' },
    ]);
    // P2 lasts 743 h: 5 for 72 h, then 8 for the remaining 671 h (the running interval at its latest value): 5728 / 743
    expect(await usage(s.id, 'fair_seats')).toMatchObject({ ...P2, value: '8', timeWeightedValue: '7.709287', eventCount: 1 });
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    // terminated on 20 March 12:00: 8 held only 61 h: (360 + 488) / 743
    expect(await usage(s.id, 'fair_seats')).toMatchObject({ ...P2, value: '8', timeWeightedValue: '1.141319' });
  });
});

describe('instant_metered', () => {
  it('keeps no running value: "0", with every push listed for billing', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const s = await subscribe();
    await record(itemFor(s, 'pushes'), [
      { measuredAt: '2026-03-16T10:00:00Z', quantity: '3' },
      { measuredAt: '2026-03-19T10:00:00Z', quantity: '2' },
    ]);
    const entry = await usage(s.id, 'pushes');
    expect(entry).toMatchObject({ ...P2, value: '0', eventCount: 2, timeWeightedValue: null });
    expect(entry.events.map((e: any) => e.quantity)).toEqual(['2', '3']);
  });
});
