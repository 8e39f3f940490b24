/**
 * Money per currency (CONTRACT section 8). Every currency counts in its ISO 4217 minor unit: EUR and
 * USD in cents (2 digits), JPY in yen (0), KWD in fils (3). Stored and returned amounts are integers
 * of that unit; a decimal `amount` on the wire (price plans, fixed discounts) is in major units and has
 * at most the currency's minor-unit digits. The minor units come from the ISO 4217 list as published
 * by the `currency-codes` package (ISO's own data, not CLDR's: Intl shows 0 digits for IQD or IDR
 * where ISO has 3 and 2). All arithmetic is the exact decimal arithmetic of `decimal.ts`.
 */
import isoCurrencies from 'currency-codes';
import type { Violation } from '../errors.js';
import { decimal, decimalOfNumber, divideRounded, formatFixed, fractionDigits, parseDecimal, toNumber, unitsAt } from './decimal.js';

const ISO = new Map(isoCurrencies.data.map((c) => [c.code, c.digits]));
const RUNTIME = new Set(Intl.supportedValuesOf('currency'));

/**
 * An upper-case ISO 4217 code (`EUR`; `eur` is not one): one of the ISO list, or one the runtime
 * still knows beyond it (withdrawn codes such as HRK, or codes newer than the list the package ships).
 */
export function isCurrencyCode(code: string): boolean {
  return ISO.has(code) || RUNTIME.has(code);
}

/**
 * ISO 4217 codes that are on the list but are no money an invoice can be paid in: precious metals,
 * units of account of institutions, the testing code and "no currency", each with what it is.
 */
const NOT_MONEY = new Map([
  ['XAU', 'gold'],
  ['XAG', 'silver'],
  ['XPT', 'platinum'],
  ['XPD', 'palladium'],
  ['XDR', "the IMF's special drawing right, a unit of account"],
  ['XSU', 'the SUCRE, a unit of account'],
  ['XUA', "the African Development Bank's unit of account"],
  ['XBA', 'a bond-market unit of account'],
  ['XBB', 'a bond-market unit of account'],
  ['XBC', 'a bond-market unit of account'],
  ['XBD', 'a bond-market unit of account'],
  ['XTS', 'reserved for testing'],
  ['XXX', 'the code for "no currency"'],
]);

/**
 * What a currency code that `isCurrencyCode` accepts names when it is no currency amounts can be
 * billed in (XAU: "gold"); undefined for a currency.
 */
export function notMoney(code: string): string | undefined {
  return NOT_MONEY.get(code);
}

const digitsCache = new Map<string, number>();

/**
 * Digits of the currency's minor unit: its ISO 4217 minor unit (EUR 2, JPY 0, KWD 3, CLF 4). A code the
 * ISO list does not hold (see `isCurrencyCode`) falls back to the runtime's CLDR digits.
 */
export function minorDigits(currency: string): number {
  let digits = ISO.get(currency) ?? digitsCache.get(currency);
  if (digits === undefined) {
    if (!isCurrencyCode(currency)) throw new RangeError(`not an ISO 4217 currency code: ${currency}`);
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsCache.set(currency, digits);
  }
  return digits;
}

/** Every currency code `isCurrencyCode` accepts, with the digits of its minor unit. */
export function knownCurrencies(): Array<{ code: string; digits: number }> {
  return [...new Set([...ISO.keys(), ...RUNTIME])].sort().map((code) => ({ code, digits: minorDigits(code) }));
}

/** The most minor-unit digits any ISO currency has (4: CLF, UYW); no decimal amount may have more. */
export const MAX_MINOR_DIGITS = Math.max(...ISO.values());

/** The largest amount in minor units a decimal amount may reach: 15 digits, so that it stays exact as a JSON number. */
export const MAX_MINOR = 999_999_999_999_999;

/**
 * A decimal amount of major units in a schema, before its currency is known: a finite number with at
 * most 15 significant digits and at most `MAX_MINOR_DIGITS` fractional digits. Its currency's own
 * minor unit is checked by `amountViolation`.
 */
export function isDecimalAmount(value: number): boolean {
  const parsed = decimalOfNumber(value);
  return parsed.ok && fractionDigits(parsed.value) <= MAX_MINOR_DIGITS;
}

export type AmountParse = { ok: true; minor: number } | { ok: false; code: 'amount_precision' | 'amount_range'; message: string };

/**
 * An amount of major units (4900 JPY, 12.5 EUR, 1.234 KWD) in the currency's minor units (4900, 1250,
 * 1234), exactly; refused when it has more fractional digits than the currency's minor unit, or
 * exceeds `MAX_MINOR` minor units. `field` names the input in the messages.
 */
export function parseAmount(amount: number, currency: string, field = 'amount'): AmountParse {
  const digits = minorDigits(currency);
  const parsed = decimalOfNumber(amount);
  const max = formatFixed(decimal(MAX_MINOR, digits), digits);
  if (!parsed.ok) {
    return { ok: false, code: 'amount_range', message: `${field} must be a decimal of at most 15 significant digits, at most ${max} ${currency} (got ${parsed.text})` };
  }
  const minor = unitsAt(parsed.value, digits);
  if (minor === undefined) {
    return {
      ok: false,
      code: 'amount_precision',
      message: `${field} may have at most ${digits} fractional digits for ${currency} (got ${parsed.text}); ${currency} counts in units of ${formatFixed(decimal(1, digits), digits)}`,
    };
  }
  if (minor > BigInt(MAX_MINOR) || minor < -BigInt(MAX_MINOR)) {
    return { ok: false, code: 'amount_range', message: `${field} must be at most ${max} ${currency} (got ${parsed.text})` };
  }
  return { ok: true, minor: Number(minor) };
}

/** The violation of a decimal amount in a currency (see `parseAmount`), at `path`; undefined when it fits. */
export function amountViolation(path: string, amount: number, currency: string): Violation | undefined {
  const parsed = parseAmount(amount, currency, path);
  return parsed.ok ? undefined : { propertyPath: path, message: parsed.message, code: parsed.code };
}

/** Minor units of an amount of major units already checked with `parseAmount`. */
export function toMinor(amount: number, currency: string): number {
  const parsed = parseAmount(amount, currency);
  if (!parsed.ok) throw new RangeError(parsed.message);
  return parsed.minor;
}

/** The amount of major units (the wire's decimal `amount`) of `minor` minor units: 4900 JPY is 4900, 1250 EUR is 12.5. */
export function toMajor(minor: number, currency: string): number {
  return toNumber(decimal(minor, minorDigits(currency)));
}

const symbols = new Map<string, string>();

/** The currency's narrow symbol in the runtime's CLDR data (en): "€", "¥", "$"; a code where it has none, then followed by a space ("KWD "). */
function symbolOf(currency: string): string {
  let s = symbols.get(currency);
  if (s === undefined) {
    const parts = new Intl.NumberFormat('en', { style: 'currency', currency, currencyDisplay: 'narrowSymbol' }).formatToParts(0);
    const symbol = parts.find((p) => p.type === 'currency')?.value ?? currency;
    s = /^[A-Z]{2,}$/.test(symbol) ? `${symbol} ` : symbol;
    symbols.set(currency, s);
  }
  return s;
}

/**
 * An amount of minor units as text for people, with the currency's minor-unit digits, thousands
 * grouped and its symbol: 490000 EUR → "€4,900.00", 4900 JPY → "¥4,900", 1234 KWD → "KWD 1.234",
 * -499 EUR → "-€4.99". Only the symbol comes from the runtime's CLDR data; digits and grouping are ISO's
 * minor unit and exact decimal text (no floating point).
 */
export function formatMoney(minor: number | bigint, currency: string): string {
  const digits = minorDigits(currency);
  const text = formatFixed(decimal(minor, digits), digits, ',');
  return text.startsWith('-') ? `-${symbolOf(currency)}${text.slice(1)}` : `${symbolOf(currency)}${text}`;
}

/**
 * A unit price given as a decimal string of minor units (an invoice line's `unitAmountDecimal`) as
 * text for people: whole minor units as `formatMoney` shows them ("4990" EUR → "€49.90"), finer prices
 * with the digits they need ("0.2" EUR → "€0.002", "0.015" USD → "$0.00015").
 */
export function formatUnitAmount(minor: string, currency: string): string {
  const d = parseDecimal(minor);
  if (!d) throw new RangeError(`not a decimal amount of minor units: ${minor}`);
  const digits = minorDigits(currency);
  const major = { units: d.units, scale: d.scale + digits };
  const text = formatFixed(major, Math.max(digits, fractionDigits(major)), ',');
  return text.startsWith('-') ? `-${symbolOf(currency)}${text.slice(1)}` : `${symbolOf(currency)}${text}`;
}

/* ---------------------------------------------------------------------------------------------
 * Percentages: tax rates and percentage discounts, exact decimals too.
 * ------------------------------------------------------------------------------------------- */

/** Fractional digits of a tax rate (19, 7.7, 5.5, 8.1 %): rates are kept as integers of 1/10,000 percent. */
export const RATE_DIGITS = 4;
/** 10^RATE_DIGITS: 19 % is 190000. */
export const RATE_SCALE = 10_000;

/** A percentage (19, 7.7, 5.5) as integer 1/10,000 percent (190000, 77000, 55000); undefined beyond 4 fractional digits or for a negative rate. */
export function rateToE4(rate: number): number | undefined {
  if (e4OfRate.has(rate)) return e4OfRate.get(rate);
  const parsed = decimalOfNumber(rate);
  const e4 = parsed.ok && parsed.value.units >= 0n ? unitsAt(parsed.value, RATE_DIGITS) : undefined;
  const result = e4 === undefined ? undefined : Number(e4);
  if (e4OfRate.size < RATES_REMEMBERED) e4OfRate.set(rate, result);
  return result;
}

/** Tax rates are few and converted for every invoice line: the conversions are remembered (up to this many). */
const RATES_REMEMBERED = 1000;
const e4OfRate = new Map<number, number | undefined>();
const rateOfE4s = new Map<number, number>();

/** The percentage of `e4` 1/10,000 percent: 77000 is 7.7. */
export function rateOfE4(e4: number): number {
  let rate = rateOfE4s.get(e4);
  if (rate === undefined) {
    rate = toNumber(decimal(e4, RATE_DIGITS));
    if (rateOfE4s.size < RATES_REMEMBERED) rateOfE4s.set(e4, rate);
  }
  return rate;
}

/** `percent`/100 of `minor` minor units (`percent` given as integer 1/10^`digits` percent), rounded half-up to the minor unit. */
export function percentOf(minor: number, percent: number, digits = RATE_DIGITS): number {
  return Number(divideRounded(BigInt(minor) * BigInt(percent), 100n * 10n ** BigInt(digits)));
}
