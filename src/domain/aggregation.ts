/**
 * Aggregation of measurement values over a billing interval (CONTRACT section 5, "Measurements and
 * usage"): the six aggregations of metered measurements, the carried value of recurring ones, and
 * time-weighted fair billing. Shared by the usage read model and the billing engine.
 */
import type { UsageMetric } from '../schemas/catalogue.js';
import type { AggregationType, Measurement } from '../schemas/measurements.js';
import type { UsageScope } from '../store/ports/usage.js';
import type { EventScope, EventStats } from '../store/ports/usageEvents.js';
import type { Tx } from '../store/store.js';
import { averageMicros, MICROS, timeWeightedMicros } from './quantity.js';
import { rolledUpStats } from './usageRollups.js';

/** One aggregate of the values in a scope, in micro-units (counts too: 3 values are 3,000,000). */
export async function aggregate(tx: Tx, org: string, scope: UsageScope, aggregation: AggregationType): Promise<bigint> {
  switch (aggregation) {
    case 'count':
      return BigInt(await tx.usage.count(org, scope)) * MICROS;
    case 'count_unique':
      return BigInt(await tx.usage.countUnique(org, scope)) * MICROS;
    case 'max':
      return (await tx.usage.max(org, scope)) ?? 0n;
    case 'sum':
      return (await tx.usage.sumAndCount(org, scope)).sum;
    case 'average': {
      const { sum, count } = await tx.usage.sumAndCount(org, scope);
      return averageMicros(sum, BigInt(count));
    }
    case 'last_value':
      return (await tx.usage.last(org, scope)) ?? 0n;
  }
}

/** An item's billing interval [from, to) and the span of time it was active in. */
export interface ItemInterval {
  itemId: string;
  /** When the item's billing started: the latest of the subscription's, the item's start and billingStart. */
  itemStart: string;
  from: string;
  to: string;
  /** When the item stopped (cancellation, termination, billingEnd), or null while it runs. */
  end: string | null;
}

/**
 * The value of a measurement on an item in one billing interval: `metered` aggregates the values
 * measured in the interval ("0" without any); `recurring` is the last value measured from the item's
 * start up to the interval's end, carried forward; `instant_metered` keeps no running value (each
 * push is billed on its own) and is 0. Values measured before the item started never count.
 */
export async function intervalValue(tx: Tx, org: string, interval: ItemInterval, measurement: Measurement): Promise<bigint> {
  const scope = { itemId: interval.itemId, measurementId: measurement.id, from: interval.from, to: interval.to };
  if (measurement.type === 'instant_metered') return 0n;
  if (measurement.type === 'recurring') return (await tx.usage.last(org, { ...scope, from: interval.itemStart })) ?? 0n;
  return aggregate(tx, org, scope, measurement.aggregationType);
}

/** Fair billing of a recurring measurement (see `timeWeightedMicros`): levels carried into and changed within the interval. */
export async function timeWeightedValue(tx: Tx, org: string, interval: ItemInterval, measurement: Measurement): Promise<bigint> {
  const scope = { itemId: interval.itemId, measurementId: measurement.id, from: interval.from, to: interval.to };
  const carried = await tx.usage.last(org, { ...scope, from: interval.itemStart, to: interval.from });
  const changes = (await tx.usage.levels(org, scope)).map((l) => ({ at: Date.parse(l.measuredAt), micros: l.quantityMicros }));
  return timeWeightedMicros(
    { from: Date.parse(interval.from), to: Date.parse(interval.to) },
    { from: Date.parse(interval.itemStart), to: interval.end ? Date.parse(interval.end) : Number.POSITIVE_INFINITY },
    carried,
    changes,
  );
}


/**
 * A metric's aggregate of the events in a scope (only the on-time ones with `scope.onTime`), in
 * micro-units; never below 0 (a quantity to price). count, sum, max and average read the hourly
 * rollups where they can answer (src/domain/usageRollups.ts), else the events; unique_count and
 * latest always read the events (latest reads one).
 */
export async function aggregateEvents(tx: Tx, org: string, scope: EventScope, metric: UsageMetric): Promise<bigint> {
  const rolled = metric.aggregation === 'unique_count' || metric.aggregation === 'latest' ? null : await rolledUpStats(tx, org, scope, metric);
  return valueOf(tx, org, scope, metric, rolled);
}

/**
 * What the usage read shows of a metric over a scope: its value, which is what billing bills of it
 * (`metricValue`: the late events, which arrived after their interval was invoiced, are never
 * billed), the events matching the filters and the late ones among them, with one pass of the
 * rollups where they answer. In an interval already `invoiced`, the events counted are those its
 * invoice billed: the late ones are only counted apart.
 */
export async function metricReading(
  tx: Tx,
  org: string,
  scope: EventScope,
  metric: UsageMetric,
  invoiced = false,
): Promise<{ value: bigint; events: number; late: number }> {
  const rolled = await rolledUpStats(tx, org, scope, metric);
  const counts = rolled ? { events: Number(rolled.events), late: Number(rolled.late) } : await tx.usageEvents.count(org, scope, metric);
  const billed = counts.events - counts.late;
  let value: bigint;
  if (metric.aggregation === 'count') value = BigInt(billed) * MICROS;
  // The rollups hold the late events too: the billed ones are read apart.
  else if (counts.late > 0) value = await valueOf(tx, org, { ...scope, onTime: true }, metric, null);
  else value = await valueOf(tx, org, scope, metric, rolled);
  return { value, events: invoiced ? billed : counts.events, late: counts.late };
}

/** The metric's value from the scope's stats when it has them and its aggregation can use them, else from the events; never below 0. */
async function valueOf(tx: Tx, org: string, scope: EventScope, metric: UsageMetric, rolled: EventStats | null): Promise<bigint> {
  const { aggregation } = metric;
  const value = rolled && aggregation !== 'unique_count' && aggregation !== 'latest' ? fromStats(rolled, aggregation) : await overEvents(tx, org, scope, metric);
  return value < 0n ? 0n : value;
}

/** count, sum, max or average from the stats of a scope. */
function fromStats(stats: EventStats, aggregation: 'count' | 'sum' | 'max' | 'average'): bigint {
  switch (aggregation) {
    case 'count':
      return stats.events * MICROS;
    case 'max':
      return stats.max ?? 0n;
    case 'average':
      return averageMicros(stats.sum, stats.valued);
    case 'sum':
      return stats.sum;
  }
}

async function overEvents(tx: Tx, org: string, scope: EventScope, metric: UsageMetric): Promise<bigint> {
  let value: bigint;
  switch (metric.aggregation) {
    case 'count':
      value = (await tx.usageEvents.countEvents(org, scope, metric)) * MICROS;
      break;
    case 'unique_count':
      value = (await tx.usageEvents.uniqueCount(org, scope, metric)) * MICROS;
      break;
    case 'max':
      value = (await tx.usageEvents.max(org, scope, metric)) ?? 0n;
      break;
    case 'latest':
      value = (await tx.usageEvents.latest(org, scope, metric)) ?? 0n;
      break;
    case 'sum':
      value = await tx.usageEvents.sum(org, scope, metric);
      break;
    case 'average': {
      const { sum, count } = await tx.usageEvents.sumAndCount(org, scope, metric);
      value = averageMicros(sum, count);
    }
  }
  return value;
}

/**
 * The events scope of an item's interval: `metered` metrics read the interval's events, `recurring`
 * ones every event from the item's start up to the interval's end (the value carries over intervals).
 */
export function metricScope(interval: ItemInterval, subscriptionId: string, metric: UsageMetric): EventScope {
  const from = metric.type === 'recurring' ? interval.itemStart : interval.from;
  return { subscriptionId, eventName: metric.eventName, from: Date.parse(from), to: Date.parse(interval.to) };
}

/**
 * The value of a product's usage metric on an item in one billing interval (the billing engine's q),
 * over the on-time events of its scope: a late event (it arrived after its interval was invoiced) is
 * never billed, neither in its own interval nor in the value a recurring metric carries into the
 * intervals after it.
 */
export async function metricValue(tx: Tx, org: string, interval: ItemInterval, subscriptionId: string, metric: UsageMetric): Promise<bigint> {
  return aggregateEvents(tx, org, { ...metricScope(interval, subscriptionId, metric), onTime: true }, metric);
}
