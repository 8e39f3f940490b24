import { DateTime, IANAZone, type Zone } from 'luxon';

/**
 * Calendar arithmetic for billing: intervals and contract periods (`<n>D|W|M|Y`), period boundaries
 * and month-end alignment, all computed on the wall clock of the customer's time zone (Luxon) and
 * returned as UTC instants. Repeated steps are always taken from the anchor (anchor + k·interval),
 * never by chaining, so a period starting on the 31st comes back to the 31st after a short month.
 */

export type IntervalUnit = 'D' | 'W' | 'M' | 'Y';
export interface Interval {
  count: number;
  unit: IntervalUnit;
}

export const INTERVAL_PATTERN = /^(0|[1-9]\d{0,2})([DWMY])$/;

export function parseInterval(text: string): Interval {
  const m = INTERVAL_PATTERN.exec(text);
  if (!m) throw new Error(`not an interval: ${text}`);
  return { count: Number(m[1]), unit: m[2] as IntervalUnit };
}


const HOUR_MS = 3_600_000;
/** Hours remembered per zone before its memory starts afresh (about eleven years of hours). */
const MAX_HOURS = 100_000;

/**
 * An IANA zone (equal to it: same name, same offsets) that remembers, per hour, the UTC offset that
 * holds through the whole hour. Every wall-clock step Luxon takes (`plus`, `diff`, `fromISO` with a
 * zone) asks the zone for offsets several times, and each answer is an `Intl.DateTimeFormat`
 * `formatToParts` call (10-30 µs); billing asks thousands of times a second about the same few hours.
 * An hour in which the offset changes is not remembered: each instant in it is asked as before, so the
 * answers are exactly the zone's own (tzdb never changes an offset twice within an hour).
 */
class HourlyZone extends IANAZone {
  private readonly hours = new Map<number, number | null>();

  override offset(ts: number): number {
    const hour = Math.floor(ts / HOUR_MS);
    let known = this.hours.get(hour);
    if (known === undefined) {
      if (!Number.isFinite(hour)) return super.offset(ts);
      const first = super.offset(hour * HOUR_MS);
      const last = super.offset(hour * HOUR_MS + HOUR_MS - 1);
      known = first === last && !Number.isNaN(first) ? first : null;
      if (this.hours.size >= MAX_HOURS) this.hours.clear();
      this.hours.set(hour, known);
    }
    return known ?? super.offset(ts);
  }
}

const zones = new Map<string, Zone>();

/** The IANA zone of a name (Europe/Berlin), remembering its offsets per hour; one per name for the process. */
export function zoneOf(name: string): Zone {
  let zone = zones.get(name);
  if (!zone) {
    zone = new HourlyZone(name);
    zones.set(name, zone);
  }
  return zone;
}

/** An ISO date-time with its offset (Z, +02:00): the instant is fixed, so the engine's parser reads it (much faster than Luxon's). */
const WITH_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,3})?)?(?:Z|[+-]\d\d:\d\d)$/;

/** An instant on the wall clock of a time zone given by name or as a zone. */
export function zoned(instant: string | Date, timeZone: string | Zone): DateTime {
  const zone = typeof timeZone === 'string' ? zoneOf(timeZone) : timeZone;
  const dt =
    typeof instant !== 'string'
      ? DateTime.fromJSDate(instant, { zone })
      : WITH_OFFSET.test(instant)
        ? DateTime.fromMillis(Date.parse(instant), { zone })
        : DateTime.fromISO(instant, { zone });
  if (!dt.isValid) throw new Error(`invalid instant ${String(instant)} in ${zone.name}`);
  return dt;
}

/**
 * The first and last calendar day of the period [start, end) on the wall clock of their zone: the end
 * is exclusive, so the last day is the one before the end's day, as pro rata counts days (first day
 * counted, last not); a period within one day is that day. The day before is taken from the end's
 * calendar fields (no zone arithmetic: a tenth of the cost of Luxon's `minus`; billing runs call it
 * once per line).
 */
export function periodDays(start: DateTime, end: DateTime): { first: string; last: string } {
  const first = start.toISODate() as string;
  const last = new Date(Date.UTC(end.year, end.month - 1, end.day - 1)).toISOString().slice(0, 10);
  return { first, last: last < first ? first : last };
}

/** A period as invoice lines name it: `2026-01-15 to 2026-02-14` (`periodDays` in the time zone). */
export function periodText(start: DateTime, end: DateTime): string {
  const { first, last } = periodDays(start, end);
  return `${first} to ${last}`;
}

/**
 * The period a document prints under a line's description: none when the description names it
 * already (billing runs write it there), else `periodText` in the customer's time zone.
 */
export function linePeriodNote(line: { description: string; periodStart: string | null; periodEnd: string | null }, timeZone: string): string | null {
  if (!line.periodStart || !line.periodEnd) return null;
  const text = periodText(zoned(line.periodStart, timeZone), zoned(line.periodEnd, timeZone));
  return line.description.includes(text) ? null : text;
}

/** The instant in UTC with milliseconds (2026-01-15T10:00:00.000Z), as every stored instant is written. */
export function toIso(dt: DateTime): string {
  return new Date(dt.toMillis()).toISOString();
}

/** anchor + times·interval on the wall clock; a month end that does not exist clamps (Jan 31 + 1M = Feb 28/29). */
export function addInterval(anchor: DateTime, interval: Interval, times = 1): DateTime {
  const n = interval.count * times;
  switch (interval.unit) {
    case 'D':
      return plusCalendar(anchor, 0, n);
    case 'W':
      return plusCalendar(anchor, 0, 7 * n);
    case 'M':
      return plusCalendar(anchor, n, 0);
    case 'Y':
      return plusCalendar(anchor, 12 * n, 0);
  }
}

export function subtractInterval(anchor: DateTime, interval: Interval): DateTime {
  return addInterval(anchor, interval, -1);
}

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * `dt.plus({ months, days })` on the wall clock, as Luxon computes it (months first, the day clamped
 * to the target month's length, then days; the local time kept; across an offset change the instant
 * found as Luxon's `fixOffset` finds it: the offset before the step, corrected once or twice), in
 * about a seventh of the time: billing steps through periods thousands of times a second.
 */
function plusCalendar(dt: DateTime, months: number, days: number): DateTime {
  const total = dt.year * 12 + (dt.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12 + 1;
  const local = Date.UTC(year, month - 1, Math.min(dt.day, daysInMonth(year, month)) + days, dt.hour, dt.minute, dt.second, dt.millisecond);
  const zone = dt.zone;
  const before = dt.offset;
  let ts = local - before * 60_000;
  const o2 = zone.offset(ts);
  if (o2 !== before) {
    ts -= (o2 - before) * 60_000;
    const o3 = zone.offset(ts);
    if (o3 !== o2) ts = local - Math.min(o2, o3) * 60_000;
  }
  return DateTime.fromMillis(ts, { zone });
}

export type Alignment =
  | { type: 'anniversary' }
  | { type: 'end_of_month' }
  | { type: 'custom_day'; customDay: number; customMonth?: number | null };

/**
 * The first boundary after the start of an item's billing: the start plus one interval
 * (anniversary), the start of the next calendar month (end_of_month: the first period runs to the
 * month's end), or the next `customDay` of a month at midnight (of `customMonth` for yearly intervals
 * when given). Aligned first periods may be short.
 */
export function firstBoundary(start: DateTime, interval: Interval, alignment: Alignment): DateTime {
  if (interval.unit === 'D' || interval.unit === 'W' || alignment.type === 'anniversary') {
    return addInterval(start, interval);
  }
  if (alignment.type === 'end_of_month') return start.startOf('month').plus({ months: 1 });
  if (interval.unit === 'Y' && alignment.customMonth) {
    const sameYear = start.startOf('year').set({ month: alignment.customMonth, day: alignment.customDay });
    return sameYear > start ? sameYear : sameYear.plus({ years: 1 });
  }
  const sameMonth = start.startOf('month').set({ day: alignment.customDay });
  return sameMonth > start ? sameMonth : sameMonth.plus({ months: 1 });
}

/** Boundary k (k = 0 is the start itself) of an item's billing periods. */
export function boundary(start: DateTime, interval: Interval, alignment: Alignment, k: number): DateTime {
  if (k === 0) return start;
  if (interval.unit === 'D' || interval.unit === 'W' || alignment.type === 'anniversary') return addInterval(start, interval, k);
  const first = firstBoundary(start, interval, alignment);
  return k === 1 ? first : addInterval(first, interval, k - 1);
}

/** The billing period [start, end) that contains `at` (the first one when `at` precedes the start). */
export function periodContaining(
  start: DateTime,
  interval: Interval,
  alignment: Alignment,
  at: DateTime,
): { start: DateTime; end: DateTime; index: number } {
  let k = 0;
  let from = start;
  let to = boundary(start, interval, alignment, 1);
  if (interval.unit === 'M' || interval.unit === 'Y') {
    // Jump close to the answer instead of stepping month by month through a long history.
    const months = interval.unit === 'Y' ? interval.count * 12 : interval.count;
    const apart = (at.year - to.year) * 12 + (at.month - to.month) - 1;
    const skip = Math.max(0, Math.floor(apart / months) - 1);
    if (skip > 0) {
      k = skip;
      from = boundary(start, interval, alignment, k);
      to = boundary(start, interval, alignment, k + 1);
    }
  }
  while (to <= at) {
    k += 1;
    from = to;
    to = boundary(start, interval, alignment, k + 1);
  }
  return { start: from, end: to, index: k };
}

export interface ContractTerm {
  start: DateTime;
  end: DateTime;
  contractPeriod: Interval;
  cancellationPeriod: Interval;
}

/**
 * Contract terms from the periods of a subscription: the first period is the initial term, the last
 * repeats as the renewal term (periods[0], …, periods[n-1], periods[n-1], …). The repeating term's
 * ends are taken from the start of its first occurrence, so they do not drift after a short month.
 * Yields the terms that end after `after`, in order, without end: the caller takes what it needs.
 */
export function* termsEndingAfter(
  start: DateTime,
  periods: ReadonlyArray<{ contractPeriod: Interval; cancellationPeriod: Interval }>,
  after: DateTime,
): Generator<ContractTerm, never> {
  let termStart = start;
  for (const p of periods.slice(0, -1)) {
    const end = addInterval(termStart, p.contractPeriod);
    if (end > after) yield { start: termStart, end, ...p };
    termStart = end;
  }
  const renewal = periods[periods.length - 1]!;
  const anchor = termStart;
  let k = 0;
  if (renewal.contractPeriod.unit === 'M' || renewal.contractPeriod.unit === 'Y') {
    const months = renewal.contractPeriod.count * (renewal.contractPeriod.unit === 'Y' ? 12 : 1);
    // Jump close to `after` by calendar months (at most one more than whole months apart, so two
    // terms are stepped back; a Luxon diff would cost more than the terms it saves).
    const apart = (after.year - anchor.year) * 12 + (after.month - anchor.month);
    k = Math.max(0, Math.floor(apart / months) - 2);
  }
  // A renewal term starts where the one before ended: each boundary is computed once.
  let from = addInterval(anchor, renewal.contractPeriod, k);
  for (;; k += 1) {
    const end = addInterval(anchor, renewal.contractPeriod, k + 1);
    if (end > after) yield { start: from, end, ...renewal };
    from = end;
  }
}

/** The first `limit` terms that end after `after` (see `termsEndingAfter`). */
export function termsAfter(
  start: DateTime,
  periods: ReadonlyArray<{ contractPeriod: Interval; cancellationPeriod: Interval }>,
  after: DateTime,
  limit: number,
): ContractTerm[] {
  const out: ContractTerm[] = [];
  if (limit <= 0) return out;
  for (const term of termsEndingAfter(start, periods, after)) {
    out.push(term);
    if (out.length === limit) break;
  }
  return out;
}
