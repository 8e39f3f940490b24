/**
 * What usage input is refused and how, through the MCP client and REST on 127.0.0.1: numbers in event
 * properties written as quantities are (and stored strings read alike on both engines), CloudEvents
 * bodies of the wrong shape for their media type, bad filters of list_usage_events, and a measurement
 * batch that reports every problem at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollUpUsage } from '../src/domain/usageRollups.js';
import { fails, meteredCharge, meteredSubscription, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-10T12:00:00Z');
});
afterAll(async () => {
  await env.close();
});

const ingest = (events: unknown[]) => ok(env.mcp, 'ingest_usage_events', { events });

describe('numbers in event properties', () => {
  it('takes a number, or a string of digits with an optional minus and decimal point; refuses exponents and spaces', async () => {
    env.setNow('2026-03-10T12:00:00Z');
    const s = await meteredSubscription(env.mcp, { eventName: 'upload', aggregation: 'sum', property: 'gb' }, 'Uploads');
    env.setNow('2026-03-10T13:00:00Z');
    const e = (id: string, gb: unknown) => ({ id, eventName: 'upload', subscription: s, timestamp: '2026-03-10T12:30:00Z', properties: { gb } });
    const r = await ingest([e('u1', '1e3'), e('u2', ' 12 '), e('u3', 12), e('u4', '2.5'), e('u5', '-1.5'), e('u6', '+4'), e('u7', '.5'), e('u8', 1e3)]);
    expect(r.errors.map((x: any) => x.propertyPath)).toEqual(['events[0].properties.gb', 'events[1].properties.gb', 'events[5].properties.gb', 'events[6].properties.gb']);
    expect(r.errors[0].message).toBe(
      `events[0].properties.gb is "1e3", not a number: product 'Uploads' sums gb of its upload events; send a number such as 1200, or a string of digits with an optional decimal point ("1200.5"; no exponent, no spaces)`,
    );
    expect(r.accepted).toBe(4);
    // 12 + 2.5 - 1.5 + 1000 (a JSON number is a number however it is written).
    expect((await ok(env.mcp, 'get_subscription_usage', { id: s })).data[0].value).toBe('1013');
  });

  it('counts a stored string that is no such number as 0 on every engine, over the events and with the rollups', async () => {
    env.setNow('2026-03-10T12:00:00Z');
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Stored', timeZone: 'UTC' });
    const charges = [];
    for (const aggregation of ['sum', 'max', 'average', 'latest']) {
      charges.push(await meteredCharge(env.mcp, { name: `Stored ${aggregation}`, usageMetric: { eventName: 'stored', aggregation, property: 'gb' } }));
    }
    // SQLite's own sum of integers would read " 12 " as the integer 12.
    charges.push(await meteredCharge(env.mcp, { name: 'Spaced', usageMetric: { eventName: 'spaced', aggregation: 'sum', property: 'gb' } }));
    const plan = await ok(env.mcp, 'create_plan', { code: 'stored', name: 'Stored', charges });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    env.setNow('2026-03-10T18:00:00Z');
    const stored = { 's-1': ' 12 ', 's-2': '12abc', 's-3': '7', 's-4': 5, 's-5': '1e3', 'sp-1': 5, 'sp-2': ' 12 ' };
    const events = Object.keys(stored).map((id, i) => ({ id, eventName: id.startsWith('sp') ? 'spaced' : 'stored', subscription: s.id, timestamp: `2026-03-10T1${3 + (i % 5)}:30:00Z`, properties: { gb: 1 } }));
    expect(await ingest(events)).toMatchObject({ accepted: 7 });
    // As events stored before the rule (or before a metric read the property) hold them.
    const jsonb = env.sql.dialect === 'postgres' ? '?::jsonb' : 'jsonb(?)';
    for (const [id, gb] of Object.entries(stored)) await env.sql.run(`UPDATE usage_events SET properties = ${jsonb} WHERE event_id = ?`, JSON.stringify({ gb }), id);

    // 0 + 0 + 7 + 5 + 0: sum 12, max 7, average 2.4 (over the 5 events), latest the last one's 0; 5 + 0.
    const values = async () => (await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data.map((u: any) => u.value);
    expect(await values()).toEqual(['12', '7', '2.4', '0', '5']);
    await rollUpUsage(env.app.store);
    expect(await values()).toEqual(['12', '7', '2.4', '0', '5']);
  });
});

describe('CloudEvents', () => {
  it('names binary data as not taken, and a body of the wrong shape for its media type', async () => {
    const s = await meteredSubscription(env.mcp, { eventName: 'ce', aggregation: 'count' }, 'Cloud');
    const event = { specversion: '1.0', id: 'ce-1', source: 'gateway', type: 'ce', subject: s };
    const binary = await env.http('POST', '/usage-events', { body: { ...event, data_base64: 'AAEC' }, contentType: 'application/cloudevents+json' });
    expect(binary.status).toBe(200);
    expect(binary.body.errors.map((e: any) => e.message)).toEqual([
      'events[0].data_base64 carries binary data, which usage events do not take: send the properties as a JSON object in data',
    ]);

    const single = await env.http('POST', '/usage-events', { body: event, contentType: 'application/cloudevents-batch+json' });
    expect(single.status).toBe(400);
    expect(single.body.detail).toBe('application/cloudevents-batch+json takes a JSON array of CloudEvents; send a single CloudEvent as application/cloudevents+json');
    const batch = await env.http('POST', '/usage-events', { body: [event], contentType: 'application/cloudevents+json' });
    expect(batch.status).toBe(400);
    expect(batch.body.detail).toBe('application/cloudevents+json takes one CloudEvent, a JSON object; send an array of them as application/cloudevents-batch+json');
    expect((await env.http('POST', '/usage-events', { body: [event], contentType: 'application/cloudevents-batch+json' })).body).toMatchObject({ accepted: 1 });
  });
});

describe('list_usage_events filters', () => {
  it('names an unknown subscription or customer, and from later than to (400)', async () => {
    const unknown = await env.http('GET', '/usage-events?subscription=SUB-NOPE&customer=CUS-NOPE');
    expect(unknown.status).toBe(400);
    expect(unknown.body.violations).toEqual([
      { propertyPath: 'subscription', code: 'not_found', message: "subscription 'SUB-NOPE' is neither the id nor the number of a subscription; use one from list_subscriptions" },
      { propertyPath: 'customer', code: 'not_found', message: "customer 'CUS-NOPE' is neither the id nor the number of a customer; use one from list_customers" },
    ]);
    const range = await fails(env.mcp, 'list_usage_events', { from: '2026-03-10T00:00:00Z', to: '2026-03-09T00:00:00Z' }, 400);
    expect(range.violations).toEqual([
      {
        propertyPath: 'from',
        code: 'invalid_range',
        message: 'from (2026-03-10T00:00:00Z) is later than to (2026-03-09T00:00:00Z): the list shows timestamps from from (inclusive) to before to',
      },
    ]);
    expect((await ok(env.mcp, 'list_usage_events', { from: '2026-03-10T00:00:00Z', to: '2026-03-10T00:00:00Z' })).data).toEqual([]);
  });
});

describe('measurement values', () => {
  it('a batch reports every problem of every value at once, a bad quantity among them; so does a single value', async () => {
    await ok(env.mcp, 'create_unit', { name: 'check-unit' });
    const users = await ok(env.mcp, 'create_measurement', { unit: 'check-unit', code: 'check-users', aggregationType: 'count_unique', type: 'metered' });
    const sum = await ok(env.mcp, 'create_measurement', { unit: 'check-unit', code: 'check-gb', aggregationType: 'sum', type: 'metered' });
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Checks' });
    const charges = [await meteredCharge(env.mcp, { name: 'Check users', measurement: users.id }), await meteredCharge(env.mcp, { name: 'Check gb', measurement: sum.id })];
    const plan = await ok(env.mcp, 'create_plan', { code: 'checks', name: 'Checks', charges });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    const [userItem, gbItem] = s.items.map((i: any) => i.id);

    const values = [
      { subscriptionItem: gbItem, quantity: '1' },
      { subscriptionItem: gbItem, quantity: '-1' },
      { subscriptionItem: userItem, quantity: '1' },
      { quantity: '1' },
    ];
    const p = await fails(env.mcp, 'create_subscription_measurements_batch', { values }, 422);
    expect(paths(p)).toEqual(['values[1].quantity', 'values[2].id', 'values[3].subscriptionItem']);
    expect(p.violations[0]).toMatchObject({ code: 'invalid_quantity', message: expect.stringMatching(/^values\[1\]\.quantity must not be negative \(got -1\)/) });
    expect((await ok(env.mcp, 'get_subscription_usage', { id: s.id })).data.map((u: any) => u.eventCount)).toEqual([0, 0]);

    const single = await fails(env.mcp, 'create_subscription_measurement', { quantity: 1e21 }, 422);
    expect(paths(single)).toEqual(['quantity', 'subscriptionItem']);
    expect(single.violations[0].message).toMatch(/^quantity must be written without an exponent/);
    const fine = await env.http('POST', '/subscription-measurements/batch', { body: { values: [{ subscriptionItem: gbItem, quantity: 2.5 }, { subscriptionItem: userItem, quantity: '1.000', id: 'u1' }] } });
    expect(fine.status).toBe(201);
    expect(fine.body.data.map((v: any) => v.quantity)).toEqual(['2.5', '1']);
  });
});
