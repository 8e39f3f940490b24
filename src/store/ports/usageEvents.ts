import type { UsageMetric } from '../../schemas/catalogue.js';

/** One stored row of a usage event: the event as it counts for one subscription (target 0 is the deduplication claim). */
export interface UsageEventRecord {
  seq: number;
  id: string;
  target: number;
  eventName: string;
  /** Milliseconds since the epoch. */
  ts: number;
  subscriptionId: string | null;
  customerId: string | null;
  /** The properties as JSON text. */
  properties: string;
  unmatched: boolean;
  late: boolean;
  receivedAt: number;
}

/** The events of one subscription with one name and ts in [from, to) (milliseconds). */
export interface EventScope {
  subscriptionId: string;
  eventName: string;
  from: number;
  to: number;
  /**
   * Only the events that were on time: the late ones (they arrived after their interval was
   * invoiced) are left out, so that an invoiced interval reads what its invoice billed.
   */
  onTime?: boolean;
}

export interface UsageEventFilter {
  subscriptionId?: string | undefined;
  customerId?: string | undefined;
  eventName?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  unmatched?: boolean | undefined;
  /** Only events that arrived before this sequence number (the page cursor). */
  before?: number | undefined;
}

/** An item of a subscription whose product has a usage metric: what ingestion needs to match, check and date an event. */
export interface MeteringItem {
  /** The product's name. */
  product: string;
  metric: UsageMetric;
  /** The item's own start and billing end (ISO), when set. */
  startDate: string | null;
  billingEnd: string | null;
  lastBilledTo: string | null;
}

/**
 * What counts of a metric's events in a scope, gathered in one pass (by the rollups or over the
 * events): all that count, sum, max and average need.
 */
export interface EventStats {
  /** Events matching the metric's filters. */
  events: bigint;
  /** How many of them arrived late. */
  late: bigint;
  /** How many of them have the property. */
  valued: bigint;
  /** The sum of the property in micro-units, exact per event (an integer value as it is, others rounded to micro-units). */
  sum: bigint;
  /** The largest value in micro-units, null when none has the property. */
  max: bigint | null;
}

/** Where an organisation's rollups of one metric stand. */
export interface RollupMark {
  id: number;
  /** Every event with an arrival number (seq) up to this is rolled up; null: rollups given up for this metric. */
  upto: number | null;
}

/** Arrival numbers reserved by a unit, and where the organisation's claims stood (migration 033). */
export interface Reservation {
  /** The first of the numbers reserved. */
  first: number;
  /** The last of them: the organisation's latest arrival number. */
  last: number;
  /** The open claim bucket's number. */
  bucket: number;
  /** The first arrival number of the open bucket. */
  bucketFrom: number;
}

export interface UsageEventRepo {
  /** Reserves `count` arrival numbers of the organisation, for `insert`. */
  reserveSeq(org: string, count: number): Promise<Reservation>;
  /**
   * Inserts the rows in the reservation's claim bucket. A target-0 row is the claim of its event's
   * id: when the organisation claimed the id before (by any earlier unit, in any process), the row
   * is skipped. Rows of other targets are inserted as they are (callers pass only those of claimed
   * events). Answers the ids newly claimed.
   */
  insert(org: string, rows: readonly UsageEventRecord[], reserved: Reservation): Promise<Set<string>>;
  activeSubscriptionsOf(org: string, customerId: string): Promise<string[]>;
  meteringItems(org: string, subscriptionId: string): Promise<MeteringItem[]>;
  /** Events of the scope that match the metric's filters. */
  countEvents(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint>;
  /** Distinct values of the metric's property among them. */
  uniqueCount(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint>;
  /** The largest value of the property in micro-units, null when no event has it. */
  max(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint | null>;
  /** The property of the event with the latest timestamp (ties: the later arrival) in micro-units, or null. */
  latest(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint | null>;
  /** The sum of the property in micro-units. */
  sum(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint>;
  /** The sum of the property in micro-units and the number of events having it. */
  sumAndCount(org: string, scope: EventScope, metric: UsageMetric): Promise<{ sum: bigint; count: bigint }>;
  /** Events of the scope matching the metric's filters, and how many of them are late. */
  count(org: string, scope: EventScope, metric: UsageMetric): Promise<{ events: number; late: number }>;
  /** A page of the scope's events matching the metric's filters, newest first (by timestamp, then arrival). */
  page(org: string, scope: EventScope, metric: UsageMetric, limit: number, offset: number): Promise<UsageEventRecord[]>;
  /** A page of events newest first (by arrival), `limit` at most. */
  list(org: string, filter: UsageEventFilter, limit: number): Promise<UsageEventRecord[]>;
  /**
   * The stats of the scope's events matching the metric's filters; with `afterSeq`, only those that
   * arrived after it (read along the arrival order). Null when a sum leaves 64 bits.
   */
  stats(org: string, scope: EventScope, metric: UsageMetric, afterSeq?: number): Promise<EventStats | null>;
  /** The arrival number of the organisation's latest event (0 before the first). */
  lastSeq(org: string): Promise<number>;
  /** Every usage metric that some product of some organisation has (each organisation's distinct ones). */
  productMetrics(): Promise<Array<{ org: string; metric: UsageMetric }>>;
  /** The mark of the organisation's rollups of `key` (a metric's canonical text), if they were started. */
  rollupMark(org: string, key: string): Promise<RollupMark | undefined>;
  /** The mark of `key`, started at 0 (nothing rolled up) if there was none. */
  openRollup(org: string, key: string): Promise<RollupMark>;
  /** Every rollup mark, with its organisation and key. */
  rollupMarks(): Promise<Array<RollupMark & { org: string; key: string }>>;
  /** Drops a mark and its rollups. */
  dropRollup(markId: number): Promise<void>;
  /** Gives the rollups of a mark up: aggregation then reads the events alone. */
  abandonRollup(markId: number): Promise<void>;
  /**
   * Adds the events that arrived after `mark.upto` up to `toSeq` (those of a subscription, with a
   * timestamp from 1970 on) to the mark's hourly rollups and moves the mark to `toSeq`. Answers
   * 'moved' (nothing written) when the mark no longer stands at `mark.upto`, and 'overflow' when a
   * sum left 64 bits (on PostgreSQL the failed statement aborted the transaction: the unit must roll back).
   */
  rollUp(org: string, mark: RollupMark & { upto: number }, metric: UsageMetric, toSeq: number): Promise<'rolled' | 'moved' | 'overflow'>;
  /** The sum of a mark's rollups of one subscription over the hours starting in [fromHour, toHour) (ms). Null when a sum leaves 64 bits. */
  rolledUp(org: string, markId: number, subscriptionId: string, fromHour: number, toHour: number): Promise<EventStats | null>;
}
