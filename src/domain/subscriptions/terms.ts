/** Contract terms of a subscription: its periods, and the term ends a cancellation can still reach. */
import type { DateTime } from 'luxon';
import { invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Period } from '../../schemas/subscriptions.js';
import type { PeriodRecord, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import { parseInterval, termsEndingAfter, toIso, type Interval } from '../dates.js';

export interface PeriodInput {
  contractPeriod: string;
  cancellationPeriod: string;
}

export function toPeriods(records: PeriodRecord[]): Period[] {
  return records.map((p) => ({ ...p, contractPeriodCount: parseInterval(p.contractPeriod).count }));
}

export function intervalsOf(records: readonly PeriodInput[]): Array<{ contractPeriod: Interval; cancellationPeriod: Interval }> {
  return records.map((p) => ({ contractPeriod: parseInterval(p.contractPeriod), cancellationPeriod: parseInterval(p.cancellationPeriod) }));
}

/**
 * Whether a cancellation made at `now` falls in the subscription's trial: it then takes effect by
 * `trialEndsOn`, without cancellation period (`cancel_subscription`), and `trialEndsOn` is the date
 * `nextPossibleCancellationDate` offers.
 */
export function cancelsInTrial(record: Pick<SubscriptionRecord, 'trialEndsOn'>, now: Date): boolean {
  return record.trialEndsOn !== null && record.trialEndsOn > now.toISOString();
}

/** At most this many terms are looked at for reachable ends (a cancellation date decades ahead). */
const MAX_TERMS = 1000;

/** Term ends that a cancellation can still reach as of `now` (the cancellation period before each end): the next three, or up to `until`. */
export function reachableTermEnds(start: DateTime, periods: readonly PeriodInput[], now: DateTime, until?: DateTime): DateTime[] {
  const out: DateTime[] = [];
  let seen = 0;
  for (const term of termsEndingAfter(start, intervalsOf(periods), now)) {
    const c = term.cancellationPeriod;
    const noticeBy = term.end.minus({ [{ D: 'days', W: 'weeks', M: 'months', Y: 'years' }[c.unit]]: c.count });
    if (noticeBy >= now) out.push(term.end);
    if (until ? term.end >= until : out.length === 3) break;
    if (++seen === MAX_TERMS) break;
  }
  return out;
}

/**
 * How a refusal names the date asked for: its field, whose terms it must end (`cancel_subscription`:
 * the subscription's, said by default), and whether omitting the field picks the first possible date.
 */
export interface DateAsked {
  field: string;
  whose?: string | undefined;
  omittable: boolean;
}

/**
 * `wanted` when it is a term end of `periods` (counted from `start`) that the cancellation period
 * still allows at `now`, the first such end when nothing is wanted; otherwise a 422 at the asked
 * field naming the next possible ends.
 */
export function reachableTermEnd(start: DateTime, periods: readonly PeriodInput[], now: DateTime, wanted: DateTime | undefined, asked: DateAsked): string {
  if (wanted === undefined) return toIso(reachableTermEnds(start, periods, now)[0]!);
  if (reachableTermEnds(start, periods, now, wanted).some((end) => end.toMillis() === wanted.toMillis())) return toIso(wanted);
  const options = reachableTermEnds(start, periods, now).map(toIso).join(', ');
  throw invalid(
    asked.field,
    `${asked.field} must be a contract term end${asked.whose ? ` of ${asked.whose}` : ''} that the cancellation period still allows; the next possible dates are ${options}${asked.omittable ? ` (or omit ${asked.field} for the first of them)` : ''}`,
    'not_possible',
  );
}

export function newPeriods(input: readonly PeriodInput[], at: string, previous: readonly PeriodRecord[] = []): PeriodRecord[] {
  return input.map((p, i) => {
    const same = previous[i];
    if (same && same.contractPeriod === p.contractPeriod && same.cancellationPeriod === p.cancellationPeriod) return same;
    return { id: newId(), contractPeriod: p.contractPeriod, cancellationPeriod: p.cancellationPeriod, createdAt: at, updatedAt: at };
  });
}
