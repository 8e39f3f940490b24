/**
 * When an item is billed (CONTRACT section 8, "Billing runs"): its periods follow the price plan's
 * billing interval from the item's billing start, aligned by the subscription's billing group, on the
 * wall clock of the customer's time zone. A period is billed on its billing date: its start for a flat
 * fee paid in advance, its end otherwise (usage is always billed in arrears). The item's stop (billing
 * end, cancellation, termination, the pause a subscription ended in) cuts its last period short.
 * Everything here is pure.
 */
import { DateTime, type Zone } from 'luxon';
import type { Measurement } from '../../schemas/measurements.js';
import type { UsageMetric } from '../../schemas/catalogue.js';
import type { ItemRecord, QuantityChange, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import { parseInterval, periodContaining, subtractInterval, toIso, zoned, type Alignment, type Interval } from '../dates.js';
import { FINAL } from '../subscriptionStates.js';

export function alignmentOf(group: { type: string; customDay: number | null; customMonth?: number | null } | undefined): Alignment {
  if (group?.type === 'end_of_month') return { type: 'end_of_month' };
  if (group?.type === 'custom_day' && group.customDay) return { type: 'custom_day', customDay: group.customDay, customMonth: group.customMonth ?? null };
  return { type: 'anniversary' };
}

/**
 * When an item's billing starts: the latest of the subscription start (now when unset), the item
 * start, its billing start and, for a price plan with `applyTrial`, the end of the subscription's trial.
 */
export function itemBillingStart(record: SubscriptionRecord, item: ItemRecord, now: Date, plan: { applyTrial: boolean }): string {
  const starts = [record.startDate ?? now.toISOString(), item.startDate, item.billingStart, plan.applyTrial ? record.trialEndsOn : null].filter(
    (d): d is string => d !== null,
  );
  return new Date(Math.max(...starts.map((d) => Date.parse(d)))).toISOString();
}

/**
 * Whether `resume_subscription` with a `nextBillingDate` restarted the item's billing: its
 * `billingStart` is that date and its `billingAnchor` where its periods before the pause counted
 * from (nothing else sets both). Its periods count anew from the restart; while the subscription
 * still records the pause (`pausedAt` before the restart), the part of its billing before the pause
 * that no invoice billed yet is billed on the restart date (`ItemTerms.beforePause`).
 */
export function isRestarted(item: Pick<ItemRecord, 'billingStart' | 'billingAnchor'>): boolean {
  return item.billingStart !== null && item.billingAnchor !== null;
}

/** Where an item's periods count from: its restart (`isRestarted`), else the running cycle it joined (`billingAnchor`), else its billing start. */
export function itemAnchor(record: SubscriptionRecord, item: ItemRecord, now: Date, plan: { applyTrial: boolean }): string {
  if (isRestarted(item)) return item.billingStart as string;
  return item.billingAnchor ?? itemBillingStart(record, item, now, plan);
}

/**
 * When a restarted item (`isRestarted`) began billing before its pause: `itemBillingStart` with
 * where its periods counted from (`billingAnchor`) in place of the restart (`billingStart`).
 */
function beginBeforeRestart(record: SubscriptionRecord, item: ItemRecord, now: Date, plan: { applyTrial: boolean }): string {
  return itemBillingStart(record, { ...item, billingStart: item.billingAnchor }, now, plan);
}

/**
 * The item as `resume_subscription` with a `nextBillingDate` (`restart`) leaves it, the subscription
 * recording its pause in `pausedAt`: one that billed before the pause is restarted (`isRestarted`;
 * `billingAnchor` keeps where its periods before the pause count from, also when an earlier restart
 * had not come yet); one that had not begun bills from the restart, or from its own later start.
 */
export function restartItem(record: SubscriptionRecord, item: ItemRecord, now: Date, plan: { applyTrial: boolean }, restart: string): ItemRecord {
  const pending = isRestarted(item) && record.pausedAt !== null && record.pausedAt <= (item.billingStart as string);
  const begin = pending ? beginBeforeRestart(record, item, now, plan) : itemBillingStart(record, item, now, plan);
  if (record.pausedAt === null || begin >= record.pausedAt) {
    return begin > restart ? item : { ...item, billingStart: restart, billingAnchor: null };
  }
  return { ...item, billingStart: restart, billingAnchor: pending ? item.billingAnchor : itemAnchor(record, item, now, plan) };
}

/**
 * The item as `resume_subscription` without a date leaves it, which bills every period missed: one
 * whose restart had not come yet (`isRestarted`, `pausedAt` before it) bills as before that restart.
 */
export function unrestartItem(record: SubscriptionRecord, item: ItemRecord, now: Date, plan: { applyTrial: boolean }): ItemRecord {
  if (!isRestarted(item) || record.pausedAt === null || record.pausedAt > (item.billingStart as string)) return item;
  const anchor = item.billingAnchor as string;
  // Periods counted from its own start (billingStart), or from a running cycle it had joined (billingAnchor).
  return beginBeforeRestart(record, item, now, plan) === anchor ? { ...item, billingStart: anchor, billingAnchor: null } : { ...item, billingStart: null };
}

/**
 * When an item stops being billed: the earliest of its billing end, the subscription's cancellation
 * (pending or done) and termination, and, for a subscription that ended while paused (cancelled or
 * terminated with `pausedAt` still set: see `endedPause`), the start of that pause: nothing of the
 * pause is billed, the time before it is.
 */
export function itemEnd(record: SubscriptionRecord, item: Pick<ItemRecord, 'billingEnd'>): string | null {
  const pause = FINAL.includes(record.status) ? record.pausedAt : null;
  const ends = [item.billingEnd, record.cancellationDate, record.cancelledAt, record.terminatedAt, pause].filter((d): d is string => d !== null);
  return ends.length ? new Date(Math.min(...ends.map((d) => Date.parse(d)))).toISOString() : null;
}

/**
 * How a charge is measured: `flat` by the item's quantity (in advance or in arrears as the price plan
 * says), `usage` by its product's measurement or usage metric over the period (always in arrears), `instant` each
 * value of an `instant_metered` measurement on its own, as it is recorded. A flat fee ignores usage.
 */
export type ChargeKind = 'flat' | 'usage' | 'instant';

export function chargeKindOf(product: { measurement: Measurement | null; usageMetric: UsageMetric | null }, priceType: string): ChargeKind {
  if (priceType === 'flat_fee') return 'flat';
  if (product.usageMetric) return 'usage';
  if (!product.measurement) return 'flat';
  return product.measurement.type === 'instant_metered' ? 'instant' : 'usage';
}

export interface ItemTerms {
  /** Where the item's periods count from: its billing start, or the running cycle it joined. */
  anchor: DateTime;
  /** The item's billing start: nothing before it is billed. */
  begin: DateTime;
  interval: Interval;
  alignment: Alignment;
  /** When the item stops, or null while it runs. */
  end: DateTime | null;
  /** A flat fee paid in advance is billed at its period's start; everything else at the end. */
  inAdvance: boolean;
  /**
   * A restarted item's billing before its pause (`isRestarted`, while the subscription records the
   * pause): from `begin`, in periods counted from `anchor`, up to `until` (the pause's start), each
   * billed on `restart` (the restart date); null for any other item.
   */
  beforePause: { anchor: DateTime; begin: DateTime; until: DateTime; restart: DateTime } | null;
}

export function itemTerms(
  record: SubscriptionRecord,
  item: ItemRecord,
  plan: { billingInterval: string; payInAdvance: boolean; applyTrial: boolean },
  kind: ChargeKind,
  alignment: Alignment,
  timeZone: string | Zone,
  now: Date,
  at: (instant: string) => DateTime = (instant) => zoned(instant, timeZone),
): ItemTerms {
  const stop = itemEnd(record, item);
  const interval = parseInterval(plan.billingInterval);
  const end = stop ? at(stop) : null;
  const inAdvance = kind === 'flat' && plan.payInAdvance;
  // Every return builds the terms in one literal of one key order: billing reads them for every
  // period of every item, and objects of one shape keep those reads fast.
  const restart = isRestarted(item) ? (item.billingStart as string) : null;
  const pause = restart !== null && record.pausedAt !== null && record.pausedAt <= restart ? record.pausedAt : null;
  if (pause !== null) {
    const anchor = at(item.billingAnchor as string);
    const beforeBegin = at(beginBeforeRestart(record, item, now, plan));
    // Ended while paused again before billing restarted: billed as before the restart, up to the pause (`itemEnd`).
    if (FINAL.includes(record.status)) return { anchor, begin: beforeBegin, interval, alignment, end, inAdvance, beforePause: null };
    const begin = at(itemBillingStart(record, item, now, plan));
    const restartAt = at(restart as string);
    return { anchor: restartAt, begin, interval, alignment, end, inAdvance, beforePause: { anchor, begin: beforeBegin, until: at(pause), restart: restartAt } };
  }
  const begin = at(itemBillingStart(record, item, now, plan));
  const anchor = restart ?? item.billingAnchor;
  return { anchor: anchor ? at(anchor) : begin, begin, interval, alignment, end, inAdvance, beforePause: null };
}

/**
 * A billing period [start, end) of an item and the aligned period it belongs to [fullStart, fullEnd):
 * they differ for a first period that runs up to the alignment, and for a period the item's stop cut short.
 */
export interface BillingPeriod {
  start: DateTime;
  end: DateTime;
  billDate: DateTime;
  fullStart: DateTime;
  fullEnd: DateTime;
}

/**
 * Where unbilled time begins: the end of the last billed period, never before the billing start; for
 * a restarted item, in its billing before the pause while some of that is unbilled (`beforePause`).
 */
export function cursorOf(
  terms: ItemTerms,
  item: Pick<ItemRecord, 'lastBilledTo'>,
  at: (instant: string) => DateTime = (instant) => zoned(instant, terms.anchor.zone),
): DateTime {
  const last = item.lastBilledTo === null ? null : at(item.lastBilledTo);
  const before = terms.beforePause;
  if (before) {
    const from = last && last > before.begin ? last : before.begin;
    if (from < before.until) return from;
  }
  return last && last > terms.begin ? last : terms.begin;
}

/** The period of the cycle counted from `anchor` that `cursor` falls in, from `cursor`, cut at `stop`. */
function periodAt(terms: ItemTerms, anchor: DateTime, cursor: DateTime, stop: DateTime | null): Omit<BillingPeriod, 'billDate'> {
  const p = periodContaining(anchor, terms.interval, terms.alignment, cursor);
  const aligned = p.index === 0 && terms.alignment.type !== 'anniversary' && (terms.interval.unit === 'M' || terms.interval.unit === 'Y');
  const fullStart = aligned ? subtractInterval(p.end, terms.interval) : p.start;
  const start = cursor > p.start ? cursor : p.start;
  const end = stop && stop < p.end ? stop : p.end;
  return { start, end, fullStart, fullEnd: p.end };
}

/**
 * The period that unbilled time starting at `cursor` falls in; undefined when the item has stopped by
 * then. A restarted item's time before its pause is billed in its earlier periods, cut at the pause,
 * on the restart date; time from the pause to the restart is never billed.
 */
export function periodFrom(terms: ItemTerms, cursor: DateTime): BillingPeriod | undefined {
  if (terms.end && cursor >= terms.end) return undefined;
  const before = terms.beforePause;
  if (before && cursor < before.until) {
    const stop = terms.end && terms.end < before.until ? terms.end : before.until;
    const p = periodAt(terms, before.anchor, cursor, stop);
    return { start: p.start, end: p.end, billDate: before.restart, fullStart: p.fullStart, fullEnd: p.fullEnd };
  }
  const p = periodAt(terms, terms.anchor, cursor < terms.begin ? terms.begin : cursor, terms.end);
  if (terms.end && p.start >= terms.end) return undefined;
  return { start: p.start, end: p.end, billDate: terms.inAdvance ? p.start : p.end, fullStart: p.fullStart, fullEnd: p.fullEnd };
}

/**
 * The next billing date of an item: the billing date of its first unbilled period. When its periods
 * have ended, an item that still has a quantity change to settle (`settles`, see `awaitsSettlement`)
 * is billed once more at the end of its last billed period; otherwise null: nothing is left to bill.
 */
export function nextBillingDate(terms: ItemTerms, cursor: DateTime, settles = false): string | null {
  const p = periodFrom(terms, cursor);
  if (p) return toIso(p.billDate);
  return settles ? toIso(cursor) : null;
}

/**
 * Whether a flat fee paid in advance with `proRata` owes the difference of a quantity change made
 * within its last billed period after that period was billed. While the item goes on, the next
 * period's invoice settles it; when its periods have ended (cancellation, billing end, termination),
 * an invoice at the end of the last billed period does. Settled once an invoice dated after the
 * change has billed the item (`lastBilledAt`).
 */
export function awaitsSettlement(
  item: Pick<ItemRecord, 'lastBilledAt' | 'lastBilledFrom' | 'lastBilledTo'>,
  plan: { payInAdvance: boolean; proRata: boolean },
  changes: readonly QuantityChange[],
): boolean {
  if (!plan.payInAdvance || !plan.proRata || item.lastBilledAt === null || item.lastBilledFrom === null || item.lastBilledTo === null) return false;
  const from = Date.parse(item.lastBilledFrom);
  const to = Date.parse(item.lastBilledTo);
  const billed = Date.parse(item.lastBilledAt);
  return changes.some((c) => {
    const t = Date.parse(c.changedAt);
    return t > from && t < to && t >= billed;
  });
}

/** Whole calendar days between two instants on the wall clock (the first day counted, the last not). */
export function calendarDays(from: DateTime, to: DateTime): number {
  return Math.round(to.startOf('day').diff(from.startOf('day'), 'days').days);
}

/**
 * The share of its aligned period a partial period is (`proRata`): days used / days of the aligned
 * period; undefined for a whole period. `from` and `to` narrow it to a part of the period (the days
 * one quantity held).
 */
export function proRataShare(p: BillingPeriod, from: DateTime = p.start, to: DateTime = p.end): { num: bigint; den: bigint; days: number; of: number } | undefined {
  const days = calendarDays(from, to);
  const of = calendarDays(p.fullStart, p.fullEnd);
  if (days >= of || of <= 0) return undefined;
  return { num: BigInt(days), den: BigInt(of), days, of };
}
