import { AppError, conflict, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { BillingGroup, PricePlan, Product, UsageMetric } from '../schemas/catalogue.js';
import type { Customer } from '../schemas/customers.js';
import type { Measurement } from '../schemas/measurements.js';
import type { MeasurementValue, UsageEntry } from '../schemas/usage.js';
import type { ItemRecord, SubscriptionRecord } from '../store/ports/subscriptions.js';
import type { MeasurementValueRecord, UsageTarget } from '../store/ports/usage.js';
import type { EventScope } from '../store/ports/usageEvents.js';
import type { Tx } from '../store/store.js';
import { findBillingGroup } from './billingGroups.js';
import { parseInterval, periodContaining, toIso, zoned } from './dates.js';
import { getPricePlan, getProduct } from './products.js';
import { memo } from './memo.js';
import { formatQuantity, MICROS, parseQuantity } from './quantity.js';
import { intervalValue, metricReading, metricScope, timeWeightedValue, type ItemInterval } from './aggregation.js';
import { renderUsageEvent } from './usageEvents.js';
import { billInstantValues, type InstantBilling } from './billing/instant.js';
import { alignmentOf, chargeKindOf, itemAnchor, itemBillingStart, itemEnd } from './billing/schedule.js';
import { findSubscription, loadSubscription } from './subscriptions/records.js';

/** A value may be measured at most this far ahead of the clock (clock skew), never later. */
const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;
/** How many of an item's latest values its `measurementValues` shows. */
export const RECENT_VALUES = 5;

export interface MeasurementValueInput {
  /** As sent: checked here with the value's other fields, so that a batch reports every problem at once. */
  quantity: string | number;
  measuredAt?: string | undefined;
  subscription?: string | undefined;
  subscriptionItem?: string | undefined;
  measurementCode?: string | undefined;
  id?: string | undefined;
}

function render(v: MeasurementValueRecord, subscriptionId: string, measurement: Measurement): MeasurementValue {
  return {
    id: v.id,
    measurement,
    quantity: formatQuantity(v.quantityMicros),
    measuredAt: v.measuredAt,
    subscriptionItem: v.itemId,
    subscription: subscriptionId,
    valueId: v.valueId,
    createdAt: v.createdAt,
  };
}

/**
 * When an item takes values (a 409 otherwise): while the subscription is active or paused, and for
 * a cancelled or terminated one (or one whose cancellation date has come) only when measured before
 * its end; never at or after the item's billingEnd; never while the subscription is a draft or an
 * offer. `until` is the first instant refused.
 */
interface Window {
  closed: string | undefined;
  until: number;
  reason: string;
}

function windowOf(t: UsageTarget): Window {
  if (t.status === 'draft' || t.status === 'offer') {
    return {
      closed: `subscription ${t.subscriptionNumber} is ${t.status}: it takes usage once it is active (activate_subscription)`,
      until: Number.NEGATIVE_INFINITY,
      reason: '',
    };
  }
  const ends: Array<[string | null, string]> = [
    [t.cancelledAt, `subscription ${t.subscriptionNumber} was cancelled at ${t.cancelledAt}`],
    [t.terminatedAt, `subscription ${t.subscriptionNumber} was terminated at ${t.terminatedAt}`],
    [t.cancellationDate, `subscription ${t.subscriptionNumber} ends by cancellation at ${t.cancellationDate}`],
    [t.itemBillingEnd, `item ${t.itemId} (${t.productName}) of subscription ${t.subscriptionNumber} ended at ${t.itemBillingEnd}`],
  ];
  let until = Number.POSITIVE_INFINITY;
  let reason = '';
  for (const [end, what] of ends) {
    if (end !== null && Date.parse(end) < until) {
      until = Date.parse(end);
      reason = what;
    }
  }
  return { closed: undefined, until, reason };
}

function refusal(w: Window, measuredAtMs: number, measuredAt: string): string | undefined {
  if (w.closed !== undefined) return w.closed;
  if (measuredAtMs >= w.until) return `${w.reason}; it takes only values measured before then (measuredAt ${measuredAt})`;
  return undefined;
}

/**
 * The other side of an item's window (a 422 on measuredAt): a value measured before the end of the
 * item's last invoiced period (`lastBilledTo`, as the billing engine writes it) would be stored and
 * never billed, since a billing run never reads an invoiced period again. It applies to items billed
 * per period from their values (`metered` and `recurring`); `instant_metered` values are billed one by
 * one as they are recorded, whenever measured, and a flat fee reads no values.
 */
function invoicedRefusal(t: UsageTarget, lastBilledTo: string, measuredAt: string): string {
  return (
    `${measuredAt} lies in an interval of item ${t.itemId} (${t.productName}) of subscription ${t.subscriptionNumber} that is already invoiced: ` +
    `its intervals up to the one ending ${lastBilledTo} are invoiced and their usage is not read again; it takes values measured from ${lastBilledTo} on. ` +
    'To correct an invoiced interval, credit its invoice with create_credit_note, or bill what is missing with create_invoice'
  );
}

/** Memoised lookups of one request: a batch names the same items, subscriptions and codes again and again. */
class Lookups {
  private readonly items = new Map<string, Promise<UsageTarget | undefined>>();
  private readonly subscriptions = new Map<string, Promise<SubscriptionRecord | undefined>>();
  private readonly measurements = new Map<string, Promise<Measurement | undefined>>();
  private readonly codes = new Map<string, Promise<Measurement | undefined>>();
  private readonly measuringItems = new Map<string, Promise<UsageTarget[]>>();
  private readonly measuredCodeLists = new Map<string, Promise<string[]>>();
  private readonly products = new Map<string, Promise<Product>>();
  private readonly windows = new Map<UsageTarget, Window>();
  private readonly itemRecords = new Map<string, Promise<ItemRecord | undefined>>();
  private readonly billedByValues = new Map<string, Promise<boolean>>();

  constructor(
    private readonly tx: Tx,
    private readonly org: string,
  ) {}

  item(id: string) {
    return memo(this.items, id, () => this.tx.usage.targetOfItem(this.org, id));
  }

  subscription(ref: string) {
    return memo(this.subscriptions, ref, () => findSubscription(this.tx, this.org, ref));
  }

  measurement(id: string) {
    return memo(this.measurements, id, () => this.tx.catalogue.getMeasurement(this.org, id));
  }

  measurementByCode(code: string) {
    return memo(this.codes, code, () => this.tx.catalogue.findMeasurementByCode(this.org, code));
  }

  measuring(subscriptionId: string, measurementId: string) {
    return memo(this.measuringItems, `${subscriptionId} ${measurementId}`, () => this.tx.usage.targetsMeasuring(this.org, subscriptionId, measurementId));
  }

  measuredCodes(subscriptionId: string) {
    return memo(this.measuredCodeLists, subscriptionId, () => this.tx.usage.measuredCodes(this.org, subscriptionId));
  }

  product(id: string) {
    return memo(this.products, id, () => getProduct(this.tx, this.org, id));
  }

  window(target: UsageTarget): Window {
    let w = this.windows.get(target);
    if (w === undefined) {
      w = windowOf(target);
      this.windows.set(target, w);
    }
    return w;
  }

  /**
   * The end of the target's last invoiced period when a value measured at `measuredAtMs` lies before
   * it on an item billed per period from its values (see `invoicedRefusal`), else undefined. The
   * item's price plan and product are read only for such a value.
   */
  async invoicedPast(target: UsageTarget, measuredAtMs: number): Promise<string | undefined> {
    const item = await memo(this.itemRecords, target.itemId, () => this.tx.subscriptions.getItem(this.org, target.itemId));
    const to = item?.lastBilledTo ?? null;
    if (item === undefined || to === null || measuredAtMs >= Date.parse(to)) return undefined;
    const byValues = await memo(this.billedByValues, item.id, async () => {
      const [product, pricePlan] = await Promise.all([this.product(item.productId), getPricePlan(this.tx, this.org, item.pricePlanId)]);
      return chargeKindOf(product, pricePlan.type) === 'usage' && !product.usageMetric;
    });
    return byValues ? to : undefined;
  }
}

interface Planned {
  targets: UsageTarget[];
  measurement: Measurement;
  measuredAt: string;
  quantityMicros: bigint;
  valueId: string | null;
}

interface Clock {
  ms: number;
  iso: string;
}

/**
 * Resolves one value's target items and checks it, adding every 422 to `violations` (paths through
 * `at`) and every 409 to `conflicts`. Nothing is written here.
 */
async function plan(
  lookups: Lookups,
  input: MeasurementValueInput,
  at: (field: string) => string,
  now: Clock,
  violations: Violation[],
  conflicts: string[],
  label: string,
): Promise<Planned | undefined> {
  const before = violations.length;
  const violate = (field: string, message: string, code: string) => violations.push({ propertyPath: at(field), message: `${at(field)} ${message}`, code });
  const quantity = parseQuantity(input.quantity);
  if (!quantity.ok) violate('quantity', quantity.message, 'invalid_quantity');

  const measuredAtMs = input.measuredAt === undefined ? now.ms : Date.parse(input.measuredAt);
  const measuredAt = input.measuredAt === undefined ? now.iso : new Date(measuredAtMs).toISOString();
  if (measuredAtMs > now.ms + FUTURE_TOLERANCE_MS) {
    violate(
      'measuredAt',
      `lies more than 5 minutes in the future (${measuredAt}, now ${now.iso}); send the instant the usage happened, with its offset, or omit it for now`,
      'in_the_future',
    );
  }

  let targets: UsageTarget[] = [];
  let measurementId: string | undefined;
  const subscription = input.subscription === undefined ? undefined : await lookups.subscription(input.subscription);
  if (input.subscription !== undefined && !subscription) {
    violate('subscription', `'${input.subscription}' is neither the id nor the number of a subscription; use one from list_subscriptions`, 'not_found');
  }

  if (input.subscriptionItem !== undefined) {
    const target = await lookups.item(input.subscriptionItem);
    if (!target) {
      violate('subscriptionItem', `'${input.subscriptionItem}' is not a subscription item; use an id from items[].id of get_subscription`, 'not_found');
    } else if (subscription && subscription.id !== target.subscriptionId) {
      violate(
        'subscriptionItem',
        `${target.itemId} belongs to subscription ${target.subscriptionNumber}, not ${subscription.number}; send an item of ${subscription.number}, or omit subscription`,
        'mismatch',
      );
    } else if (target.measurementId === null) {
      violate(
        'subscriptionItem',
        `${target.itemId} takes no usage: its product ${target.productName} has no measurement; send values for an item whose product has one (or give the product a measurement with update_product)`,
        'not_metered',
      );
    } else {
      targets = [target];
      measurementId = target.measurementId;
    }
  } else if (input.measurementCode !== undefined) {
    if (input.subscription === undefined) {
      violate('subscription', 'is required with measurementCode: send the id or number of the subscription whose items measure the code, or send subscriptionItem instead', 'required');
    }
    const byCode = await lookups.measurementByCode(input.measurementCode);
    if (!byCode) {
      violate('measurementCode', `'${input.measurementCode}' is not the code of any measurement; use a code from list_measurements`, 'not_found');
    } else if (subscription) {
      targets = await lookups.measuring(subscription.id, byCode.id);
      measurementId = byCode.id;
      if (targets.length === 0) {
        const codes = await lookups.measuredCodes(subscription.id);
        violate(
          'measurementCode',
          `'${input.measurementCode}' is measured by no item of subscription ${subscription.number}; ${codes.length ? `its items measure ${codes.join(', ')}` : 'none of its items has a measurement'}`,
          'not_measured',
        );
      }
    }
  } else {
    violate(
      'subscriptionItem',
      'or measurementCode is required: send subscriptionItem (an item id from get_subscription), or measurementCode together with subscription (id or number)',
      'required',
    );
  }

  const measurement = measurementId === undefined ? undefined : await lookups.measurement(measurementId);
  if (measurement && input.measurementCode !== undefined && input.subscriptionItem !== undefined && measurement.code !== input.measurementCode) {
    violate('measurementCode', `'${input.measurementCode}' does not match: item ${input.subscriptionItem} measures '${measurement.code}'; send that code or omit measurementCode`, 'mismatch');
  }
  if (measurement?.aggregationType === 'count_unique' && input.id === undefined) {
    violate('id', `is required: measurement '${measurement.code}' counts unique ids (count_unique); send the identity to count once per interval, such as a user id`, 'required');
  }
  if (violations.length > before || !measurement || !quantity.ok) return undefined;

  const accepted = targets.filter((t) => refusal(lookups.window(t), measuredAtMs, measuredAt) === undefined);
  if (accepted.length === 0) {
    conflicts.push(`${label}${refusal(lookups.window(targets[0] as UsageTarget), measuredAtMs, measuredAt)}`);
    return undefined;
  }
  // A value in an invoiced period of any item taking it is refused as a whole: no target is passed over (the value would be lost there).
  for (const t of accepted) {
    const invoicedTo = await lookups.invoicedPast(t, measuredAtMs);
    if (invoicedTo !== undefined) {
      violate('measuredAt', invoicedRefusal(t, invoicedTo, measuredAt), 'already_invoiced');
      return undefined;
    }
  }
  return { targets: accepted, measurement, measuredAt, quantityMicros: quantity.micros, valueId: input.id ?? null };
}

/** The error a value is answered with when it failed its checks: every 422 together, else every 409. */
function refused(violations: Violation[], conflicts: string[]): AppError | undefined {
  if (violations.length) return invalidMany(violations);
  if (conflicts.length) return conflict(conflicts.join('; '));
  return undefined;
}

/** Inserts the planned values (each on every one of its targets); the rendered values of each. */
async function write(
  tx: Tx,
  org: string,
  planned: readonly Planned[],
  clock: Clock,
  now: Date,
  settings: InstantBilling,
): Promise<MeasurementValue[][]> {
  const records: MeasurementValueRecord[] = [];
  const out = planned.map((p) =>
    p.targets.map((t) => {
      const r: MeasurementValueRecord = {
        id: newId(),
        itemId: t.itemId,
        measurementId: p.measurement.id,
        quantityMicros: p.quantityMicros,
        measuredAt: p.measuredAt,
        valueId: p.valueId,
        instant: p.measurement.type === 'instant_metered',
        createdAt: clock.iso,
      };
      records.push(r);
      return render(r, t.subscriptionId, p.measurement);
    }),
  );
  await tx.usage.insert(org, records);
  await billInstantValues(tx, org, records, now, settings);
  return out;
}

const clockOf = (now: Date): Clock => ({ ms: now.getTime(), iso: now.toISOString() });

/**
 * Records the values of separate requests in one unit of work (the executor coalesces concurrent
 * requests of POST /subscription-measurements): each value is checked on its own and answered as
 * `recordMeasurement` alone would answer it, with its first recorded value or its error; the
 * accepted values are inserted together.
 */
export async function recordMeasurements(
  tx: Tx,
  org: string,
  inputs: readonly MeasurementValueInput[],
  now: Date,
  settings: InstantBilling,
): Promise<Array<MeasurementValue | AppError>> {
  const lookups = new Lookups(tx, org);
  const clock = clockOf(now);
  const outcomes: Array<Planned | AppError> = [];
  for (const input of inputs) {
    const violations: Violation[] = [];
    const conflicts: string[] = [];
    const p = await plan(lookups, input, (field) => field, clock, violations, conflicts, '');
    outcomes.push(refused(violations, conflicts) ?? (p as Planned));
  }
  const written = await write(tx, org, outcomes.filter((o): o is Planned => !(o instanceof AppError)), clock, now, settings);
  let next = 0;
  return outcomes.map((o) => (o instanceof AppError ? o : (written[next++]![0] as MeasurementValue)));
}

/**
 * Records one value (interface: POST /subscription-measurements). Targeting a code records one value
 * on every item of the subscription measuring it (items that have ended are passed over); the first
 * is returned.
 */
export async function recordMeasurement(
  tx: Tx,
  org: string,
  input: MeasurementValueInput,
  now: Date,
  settings: InstantBilling,
): Promise<MeasurementValue> {
  const [outcome] = await recordMeasurements(tx, org, [input], now, settings);
  if (outcome instanceof AppError) throw outcome;
  return outcome as MeasurementValue;
}

/** Records every value of a batch or none: all violations come back at once as `values[i].field`. */
export async function recordMeasurementBatch(
  tx: Tx,
  org: string,
  inputs: readonly MeasurementValueInput[],
  now: Date,
  settings: InstantBilling,
): Promise<MeasurementValue[]> {
  const lookups = new Lookups(tx, org);
  const clock = clockOf(now);
  const violations: Violation[] = [];
  const conflicts: string[] = [];
  const planned: Planned[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const at = (field: string) => `values[${i}].${field}`;
    const p = await plan(lookups, inputs[i] as MeasurementValueInput, at, clock, violations, conflicts, `values[${i}]: `);
    if (p) planned.push(p);
  }
  const error = refused(violations, conflicts);
  if (error) throw error;
  return (await write(tx, org, planned, clock, now, settings)).flat();
}

export async function getMeasurementValue(tx: Tx, org: string, id: string): Promise<MeasurementValue> {
  const found = await tx.usage.get(org, id);
  if (!found) throw notFound('Measurement value', id);
  const measurement = (await tx.catalogue.getMeasurement(org, found.value.measurementId)) as Measurement;
  return render(found.value, found.subscriptionId, measurement);
}

/** The latest values of each item's product measurement, newest first, by item id (one read for a page of items). */
export async function recentMeasurementValues(
  tx: Tx,
  org: string,
  items: ReadonlyArray<{ item: Pick<ItemRecord, 'id' | 'subscriptionId'>; measurement: Measurement }>,
): Promise<Map<string, MeasurementValue[]>> {
  const byItem = new Map(items.map(({ item }) => [item.id, [] as MeasurementValue[]]));
  const of = new Map(items.map((m) => [m.item.id, m]));
  const rows = await tx.usage.latest(
    org,
    items.map(({ item, measurement }) => ({ itemId: item.id, measurementId: measurement.id })),
    RECENT_VALUES,
  );
  for (const r of rows) {
    const { item, measurement } = of.get(r.itemId)!;
    byItem.get(r.itemId)!.push(render(r, item.subscriptionId, measurement));
  }
  return byItem;
}

/** What an item's interval depends on besides the item: its price plan and the subscription's billing group. */
export interface KnownTerms {
  pricePlan: PricePlan;
  group: BillingGroup | undefined;
}

/**
 * The billing interval of an item as of `now` (interface: the current interval): the item's period
 * (its price plan's billing interval, aligned by the subscription's billing group in the customer's
 * time zone) containing `now`, or for an item that has stopped, the one it stopped in. `from` and
 * `to` are the full period's; `billed` is the part of it the item runs in, from its start to its end
 * (what a billing run aggregates: a first or last period is partial). `known`: the item's price plan
 * and the subscription's billing group when the caller has read them (a page of subscriptions).
 */
export async function currentInterval(
  tx: Tx,
  org: string,
  subscription: SubscriptionRecord,
  item: ItemRecord,
  timeZone: string,
  now: Date,
  known?: KnownTerms,
): Promise<ItemInterval & { billed: { from: string; to: string } }> {
  const pricePlan = known?.pricePlan ?? (await getPricePlan(tx, org, item.pricePlanId));
  const group = known ? known.group : subscription.billingGroupId ? await findBillingGroup(tx, org, subscription.billingGroupId) : undefined;
  const itemStart = itemBillingStart(subscription, item, now, pricePlan);
  const end = itemEnd(subscription, item);
  const reference = end && Date.parse(end) <= now.getTime() ? new Date(Date.parse(end) - 1) : now;
  const period = periodContaining(zoned(itemAnchor(subscription, item, now, pricePlan), timeZone), parseInterval(pricePlan.billingInterval), alignmentOf(group), zoned(reference, timeZone));
  const from = toIso(period.start);
  const to = toIso(period.end);
  const billed = { from: itemStart > from ? itemStart : from, to: end !== null && end < to ? end : to };
  return { itemId: item.id, itemStart, from, to, end, billed };
}

/**
 * A usage-metric item in its current interval, as billed (`currentInterval`'s `billed` part): the
 * events scope, the interval, and the metric's value, events and late events in it. What
 * get_subscription_usage and an item's `currentUsage` show. An interval already invoiced (a stopped
 * item's last one) shows what the invoice billed, its late events apart (`metricReading`).
 */
export async function currentMetricUsage(
  tx: Tx,
  org: string,
  subscription: SubscriptionRecord,
  item: ItemRecord,
  metric: UsageMetric,
  timeZone: string,
  now: Date,
  known?: KnownTerms,
): Promise<{ scope: EventScope; periodStart: string; periodEnd: string; value: bigint; events: number; late: number }> {
  const interval = await currentInterval(tx, org, subscription, item, timeZone, now, known);
  const scope = metricScope({ ...interval, ...interval.billed }, subscription.id, metric);
  const invoiced = item.lastBilledTo !== null && Date.parse(item.lastBilledTo) > Date.parse(interval.billed.from);
  return { scope, periodStart: interval.billed.from, periodEnd: interval.billed.to, ...(await metricReading(tx, org, scope, metric, invoiced)) };
}

export interface UsagePage {
  page: number;
  limit: number;
}

/**
 * Usage of a subscription (GET /subscriptions/{id}/usage): per item and measurement, the current
 * interval, its value, the fair-billing value of recurring measurements, the number of values
 * measured in it and one page of them, newest first.
 */
export async function getSubscriptionUsage(tx: Tx, org: string, id: string, page: UsagePage, now: Date): Promise<{ data: UsageEntry[] }> {
  const subscription = await loadSubscription(tx, org, id);
  const { timeZone } = (await tx.customers.get(org, subscription.customerId)) as Customer;
  const lookups = new Lookups(tx, org);
  const data: UsageEntry[] = [];
  for (const item of await tx.subscriptions.items(org, [subscription.id])) {
    const product: Product = await lookups.product(item.productId);
    const metric = product.usageMetric;
    if (metric) {
      const usage = await currentMetricUsage(tx, org, subscription, item, metric, timeZone, now);
      const events = await tx.usageEvents.page(org, usage.scope, metric, page.limit, (page.page - 1) * page.limit);
      data.push({
        subscriptionItem: item.id,
        measurement: null,
        usageMetric: metric,
        periodStart: usage.periodStart,
        periodEnd: usage.periodEnd,
        value: formatQuantity(usage.value),
        timeWeightedValue: null,
        eventCount: usage.events,
        lateEvents: usage.late,
        events: events.map(renderUsageEvent),
      });
    }
    const current = product.measurement?.id;
    const ids = [...new Set([...(current ? [current] : []), ...(await tx.usage.measurementsOf(org, item.id))])];
    if (ids.length === 0) continue;
    const interval = await currentInterval(tx, org, subscription, item, timeZone, now);
    for (const measurementId of ids) {
      const measurement = (await lookups.measurement(measurementId)) as Measurement;
      const scope = { itemId: item.id, measurementId, from: interval.from, to: interval.to };
      const value = await intervalValue(tx, org, interval, measurement);
      const eventCount =
        measurement.type === 'metered' && measurement.aggregationType === 'count' ? Number(value / MICROS) : await tx.usage.count(org, scope);
      if (measurementId !== current && eventCount === 0 && value === 0n) continue;
      const events = await tx.usage.events(org, scope, page.limit, (page.page - 1) * page.limit);
      const fair = measurement.type === 'recurring' && measurement.fairBilling;
      data.push({
        subscriptionItem: item.id,
        measurement,
        usageMetric: null,
        periodStart: interval.from,
        periodEnd: interval.to,
        value: formatQuantity(value),
        timeWeightedValue: fair ? formatQuantity(await timeWeightedValue(tx, org, interval, measurement)) : null,
        eventCount,
        lateEvents: 0,
        events: events.map((e) => render(e, subscription.id, measurement)),
      });
    }
  }
  return { data };
}
