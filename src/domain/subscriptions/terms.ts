/** Contract terms of a subscription: its periods, and the term ends a cancellation can still reach. */
import type { DateTime } from 'luxon';
import { newId } from '../../ids.js';
import type { Period } from '../../schemas/subscriptions.js';
import type { PeriodRecord, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import { parseInterval, termsEndingAfter, type Interval } from '../dates.js';

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

export function newPeriods(input: readonly PeriodInput[], at: string, previous: readonly PeriodRecord[] = []): PeriodRecord[] {
  return input.map((p, i) => {
    const same = previous[i];
    if (same && same.contractPeriod === p.contractPeriod && same.cancellationPeriod === p.cancellationPeriod) return same;
    return { id: newId(), contractPeriod: p.contractPeriod, cancellationPeriod: p.cancellationPeriod, createdAt: at, updatedAt: at };
  });
}
