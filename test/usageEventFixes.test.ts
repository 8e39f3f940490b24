/**
 * Usage events through the MCP client and REST on 127.0.0.1, figures hand-computed: an event's
 * schema-level problems are errors of that event, reported with the other events' errors; a
 * recurring metric's later intervals leave out the late events of earlier ones (CONTRACT section 8:
 * a late event is not billed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollUpUsage } from '../src/domain/usageRollups.js';
import { fails, meteredCharge, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-15T10:00:00Z');
});
afterAll(async () => {
  await env.close();
});

describe('a batch with schema-level problems', () => {
  it('lists them per event with the errors of the other events: the good events stored, or with atomic a 422 with every error', async () => {
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Batch', timeZone: 'UTC' });
    const charge = await meteredCharge(env.mcp, { name: 'Calls', usageMetric: { eventName: 'batch-call', aggregation: 'count' } });
    const plan = await ok(env.mcp, 'create_plan', { code: 'batch', name: 'Batch', charges: [charge] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    const events = (prefix: string) => [
      { id: `${prefix}-good`, eventName: 'batch-call', subscription: s.id },
      { id: `${prefix}-format`, eventName: 'batch-call', subscription: s.id, timestamp: '15.01.2026 09:00' },
      { id: `${prefix}-key`, eventName: 'batch-call', subscription: s.id, quantity: 2 },
      { id: `${prefix}-nobody`, eventName: 'batch-call', subscription: 'SUB-999999' },
      { id: `${prefix}-old`, eventName: 'batch-call', subscription: s.id, timestamp: '2025-12-01T00:00:00Z' },
    ];
    const paths = ['events[1].timestamp', 'events[2].quantity', 'events[3].subscription', 'events[4].timestamp'];

    const atomic = await env.http('POST', '/usage-events?atomic=true', { body: { events: events('rest-atomic') } });
    expect([atomic.status, atomic.body.violations.map((v: any) => v.propertyPath)]).toEqual([422, paths]);
    expect(paths.map((p, i) => atomic.body.violations[i].message.startsWith(`${p} `))).toEqual([true, true, true, true]);
    const tool = await fails(env.mcp, 'ingest_usage_events', { events: events('mcp-atomic'), atomic: true }, 422);
    expect(tool.violations.map((v: any) => v.propertyPath)).toEqual(paths);

    const rest = await env.http('POST', '/usage-events', { body: { events: events('rest') } });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ accepted: 1, duplicates: 0, late: 0, unmatched: 0 });
    expect(rest.body.errors.map((e: any) => [e.index, e.id, e.propertyPath])).toEqual([
      [1, 'rest-format', paths[0]],
      [2, 'rest-key', paths[1]],
      [3, 'rest-nobody', paths[2]],
      [4, 'rest-old', paths[3]],
    ]);
    const mcp = await ok(env.mcp, 'ingest_usage_events', { events: events('mcp') });
    expect([mcp.accepted, mcp.errors.map((e: any) => e.propertyPath)]).toEqual([1, paths]);
    const stored = await ok(env.mcp, 'list_usage_events', { subscription: s.id });
    expect(stored.data.map((e: any) => e.id)).toEqual(['mcp-good', 'rest-good']);

    // The envelope itself is one problem of the whole call, not an event's error.
    const many = Array.from({ length: 1001 }, (_, i) => ({ id: `many-${i}`, eventName: 'batch-call', subscription: s.id }));
    const tooMany = await env.http('POST', '/usage-events', { body: { events: many } });
    expect([tooMany.status, tooMany.body.violations.map((v: any) => v.propertyPath)]).toEqual([422, ['events']]);
  });
});

describe('a recurring metric after a late event', () => {
  it('never bills the late event: not in its own interval, not in the running value of the later ones (events and rollups alike)', async () => {
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Recurring', timeZone: 'UTC' });
    const charges = [
      await meteredCharge(env.mcp, { name: 'Seats', usageMetric: { eventName: 'seat-change', aggregation: 'sum', property: 'seats', type: 'recurring' } }),
      await meteredCharge(env.mcp, { name: 'Seat changes', usageMetric: { eventName: 'seat-change', aggregation: 'count', type: 'recurring' } }),
      await meteredCharge(env.mcp, { name: 'Peak seats', usageMetric: { eventName: 'seat-change', aggregation: 'max', property: 'seats', type: 'recurring' } }),
    ];
    const plan = await ok(env.mcp, 'create_plan', { code: 'recurring-late', name: 'Recurring late', charges });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    const event = (id: string, timestamp: string, seats: number) => ({ id, eventName: 'seat-change', subscription: s.id, timestamp, properties: { seats } });
    const ingest = (events: unknown[]) => ok(env.mcp, 'ingest_usage_events', { events });
    /** Each line of an invoice as [quantity, net amount in cents], in the plan's order: Seats, Seat changes, Peak seats. */
    const lines = async (invoice: string) => (await env.http('GET', `/invoices/${invoice}`)).body.lines.map((l: any) => [l.quantity, l.netAmount]);
    const usage = async () => (await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data.map((u: any) => [u.value, u.eventCount, u.lateEvents]);

    env.setNow('2026-01-20T10:00:00Z');
    expect(await ingest([event('seats-jan', '2026-01-20T09:00:00Z', 100)])).toMatchObject({ accepted: 1, late: 0 });
    env.setNow('2026-02-10T10:00:00Z');
    expect(await ingest([event('seats-feb', '2026-02-10T09:00:00Z', 50)])).toMatchObject({ accepted: 1, late: 0 });

    // January 15 to February 15: 100 + 50 = 150 seats, 2 changes, a peak of 100; 0.01 EUR a unit.
    env.setNow('2026-02-15T10:00:00Z');
    const first = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(await lines(first.invoices[0])).toEqual([
      ['150', 150],
      ['2', 2],
      ['100', 100],
    ]);

    // 1,000 seats on 14 February, sent after that interval was invoiced: stored, late, never billed.
    env.setNow('2026-02-20T10:00:00Z');
    expect(await ingest([event('seats-late', '2026-02-14T10:00:00Z', 1000), event('seats-mar', '2026-02-20T09:00:00Z', 25)])).toMatchObject({ accepted: 2, late: 1 });

    // February 15 to March 15 carries the on-time events: 100 + 50 + 25 = 175 seats, 3 changes, a peak
    // of 100 (with the late event: 1,175, 4 and 1,000). The usage read shows what will be billed, the
    // late event counted among the events and apart.
    const expected = [
      ['175', 4, 1],
      ['3', 4, 1],
      ['100', 4, 1],
    ];
    expect(await usage()).toEqual(expected);
    expect((await ok(env.mcp, 'get_estimated_invoice', { id: s.id })).netAmount).toBe(175 + 3 + 100);
    // The hourly rollups hold the late event too; with them the figures stay the same.
    await rollUpUsage(env.app.store);
    expect(await usage()).toEqual(expected);
    env.setNow('2026-03-15T10:00:00Z');
    const second = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(await lines(second.invoices[0])).toEqual([
      ['175', 175],
      ['3', 3],
      ['100', 100],
    ]);
  });
});
