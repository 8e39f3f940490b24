/**
 * Usage events (CONTRACT section 8, "Usage events"): ingestion with deduplication, addressing by
 * subscription, customer or CloudEvents subject, late and unmatched events, and the event list.
 */
import { AppError, invalidMany, type Violation } from '../errors.js';
import { dateTimeInput } from '../schemas/common.js';
import type { UsageMetric } from '../schemas/catalogue.js';
import type { Customer } from '../schemas/customers.js';
import type { IngestResult, UsageEvent } from '../schemas/usageEvents.js';
import type { SubscriptionRecord } from '../store/ports/subscriptions.js';
import type { UsageEventFilter, UsageEventRecord } from '../store/ports/usageEvents.js';
import type { Tx } from '../store/store.js';
import { findCustomer } from './customers.js';
import { memo } from './memo.js';
import { itemEnd } from './billing/schedule.js';
import { MAX_QUANTITY_TEXT } from './quantity.js';
import { findSubscription } from './subscriptions/records.js';

/** Events of one call at most (CONTRACT section 2, batches). */
export const MAX_EVENTS = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Timestamps may be this old at most, and this far in the future (clock skew). */
const MAX_AGE_MS = 35 * DAY_MS;
const MAX_AHEAD_MS = 5 * 60 * 1000;
const MAX_PROPERTIES = 50;
const OUR_FIELDS = new Set(['id', 'eventName', 'timestamp', 'subscription', 'customer', 'properties']);
/** CloudEvents 1.0 context attributes; other lower-case names are extensions, accepted and not stored. */
const CLOUD_FIELDS = new Set(['specversion', 'id', 'source', 'type', 'subject', 'time', 'data', 'datacontenttype', 'dataschema']);
const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;

/** Why a CloudEvent's key is refused: `data_base64` is the JSON format's binary data, which no metric reads. */
const cloudKeyFault = (key: string) =>
  key === 'data_base64'
    ? 'carries binary data, which usage events do not take: send the properties as a JSON object in data'
    : 'is not a CloudEvents attribute: extensions are 1 to 20 lower-case letters or digits';

type Ref = { kind: 'subscription' | 'customer' | 'subject'; value: string; field: string };

/** An event that passed the checks of its fields. */
interface Checked {
  id: string;
  eventName: string;
  ts: number;
  ref: Ref;
  /** The properties as JSON text, and as sent. */
  properties: string;
  values: Readonly<Record<string, string | number>>;
  /** Where the properties are: `properties`, or `data` in a CloudEvent. */
  propertiesField: string;
}

export interface IngestError {
  index: number;
  id?: string;
  propertyPath: string;
  message: string;
}

const isText = (v: unknown, max = 255): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;

/** The JSON kind of a value, as an error names what was sent instead of a string. */
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** What is wrong with a required text field that `isText` refused. */
const textFault = (v: unknown): string =>
  v === undefined ? 'is required' : typeof v === 'string' ? `must be 1 to 255 characters (got ${v.length})` : `must be a string (got ${kindOf(v)})`;

/** Records that field `field` of event `index` (`''`: the event itself) is wrong, naming `events[i].<field>` and the event's id when it has one. */
function fail(errors: IngestError[], raw: unknown, index: number, field: string, message: string): void {
  const at = `events[${index}]${field ? `.${field}` : ''}`;
  const id = raw !== null && typeof raw === 'object' && isText((raw as Record<string, unknown>).id) ? ((raw as Record<string, unknown>).id as string) : undefined;
  errors.push({ index, ...(id !== undefined ? { id } : {}), propertyPath: at, message: `${at} ${message}` });
}

/**
 * Checks one event by hand (a batch of 1,000 would spend more in a schema library than in the
 * database), our form or a CloudEvent (it has `specversion`); each bad field is an error naming
 * `events[i].<field>` and what it takes.
 */
function check(raw: unknown, index: number, now: number, errors: IngestError[], times: Map<string, number>): Checked | undefined {
  const before = errors.length;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    fail(errors, raw, index, '', 'must be an object { id, eventName, timestamp, subscription or customer, properties } or a CloudEvent');
    return undefined;
  }
  const e = raw as Record<string, unknown>;
  const cloud = e.specversion !== undefined;
  for (const key of Object.keys(e)) {
    if (cloud ? !CLOUD_FIELDS.has(key) && !EXTENSION_NAME.test(key) : !OUR_FIELDS.has(key)) {
      fail(
        errors,
        raw,
        index,
        key,
        cloud ? cloudKeyFault(key) : 'is not a field of an event: send id, eventName, timestamp, subscription or customer, properties',
      );
    }
  }
  if (cloud) {
    if (e.specversion !== '1.0') fail(errors, raw, index, 'specversion', 'must be "1.0"');
    if (!isText(e.source, 4096)) fail(errors, raw, index, 'source', 'is required: a non-empty string naming the event source');
    if (e.datacontenttype !== undefined && e.datacontenttype !== 'application/json') fail(errors, raw, index, 'datacontenttype', 'must be application/json when given');
  }
  const nameField = cloud ? 'type' : 'eventName';
  const timeField = cloud ? 'time' : 'timestamp';
  const propertiesField = cloud ? 'data' : 'properties';
  if (!isText(e.id)) fail(errors, raw, index, 'id', `${textFault(e.id)}: your unique id of the event, 1 to 255 characters (deduplicated per organisation)`);
  const eventName = e[nameField];
  if (!isText(eventName)) fail(errors, raw, index, nameField, `${textFault(eventName)}: the event name a product usage metric bills, 1 to 255 characters`);

  let ts = now;
  const time = e[timeField];
  if (time !== undefined) {
    const parsed = instant(time, times);
    if (Number.isNaN(parsed)) fail(errors, raw, index, timeField, 'must be an RFC 3339 date-time with an offset, e.g. 2026-01-31T12:00:00Z');
    else if (parsed < now - MAX_AGE_MS) fail(errors, raw, index, timeField, `is more than 35 days old (${time}); older usage is no longer accepted`);
    else if (parsed > now + MAX_AHEAD_MS) fail(errors, raw, index, timeField, `lies more than 5 minutes in the future (${time}, now ${new Date(now).toISOString()})`);
    else ts = parsed;
  }

  let ref: Ref | undefined;
  if (cloud) {
    if (isText(e.subject)) ref = { kind: 'subject', value: e.subject, field: 'subject' };
    else fail(errors, raw, index, 'subject', 'is required: the id or number of the subscription or customer the usage belongs to');
  } else {
    const bySubscription = e.subscription !== undefined;
    if (bySubscription && e.customer !== undefined) {
      fail(errors, raw, index, 'customer', 'cannot be sent with subscription: an event names exactly one of the two; drop customer to count it for that subscription');
    } else if (!bySubscription && e.customer === undefined) {
      fail(errors, raw, index, 'subscription', 'or customer (id or number) is required: exactly one of the two');
    } else {
      const kind = bySubscription ? 'subscription' : 'customer';
      if (isText(e[kind])) ref = { kind, value: e[kind], field: kind };
      else fail(errors, raw, index, kind, `must be an id or number as a string, 1 to 255 characters${typeof e[kind] === 'string' ? '' : ` (got ${kindOf(e[kind])})`}`);
    }
  }

  let properties = '{}';
  let values: Checked['values'] = {};
  const props = e[propertiesField];
  if (props !== undefined) {
    if (props === null || typeof props !== 'object' || Array.isArray(props)) {
      fail(errors, raw, index, propertiesField, 'must be an object of string or number values, e.g. {"tokens": 120, "model": "large"}');
    } else {
      const given = props as Record<string, unknown>;
      const keys = Object.keys(given);
      if (keys.length > MAX_PROPERTIES) fail(errors, raw, index, propertiesField, `holds ${keys.length} properties; at most ${MAX_PROPERTIES}`);
      for (const k of keys) {
        const v = given[k];
        if (k.length > 255) fail(errors, raw, index, `${propertiesField}`, 'has a key longer than 255 characters');
        else if (typeof v === 'number' ? !Number.isFinite(v) : typeof v !== 'string' || v.length > 255) {
          fail(errors, raw, index, `${propertiesField}.${k}`, 'must be a string (at most 255 characters) or a finite number');
        }
      }
      properties = JSON.stringify(props);
      values = given as Checked['values'];
    }
  }
  if (errors.length > before) return undefined;
  return { id: e.id as string, eventName: eventName as string, ts, ref: ref!, properties, values, propertiesField };
}

/**
 * The instant of a timestamp, NaN unless it is the project's date-time (a calendar date that exists,
 * not 30 February, with an offset). A batch's events often share timestamps: `times` remembers those
 * of one batch.
 */
function instant(time: unknown, times: Map<string, number>): number {
  if (typeof time !== 'string') return Number.NaN;
  let at = times.get(time);
  if (at === undefined) {
    at = dateTimeInput.safeParse(time).success ? Date.parse(time) : Number.NaN;
    times.set(time, at);
  }
  return at;
}

/** What a subscription's products meter under one event name. */
interface Meter {
  /** The latest end of an already invoiced interval (-Infinity: nothing billed yet). */
  billed: number;
  /** Where its subscription's events go, on time and late (shared by the events). */
  onTime: Placement;
  late: Placement;
  metrics: Array<{ product: string; metric: UsageMetric }>;
  /** When its items meter it, [from, to) in milliseconds: from the item's start to its end. */
  spans: Array<{ from: number; to: number }>;
}

/**
 * Whether an item meters the event at its timestamp: not before the subscription (or the item)
 * started, not after it ended. A draft or offer subscription has not started yet: its events count
 * from whatever start its activation gives it, so they are not judged here.
 */
const covers = (meter: Meter, ts: number) => meter.spans.some((s) => ts >= s.from && ts < s.to);

/** A subscription's meters by event name. */
type Meters = Map<string, Meter>;

/** Why an event cannot be stored as sent: the field (after `events[i].`) and what is wrong with it. */
interface Refusal {
  field: string;
  message: string;
}

/**
 * A number in a string: digits with an optional leading minus and decimal point, as a quantity is
 * written (no exponent, no spaces); both engines' aggregations read such strings alone as numbers
 * (store/repos/usageEvents.ts).
 */
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;
/**
 * A value a metric aggregates as a number lies below 10^12 in magnitude, as every quantity does
 * (`MAX_QUANTITY_TEXT`): in micro-units it stays within 64 bits, so sums and maxima are exact.
 */
const MAX_VALUE = 1e12;
/** The aggregations that read their property as a number, and what each does with it. */
const NUMERIC: Partial<Record<UsageMetric['aggregation'], string>> = { sum: 'sums', max: 'takes the largest', average: 'averages', latest: 'bills the latest' };

/**
 * A property that a metric the event meets (its name and filters) aggregates as a number must be a
 * number or a string of one (`NUMBER_TEXT`): anything else would silently count as 0 on both
 * engines. An event without the property counts no value, as documented.
 */
function badValue(meter: Meter, c: Checked): Refusal | undefined {
  for (const { product, metric } of meter.metrics) {
    const verb = NUMERIC[metric.aggregation];
    if (!verb || !metric.property) continue;
    const v = Object.hasOwn(c.values, metric.property) ? c.values[metric.property] : undefined;
    if (v === undefined) continue;
    const n = typeof v === 'number' ? v : NUMBER_TEXT.test(v) ? Number(v) : Number.NaN;
    const number = Number.isFinite(n);
    if (number && Math.abs(n) < MAX_VALUE) continue;
    const meets = metric.filters.every((f) => {
      return Object.hasOwn(c.values, f.property) && f.values.some((x) => String(x) === String(c.values[f.property]));
    });
    if (!meets) continue;
    const uses = `product '${product}' ${verb} ${metric.property} of its ${metric.eventName} events`;
    return {
      field: `${c.propertiesField}.${metric.property}`,
      message: number
        ? `is ${JSON.stringify(v)}: ${uses}, whose values lie between -${MAX_QUANTITY_TEXT} and ${MAX_QUANTITY_TEXT} (a quantity's range)`
        : `is ${JSON.stringify(v)}, not a number: ${uses}; send a number such as 1200, or a string of digits with an optional decimal point ("1200.5"; no exponent, no spaces)`,
    };
  }
  return undefined;
}

/** A subscription an event may count for, with what its products meter. */
interface Metered {
  subscription: SubscriptionRecord;
  meters: Meters;
  /** Where its events that no item meters go (shared by the events). */
  unmatched: Placement;
}

/**
 * What a reference names, as the unit's events address it: a subscription, or a customer with its
 * active subscriptions (a `subject` may name either), or nothing.
 */
type Target = { subscription: Metered } | { customer: Customer; active: Metered[] } | undefined;

/**
 * The targets of a unit's references, each looked up once: a batch's events name the same
 * subscriptions and customers again and again. `resolve` loads them all before any event is placed,
 * so that placing an event is a synchronous look at what was loaded.
 */
class Targets {
  private readonly targets = { subscription: new Map<string, Target>(), customer: new Map<string, Target>(), subject: new Map<string, Target>() };
  private readonly metered = new Map<string, Promise<Metered>>();

  constructor(
    private readonly tx: Tx,
    private readonly org: string,
  ) {}

  /** Loads the targets of the events' references (`undefined`: an event that failed its checks). */
  async resolve(events: ReadonlyArray<Checked | undefined>): Promise<void> {
    for (const c of events) {
      if (!c) continue;
      const known = this.targets[c.ref.kind];
      if (!known.has(c.ref.value)) known.set(c.ref.value, await this.load(c.ref.kind, c.ref.value));
    }
  }

  of(ref: Ref): Target {
    return this.targets[ref.kind].get(ref.value);
  }

  private async load(kind: Ref['kind'], value: string): Promise<Target> {
    if (kind !== 'customer') {
      const subscription = await findSubscription(this.tx, this.org, value);
      if (subscription) return { subscription: await this.meteredOf(subscription) };
      if (kind === 'subscription') return undefined;
    }
    const customer = await findCustomer(this.tx, this.org, value);
    if (!customer) return undefined;
    const active: Metered[] = [];
    for (const id of await this.tx.usageEvents.activeSubscriptionsOf(this.org, customer.id)) {
      const subscription = await findSubscription(this.tx, this.org, id);
      if (subscription) active.push(await this.meteredOf(subscription));
    }
    return { customer, active };
  }

  private meteredOf(record: SubscriptionRecord): Promise<Metered> {
    return memo(this.metered, record.id, async () => {
      const meters: Meters = new Map();
      const started = record.status !== 'draft' && record.status !== 'offer';
      const start = record.startDate ?? record.activatedAt;
      for (const m of await this.tx.usageEvents.meteringItems(this.org, record.id)) {
        const billed = m.lastBilledTo === null ? Number.NEGATIVE_INFINITY : Date.parse(m.lastBilledTo);
        const end = itemEnd(record, m);
        const span = started
          ? {
              from: Math.max(...[start, m.startDate].map((d) => (d === null ? Number.NEGATIVE_INFINITY : Date.parse(d)))),
              to: end === null ? Number.POSITIVE_INFINITY : Date.parse(end),
            }
          : { from: Number.NEGATIVE_INFINITY, to: Number.POSITIVE_INFINITY };
        const meter = meters.get(m.metric.eventName);
        if (!meter) meters.set(m.metric.eventName, { billed, onTime: placement(record, false), late: placement(record, true), metrics: [{ product: m.product, metric: m.metric }], spans: [span] });
        else {
          meter.billed = Math.max(meter.billed, billed);
          meter.metrics.push({ product: m.product, metric: m.metric });
          meter.spans.push(span);
        }
      }
      return { subscription: record, meters, unmatched: { rows: [{ subscriptionId: record.id, late: false }], customerId: record.customerId, unmatched: true } };
    });
  }
}

/** Where an event goes: one row per subscription it counts for, or one unmatched row. */
interface Placement {
  readonly rows: ReadonlyArray<{ readonly subscriptionId: string | null; readonly late: boolean }>;
  readonly customerId: string;
  readonly unmatched: boolean;
}

/** A matched event of the subscription, on time or late. */
const placement = (record: SubscriptionRecord, late: boolean): Placement => ({ rows: [{ subscriptionId: record.id, late }], customerId: record.customerId, unmatched: false });

function place(target: Target, c: Checked): Placement | Refusal {
  const { ref } = c;
  if (target && 'subscription' in target) {
    const meter = target.subscription.meters.get(c.eventName);
    if (meter === undefined || !covers(meter, c.ts)) return target.subscription.unmatched;
    return badValue(meter, c) ?? (c.ts < meter.billed ? meter.late : meter.onTime);
  }
  if (!target) {
    const what = ref.kind === 'subscription' ? 'a subscription' : ref.kind === 'customer' ? 'a customer' : 'a subscription or a customer';
    return { field: ref.field, message: `'${ref.value}' is neither the id nor the number of ${what}; use one from list_subscriptions or list_customers` };
  }
  const rows: Array<Placement['rows'][number]> = [];
  for (const { subscription, meters } of target.active) {
    const meter = meters.get(c.eventName);
    if (meter === undefined || !covers(meter, c.ts)) continue;
    const refusal = badValue(meter, c);
    if (refusal) return refusal;
    rows.push({ subscriptionId: subscription.id, late: c.ts < meter.billed });
  }
  if (rows.length === 0) return { rows: [{ subscriptionId: null, late: false }], customerId: target.customer.id, unmatched: true };
  return { rows, customerId: target.customer.id, unmatched: false };
}

/** One call of POST /usage-events. */
export interface IngestCall {
  events: readonly unknown[];
  /** All or nothing: any error answers 422 and stores nothing of the call. */
  atomic: boolean;
}

/** A call's events, checked and addressed: what it stores and what its answer counts already. */
interface Sorted {
  placed: Array<{ event: Checked; placement: Placement }>;
  errors: IngestError[];
  duplicates: number;
}

/**
 * Stores the events of calls of POST /usage-events in one unit of work: a single call, or calls the
 * executor coalesced. Each event is checked and addressed on its own; a bad one is an error of its
 * call's answer and never blocks the others, unless the call is `atomic` (then that call is answered
 * 422 with every error and stores nothing). An id already stored, or earlier in the call or in an
 * earlier call of the unit, is a duplicate: each call is answered as it would be alone, after the
 * calls before it. The claims and the rows are written in the caller's unit of work, so a retried
 * call counts every event exactly once.
 */
export async function ingestUsageEventCalls(tx: Tx, org: string, calls: readonly IngestCall[], now: Date): Promise<Array<IngestResult | AppError>> {
  const clock = now.getTime();
  const times = new Map<string, number>();
  const checked = calls.map(({ events }) => {
    const errors: IngestError[] = [];
    return { errors, events: events.map((raw, i) => check(raw, i, clock, errors, times)) };
  });
  const targets = new Targets(tx, org);
  for (const call of checked) await targets.resolve(call.events);
  /** Ids the unit stores or claims, over the calls sorted so far (the last call's are not added: no call follows). */
  const seen = new Set<string>();
  const sorted: Array<Sorted | AppError> = [];
  for (const [n, { events, errors }] of checked.entries()) {
    const mine = new Set<string>();
    const placed: Sorted['placed'] = [];
    let duplicates = 0;
    const checkErrors = errors.length;
    for (let i = 0; i < events.length; i++) {
      const c = events[i];
      if (!c) continue;
      if (seen.has(c.id) || mine.has(c.id)) {
        duplicates += 1;
        continue;
      }
      const placement = place(targets.of(c.ref), c);
      if ('message' in placement) {
        errors.push({ index: i, id: c.id, propertyPath: `events[${i}].${placement.field}`, message: `events[${i}].${placement.field} ${placement.message}` });
        continue;
      }
      mine.add(c.id);
      placed.push({ event: c, placement });
    }
    // In the order of the events: the checks of all came first.
    if (checkErrors && errors.length > checkErrors) errors.sort((a, b) => a.index - b.index);
    if (calls[n]!.atomic && errors.length) {
      sorted.push(invalidMany(errors.map((e) => ({ propertyPath: e.propertyPath, message: e.message, code: 'invalid_event' }) satisfies Violation)));
      continue;
    }
    if (n < checked.length - 1) for (const id of mine) seen.add(id);
    sorted.push({ placed, errors, duplicates });
  }

  const stored: Sorted['placed'] = [];
  for (const s of sorted) if (!(s instanceof AppError)) for (const p of s.placed) stored.push(p);
  const claimed = await storeEvents(tx, org, stored, clock);
  return sorted.map((s) => {
    if (s instanceof AppError) return s;
    let accepted = 0;
    let late = 0;
    let unmatched = 0;
    for (const { event, placement } of s.placed) {
      if (!claimed.has(event.id)) continue;
      accepted += 1;
      if (placement.unmatched) unmatched += 1;
      if (placement.rows.some((r) => r.late)) late += 1;
    }
    return { accepted, duplicates: s.duplicates + s.placed.length - accepted, late, unmatched, errors: s.errors };
  });
}

/** Stores the placed events' rows under new arrival numbers; answers the ids claimed (the others were stored before). */
async function storeEvents(tx: Tx, org: string, placed: Sorted['placed'], clock: number): Promise<Set<string>> {
  if (!placed.length) return new Set();
  const reserved = await tx.usageEvents.reserveSeq(org, placed.reduce((n, p) => n + p.placement.rows.length, 0));
  const claims: UsageEventRecord[] = [];
  const extras: UsageEventRecord[] = [];
  let seq = reserved.first;
  for (const { event, placement } of placed) {
    placement.rows.forEach((row, target) => {
      (target === 0 ? claims : extras).push({
        seq: seq++,
        id: event.id,
        target,
        eventName: event.eventName,
        ts: event.ts,
        subscriptionId: row.subscriptionId,
        customerId: placement.customerId,
        properties: event.properties,
        unmatched: placement.unmatched,
        late: row.late,
        receivedAt: clock,
      });
    });
  }
  const claimed = await tx.usageEvents.insert(org, claims, reserved);
  await tx.usageEvents.insert(
    org,
    extras.filter((r) => claimed.has(r.id)),
    reserved,
  );
  return claimed;
}

/** Stores the events of one call of POST /usage-events (`ingestUsageEventCalls`). */
export async function ingestUsageEvents(tx: Tx, org: string, events: readonly unknown[], atomic: boolean, now: Date): Promise<IngestResult> {
  const [answer] = await ingestUsageEventCalls(tx, org, [{ events, atomic }], now);
  if (answer instanceof AppError) throw answer;
  return answer as IngestResult;
}

/** One stored row as the list shows it. */
export function renderUsageEvent(r: UsageEventRecord): UsageEvent {
  return {
    id: r.id,
    eventName: r.eventName,
    timestamp: new Date(r.ts).toISOString(),
    subscription: r.subscriptionId,
    customer: r.customerId,
    properties: JSON.parse(r.properties) as UsageEvent['properties'],
    unmatched: r.unmatched,
    late: r.late,
    receivedAt: new Date(r.receivedAt).toISOString(),
  };
}

export interface UsageEventQuery {
  subscription?: string | undefined;
  customer?: string | undefined;
  eventName?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  unmatched?: boolean | undefined;
  limit: number;
  cursor?: string | undefined;
}

const CURSOR = /^[1-9]\d{0,15}$/;

/** A violation of a filter of the list: a 400, as a bad query parameter is (CONTRACT section 2). */
const filterFault = (field: string, message: string, code: string): Violation => ({ propertyPath: field, message: `${field} ${message}`, code });

/** GET /usage-events: newest first by arrival, in keyset pages; the cursor is where the last page ended. */
export async function listUsageEvents(tx: Tx, org: string, q: UsageEventQuery): Promise<{ data: UsageEvent[]; meta: { nextCursor: string | null } }> {
  if (q.cursor !== undefined && !CURSOR.test(q.cursor)) {
    throw new AppError('bad_request', 'cursor is not one this list returned: pass meta.nextCursor of the previous page unchanged', [
      { propertyPath: 'cursor', message: 'cursor is not one this list returned', code: 'invalid_cursor' },
    ]);
  }
  const filter: UsageEventFilter = {
    eventName: q.eventName,
    from: q.from === undefined ? undefined : Date.parse(q.from),
    to: q.to === undefined ? undefined : Date.parse(q.to),
    unmatched: q.unmatched,
    before: q.cursor === undefined ? undefined : Number(q.cursor),
  };
  const faults: Violation[] = [];
  if (q.subscription !== undefined) {
    const s = await findSubscription(tx, org, q.subscription);
    if (s) filter.subscriptionId = s.id;
    else faults.push(filterFault('subscription', `'${q.subscription}' is neither the id nor the number of a subscription; use one from list_subscriptions`, 'not_found'));
  }
  if (q.customer !== undefined) {
    const c = await findCustomer(tx, org, q.customer);
    if (c) filter.customerId = c.id;
    else faults.push(filterFault('customer', `'${q.customer}' is neither the id nor the number of a customer; use one from list_customers`, 'not_found'));
  }
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) {
    faults.push(filterFault('from', `(${q.from}) is later than to (${q.to}): the list shows timestamps from from (inclusive) to before to`, 'invalid_range'));
  }
  if (faults.length) throw new AppError('bad_request', faults.map((f) => f.message).join('; '), faults);
  const rows = await tx.usageEvents.list(org, filter, q.limit + 1);
  const page = rows.slice(0, q.limit);
  const more = rows.length > q.limit;
  return { data: page.map(renderUsageEvent), meta: { nextCursor: more ? String(page[page.length - 1]!.seq) : null } };
}
