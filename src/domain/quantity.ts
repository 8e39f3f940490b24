/**
 * Usage quantities, exactly. A quantity is a decimal with at most 6 fractional digits; it is stored
 * and aggregated as an integer count of millionths ("micro-units": 12.5 is 12,500,000), so SQL sums,
 * maxima and comparisons are exact, and it is rendered back in canonical form ("12.5", "3",
 * "0.000001"). Averages and time-weighted values are exact rational numbers rounded half-up to the
 * millionth with BigInt arithmetic. No binary floating point touches a quantity.
 */

import { decimal, decimalOfNumber, divideRounded, formatDecimal, parseDecimal, toNumber, unitsAt } from '../values/decimal.js';

export const QUANTITY_DIGITS = 6;
export const MICROS = 1_000_000n;
/** Values are below 10^12 (at most 999,999,999,999.999999): one value always fits a signed 64-bit integer of micro-units. */
export const MAX_QUANTITY_MICROS = 10n ** 18n - 1n;
export const MAX_QUANTITY_TEXT = '999999999999.999999';

export type QuantityParse = { ok: true; micros: bigint } | { ok: false; message: string };

/**
 * A quantity from the wire: a decimal string (`"12.5"`, `"3"`, `"0.000001"`, `"12.500000"`) or a JSON
 * number (`12.5`, turned into its shortest decimal form). Rejected, each with a message that says
 * what to send: negative values, more than 6 fractional digits, exponents, NaN or Infinity, other
 * characters, values of 10^12 or more, and numbers with more than 15 significant digits (a double
 * cannot carry them; send those as strings).
 */
export function parseQuantity(value: string | number): QuantityParse {
  let text: string;
  if (typeof value === 'number') {
    const parsed = decimalOfNumber(value);
    if (!parsed.ok) {
      if (parsed.reason === 'not_finite') return { ok: false, message: 'must be a finite decimal such as "12.5"; NaN and Infinity are not quantities' };
      if (parsed.reason === 'exponent') {
        return { ok: false, message: `must be written without an exponent (got ${parsed.text}); send it as a decimal string such as "0.000001" or "1000000"` };
      }
      return { ok: false, message: 'has more than 15 significant digits, which a JSON number cannot carry exactly; send it as a decimal string' };
    }
    text = parsed.text;
  } else {
    text = value;
  }
  if (text.startsWith('-')) return { ok: false, message: `must not be negative (got ${text})` };
  const d = parseDecimal(text);
  if (!d) {
    return { ok: false, message: `must be a decimal number written with digits and an optional decimal point, such as "12.5" or "3" (got ${JSON.stringify(text)})` };
  }
  const micros = d.scale > QUANTITY_DIGITS ? undefined : unitsAt(d, QUANTITY_DIGITS);
  if (micros === undefined) {
    return { ok: false, message: `must have at most ${QUANTITY_DIGITS} fractional digits (got ${text}); round it to the millionth` };
  }
  if (micros > MAX_QUANTITY_MICROS) return { ok: false, message: `must be below 10^12, at most ${MAX_QUANTITY_TEXT} (got ${text})` };
  return { ok: true, micros };
}

/** Micro-units of a quantity already accepted by `parseQuantity` (e.g. a canonical string). */
export function toMicros(quantity: string): bigint {
  const parsed = parseQuantity(quantity);
  if (!parsed.ok) throw new RangeError(`not a quantity: ${quantity}`);
  return parsed.micros;
}

/** Canonical decimal form: no trailing fractional zeros, no decimal point for whole numbers. */
export function formatQuantity(micros: bigint): string {
  if (micros < 0n) throw new RangeError('quantities are never negative');
  return formatDecimal(decimal(micros, QUANTITY_DIGITS));
}

/** The canonical form of a wire quantity ("12.50" and 12.5 both become "12.5"). */
export function canonicalQuantity(value: string | number): string {
  const parsed = parseQuantity(value);
  if (!parsed.ok) throw new RangeError(parsed.message);
  return formatQuantity(parsed.micros);
}

/**
 * A count given as a JSON number with at most 6 fractional digits (a plan charge's or an item's
 * quantity) in micro-units; undefined for more digits, an exponent or more than 15 significant digits.
 */
export function microsOfNumber(value: number): number | undefined {
  const parsed = decimalOfNumber(value);
  const micros = parsed.ok ? unitsAt(parsed.value, QUANTITY_DIGITS) : undefined;
  return micros === undefined ? undefined : Number(micros);
}

/** The JSON number of a count of micro-units (the inverse of `microsOfNumber`): 1500000 is 1.5. */
export function numberOfMicros(micros: number | bigint): number {
  return toNumber(decimal(micros, QUANTITY_DIGITS));
}

/** numerator / denominator rounded half-up (both non-negative, denominator > 0): quantities are never negative. */
export function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must not be negative');
  return divideRounded(numerator, denominator);
}

/**
 * Average of `count` values summing to `sumMicros`, in micro-units rounded half-up (a negative
 * average, of usage events carrying negative values, half away from zero); 0 for no values.
 */
export function averageMicros(sumMicros: bigint, count: bigint): bigint {
  if (count === 0n) return 0n;
  return sumMicros < 0n ? -divideHalfUp(-sumMicros, count) : divideHalfUp(sumMicros, count);
}

export interface Level {
  /** Instant (epoch milliseconds) from which the quantity holds. */
  at: number;
  micros: bigint;
}

/**
 * Time-weighted quantity of a recurring measurement over an interval [from, to) (fair billing):
 * `carried` holds from the start of the interval (null: nothing measured yet, i.e. 0), each change
 * holds from its instant until the next one, and only the time inside [activeFrom, activeTo) counts;
 * the sum of quantity x duration is divided by the whole interval's duration, so time the item was
 * not active is billed at nothing. Changes must come in order of their instants; a change before
 * `from` replaces the carried value. Exact, rounded half-up to the millionth.
 */
export function timeWeightedMicros(
  interval: { from: number; to: number },
  active: { from: number; to: number },
  carried: bigint | null,
  changes: Iterable<Level>,
): bigint {
  const length = BigInt(interval.to - interval.from);
  if (length <= 0n) throw new RangeError('the interval must have a positive length');
  const lo = Math.max(interval.from, active.from);
  const hi = Math.min(interval.to, active.to);
  let weighted = 0n;
  let level = carried ?? 0n;
  let since = lo;
  const close = (until: number) => {
    const end = Math.min(until, hi);
    if (end > since) weighted += level * BigInt(end - since);
    since = Math.max(since, end);
  };
  for (const change of changes) {
    if (change.at > since) close(change.at);
    level = change.micros;
  }
  close(hi);
  return divideHalfUp(weighted, length);
}
