import { describe, expect, it } from 'vitest';
import {
  averageMicros,
  canonicalQuantity,
  divideHalfUp,
  formatQuantity,
  MAX_QUANTITY_MICROS,
  parseQuantity,
  timeWeightedMicros,
  toMicros,
} from '../src/domain/quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['12.5', 12_500_000n],
    ['12.500000', 12_500_000n],
    ['3', 3_000_000n],
    ['0', 0n],
    ['0.000001', 1n],
    ['007.25', 7_250_000n],
    ['999999999999.999999', MAX_QUANTITY_MICROS],
    [12.5, 12_500_000n],
    [3, 3_000_000n],
    [0.000001, 1n],
    [123456789.123456, 123_456_789_123_456n],
    [-0, 0n],
  ])('accepts %j as %s micro-units', (input, micros) => {
    expect(parseQuantity(input)).toEqual({ ok: true, micros });
  });

  it.each([
    // The rule itself, true for every caller (an invoice line says it needs more than 0 on its own).
    ['-1', /^must not be negative \(got -1\)$/],
    [-0.5, /^must not be negative \(got -0\.5\)$/],
    ['1.1234567', /at most 6 fractional digits/],
    [1.1234567, /at most 6 fractional digits/],
    ['1.2300000', /at most 6 fractional digits/],
    ['1e3', /decimal number written with digits/],
    [1e21, /without an exponent/],
    [1e-7, /without an exponent/],
    [Number.NaN, /NaN and Infinity/],
    [Number.POSITIVE_INFINITY, /NaN and Infinity/],
    ['', /decimal number written with digits/],
    ['12.', /decimal number written with digits/],
    ['.5', /decimal number written with digits/],
    [' 1', /decimal number written with digits/],
    ['+1', /decimal number written with digits/],
    ['1,5', /decimal number written with digits/],
    ['1000000000000', /below 10\^12/],
    [1e12, /below 10\^12/],
    [123456789012.1234, /more than 15 significant digits/],
  ])('rejects %j', (input, message) => {
    const parsed = parseQuantity(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});

describe('formatQuantity and canonicalQuantity', () => {
  it.each([
    [12_500_000n, '12.5'],
    [3_000_000n, '3'],
    [1n, '0.000001'],
    [0n, '0'],
    [10_000_000_000_100_000n, '10000000000.1'],
    [MAX_QUANTITY_MICROS * 10n, '9999999999999.99999'],
  ])('%s micro-units are %s', (micros, text) => {
    expect(formatQuantity(micros)).toBe(text);
  });

  it('gives one canonical string for every spelling of a value, and toMicros reads it back', () => {
    for (const v of ['12.50', '12.500000', 12.5, '0012.5']) expect(canonicalQuantity(v)).toBe('12.5');
    expect(toMicros('12.5')).toBe(12_500_000n);
    expect(() => toMicros('-1')).toThrow(RangeError);
    expect(() => formatQuantity(-1n)).toThrow(RangeError);
  });
});

describe('averages, rounded half-up to the millionth', () => {
  it.each([
    [10n, 4n, 3n], // 2.5 -> 3
    [9n, 4n, 2n], // 2.25 -> 2
    [11n, 4n, 3n], // 2.75 -> 3
    [7n, 2n, 4n], // 3.5 -> 4
    [13_500_002n, 4n, 3_375_001n], // 3.3750005 -> 3.375001
    [13_500_001n, 4n, 3_375_000n], // 3.37500025 -> 3.375
    [0n, 0n, 0n],
    [-10n, 4n, -3n], // usage events may be negative: -2.5 -> -3, half away from zero
    [-9n, 4n, -2n],
  ])('sum %s over %s values averages %s', (sum, count, avg) => {
    expect(averageMicros(sum, count)).toBe(avg);
  });

  it('stays exact far beyond 2^53', () => {
    const sum = MAX_QUANTITY_MICROS * 1_000_000n;
    expect(averageMicros(sum, 1_000_000n)).toBe(MAX_QUANTITY_MICROS);
    expect(averageMicros(sum + 500_000n, 1_000_000n)).toBe(MAX_QUANTITY_MICROS + 1n);
    expect(() => divideHalfUp(1n, 0n)).toThrow(RangeError);
    expect(() => divideHalfUp(-1n, 1n)).toThrow(RangeError);
  });
});

describe('timeWeightedMicros (fair billing of a recurring quantity)', () => {
  const H = 3_600_000;
  const interval = { from: 0, to: 10 * H };
  const always = { from: Number.NEGATIVE_INFINITY, to: Number.POSITIVE_INFINITY };

  it('is the carried value when nothing changes, and 0 when nothing was ever measured', () => {
    expect(timeWeightedMicros(interval, always, 5_000_000n, [])).toBe(5_000_000n);
    expect(timeWeightedMicros(interval, always, null, [])).toBe(0n);
  });

  it('weights each level by how long it held', () => {
    // 5 for 4 h, then 8 for 6 h: (20 + 48) / 10 = 6.8
    expect(timeWeightedMicros(interval, always, 5_000_000n, [{ at: 4 * H, micros: 8_000_000n }])).toBe(6_800_000n);
    // nothing until 3 h, then 2 for 7 h: 14 / 10 = 1.4
    expect(timeWeightedMicros(interval, always, null, [{ at: 3 * H, micros: 2_000_000n }])).toBe(1_400_000n);
  });

  it('takes a change on the interval start as the level from the start, and the last of equal instants', () => {
    const changes = [
      { at: 0, micros: 1_000_000n },
      { at: 0, micros: 3_000_000n },
    ];
    expect(timeWeightedMicros(interval, always, 9_000_000n, changes)).toBe(3_000_000n);
  });

  it('counts only the active part, over the whole interval', () => {
    // active from 2 h to 7 h at 10: 50 / 10 = 5
    expect(timeWeightedMicros(interval, { from: 2 * H, to: 7 * H }, 10_000_000n, [])).toBe(5_000_000n);
    // a change before the item became active sets the level it starts with
    expect(timeWeightedMicros(interval, { from: 2 * H, to: 7 * H }, null, [{ at: H, micros: 4_000_000n }])).toBe(2_000_000n);
    // changes after the item stopped do not count
    expect(timeWeightedMicros(interval, { from: 0, to: 5 * H }, 2_000_000n, [{ at: 6 * H, micros: 100_000_000n }])).toBe(1_000_000n);
    // never active in the interval
    expect(timeWeightedMicros(interval, { from: 20 * H, to: 30 * H }, 7_000_000n, [])).toBe(0n);
  });

  it('rounds half-up to the millionth', () => {
    // 1 for 1 of 3 ms: 0.333333…; 2 for 1 of 3 ms: 0.666666… -> 0.666667
    expect(timeWeightedMicros({ from: 0, to: 3 }, always, null, [{ at: 2, micros: 1_000_000n }])).toBe(333_333n);
    expect(timeWeightedMicros({ from: 0, to: 3 }, always, null, [{ at: 2, micros: 2_000_000n }])).toBe(666_667n);
    expect(() => timeWeightedMicros({ from: 1, to: 1 }, always, null, [])).toThrow(RangeError);
  });
});
