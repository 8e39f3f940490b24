/**
 * Usage of an interval already invoiced, through the MCP client and REST on 127.0.0.1: events that
 * arrive after the invoice (late) are stored and shown, but the value and the event count stay what
 * the invoice billed (CONTRACT section 8: late events are not billed); lateEvents counts them apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollUpUsage } from '../src/domain/usageRollups.js';
import { fails, meteredCharge, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-10T12:00:00Z');
});
afterAll(async () => {
  await env.close();
});

describe('an invoiced interval after late events', () => {
  it('shows the billed value and event count of metric items (count, sum, max) and measurement items; lateEvents apart', async () => {
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Late', timeZone: 'UTC' });
    const count = await meteredCharge(env.mcp, { name: 'Late calls', usageMetric: { eventName: 'late-call', aggregation: 'count' } });
    const sum = await meteredCharge(env.mcp, { name: 'Late bytes', usageMetric: { eventName: 'late-upload', aggregation: 'sum', property: 'mb' } });
    const max = await meteredCharge(env.mcp, { name: 'Late peak', usageMetric: { eventName: 'late-upload', aggregation: 'max', property: 'mb' } });
    await ok(env.mcp, 'create_unit', { name: 'late-unit' });
    const measurement = await ok(env.mcp, 'create_measurement', { unit: 'late-unit', code: 'late-seats', aggregationType: 'sum', type: 'metered' });
    const measured = await meteredCharge(env.mcp, { name: 'Late seats', measurement: measurement.id });
    const plan = await ok(env.mcp, 'create_plan', { code: 'late', name: 'Late', charges: [count, sum, max, measured] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });

    env.setNow('2026-03-11T12:00:00Z');
    const onTime = [
      ...[1, 2, 3, 4, 5].map((i) => ({ id: `late-c${i}`, eventName: 'late-call', subscription: s.id, timestamp: '2026-03-11T10:00:00Z' })),
      ...[2, 3].map((mb, i) => ({ id: `late-u${i}`, eventName: 'late-upload', subscription: s.id, timestamp: '2026-03-11T10:00:00Z', properties: { mb } })),
    ];
    expect(await ok(env.mcp, 'ingest_usage_events', { events: onTime })).toMatchObject({ accepted: 7, late: 0 });
    const seats = s.items.find((i: any) => i.product.id === measured.product).id;
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: seats, quantity: '4', measuredAt: '2026-03-11T10:00:00Z' });
    await ok(env.mcp, 'terminate_subscription', { id: s.id });

    env.setNow('2026-03-13T12:00:00Z');
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    const invoice = (await env.http('GET', `/invoices/${run.invoices[0]}`)).body;
    const billed = invoice.lines.map((l: any) => l.quantity);
    expect(billed).toEqual(['5', '5', '3', '4']);

    const late = [
      ...[6, 7].map((i) => ({ id: `late-c${i}`, eventName: 'late-call', subscription: s.id, timestamp: '2026-03-11T11:00:00Z' })),
      { id: 'late-u9', eventName: 'late-upload', subscription: s.id, timestamp: '2026-03-11T11:00:00Z', properties: { mb: 9 } },
    ];
    expect(await ok(env.mcp, 'ingest_usage_events', { events: late })).toMatchObject({ accepted: 3, late: 3 });
    // A measurement value in the invoiced interval is refused: it has no late flag to show it by.
    await fails(env.mcp, 'create_subscription_measurement', { subscriptionItem: seats, quantity: '1', measuredAt: '2026-03-11T11:00:00Z' }, 422);

    const usage = (await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data;
    const shown = usage.map((u: any) => [u.value, u.eventCount, u.lateEvents, u.events.length]);
    expect(shown).toEqual([
      ['5', 5, 2, 7],
      ['5', 2, 1, 3],
      ['3', 2, 1, 3],
      ['4', 1, 0, 1],
    ]);
    expect(usage.map((u: any) => u.value)).toEqual(billed);
    // The hourly rollups hold the late events too: the same figures once they answer.
    await rollUpUsage(env.app.store);
    expect((await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data.map((u: any) => [u.value, u.eventCount, u.lateEvents, u.events.length])).toEqual(shown);
    expect(usage[0].events.filter((e: any) => e.late).map((e: any) => e.id).sort()).toEqual(['late-c6', 'late-c7']);

    const items = (await env.http('GET', `/subscriptions/${s.id}`)).body.items;
    expect(items.slice(0, 3).map((i: any) => [i.currentUsage.value, i.currentUsage.eventCount])).toEqual([
      ['5', 5],
      ['5', 2],
      ['3', 2],
    ]);
    const item = await ok(env.mcp, 'get_subscription_item', { id: items[0].id });
    expect(item.currentUsage).toMatchObject({ value: '5', eventCount: 5 });
  });
});
