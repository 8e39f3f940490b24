import type { SubscriptionStatus } from './subscriptions.js';

/** A recorded measurement value; the quantity in micro-units (quantity x 10^6). */
export interface MeasurementValueRecord {
  id: string;
  itemId: string;
  measurementId: string;
  quantityMicros: bigint;
  measuredAt: string;
  /** The identity count_unique counts (the `id` sent with the value), or null; stored as its dictionary key. */
  valueId: string | null;
  /** A push of an instant_metered measurement, billed on its own. */
  instant: boolean;
  createdAt: string;
}

/** What recording a value on an item needs to know, read in one query. */
export interface UsageTarget {
  itemId: string;
  subscriptionId: string;
  subscriptionNumber: string;
  status: SubscriptionStatus;
  cancellationDate: string | null;
  cancelledAt: string | null;
  terminatedAt: string | null;
  itemBillingEnd: string | null;
  productName: string;
  /** The measurement of the item's product, or null when the product measures nothing. */
  measurementId: string | null;
}

/** The values of one item's measurement with measured_at in [from, to). */
export interface UsageScope {
  itemId: string;
  measurementId: string;
  from: string;
  to: string;
}

export interface UsageRepo {
  targetOfItem(org: string, itemId: string): Promise<UsageTarget | undefined>;
  /** Items of the subscription whose product measures the measurement, oldest first. */
  targetsMeasuring(org: string, subscriptionId: string, measurementId: string): Promise<UsageTarget[]>;
  /** Codes of the measurements the subscription's items measure. */
  measuredCodes(org: string, subscriptionId: string): Promise<string[]>;
  insert(org: string, values: readonly MeasurementValueRecord[]): Promise<void>;
  get(org: string, id: string): Promise<{ value: MeasurementValueRecord; subscriptionId: string } | undefined>;

  count(org: string, scope: UsageScope): Promise<number>;
  countUnique(org: string, scope: UsageScope): Promise<number>;
  /** null when the scope holds no value. */
  max(org: string, scope: UsageScope): Promise<bigint | null>;
  sumAndCount(org: string, scope: UsageScope): Promise<{ sum: bigint; count: number }>;
  /** The last value of the scope by measured_at (ties: the later recorded), or null. */
  last(org: string, scope: UsageScope): Promise<bigint | null>;
  /** The values of the scope oldest first. */
  levels(org: string, scope: UsageScope): Promise<Array<{ measuredAt: string; quantityMicros: bigint }>>;
  /** A page of the scope's values, newest first. */
  events(org: string, scope: UsageScope, limit: number, offset: number): Promise<MeasurementValueRecord[]>;
  /** The item's latest values of the measurement, newest first. */
  /** The `limit` latest values of each item and measurement, newest first per item (one statement for all). */
  latest(org: string, scopes: ReadonlyArray<{ itemId: string; measurementId: string }>, limit: number): Promise<MeasurementValueRecord[]>;
  /** Every measurement the item has values of. */
  measurementsOf(org: string, itemId: string): Promise<string[]>;
}
