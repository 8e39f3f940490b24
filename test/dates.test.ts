import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { addInterval, boundary, parseInterval, periodContaining, termsAfter, toIso, zoned, type Alignment } from '../src/domain/dates.js';

const BERLIN = 'Europe/Berlin';
const at = (iso: string, tz = BERLIN) => zoned(iso, tz);
const anniversary: Alignment = { type: 'anniversary' };
const endOfMonth: Alignment = { type: 'end_of_month' };

describe('intervals', () => {
  it.each([
    ['1M', { count: 1, unit: 'M' }],
    ['12M', { count: 12, unit: 'M' }],
    ['2W', { count: 2, unit: 'W' }],
    ['1Y', { count: 1, unit: 'Y' }],
    ['0D', { count: 0, unit: 'D' }],
  ])('parses %s', (text, expected) => expect(parseInterval(text)).toEqual(expected));

  it.each(['1m', 'M', '01M', '1H', '1000D', ''])('rejects %s', (text) => expect(() => parseInterval(text)).toThrow());
});

describe('month ends, February and leap years (anniversary billing from the anchor)', () => {
  it.each([
    // start, k, expected local date of boundary k
    ['2026-01-31T00:00:00', 1, '2026-02-28'],
    ['2026-01-31T00:00:00', 2, '2026-03-31'],
    ['2026-01-31T00:00:00', 3, '2026-04-30'],
    ['2026-01-31T00:00:00', 4, '2026-05-31'],
    ['2028-01-31T00:00:00', 1, '2028-02-29'],
    ['2028-02-29T00:00:00', 12, '2029-02-28'],
    ['2028-02-29T00:00:00', 48, '2032-02-29'],
    ['2026-08-30T00:00:00', 6, '2027-02-28'],
  ])('%s + %i months = %s', (start, k, expected) => {
    const b = boundary(at(start), parseInterval('1M'), anniversary, k);
    expect(b.toISODate()).toBe(expected);
  });

  it('a yearly interval from Feb 29 lands on Feb 28 in common years and Feb 29 in leap years', () => {
    const start = at('2024-02-29T12:00:00');
    expect(boundary(start, parseInterval('1Y'), anniversary, 1).toISODate()).toBe('2025-02-28');
    expect(boundary(start, parseInterval('1Y'), anniversary, 4).toISODate()).toBe('2028-02-29');
  });
});

describe('end_of_month alignment in the customer time zone', () => {
  it('the first period runs to the end of the month, the next ones are whole months', () => {
    const start = at('2026-01-15T09:30:00');
    const iv = parseInterval('1M');
    expect(toIso(boundary(start, iv, endOfMonth, 1))).toBe('2026-01-31T23:00:00.000Z');
    expect(toIso(boundary(start, iv, endOfMonth, 2))).toBe('2026-02-28T23:00:00.000Z');
    // March has the change to summer time: midnight of April 1st in Berlin is 22:00 UTC
    expect(toIso(boundary(start, iv, endOfMonth, 3))).toBe('2026-03-31T22:00:00.000Z');
  });

  it('month ends are local: the same instant is in different months in Berlin and New York', () => {
    const instant = '2026-01-31T23:30:00Z';
    expect(boundary(zoned(instant, BERLIN), parseInterval('1M'), endOfMonth, 1).toISODate()).toBe('2026-03-01');
    expect(boundary(zoned(instant, 'America/New_York'), parseInterval('1M'), endOfMonth, 1).toISODate()).toBe('2026-02-01');
  });

  it('custom_day boundaries fall on that day at midnight', () => {
    const start = at('2026-01-20T10:00:00');
    const b1 = boundary(start, parseInterval('1M'), { type: 'custom_day', customDay: 15 }, 1);
    expect(b1.toISO()).toBe('2026-02-15T00:00:00.000+01:00');
    const b0 = boundary(at('2026-01-10T10:00:00'), parseInterval('1M'), { type: 'custom_day', customDay: 15 }, 1);
    expect(b0.toISODate()).toBe('2026-01-15');
  });
});

describe('daylight saving time', () => {
  it('a daily interval keeps the wall-clock time across the spring change (23 h day)', () => {
    const start = at('2026-03-28T10:00:00');
    const next = addInterval(start, parseInterval('1D'));
    expect(next.toISO()).toBe('2026-03-29T10:00:00.000+02:00');
    expect(next.diff(start, 'hours').hours).toBe(23);
  });

  it('a monthly boundary across the autumn change keeps local midnight', () => {
    const start = at('2026-10-01T00:00:00');
    const next = addInterval(start, parseInterval('1M'));
    expect(next.toISO()).toBe('2026-11-01T00:00:00.000+01:00');
    expect(toIso(next)).toBe('2026-10-31T23:00:00.000Z');
  });
});

describe('periodContaining', () => {
  it('finds the period around an instant, including at a boundary instant', () => {
    const start = at('2026-01-31T00:00:00');
    const iv = parseInterval('1M');
    const p = periodContaining(start, iv, anniversary, at('2026-03-15T00:00:00'));
    expect([p.start.toISODate(), p.end.toISODate(), p.index]).toEqual(['2026-02-28', '2026-03-31', 1]);
    const onBoundary = periodContaining(start, iv, anniversary, at('2026-03-31T00:00:00'));
    expect(onBoundary.start.toISODate()).toBe('2026-03-31');
    const far = periodContaining(start, iv, anniversary, at('2036-07-04T00:00:00'));
    expect([far.start.toISODate(), far.end.toISODate()]).toEqual(['2036-06-30', '2036-07-31']);
  });
});

describe('contract terms', () => {
  const periods = (...p: Array<[string, string]>) =>
    p.map(([c, n]) => ({ contractPeriod: parseInterval(c), cancellationPeriod: parseInterval(n) }));

  it('the first period is the initial term and the last repeats', () => {
    const terms = termsAfter(at('2026-01-31T00:00:00'), periods(['12M', '3M'], ['1M', '1M']), at('2026-01-31T00:00:00'), 4);
    expect(terms.map((t) => t.end.toISODate())).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30']);
    expect(terms[0]!.cancellationPeriod).toEqual({ count: 3, unit: 'M' });
  });

  it('skips terms that ended before the given instant', () => {
    const terms = termsAfter(at('2020-01-01T00:00:00'), periods(['1Y', '1M']), at('2026-06-01T00:00:00'), 2);
    expect(terms.map((t) => t.end.toISODate())).toEqual(['2027-01-01', '2028-01-01']);
  });

  it('jumps to the same terms as stepping every term from the start (random starts, periods, zones and instants)', () => {
    const units = ['D', 'W', 'M', 'Y'] as const;
    const interval = fc.tuple(fc.integer({ min: 1, max: 24 }), fc.constantFrom(...units)).map(([n, u]) => `${n}${u}`);
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2010-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') }),
        fc.integer({ min: 0, max: 20 * 366 * 86_400_000 }),
        fc.array(fc.tuple(interval, interval), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(BERLIN, 'America/New_York', 'Pacific/Chatham', 'UTC'),
        fc.integer({ min: 1, max: 4 }),
        (startMs, laterMs, p, zone, limit) => {
          const start = at(new Date(startMs).toISOString(), zone);
          const after = at(new Date(startMs + laterMs).toISOString(), zone);
          const ps = periods(...p);
          // Every term from the start, each renewal end counted from the renewal's first start.
          const stepped: string[] = [];
          let termStart = start;
          for (const q of ps.slice(0, -1)) {
            termStart = addInterval(termStart, q.contractPeriod);
            if (termStart > after) stepped.push(toIso(termStart));
          }
          for (let k = 1; stepped.length < limit; k++) {
            const end = addInterval(termStart, ps[ps.length - 1]!.contractPeriod, k);
            if (end > after) stepped.push(toIso(end));
          }
          expect(termsAfter(start, ps, after, limit).map((t) => toIso(t.end))).toEqual(stepped.slice(0, limit));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('addInterval steps on the wall clock exactly as Luxon does', () => {
  it('equals DateTime#plus for random instants, zones, units and counts (DST gaps and overlaps, month ends)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham', 'UTC', 'America/Santiago'];
    const keys = { D: 'days', W: 'weeks', M: 'months', Y: 'years' } as const;
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2040-01-01T00:00:00Z') }),
        fc.constantFrom(...zones),
        fc.constantFrom('D', 'W', 'M', 'Y'),
        fc.integer({ min: -40, max: 40 }),
        (ms, zone, unit, count) => {
          const start = zoned(new Date(ms), zone);
          const ours = addInterval(start, { count: 1, unit: unit as 'D' | 'W' | 'M' | 'Y' }, count);
          const luxon = start.plus({ [keys[unit as 'D']]: count });
          expect(ours.toMillis()).toBe(luxon.toMillis());
          expect(ours.zoneName).toBe(zone);
        },
      ),
      { seed: 20261123, numRuns: 3000 },
    );
  });
});
