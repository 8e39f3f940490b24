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

/** An item of a subscription whose product has a usage metric: what ingestion needs to match and date an event. */
export interface MeteringItem {
  eventName: string;
  lastBilledTo: string | null;
}

export interface UsageEventRepo {
  /** Reserves `count` arrival numbers of the organisation; returns the first. */
  reserveSeq(org: string, count: number): Promise<number>;
  /**
   * Inserts the rows; a row whose (organisation, id, target) is taken is skipped. Answers the ids of
   * the target-0 rows inserted: the events newly claimed.
   */
  insert(org: string, rows: readonly UsageEventRecord[]): Promise<Set<string>>;
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
}
