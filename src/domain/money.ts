/**
 * Exact decimals on the wire. A JSON number such as 12.5 arrives as a binary double; its shortest
 * decimal form (`String(12.5)` = "12.5") is exactly what the caller wrote as long as it has at most
 * 15 significant digits, so values are converted from that text, digit by digit, into integers of
 * 10^-digits units (cents for money). No float arithmetic touches an amount.
 */

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** An ISO 4217 code the runtime knows, written in upper case (`EUR`); `eur` is not one. */
export function isCurrencyCode(code: string): boolean {
  return CURRENCIES.has(code);
}

/** 15 significant digits: every decimal up to this many digits survives the round trip through a double. */
export const MAX_SCALED = 999_999_999_999_999;

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * `value` as an integer count of 10^-digits units (`toScaled(12.5, 2)` = 1250), or undefined when it
 * has more than `digits` fractional digits, is not finite, or exceeds 15 significant digits.
 */
export function toScaled(value: number, digits: number): number | undefined {
  if (!Number.isFinite(value)) return undefined;
  const m = DECIMAL.exec(String(value));
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  if (fraction.length > digits) return undefined;
  const magnitude = BigInt(`${m[2]}${fraction.padEnd(digits, '0')}`);
  if (magnitude > BigInt(MAX_SCALED)) return undefined;
  return m[1] && magnitude !== 0n ? -Number(magnitude) : Number(magnitude);
}

/** The inverse of `toScaled`: 1250 units of 10^-2 is the number 12.5. */
export function fromScaled(units: number, digits: number): number {
  if (digits === 0) return units;
  const sign = units < 0 ? '-' : '';
  const text = String(Math.abs(units)).padStart(digits + 1, '0');
  return Number(`${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`);
}

/** Major units (12.5) to cents (1250); undefined for more than 2 fractional digits or too many digits. */
export function toCents(amount: number): number | undefined {
  return toScaled(amount, 2);
}

/** Cents (1250) to major units (12.5). */
export function fromCents(cents: number): number {
  return fromScaled(cents, 2);
}

/** The largest amount of major units an amount field takes. */
export const MAX_AMOUNT = fromCents(MAX_SCALED);

/** An amount of major units with at most 2 fractional digits and at most 15 significant digits. */
export function isAmount(value: number): boolean {
  return toCents(value) !== undefined;
}

/** Cents of an amount already checked with `isAmount`. */
export function centsOf(amount: number): number {
  const cents = toCents(amount);
  if (cents === undefined) throw new Error(`not an amount with at most 2 fractional digits: ${amount}`);
  return cents;
}
