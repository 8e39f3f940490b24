/**
 * Hourly rollups of usage events (docs/billing.md, "Usage rollups"). The jobs loop adds the events
 * that arrived since its last pass to per-subscription, per-hour sums of every metric that a product
 * has; aggregating an interval then reads the rollups of its whole hours, and the events of its
 * partial first and last hour and those that arrived since the rollups' mark, so that a month of
 * millions of events costs a few hundred rows. The result is the same as over the events alone: a
 * property test (test/usageRollups.test.ts) compares the two.
 */
import type { UsageMetric } from '../schemas/catalogue.js';
import type { EventScope, EventStats } from '../store/ports/usageEvents.js';
import type { Store, Tx } from '../store/store.js';

const HOUR_MS = 3_600_000;

/** Arrival numbers rolled up per unit of work: about 15 ms of SQLite (3 µs an event), so that the event loop stays free between units. */
const EVENTS_PER_UNIT = 5_000;

/**
 * Beyond this many events arrived since the mark (the jobs loop is behind, or stopped), aggregation
 * reads the scope's events instead: the tail is read along the arrival order, one index entry per
 * event of the organisation.
 */
const MAX_TAIL = 50_000;

/**
 * The rollups' key of a metric: what decides which events count and what is summed (event name,
 * property, filters in a canonical order). Aggregation and type do not change the sums, so metrics
 * that differ only in them share their rollups.
 */
export function rollupKey(metric: UsageMetric): string {
  const filters = metric.filters
    .map((f) => JSON.stringify([f.property, [...new Set(f.values.map((v) => JSON.stringify(v)))].sort()]))
    .sort();
  return JSON.stringify([metric.eventName, metric.property ?? null, filters]);
}

const add = (a: EventStats, b: EventStats): EventStats => ({
  events: a.events + b.events,
  late: a.late + b.late,
  valued: a.valued + b.valued,
  sum: a.sum + b.sum,
  max: a.max === null ? b.max : b.max === null || a.max >= b.max ? a.max : b.max,
});

/**
 * The stats of a metric over a scope from the rollups: its whole hours rolled up, plus the events of
 * its partial first and last hour and those that arrived after the mark. Null when the rollups cannot
 * answer (none for this metric yet, given up, the scope within one hour, the tail past MAX_TAIL, a
 * sum past 64 bits, an on-time scope whose rolled-up hours hold late events, which the rollups sum
 * with the others): the caller reads the events.
 */
export async function rolledUpStats(tx: Tx, org: string, scope: EventScope, metric: UsageMetric): Promise<EventStats | null> {
  const first = Math.ceil(scope.from / HOUR_MS) * HOUR_MS;
  const last = Math.floor(scope.to / HOUR_MS) * HOUR_MS;
  if (scope.from < 0 || first >= last) return null;
  const mark = await tx.usageEvents.rollupMark(org, rollupKey(metric));
  if (!mark || mark.upto === null || (await tx.usageEvents.lastSeq(org)) - mark.upto > MAX_TAIL) return null;
  const { id, upto } = mark;
  const parts: Array<() => Promise<EventStats | null>> = [
    async () => {
      const stats = await tx.usageEvents.rolledUp(org, id, scope.subscriptionId, first, last);
      return scope.onTime && stats && stats.late > 0n ? null : stats;
    },
    () => tx.usageEvents.stats(org, { ...scope, from: first, to: last }, metric, upto),
  ];
  if (scope.from < first) parts.push(() => tx.usageEvents.stats(org, { ...scope, to: first }, metric));
  if (last < scope.to) parts.push(() => tx.usageEvents.stats(org, { ...scope, from: last }, metric));
  let total: EventStats = { events: 0n, late: 0n, valued: 0n, sum: 0n, max: null };
  for (const part of parts) {
    const stats = await part();
    if (!stats) return null;
    total = add(total, stats);
  }
  return total;
}

/** Thrown inside a rollup unit whose sums left 64 bits: the unit rolls back, and the metric's rollups are given up. */
class Overflow extends Error {}

/**
 * Rolls up the events of one metric of an organisation that arrived since its mark, EVENTS_PER_UNIT
 * arrival numbers per unit of work, until the mark reaches the organisation's latest event. Answers
 * how many arrival numbers it covered.
 */
export async function rollUpMetric(store: Store, org: string, metric: UsageMetric): Promise<number> {
  const key = rollupKey(metric);
  let covered = 0;
  for (;;) {
    try {
      const step = await store.transaction(async (tx) => {
        const mark = await tx.usageEvents.openRollup(org, key);
        if (mark.upto === null) return 0;
        const to = Math.min(await tx.usageEvents.lastSeq(org), mark.upto + EVENTS_PER_UNIT);
        if (to <= mark.upto) return 0;
        const outcome = await tx.usageEvents.rollUp(org, { id: mark.id, upto: mark.upto }, metric, to);
        if (outcome === 'overflow') throw new Overflow();
        return outcome === 'rolled' ? to - mark.upto : 0;
      });
      if (step === 0) return covered;
      covered += step;
    } catch (err) {
      if (!(err instanceof Overflow)) throw err;
      await store.transaction(async (tx) => tx.usageEvents.abandonRollup((await tx.usageEvents.openRollup(org, key)).id));
      return covered;
    }
  }
}

/**
 * The jobs loop's pass: every metric of every product rolled up to the latest event; the rollups of
 * metrics no product has any more are dropped. Answers how many metrics' rollups moved on.
 */
export async function rollUpUsage(store: Store): Promise<number> {
  const metrics = await store.read((tx) => tx.usageEvents.productMetrics());
  const keys = new Map<string, Set<string>>();
  let moved = 0;
  for (const { org, metric } of metrics) {
    const key = rollupKey(metric);
    let own = keys.get(org);
    if (!own) keys.set(org, (own = new Set()));
    if (own.has(key)) continue;
    own.add(key);
    if ((await rollUpMetric(store, org, metric)) > 0) moved += 1;
  }
  const stale = (await store.read((tx) => tx.usageEvents.rollupMarks())).filter((m) => !keys.get(m.org)?.has(m.key));
  for (const m of stale) await store.transaction((tx) => tx.usageEvents.dropRollup(m.id));
  return moved;
}
