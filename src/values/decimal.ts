/**
 * Exact decimals: the one arithmetic of the server for money, quantities and tax rates (CONTRACT
 * section 8, "no binary floating point anywhere in money"). A decimal is a BigInt count of 10^-scale
 * units (12.50 is 1250 units of 10^-2), so sums and products are exact whatever their size; a
 * division is the only place digits are lost, and it rounds once, half-up (halves away from zero).
 *
 * Numbers reach the server as JSON numbers, i.e. binary doubles. A double's shortest decimal text
 * (`String(12.5)` = "12.5") is exactly what the caller wrote as long as that has at most 15 significant
 * digits, so a number is read from that text, digit by digit; nothing multiplies or divides a double.
 * Going back to the wire, a decimal becomes the double its canonical text denotes (`Number("12.5")`),
 * which is again exact for up to 15 significant digits.
 */

/** A decimal number: `units` x 10^-`scale` (12.50 is { units: 1250n, scale: 2 }). */
export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

/** Significant digits a JSON number carries exactly: any decimal with at most this many survives the round trip through a double. */
export const NUMBER_DIGITS = 15;

const TEXT = /^(-?)(\d+)(?:\.(\d+))?$/;

/** `units` x 10^-`scale`. */
export function decimal(units: bigint | number, scale = 0): Decimal {
  if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`scale must be a whole number >= 0 (got ${scale})`);
  if (typeof units === 'number' && !Number.isSafeInteger(units)) throw new RangeError(`units must be a safe integer (got ${units})`);
  return { units: BigInt(units), scale };
}

/**
 * A decimal written with digits, an optional decimal point followed by digits, and an optional
 * leading minus (`"12.5"`, `"-0.001"`, `"007"`); undefined for anything else (exponents, a plus sign,
 * blanks, `"12."`, `".5"`, `"1,5"`). Trailing fractional zeros are kept in the scale (`"12.50"` has scale 2).
 */
export function parseDecimal(text: string): Decimal | undefined {
  const m = TEXT.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const magnitude = BigInt(`${m[2]}${fraction}`);
  return { units: m[1] ? -magnitude : magnitude, scale: fraction.length };
}

export type NumberParse =
  | { ok: true; value: Decimal; text: string }
  | { ok: false; reason: 'not_finite' | 'exponent' | 'too_many_digits'; text: string };

/**
 * The decimal a JSON number stands for, read from its shortest text. Refused: NaN and Infinity,
 * numbers whose shortest text has an exponent (from 1e21 up, and below 1e-6), and numbers of more than
 * 15 significant digits, which a double cannot carry exactly (send those as decimal strings where a
 * field takes strings).
 */
export function decimalOfNumber(value: number): NumberParse {
  if (!Number.isFinite(value)) return { ok: false, reason: 'not_finite', text: String(value) };
  const text = String(value);
  if (/e/i.test(text)) return { ok: false, reason: 'exponent', text };
  if (text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').length > NUMBER_DIGITS) return { ok: false, reason: 'too_many_digits', text };
  return { ok: true, value: parseDecimal(text) as Decimal, text };
}

const TEN = 10n;
const pow10 = (n: number): bigint => TEN ** BigInt(n);

/** Fractional digits the value needs (trailing zeros do not count): 12.50 needs 1, 3.00 needs 0. */
export function fractionDigits(d: Decimal): number {
  let { units, scale } = d;
  while (scale > 0 && units % TEN === 0n) {
    units /= TEN;
    scale -= 1;
  }
  return scale;
}

/** The value as a count of 10^-`scale` units, or undefined when that would drop digits (12.345 at scale 2). */
export function unitsAt(d: Decimal, scale: number): bigint | undefined {
  if (scale >= d.scale) return d.units * pow10(scale - d.scale);
  const divisor = pow10(d.scale - scale);
  return d.units % divisor === 0n ? d.units / divisor : undefined;
}

/** n / d rounded to the nearest integer, halves away from zero (half-up on the magnitude): 2.5 → 3, -2.5 → -3, 2.4 → 2. */
export function divideRounded(n: bigint, d: bigint): bigint {
  if (d === 0n) throw new RangeError('division by zero');
  const negative = n < 0n !== d < 0n;
  const an = n < 0n ? -n : n;
  const ad = d < 0n ? -d : d;
  const q = (2n * an + ad) / (2n * ad);
  return negative ? -q : q;
}

/** The value rounded half-up (halves away from zero) to `scale` fractional digits, as a count of 10^-`scale` units. */
export function roundedUnits(d: Decimal, scale: number): bigint {
  return scale >= d.scale ? d.units * pow10(scale - d.scale) : divideRounded(d.units, pow10(d.scale - scale));
}

/** a + b, exactly (at the larger of the two scales). */
export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: (unitsAt(a, scale) as bigint) + (unitsAt(b, scale) as bigint), scale };
}

/** a - b, exactly. */
export function subtract(a: Decimal, b: Decimal): Decimal {
  return add(a, { units: -b.units, scale: b.scale });
}

/** a x b, exactly (at the sum of the two scales). */
export function multiply(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** -1, 0 or 1 as a is below, equal to or above b. */
export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = unitsAt(a, scale) as bigint;
  const y = unitsAt(b, scale) as bigint;
  return x < y ? -1 : x > y ? 1 : 0;
}

function digitsOf(units: bigint, scale: number): { sign: string; whole: string; fraction: string } {
  const magnitude = units < 0n ? -units : units;
  const text = magnitude.toString().padStart(scale + 1, '0');
  return {
    sign: units < 0n ? '-' : '',
    whole: text.slice(0, text.length - scale),
    fraction: scale ? text.slice(text.length - scale) : '',
  };
}

/** Canonical text: no trailing fractional zeros, no decimal point for whole numbers, no "-0" ("12.5", "3", "-0.001"). */
export function formatDecimal(d: Decimal): string {
  const { sign, whole, fraction } = digitsOf(d.units, d.scale);
  const trimmed = fraction.replace(/0+$/, '');
  return `${sign}${whole}${trimmed ? `.${trimmed}` : ''}`;
}

/**
 * Text with exactly `digits` fractional digits, rounded half-up when the value has more ("49.90" for
 * 49.9 at 2 digits, "4900" at 0); `group` separates thousands of the whole part ("4,900").
 */
export function formatFixed(d: Decimal, digits: number, group = ''): string {
  const { sign, whole, fraction } = digitsOf(roundedUnits(d, digits), digits);
  const grouped = group ? whole.replace(/\B(?=(\d{3})+$)/g, group) : whole;
  return `${sign}${grouped}${digits ? `.${fraction}` : ''}`;
}

/** The JSON number of a decimal (the double its canonical text denotes): exact for up to 15 significant digits. */
export function toNumber(d: Decimal): number {
  return Number(formatDecimal(d));
}

/** A stored exact decimal text of major units as the wire's JSON number (exact up to 15 significant digits). */
export function numberOfDecimalText(text: string): number {
  const d = parseDecimal(text);
  if (!d) throw new RangeError(`not a decimal: ${text}`);
  return toNumber(d);
}
