/**
 * Hourly rollups of usage events (src/domain/usageRollups.ts), on both engines: aggregating with the
 * rollups gives what the events alone give (a property test over random events, filters, arrivals
 * after the mark and scopes), the rollups are what is read, the jobs loop keeps them, a metric no
 * product has any more loses them, and sums past 64 bits give them up without a wrong figure.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateEvents, metricReading } from '../src/domain/aggregation.js';
import { ingestUsageEvents } from '../src/domain/usageEvents.js';
import { rolledUpStats, rollupKey, rollUpMetric, rollUpUsage } from '../src/domain/usageRollups.js';
import { runDueJobs } from '../src/jobs/runner.js';
import type { UsageMetric } from '../src/schemas/catalogue.js';
import { meteredSubscription, setup, type TestEnv } from './helpers.js';
import { onPostgres } from './pgStore.js';

const NOW = new Date('2026-03-10T12:00:00Z');
const HOUR = 3_600_000;
/** Events fall in the 3 days before NOW. */
const WINDOW_START = NOW.getTime() - 72 * HOUR;

let env: TestEnv;
let org: string;
let subscription: string;

beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  org = env.org.organisationId;
  subscription = await meteredSubscription(env.mcp, { eventName: 'tokens', aggregation: 'sum', property: 'n' }, 'Rollup');
});
afterAll(() => env.close());

let ids = 0;
const store = () => env.app.store;
const ingest = (events: Array<{ ts: number; properties: Record<string, unknown> }>, eventName: string) =>
  store().transaction((tx) =>
    ingestUsageEvents(
      tx,
      org,
      events.map((e) => ({ id: `r-${++ids}`, eventName, timestamp: new Date(e.ts).toISOString(), subscription, properties: e.properties })),
      true,
      NOW,
    ),
  );
const aggregate = (metric: UsageMetric, from: number, to: number) =>
  store().read((tx) => aggregateEvents(tx, org, { subscriptionId: subscription, eventName: metric.eventName, from, to }, metric));
const reading = (metric: UsageMetric, from: number, to: number) =>
  store().read((tx) => metricReading(tx, org, { subscriptionId: subscription, eventName: metric.eventName, from, to }, metric));
const counts = async (metric: UsageMetric, from: number, to: number) => {
  const { events, late } = await reading(metric, from, to);
  return { events, late };
};
const rolled = (metric: UsageMetric, from: number, to: number) =>
  store().read((tx) => rolledUpStats(tx, org, { subscriptionId: subscription, eventName: metric.eventName, from, to }, metric));
const mark = (metric: UsageMetric) => store().read((tx) => tx.usageEvents.rollupMark(org, rollupKey(metric)));
const metricOf = (eventName: string, aggregation: UsageMetric['aggregation'], filters: UsageMetric['filters'] = []): UsageMetric => ({
  eventName,
  aggregation,
  property: aggregation === 'count' ? null : 'n',
  filters,
  type: 'metered',
});

describe('usage rollups', () => {
  it('give the same count, sum, max and average as the events alone, whatever arrives after the mark', async () => {
    const value = fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000_000 }),
      fc.integer({ min: -10_000_000, max: 10_000_000 }).map((x) => x / 10_000),
      fc.constantFrom('12', ' 7 ', '2.5', '1e3', 'abc', '12abc'),
    );
    const event = fc.record({
      ts: fc.integer({ min: WINDOW_START, max: NOW.getTime() - 1 }),
      properties: fc.record({ n: value, model: fc.constantFrom('large', 'xl', 'small', 3) }, { requiredKeys: [] }),
    });
    const scope = fc.tuple(fc.integer({ min: WINDOW_START - HOUR, max: NOW.getTime() }), fc.integer({ min: 0, max: 80 * HOUR })).map(([from, length]) => ({ from, to: from + length }));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { maxLength: 40 }),
        fc.array(event, { maxLength: 10 }),
        fc.constantFrom<UsageMetric['aggregation']>('count', 'sum', 'max', 'average'),
        fc.subarray([{ property: 'model', values: ['large', 'xl', 3] }]),
        scope,
        async (before, after, aggregation, filters, { from, to }) => {
          const metric = metricOf(`p${++run}`, aggregation, filters);
          if (before.length) await ingest(before, metric.eventName);
          await rollUpMetric(store(), org, metric);
          if (after.length) await ingest(after, metric.eventName);
          const viaRollups = await aggregate(metric, from, to);
          const read = await reading(metric, from, to);
          expect(read.value).toBe(viaRollups);
          const answered = await rolled(metric, from, to);
          const spansAnHour = Math.ceil(from / HOUR) < Math.floor(to / HOUR);
          expect(answered !== null).toBe(spansAnHour);
          await store().transaction(async (tx) => tx.usageEvents.abandonRollup((await tx.usageEvents.rollupMark(org, rollupKey(metric)))!.id));
          expect(await rolled(metric, from, to)).toBeNull();
          expect(viaRollups).toBe(await aggregate(metric, from, to));
          expect(read).toEqual(await reading(metric, from, to));
        },
      ),
      { numRuns: onPostgres() ? 40 : 300 },
    );
  }, 60_000);

  it('are what aggregation reads for whole hours, with the partial hours and later arrivals from the events', async () => {
    const metric = metricOf('read', 'sum', [{ property: 'model', values: ['large'] }]);
    const at = (h: number, m = 0) => Date.parse('2026-03-09T00:00:00Z') + h * HOUR + m * 60_000;
    await ingest(
      [
        { ts: at(0, 30), properties: { n: 1, model: 'large' } }, // the partial first hour of the scope below
        { ts: at(1, 0), properties: { n: 10, model: 'large' } }, // whole hours 01:00-03:00
        { ts: at(2, 59), properties: { n: 100, model: 'large' } },
        { ts: at(2, 59), properties: { n: 5000, model: 'small' } }, // filtered out
        { ts: at(3, 10), properties: { n: 1000, model: 'large' } }, // the partial last hour
      ],
      'read',
    );
    const from = at(0, 15);
    const to = at(3, 20);
    expect(await aggregate(metric, from, to)).toBe(1111_000000n);
    // One of the whole hours' events arrived late (as ingestion marks an event in a billed period).
    await env.sql.run("UPDATE usage_events SET late = 1 WHERE event_name = 'read' AND ts = ?", at(1, 0));
    await rollUpMetric(store(), org, metric);
    expect(await mark(metric)).toMatchObject({ upto: expect.any(Number) });
    expect(await aggregate(metric, from, to)).toBe(1111_000000n);
    // The whole hours come from the rollups: a changed rollup changes the figure, the partial hours do not come from them.
    const { id } = (await mark(metric))!;
    await env.sql.run('UPDATE usage_rollups SET whole = whole + 7 WHERE mark_id = ? AND hour = ?', id, at(1));
    expect(await aggregate(metric, from, to)).toBe(1118_000000n);
    expect(await aggregate(metric, at(0, 31), at(3, 10))).toBe(117_000000n);
    await env.sql.run('UPDATE usage_rollups SET whole = whole - 7 WHERE mark_id = ? AND hour = ?', id, at(1));
    // An event that arrives after the mark, inside the whole hours, counts before the next rollup.
    await ingest([{ ts: at(1, 30), properties: { n: 20000, model: 'large' } }], 'read');
    expect(await aggregate(metric, from, to)).toBe(21111_000000n);
    expect(await rolled(metric, from, to)).toMatchObject({ events: 5n, late: 1n });
    expect(await counts(metric, from, to)).toEqual({ events: 5, late: 1 });
    await rollUpMetric(store(), org, metric);
    expect(await aggregate(metric, from, to)).toBe(21111_000000n);
  });

  it('are kept by the jobs loop for every product metric and dropped with a metric no product has', async () => {
    const metric = metricOf('tokens', 'sum');
    await ingest([{ ts: NOW.getTime() - 5 * HOUR, properties: { n: 3 } }], 'tokens');
    const summary = await runDueJobs(env.app, NOW);
    expect(summary.jobs.usageRollups).toEqual({ metricsUpdated: 1 });
    expect((await mark(metric))?.upto).toBe(await store().read((tx) => tx.usageEvents.lastSeq(org)));
    expect((await runDueJobs(env.app, NOW)).jobs.usageRollups).toEqual({ metricsUpdated: 0 });
    const orphan = metricOf('orphan', 'sum');
    await rollUpMetric(store(), org, orphan);
    expect(await mark(orphan)).toBeDefined();
    await rollUpUsage(store());
    expect(await mark(orphan)).toBeUndefined();
    expect(await mark(metric)).toBeDefined();
  });

  it('are given up when a sum leaves 64 bits: the job goes on and aggregation reads the events', async () => {
    const metric = metricOf('huge', 'sum');
    const ts = NOW.getTime() - 10 * HOUR;
    await ingest([{ ts, properties: { n: 5e18 } }, { ts: ts + 1, properties: { n: 5e18 } }], 'huge');
    const overEvents = await aggregate(metric, ts - 2 * HOUR, ts + 2 * HOUR);
    await rollUpMetric(store(), org, metric);
    expect(await mark(metric)).toMatchObject({ upto: null });
    expect(await rolled(metric, ts - 2 * HOUR, ts + 2 * HOUR)).toBeNull();
    expect(await aggregate(metric, ts - 2 * HOUR, ts + 2 * HOUR)).toBe(overEvents);
    expect(await rollUpMetric(store(), org, metric)).toBe(0);
  });
});
