import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;

interface Metered {
  measurement: any;
  product: any;
  pricePlan: any;
}

interface Fixture {
  customer: any;
  base: { product: any; pricePlan: any };
  metered: Record<string, Metered>;
  plan: any;
}

const MEASUREMENTS = {
  calls: { aggregationType: 'sum', type: 'metered' },
  users: { aggregationType: 'count_unique', type: 'metered' },
  seats: { aggregationType: 'last_value', type: 'recurring' },
  pushes: { aggregationType: 'last_value', type: 'instant_metered' },
} as const;

/** A customer, a flat base product, one metered product per measurement, and a plan charging all of them. */
async function buildFixture(mcp: Client, suffix: string): Promise<Fixture> {
  const customer = await ok(mcp, 'create_customer', { lastName: `Usage${suffix}`, timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  await ok(mcp, 'create_unit', { name: `unit${suffix}` });
  const product = await ok(mcp, 'create_product', { name: `Base${suffix}` });
  const pricePlan = await ok(mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
  const metered: Record<string, Metered> = {};
  for (const [code, m] of Object.entries(MEASUREMENTS)) {
    const measurement = await ok(mcp, 'create_measurement', { unit: `unit${suffix}`, code: `${code}${suffix}`, ...m });
    const p = await ok(mcp, 'create_product', { name: `${code}${suffix}`, measurement: measurement.id });
    const pp = await ok(mcp, 'create_price_plan', {
      id: p.id,
      type: 'per_unit',
      currencyCode: 'EUR',
      price: { amount: 0.5 },
      billingInterval: '1M',
      payInAdvance: false,
    });
    metered[code] = { measurement, product: p, pricePlan: pp };
  }
  const plan = await ok(mcp, 'create_plan', {
    code: `usage${suffix}`,
    name: `Usage${suffix}`,
    charges: [{ product: product.id, pricePlan: pricePlan.id }, ...Object.values(metered).map((m) => ({ product: m.product.id, pricePlan: m.pricePlan.id }))],
  });
  return { customer, base: { product, pricePlan }, metered, plan };
}

let f: Fixture;
const yearly = [{ contractPeriod: '12M', cancellationPeriod: '1M' }];

const subscribe = (extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'create_subscription', {
    customer: f.customer.id,
    plan: f.plan.id,
    periods: yearly,
    startDate: '2026-01-15T00:00:00+01:00',
    activate: true,
    ...extra,
  });

const itemOf = (s: any, code: keyof typeof MEASUREMENTS) => s.items.find((i: any) => i.product.id === f.metered[code]!.product.id);

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-20T12:00:00Z');
  f = await buildFixture(env.mcp, '');
});
afterAll(() => env.close());

const record = (args: Record<string, unknown>) => ok(env.mcp, 'create_subscription_measurement', args);
const usageOf = async (subscriptionId: string, itemId: string) =>
  (await ok(env.mcp, 'get_subscription_usage', { id: subscriptionId })).data.find((e: any) => e.subscriptionItem === itemId);

describe('create_subscription_measurement', () => {
  let s: any;
  beforeAll(async () => {
    env.setNow('2026-03-20T12:00:00Z');
    s = await subscribe();
  });

  it('records a value on an item, canonicalises the quantity and defaults measuredAt to now', async () => {
    const item = itemOf(s, 'calls');
    const v = await record({ subscriptionItem: item.id, quantity: '12.500000' });
    const measurement = f.metered.calls!.measurement;
    expect(v).toEqual({
      id: expect.any(String),
      measurement: { id: measurement.id, code: measurement.code },
      quantity: '12.5',
      measuredAt: '2026-03-20T12:00:00.000Z',
      subscriptionItem: item.id,
      subscription: s.id,
      valueId: null,
      createdAt: '2026-03-20T12:00:00.000Z',
    });
    expect(await ok(env.mcp, 'get_subscription_measurement', { id: v.id })).toEqual(v);
    expect((await env.http('GET', `/subscription-measurements/${v.id}`)).body).toEqual({ ...v, measurement });
  });

  it('accepts JSON numbers and writes every quantity in canonical form; measuredAt is normalised to UTC', async () => {
    const item = itemOf(s, 'calls').id;
    const cases: Array<[unknown, string]> = [
      [12.5, '12.5'],
      [3, '3'],
      [0.000001, '0.000001'],
      ['0', '0'],
      ['999999999999.999999', '999999999999.999999'],
    ];
    for (const [quantity, canonical] of cases) {
      expect((await record({ subscriptionItem: item, quantity })).quantity).toBe(canonical);
    }
    const v = await record({ subscriptionItem: item, quantity: '1', measuredAt: '2026-03-20T10:30:00.123456+02:00' });
    expect(v.measuredAt).toBe('2026-03-20T08:30:00.123Z');
  });

  it('keeps the count_unique identity as valueId, and stores it for other aggregations too', async () => {
    const users = await record({ subscriptionItem: itemOf(s, 'users').id, quantity: '1', id: 'user-42' });
    expect(users.valueId).toBe('user-42');
    expect((await record({ subscriptionItem: itemOf(s, 'calls').id, quantity: '1', id: 'req-1' })).valueId).toBe('req-1');
  });

  it('targets by measurementCode and subscription id or number', async () => {
    const t = await subscribe();
    const byNumber = await record({ measurementCode: 'seats', subscription: t.number, quantity: '3' });
    expect(byNumber).toMatchObject({ subscriptionItem: itemOf(t, 'seats').id, subscription: t.id, quantity: '3' });
    const byId = await record({ measurementCode: 'seats', subscription: t.id, quantity: '4' });
    expect(byId.subscriptionItem).toBe(itemOf(t, 'seats').id);
    const both = await record({ subscriptionItem: itemOf(t, 'seats').id, measurementCode: 'seats', subscription: t.number, quantity: '5' });
    expect(both.quantity).toBe('5');
    expect((await usageOf(t.id, itemOf(t, 'seats').id)).value).toBe('5');
  });

  it('records one value on every item of the subscription measuring the code, and passes over ended items', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const t = await subscribe();
    const ordered = await ok(env.mcp, 'order_subscription_products', {
      id: t.id,
      endDate: '2026-03-25T00:00:00Z',
      products: [{ product: f.metered.calls!.product.id, pricePlan: f.metered.calls!.pricePlan.id }],
    });
    const [plain, addon] = ordered.items.filter((i: any) => i.product.id === f.metered.calls!.product.id);
    const first = await record({ measurementCode: 'calls', subscription: t.id, quantity: '2' });
    expect(first.subscriptionItem).toBe(plain.id);
    expect((await usageOf(t.id, plain.id)).events.map((e: any) => e.quantity)).toEqual(['2']);
    expect((await usageOf(t.id, addon.id)).events.map((e: any) => e.quantity)).toEqual(['2']);

    env.setNow('2026-03-26T12:00:00Z');
    await record({ measurementCode: 'calls', subscription: t.id, quantity: '7' });
    expect((await usageOf(t.id, plain.id)).eventCount).toBe(2);
    expect((await usageOf(t.id, addon.id)).eventCount).toBe(1);
    // measured before the addon ended: both items take it
    await record({ measurementCode: 'calls', subscription: t.id, quantity: '1', measuredAt: '2026-03-24T23:59:59.999Z' });
    expect((await usageOf(t.id, addon.id)).eventCount).toBe(2);
    const p = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: addon.id, quantity: '1' }, 409);
    expect(p.detail).toMatch(/ended at 2026-03-25T00:00:00.000Z; it takes only values measured before then/);
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('shows the latest values on the subscription items: measurementValues newest first, currentMeasurementValue', async () => {
    const t = await subscribe();
    const item = itemOf(t, 'calls').id;
    for (let i = 1; i <= 7; i++) await record({ subscriptionItem: item, quantity: String(i), measuredAt: `2026-03-1${i}T12:00:00Z` });
    // REST keeps the values on the items of the subscription
    const got = (await env.http('GET', `/subscriptions/${t.id}`)).body;
    const calls = itemOf(got, 'calls');
    expect(calls.measurementValues.map((v: any) => v.quantity)).toEqual(['7', '6', '5', '4', '3']);
    expect(calls.currentMeasurementValue).toEqual(calls.measurementValues[0]);
    expect(itemOf(got, 'seats')).toMatchObject({ measurementValues: [], currentMeasurementValue: null });
    const base = got.items.find((i: any) => i.product.id === f.base.product.id);
    expect(base).toMatchObject({ measurementValues: [], currentMeasurementValue: null });
    // MCP shows the latest value on get_subscription_item
    expect((await ok(env.mcp, 'get_subscription_item', { id: item })).currentMeasurementValue).toEqual({
      quantity: '7',
      measuredAt: '2026-03-17T12:00:00.000Z',
    });
    expect((await ok(env.mcp, 'get_subscription_item', { id: itemOf(t, 'seats').id })).currentMeasurementValue).toBeNull();
    expect((await ok(env.mcp, 'get_subscription_item', { id: base.id })).currentMeasurementValue).toBeNull();
    // each item its own latest values, newest first, whichever item was measured last
    const seats = itemOf(t, 'seats').id;
    await record({ subscriptionItem: seats, quantity: '9', measuredAt: '2026-03-19T12:00:00Z' });
    await record({ subscriptionItem: seats, quantity: '8', measuredAt: '2026-03-18T12:00:00Z' });
    const again = (await env.http('GET', `/subscriptions/${t.id}`)).body;
    expect(itemOf(again, 'seats').measurementValues.map((v: any) => v.quantity)).toEqual(['9', '8']);
    expect(itemOf(again, 'calls').measurementValues.map((v: any) => v.quantity)).toEqual(['7', '6', '5', '4', '3']);
  });
});

describe('rejections (422), each naming the field and what to send', () => {
  let s: any;
  let other: any;
  beforeAll(async () => {
    env.setNow('2026-03-20T12:00:00Z');
    s = await subscribe();
    other = await subscribe();
  });

  const rejects = async (args: Record<string, unknown>, path: string, message: RegExp) => {
    const p = await fails(env.mcp, 'create_subscription_measurement', args, 422);
    expect(paths(p)).toEqual([path]);
    expect(p.violations[0].message).toMatch(message);
    return p;
  };

  it.each([
    ['-1', /must not be negative/],
    ['1.1234567', /at most 6 fractional digits/],
    ['1e3', /decimal number written with digits/],
    ['abc', /decimal number written with digits/],
    ['', /decimal number written with digits/],
    ['1000000000000', /below 10\^12/],
    [1e21, /without an exponent/],
    [123456789012.1234, /send it as a decimal string/],
    [true, /must be a decimal string such as "12.5"/],
  ])('quantity %j', async (quantity, message) => {
    await rejects({ subscriptionItem: itemOf(s, 'calls').id, quantity }, 'quantity', message);
  });

  it('a missing quantity', async () => {
    await rejects({ subscriptionItem: itemOf(s, 'calls').id }, 'quantity', /^quantity is required: send the measured quantity/);
  });

  it('neither subscriptionItem nor measurementCode', async () => {
    await rejects({ quantity: '1' }, 'subscriptionItem', /or measurementCode is required: send subscriptionItem/);
    await rejects({ quantity: '1', subscription: s.id }, 'subscriptionItem', /or measurementCode is required/);
  });

  it('an unknown item, and an item of another organisation', async () => {
    await rejects({ subscriptionItem: 'no-such-item', quantity: '1' }, 'subscriptionItem', /is not a subscription item; use an id from items\[\]\.id/);
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const p = await fails(mcp, 'create_subscription_measurement', { subscriptionItem: itemOf(s, 'calls').id, quantity: '1' }, 422);
    expect(paths(p)).toEqual(['subscriptionItem']);
    await fails(mcp, 'create_subscription_measurement', { measurementCode: 'calls', subscription: s.number, quantity: '1' }, 422);
  });

  it('an item whose product has no measurement', async () => {
    const base = s.items.find((i: any) => i.product.id === f.base.product.id);
    await rejects({ subscriptionItem: base.id, quantity: '1' }, 'subscriptionItem', /takes no usage: its product Base has no measurement/);
  });

  it('an item of another subscription than the one given', async () => {
    await rejects(
      { subscriptionItem: itemOf(other, 'calls').id, subscription: s.number, quantity: '1' },
      'subscriptionItem',
      new RegExp(`belongs to subscription ${other.number}, not ${s.number}`),
    );
  });

  it('measurementCode without subscription, an unknown subscription, an unknown code', async () => {
    await rejects({ measurementCode: 'calls', quantity: '1' }, 'subscription', /is required with measurementCode/);
    await rejects({ measurementCode: 'calls', subscription: 'SUB-999999', quantity: '1' }, 'subscription', /neither the id nor the number/);
    await rejects({ measurementCode: 'nope', subscription: s.id, quantity: '1' }, 'measurementCode', /not the code of any measurement; use a code from list_measurements/);
  });

  it('a code that no item of the subscription measures, listing the codes its items do measure', async () => {
    await ok(env.mcp, 'create_measurement', { unit: 'unit', code: 'unused', aggregationType: 'sum', type: 'metered' });
    await rejects({ measurementCode: 'unused', subscription: s.id, quantity: '1' }, 'measurementCode', /measured by no item of subscription .*; its items measure calls, pushes, seats, users/);
  });

  it('a code that does not match the item', async () => {
    await rejects({ subscriptionItem: itemOf(s, 'calls').id, measurementCode: 'seats', quantity: '1' }, 'measurementCode', /item .* measures 'calls'; send that code or omit measurementCode/);
  });

  it('a count_unique value without id', async () => {
    await rejects({ subscriptionItem: itemOf(s, 'users').id, quantity: '1' }, 'id', /counts unique ids \(count_unique\); send the identity/);
  });

  it('measuredAt more than 5 minutes ahead, or without an offset; 5 minutes ahead is accepted', async () => {
    await rejects({ subscriptionItem: itemOf(s, 'calls').id, quantity: '1', measuredAt: '2026-03-20T12:05:00.001Z' }, 'measuredAt', /more than 5 minutes in the future/);
    await rejects({ subscriptionItem: itemOf(s, 'calls').id, quantity: '1', measuredAt: '2026-03-20T12:00:00' }, 'measuredAt', /with an offset/);
    await record({ subscriptionItem: itemOf(s, 'calls').id, quantity: '1', measuredAt: '2026-03-20T12:05:00Z' });
  });

  it('an id over 255 characters, an unknown field', async () => {
    await rejects({ subscriptionItem: itemOf(s, 'users').id, quantity: '1', id: 'x'.repeat(256) }, 'id', /./);
    const p = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: itemOf(s, 'calls').id, quantity: '1', value: 3 }, 422);
    expect(p.detail).toMatch(/'value' is not a field of the input; allowed: quantity,/);
  });

  it('reports every problem of a value at once', async () => {
    const p = await fails(env.mcp, 'create_subscription_measurement', { measurementCode: 'nope', subscription: 'SUB-999999', quantity: '1', measuredAt: '2027-01-01T00:00:00Z' }, 422);
    expect(paths(p).sort()).toEqual(['measuredAt', 'measurementCode', 'subscription']);
  });

  it('stores nothing for a rejected value', async () => {
    expect((await usageOf(s.id, itemOf(s, 'users').id)).eventCount).toBe(0);
  });
});

describe('subscription state (409)', () => {
  it('refuses values for a draft subscription, naming how to activate it', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const d = await subscribe({ activate: false });
    const p = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: itemOf(d, 'calls').id, quantity: '1' }, 409);
    expect(p.detail).toBe(`subscription ${d.number} is draft: it takes usage once it is active (activate_subscription)`);
    await fails(env.mcp, 'create_subscription_measurement', { measurementCode: 'calls', subscription: d.id, quantity: '1' }, 409);
  });

  it('takes values while paused', async () => {
    const t = await subscribe();
    await ok(env.mcp, 'pause_subscription', { id: t.id });
    await record({ subscriptionItem: itemOf(t, 'calls').id, quantity: '1' });
  });

  it('after termination takes only values measured before it', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const t = await subscribe();
    await ok(env.mcp, 'terminate_subscription', { id: t.id });
    env.setNow('2026-03-21T12:00:00Z');
    const item = itemOf(t, 'calls').id;
    await record({ subscriptionItem: item, quantity: '1', measuredAt: '2026-03-20T11:59:59.999Z' });
    const p = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: '1', measuredAt: '2026-03-20T12:00:00Z' }, 409);
    expect(p.detail).toMatch(/was terminated at 2026-03-20T12:00:00.000Z; it takes only values measured before then \(measuredAt 2026-03-20T12:00:00.000Z\)/);
    await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: '1' }, 409);
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('after cancellation takes only values measured before the cancellation date', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const t = await subscribe({ periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }] });
    await ok(env.mcp, 'cancel_subscription', { id: t.id, cancellationDate: '2026-04-15T00:00:00+02:00' });
    env.setNow('2026-04-15T00:00:00Z');
    await record({ subscriptionItem: itemOf(t, 'calls').id, quantity: '1', measuredAt: '2026-04-14T21:59:59.999Z' });
    await runDueJobs(env.app, new Date('2026-04-16T00:00:00Z'));
    env.setNow('2026-04-20T00:00:00Z');
    expect((await ok(env.mcp, 'get_subscription', { id: t.id })).status).toBe('cancelled');
    const item = itemOf(t, 'calls').id;
    // The jobs run invoiced the last interval, up to the cancellation: a value measured in it is now refused as invoiced.
    const invoiced = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: '1', measuredAt: '2026-04-14T21:59:59.999Z' }, 422);
    expect(paths(invoiced)).toEqual(['measuredAt']);
    const p = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: '1', measuredAt: '2026-04-14T22:00:00Z' }, 409);
    expect(p.detail).toMatch(/was cancelled at 2026-04-14T22:00:00.000Z/);
    // the usage of a stopped subscription shows the interval it stopped in
    expect(await usageOf(t.id, item)).toMatchObject({ periodStart: '2026-03-14T23:00:00.000Z', periodEnd: '2026-04-14T22:00:00.000Z', value: '1' });
    env.setNow('2026-03-20T12:00:00Z');
  });
});

describe('values of an invoiced interval (422)', () => {
  it('refuses a metered or recurring value measured before the end of the last invoiced interval (single, by code, REST, batch) and takes values from that end on', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const t = await subscribe();
    const calls = itemOf(t, 'calls').id;
    const seats = itemOf(t, 'seats').id;
    await record({ subscriptionItem: calls, quantity: '5', measuredAt: '2026-03-10T00:00:00Z' });
    expect((await ok(env.mcp, 'run_billing', { subscription: t.id })).invoicesCreated).toBeGreaterThan(0);
    const billed = (await ok(env.mcp, 'get_subscription', { id: t.id })).items.find((i: any) => i.id === calls).billing;
    // Periods start at midnight in Berlin: 2026-01-15 to 2026-02-15, then to 2026-03-15 (23:00 UTC the day before) are invoiced.
    expect(billed.lastBilledTo).toBe('2026-03-14T23:00:00.000Z');
    const invoicedTo = billed.lastBilledTo;

    const single = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: calls, quantity: '1', measuredAt: '2026-03-14T22:59:59.999Z' }, 422);
    expect(paths(single)).toEqual(['measuredAt']);
    expect(single.violations[0].message).toBe(
      `measuredAt 2026-03-14T22:59:59.999Z lies in an interval of item ${calls} (calls) of subscription ${t.number} that is already invoiced: ` +
        `its intervals up to the one ending ${invoicedTo} are invoiced and their usage is not read again; it takes values measured from ${invoicedTo} on. ` +
        'To correct an invoiced interval, credit its invoice with create_credit_note, or bill what is missing with create_invoice',
    );
    const byCode = await fails(env.mcp, 'create_subscription_measurement', { measurementCode: 'calls', subscription: t.number, quantity: '1', measuredAt: '2026-02-01T00:00:00Z' }, 422);
    expect(paths(byCode)).toEqual(['measuredAt']);
    const recurring = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: seats, quantity: '3', measuredAt: '2026-03-01T00:00:00Z' }, 422);
    expect(recurring.violations[0].message).toMatch(/already invoiced: .* it takes values measured from 2026-03-14T23:00:00.000Z on/);
    const rest = await env.http('POST', '/subscription-measurements', { body: { subscriptionItem: calls, quantity: '1', measuredAt: '2026-03-01T00:00:00Z' } });
    expect(rest.status).toBe(422);
    expect(paths(rest.body)).toEqual(['measuredAt']);
    const batch = await fails(
      env.mcp,
      'create_subscription_measurements_batch',
      { values: [{ subscriptionItem: calls, quantity: '1' }, { subscriptionItem: calls, quantity: '1', measuredAt: '2026-03-01T00:00:00Z' }] },
      422,
    );
    expect(paths(batch)).toEqual(['values[1].measuredAt']);
    expect(batch.violations[0].message).toMatch(/^values\[1\]\.measuredAt 2026-03-01T00:00:00.000Z lies in an interval .* already invoiced/);
    expect((await usageOf(t.id, calls)).eventCount).toBe(0);

    await record({ subscriptionItem: calls, quantity: '2', measuredAt: invoicedTo });
    await record({ subscriptionItem: calls, quantity: '3' });
    await record({ subscriptionItem: seats, quantity: '4', measuredAt: invoicedTo });
    expect(await usageOf(t.id, calls)).toMatchObject({ periodStart: invoicedTo, eventCount: 2, value: '5' });

    // instant_metered values are billed one by one as they are recorded, whenever measured: never refused for it.
    const pushes = itemOf(t, 'pushes').id;
    await record({ subscriptionItem: pushes, quantity: '1', measuredAt: '2026-03-19T00:00:00Z' });
    await record({ subscriptionItem: pushes, quantity: '1', measuredAt: '2026-03-01T00:00:00Z' });
  });
});

describe('idempotency', () => {
  it('replays a retried value with the same key instead of recording it twice', async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const t = await subscribe();
    const item = itemOf(t, 'calls').id;
    const first = await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: '2.5', idempotencyKey: 'usage-1' });
    env.setNow('2026-03-20T12:00:30Z');
    const again = await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: 2.5, idempotencyKey: 'usage-1' });
    expect(again).toEqual(first);
    const http = await env.http('POST', '/subscription-measurements', { body: { subscriptionItem: item, quantity: '2.50' }, headers: { 'idempotency-key': 'usage-1' } });
    expect(http.status).toBe(201);
    expect(http.headers.get('idempotent-replayed')).toBe('true');
    expect(http.body).toEqual({ ...first, measurement: f.metered.calls!.measurement });
    expect((await usageOf(t.id, item)).eventCount).toBe(1);
    const p = await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: '3', idempotencyKey: 'usage-1' }, 422);
    expect(paths(p)).toEqual(['idempotencyKey']);
    expect((await usageOf(t.id, item)).eventCount).toBe(1);
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('replays a batch with the same key', async () => {
    const t = await subscribe();
    const item = itemOf(t, 'calls').id;
    const body = { values: [{ subscriptionItem: item, quantity: '1' }, { subscriptionItem: item, quantity: '2' }] };
    const a = await env.http('POST', '/subscription-measurements/batch', { body, headers: { 'idempotency-key': 'batch-1' } });
    const b = await env.http('POST', '/subscription-measurements/batch', { body, headers: { 'idempotency-key': 'batch-1' } });
    expect(a.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect((await usageOf(t.id, item)).eventCount).toBe(2);
  });
});

describe('create_subscription_measurements_batch', () => {
  let s: any;
  beforeAll(async () => {
    env.setNow('2026-03-20T12:00:00Z');
    s = await subscribe();
  });

  it('records every value in order, one per target item, and answers 201 with a Location', async () => {
    const res = await env.http('POST', '/subscription-measurements/batch', {
      body: {
        values: [
          { subscriptionItem: itemOf(s, 'calls').id, quantity: 1 },
          { measurementCode: 'seats', subscription: s.number, quantity: '4', measuredAt: '2026-03-19T00:00:00Z' },
          { subscriptionItem: itemOf(s, 'users').id, quantity: '1', id: 'u1' },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((v: any) => [v.measurement.code, v.quantity, v.valueId])).toEqual([
      ['calls', '1', null],
      ['seats', '4', null],
      ['users', '1', 'u1'],
    ]);
    expect(res.headers.get('location')).toBe(`/subscription-measurements/${res.body.data[0].id}`);
    expect(res.headers.get('deprecation')).toBe('@1751328000');
    expect((await env.http('GET', res.headers.get('location') as string)).body).toEqual(res.body.data[0]);
  });

  it('is all or nothing: one bad entry stores none, and every problem is reported as values[i].field', async () => {
    const calls = itemOf(s, 'calls').id;
    const before = (await usageOf(s.id, calls)).eventCount;
    const p = await fails(
      env.mcp,
      'create_subscription_measurements_batch',
      {
        values: [
          { subscriptionItem: calls, quantity: '1' },
          { subscriptionItem: calls, quantity: '-1' },
          { subscriptionItem: calls, quantity: '1' },
          { subscriptionItem: itemOf(s, 'users').id, quantity: '1' },
          { measurementCode: 'calls', quantity: '1' },
        ],
      },
      422,
    );
    expect(paths(p)).toEqual(['values[1].quantity', 'values[3].id', 'values[4].subscription']);
    const q = await fails(
      env.mcp,
      'create_subscription_measurements_batch',
      {
        values: [
          { subscriptionItem: calls, quantity: '1' },
          { subscriptionItem: itemOf(s, 'users').id, quantity: '1' },
          { measurementCode: 'calls', quantity: '1' },
          { subscriptionItem: 'nope', quantity: '1' },
        ],
      },
      422,
    );
    expect(paths(q)).toEqual(['values[1].id', 'values[2].subscription', 'values[3].subscriptionItem']);
    expect(q.violations[0].message).toMatch(/^values\[1\]\.id is required/);
    expect((await usageOf(s.id, calls)).eventCount).toBe(before);
  });

  it('stores nothing when one entry hits a stopped subscription (409 naming the entry)', async () => {
    const calls = itemOf(s, 'calls').id;
    const before = (await usageOf(s.id, calls)).eventCount;
    const d = await subscribe({ activate: false });
    const p = await fails(
      env.mcp,
      'create_subscription_measurements_batch',
      { values: [{ subscriptionItem: calls, quantity: '1' }, { subscriptionItem: itemOf(d, 'calls').id, quantity: '1' }] },
      409,
    );
    expect(p.detail).toMatch(/^values\[1\]: subscription .* is draft/);
    expect((await usageOf(s.id, calls)).eventCount).toBe(before);
  });

  it('takes 1 to 1,000 entries', async () => {
    const calls = itemOf(s, 'calls').id;
    expect(paths(await fails(env.mcp, 'create_subscription_measurements_batch', { values: [] }, 422))).toEqual(['values']);
    const tooMany = Array.from({ length: 1001 }, () => ({ subscriptionItem: calls, quantity: '1' }));
    const p = await fails(env.mcp, 'create_subscription_measurements_batch', { values: tooMany }, 422);
    expect(p.violations[0].message).toMatch(/at most 1000 entries; split/);
    const before = (await usageOf(s.id, calls)).eventCount;
    const full = await ok(env.mcp, 'create_subscription_measurements_batch', { values: tooMany.slice(1) });
    expect(full).toEqual({
      recorded: 1000,
      items: [{ subscriptionItem: calls, subscription: s.id, values: 1000, firstMeasuredAt: '2026-03-20T12:00:00.000Z', lastMeasuredAt: '2026-03-20T12:00:00.000Z' }],
    });
    expect((await usageOf(s.id, calls)).eventCount).toBe(before + 1000);
  });

  it('answers the ids of a small batch, in request order, and counts per item by measurement code', async () => {
    const calls = itemOf(s, 'calls').id;
    const small = await ok(env.mcp, 'create_subscription_measurements_batch', {
      values: [
        { subscriptionItem: calls, quantity: '1', measuredAt: '2026-03-19T10:00:00Z' },
        { measurementCode: 'calls', subscription: s.number, quantity: '2', measuredAt: '2026-03-18T10:00:00Z' },
      ],
    });
    expect(small.recorded).toBe(2);
    expect(small.items).toEqual([
      { subscriptionItem: calls, subscription: s.id, values: 2, firstMeasuredAt: '2026-03-18T10:00:00.000Z', lastMeasuredAt: '2026-03-19T10:00:00.000Z' },
    ]);
    expect(small.ids).toHaveLength(2);
    const rest = await env.http('POST', '/subscription-measurements/batch', { body: { values: [{ subscriptionItem: calls, quantity: '3' }] } });
    expect(rest.body.data.map((v: { id: string }) => v.id)).toHaveLength(1);
    expect((await ok(env.mcp, 'get_subscription_measurement', { id: small.ids[1] })).quantity).toBe('2');
  });
});

describe('reading, permissions and the REST facade', () => {
  let s: any;
  let value: any;
  beforeAll(async () => {
    env.setNow('2026-03-20T12:00:00Z');
    s = await subscribe();
    value = await record({ subscriptionItem: itemOf(s, 'calls').id, quantity: '1' });
  });

  it('404 for an unknown value or subscription, and for those of another organisation', async () => {
    await fails(env.mcp, 'get_subscription_measurement', { id: 'nope' }, 404);
    await fails(env.mcp, 'get_subscription_usage', { id: 'nope' }, 404);
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    await fails(mcp, 'get_subscription_measurement', { id: value.id }, 404);
    await fails(mcp, 'get_subscription_usage', { id: s.id }, 404);
    expect((await env.http('GET', `/subscription-measurements/${value.id}`, { token: org.apiKey })).status).toBe(404);
  });

  it('needs subscription:write to record and subscription:read to read', async () => {
    const reader = await env.mcpFor(await env.newKey(env.org, ['subscription:read']));
    await fails(reader, 'create_subscription_measurement', { subscriptionItem: itemOf(s, 'calls').id, quantity: '1' }, 403);
    await fails(reader, 'create_subscription_measurements_batch', { values: [{ subscriptionItem: itemOf(s, 'calls').id, quantity: '1' }] }, 403);
    expect((await ok(reader, 'get_subscription_measurement', { id: value.id })).id).toBe(value.id);
    await ok(reader, 'get_subscription_usage', { id: s.id });
    const stranger = await env.mcpFor(await env.newKey(env.org, ['measurement:read']));
    await fails(stranger, 'get_subscription_measurement', { id: value.id }, 403);
    await fails(stranger, 'get_subscription_usage', { id: s.id }, 403);
    const listed = (await stranger.listTools()).tools.map((t) => t.name);
    expect(listed).not.toContain('get_subscription_usage');
  });

  it('REST: 201 with Location and deprecation headers, 422 problem, usage with page parameters', async () => {
    const res = await env.http('POST', '/subscription-measurements', { body: { subscriptionItem: itemOf(s, 'calls').id, quantity: '2' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/subscription-measurements/${res.body.id}`);
    expect(res.headers.get('deprecation')).toBe('@1751328000');
    expect(res.headers.get('sunset')).toBe('Wed, 30 Sep 2026 23:59:59 GMT');
    const bad = await env.http('POST', '/subscription-measurements', { body: { quantity: '1' } });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/problem\+json/);
    expect(bad.headers.get('deprecation')).toBe('@1751328000');
    const usage = await env.http('GET', `/subscriptions/${s.id}/usage?limit=1&page=2`);
    expect(usage.status).toBe(200);
    // The usage read also shows usage metrics, which replace measurements: it is not deprecated.
    expect(usage.headers.get('sunset')).toBeNull();
    const calls = usage.body.data.find((e: any) => e.subscriptionItem === itemOf(s, 'calls').id);
    expect(calls).toMatchObject({ eventCount: 2, value: '3' });
    expect(calls.events.map((e: any) => e.quantity)).toEqual(['1']);
    expect((await env.http('GET', `/subscriptions/${s.id}/usage?limit=101`)).status).toBe(400);
    const got = await env.http('GET', `/subscription-measurements/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('deprecation')).toBe('@1751328000');
  });

  it('lists one usage entry per metered item, none for items without a measurement', async () => {
    const usage = await ok(env.mcp, 'get_subscription_usage', { id: s.id });
    expect(usage.data.map((e: any) => e.measurement.code).sort()).toEqual(['calls', 'pushes', 'seats', 'users']);
  });

  it("keeps showing values of a product's former measurement while its interval has them", async () => {
    env.setNow('2026-03-20T12:00:00Z');
    const product = await ok(env.mcp, 'create_product', { name: 'Switching', measurement: f.metered.calls!.measurement.id });
    const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 1 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'switching', name: 'Switching', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
    const t = await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: plan.id, periods: yearly, startDate: '2026-01-15T00:00:00+01:00', activate: true });
    const item = t.items[0].id;
    await record({ subscriptionItem: item, quantity: '5' });
    await ok(env.mcp, 'update_product', { id: product.id, measurement: f.metered.seats!.measurement.id });
    await record({ subscriptionItem: item, quantity: '2' });
    const entries = async () => (await ok(env.mcp, 'get_subscription_usage', { id: t.id })).data.map((e: any) => [e.measurement.code, e.value]);
    expect((await entries()).sort()).toEqual([
      ['calls', '5'],
      ['seats', '2'],
    ]);
    env.setNow('2026-04-20T12:00:00Z');
    expect(await entries()).toEqual([['seats', '2']]);
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('marks every measurement value tool deprecated, in the usage toolset beside the usage event tools', async () => {
    const deprecated = ['create_subscription_measurement', 'create_subscription_measurements_batch', 'get_subscription_measurement'];
    const current = ['get_subscription_usage', 'ingest_usage_events', 'list_usage_events'];
    const tools = (await env.mcp.listTools()).tools.filter((t) => [...deprecated, ...current].includes(t.name));
    expect(tools).toHaveLength(6);
    for (const t of tools) expect(/^Deprecated:/.test(t.description!), t.name).toBe(deprecated.includes(t.name));
    expect(env.app.catalog.operations.filter((o) => o.toolset === 'usage').map((o) => o.name).sort()).toEqual(tools.map((t) => t.name).sort());
  });
});
