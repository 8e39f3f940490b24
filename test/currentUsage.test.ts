/**
 * `currentUsage` on subscription items (interface section 9: it replaces `currentMeasurementValue`
 * for products with a usage metric), through the MCP client and REST on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meteredSubscription, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-10T12:00:00Z');
});
afterAll(async () => {
  await env.close();
});

describe('currentUsage', () => {
  it("shows a metric item's value and events in its current interval, as get_subscription_usage does; null without a metric", async () => {
    const id = await meteredSubscription(env.mcp, { eventName: 'call', aggregation: 'sum', property: 'n' }, 'Current');
    env.setNow('2026-03-10T13:00:00Z');
    const events = [1.5, 2, 4].map((n, i) => ({ id: `cu-${i}`, eventName: 'call', subscription: id, timestamp: '2026-03-10T12:30:00Z', properties: { n } }));
    expect(await ok(env.mcp, 'ingest_usage_events', { events })).toMatchObject({ accepted: 3 });
    const subscription = await ok(env.mcp, 'get_subscription', { id });
    const usage = (await ok(env.mcp, 'get_subscription_usage', { id })).data[0];
    const expected = { value: '7.5', eventCount: 3, periodStart: usage.periodStart, periodEnd: usage.periodEnd };
    expect(usage.periodStart).toBe('2026-03-10T12:00:00.000Z');
    expect(subscription.items[0].currentUsage).toEqual(expected);
    const item = await ok(env.mcp, 'get_subscription_item', { id: subscription.items[0].id });
    expect(item.currentUsage).toEqual(expected);
    const rest = await env.http('GET', `/subscriptions/${id}`);
    expect(rest.body.items[0].currentUsage).toEqual(expected);

    const seats = await ok(env.mcp, 'create_product', { name: 'Seat' });
    const plan = await ok(env.mcp, 'create_price_plan', { id: seats.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 5 }, billingInterval: '1M', payInAdvance: true });
    const flat = await ok(env.mcp, 'order_subscription_products', { id, products: [{ product: seats.id, pricePlan: plan.id, quantity: 2 }] });
    expect(flat.items.map((i: any) => i.currentUsage === null)).toEqual([false, true]);
  });
});
