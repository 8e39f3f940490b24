import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

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

describe('create_subscription_measurement', () => {
  it('records a value on an item, canonicalises the quantity and defaults measuredAt to now', async () => {
    const s = await subscribe();
    const item = itemOf(s, 'calls');
    const v = await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item.id, quantity: '12.500000' });
    expect(v).toEqual({
      id: expect.any(String),
      measurement: f.metered.calls!.measurement,
      quantity: '12.5',
      measuredAt: '2026-03-20T12:00:00.000Z',
      subscriptionItem: item.id,
      subscription: s.id,
      valueId: null,
      createdAt: '2026-03-20T12:00:00.000Z',
    });
    expect(await ok(env.mcp, 'get_subscription_measurement', { id: v.id })).toEqual(v);
  });
});
