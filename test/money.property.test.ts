import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  add,
  compare,
  decimal,
  decimalOfNumber,
  type Decimal,
  formatDecimal,
  formatFixed,
  fractionDigits,
  multiply,
  parseDecimal,
  roundedUnits,
  subtract,
  unitsAt,
} from '../src/values/decimal.js';
import { formatMoney, MAX_MINOR, minorDigits, parseAmount, toMajor } from '../src/values/money.js';
import { splitAmount } from '../src/domain/paymentPlans.js';
import { formatQuantity, MAX_QUANTITY_MICROS, microsOfNumber, numberOfMicros, parseQuantity } from '../src/domain/quantity.js';

/**
 * Property-based tests of the exact decimal arithmetic, money per currency, quantities and payment-plan
 * splitting. Seeded and bounded: a failure prints its seed and counterexample and reproduces as is.
 */
const SEED = 20_260_116;
const RUNS = { seed: SEED, numRuns: 400 };

const pow10 = (n: number) => 10n ** BigInt(n);
const units = fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n });
const scale = fc.integer({ min: 0, max: 12 });
const dec = fc.tuple(units, scale).map(([u, s]): Decimal => decimal(u, s));

/** The units of `d` at the finer scale `s` (s >= d.scale): the BigInt reference the decimal arithmetic is checked against. */
const over = (d: Decimal, s: number) => d.units * pow10(s - d.scale);

describe('decimal module', () => {
  it('parse and format round trip: the canonical text reads back to the same value and is a fixed point', () => {
    fc.assert(
      fc.property(dec, (d) => {
        const text = formatDecimal(d);
        const back = parseDecimal(text) as Decimal;
        expect(compare(back, d)).toBe(0);
        expect(formatDecimal(back)).toBe(text);
        expect(text).not.toMatch(/\.\d*0$|\.$|^-0$|^-?0\d/);
        expect(back.scale).toBe(fractionDigits(d));
        // with exactly d.scale digits, the text keeps the very units and scale
        expect(parseDecimal(formatFixed(d, d.scale))).toEqual(d);
      }),
      RUNS,
    );
  });

  it('a JSON number of at most 15 significant digits is read exactly as the decimal it was written as', () => {
    const written = fc.tuple(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 6 }));
    fc.assert(
      fc.property(written, ([u, s]) => {
        const d = decimal(u, s);
        const parsed = decimalOfNumber(Number(formatDecimal(d)));
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(compare(parsed.value, d)).toBe(0);
      }),
      RUNS,
    );
  });

  it('addition, subtraction and multiplication are exact, checked against BigInt arithmetic', () => {
    fc.assert(
      fc.property(dec, dec, (a, b) => {
        const s = a.scale + b.scale;
        const sum = add(a, b);
        expect(sum.scale).toBe(Math.max(a.scale, b.scale));
        expect(unitsAt(sum, s)).toBe(over(a, s) + over(b, s));
        expect(unitsAt(subtract(a, b), s)).toBe(over(a, s) - over(b, s));
        const product = multiply(a, b);
        expect(product.scale).toBe(s);
        expect(product.units).toBe(a.units * b.units);
        expect(compare(subtract(sum, b), a)).toBe(0);
      }),
      RUNS,
    );
  });

  it('rounds half-up (halves away from zero) to the nearest unit of the target scale', () => {
    fc.assert(
      fc.property(dec, fc.integer({ min: 0, max: 12 }), (d, target) => {
        const r = roundedUnits(d, target);
        // compare at the finer scale: |d - r| <= half a unit, and a tie goes away from zero
        const s = Math.max(d.scale, target);
        const diff = over(d, s) - r * pow10(s - target);
        const half = target >= d.scale ? 0n : pow10(s - target) / 2n;
        const abs = diff < 0n ? -diff : diff;
        expect(abs <= half).toBe(true);
        // a tie (exactly half a unit off) is rounded away from zero: the rounded magnitude is the larger one
        if (half !== 0n && abs === half) expect(d.units > 0n ? diff < 0n : diff > 0n).toBe(true);
        if (target >= d.scale) expect(r).toBe(unitsAt(d, target));
      }),
      RUNS,
    );
  });

  it('formats with exactly the requested digits, grouped, and reads back to the rounded value', () => {
    fc.assert(
      fc.property(dec, fc.integer({ min: 0, max: 4 }), (d, digits) => {
        const text = formatFixed(d, digits, ',');
        expect(text).toMatch(digits ? new RegExp(`^-?\\d{1,3}(,\\d{3})*\\.\\d{${digits}}$`) : /^-?\d{1,3}(,\d{3})*$/);
        expect(unitsAt(parseDecimal(text.replaceAll(',', '')) as Decimal, digits)).toBe(roundedUnits(d, digits));
      }),
      RUNS,
    );
  });
});

describe('money per currency', () => {
  const currency = fc.constantFrom('JPY', 'KWD', 'EUR', 'USD', 'CLF', 'BHD', 'ISK');
  const minor = fc.integer({ min: 0, max: MAX_MINOR });

  it('an amount of major units converts to exactly its minor units and back, for every currency', () => {
    fc.assert(
      fc.property(currency, minor, (code, m) => {
        const major = toMajor(m, code);
        expect(parseAmount(major, code)).toEqual({ ok: true, minor: m });
        expect(formatDecimal(decimal(m, minorDigits(code)))).toBe(String(major));
      }),
      RUNS,
    );
  });

  it('an amount with one digit more than the currency minor unit is refused, naming the count allowed', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 1, max: 9 }), (code, whole, last) => {
        const digits = minorDigits(code);
        const amount = Number(formatDecimal(decimal(BigInt(whole) * 10n + BigInt(last), digits + 1)));
        const parsed = parseAmount(amount, code, 'price.amount');
        expect(parsed.ok).toBe(false);
        if (!parsed.ok) expect(parsed.message).toContain(`price.amount may have at most ${digits} fractional digits for ${code}`);
      }),
      RUNS,
    );
  });

  it('formats minor units with the currency digits: exactly that many after the point, grouped thousands', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: -MAX_MINOR, max: MAX_MINOR }), (code, m) => {
        const digits = minorDigits(code);
        const text = formatMoney(m, code);
        const number = text.replace(/^-/, '').replace(/^[^\d]+/, '');
        expect(number).toMatch(digits ? new RegExp(`^\\d{1,3}(,\\d{3})*\\.\\d{${digits}}$`) : /^\d{1,3}(,\d{3})*$/);
        expect(unitsAt(parseDecimal(`${m < 0 ? '-' : ''}${number.replaceAll(',', '')}`) as Decimal, digits)).toBe(BigInt(m));
      }),
      RUNS,
    );
  });
});

describe('quantities', () => {
  const micros = fc.bigInt({ min: 0n, max: MAX_QUANTITY_MICROS });

  it('canonical form: at most 6 digits, no trailing zeros, and every spelling parses to the same micro-units', () => {
    fc.assert(
      fc.property(micros, fc.integer({ min: 0, max: 6 }), (m, pad) => {
        const text = formatQuantity(m);
        expect(text).toMatch(/^(0|[1-9]\d*)(\.\d{0,5}[1-9])?$/);
        expect(parseQuantity(text)).toEqual({ ok: true, micros: m });
        const [whole, fraction = ''] = text.split('.');
        const padded = `00${whole}.${fraction.padEnd(Math.min(6, fraction.length + pad), '0')}`.replace(/\.$/, '');
        expect(parseQuantity(padded)).toEqual({ ok: true, micros: m });
      }),
      RUNS,
    );
  });

  it('a 7th fractional digit is refused', () => {
    fc.assert(
      fc.property(micros, fc.integer({ min: 1, max: 9 }), (m, digit) => {
        const [whole, fraction = ''] = formatQuantity(m).split('.');
        const parsed = parseQuantity(`${whole}.${fraction.padEnd(6, '0')}${digit}`);
        expect(parsed.ok).toBe(false);
      }),
      RUNS,
    );
  });

  it('a quantity given as a JSON number (plan charges, items) round-trips through micro-units', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999_999 }), (m) => {
        const n = numberOfMicros(m);
        expect(microsOfNumber(n)).toBe(m);
        expect(String(n)).toBe(formatQuantity(BigInt(m)));
      }),
      RUNS,
    );
  });
});

describe('payment-plan splitting', () => {
  const plan = fc.integer({ min: 1, max: 999_999_999_999 }).chain((total) => fc.tuple(fc.constant(total), fc.integer({ min: 1, max: Math.min(120, total) })));

  it('installments sum to the amount, are all > 0, differ by at most one unit, the remainder on the last', () => {
    fc.assert(
      fc.property(plan, ([total, count]) => {
        const amounts = splitAmount(total, count);
        expect(amounts).toHaveLength(count);
        expect(amounts.reduce((a, b) => a + b, 0)).toBe(total);
        expect(amounts.every((a) => Number.isSafeInteger(a) && a > 0)).toBe(true);
        const min = Math.min(...amounts);
        const max = Math.max(...amounts);
        expect(max - min).toBeLessThanOrEqual(1);
        // the extra units sit at the end: never a larger installment before a smaller one
        expect(amounts.every((a, i) => i === 0 || a >= (amounts[i - 1] as number))).toBe(true);
        expect(amounts[count - 1]).toBe(max);
        expect(amounts.filter((a) => a === min + 1).length).toBe(max === min ? 0 : total % count);
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it('small amounts with large remainders, exhaustively up to 200 minor units', () => {
    const wrong: string[] = [];
    for (let total = 1; total <= 200; total++) {
      for (let count = 1; count <= Math.min(total, 120); count++) {
        const amounts = splitAmount(total, count);
        if (Math.max(...amounts) - Math.min(...amounts) > 1 || amounts.reduce((a, b) => a + b, 0) !== total) wrong.push(`${total}/${count}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
