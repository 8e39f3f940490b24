/** Contract terms of a subscription: its periods, and the term ends a cancellation can still reach. */
import type { DateTime } from 'luxon';
import { newId } from '../../ids.js';
import type { Period } from '../../schemas/subscriptions.js';
import type { PeriodRecord } from '../../store/ports/subscriptions.js';
import { parseInterval, termsAfter, type Interval } from '../dates.js';

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


/** Term ends that a cancellation can still reach as of `now` (the cancellation period before each end). */
export function reachableTermEnds(start: DateTime, periods: readonly PeriodInput[], now: DateTime, until?: DateTime): DateTime[] {
  const out: DateTime[] = [];
  let after = now;
  for (let round = 0; round < 20 && out.length < 3; round++) {
    const terms = termsAfter(start, intervalsOf(periods), after, 50);
    for (const term of terms) {
      const c = term.cancellationPeriod;
      const noticeBy = term.end.minus({ [{ D: 'days', W: 'weeks', M: 'months', Y: 'years' }[c.unit]]: c.count });
      if (noticeBy >= now) out.push(term.end);
      if (until && term.end >= until) return out;
      if (!until && out.length === 3) return out;
    }
    after = terms[terms.length - 1]!.end;
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
