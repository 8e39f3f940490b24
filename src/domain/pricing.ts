/**
 * What a charge costs (CONTRACT section 8, "Pricing models"): a pure function from a price plan and a
 * quantity to invoice lines, in exact decimal arithmetic (`decimal.ts`, BigInt). The billing run and
 * the estimate call it; nothing here reads or writes the store.
 *
 * Amounts of a plan are in major units (`price.amount`, a tier's `unitAmount` and `flatAmount`); a
 * line's `unitAmountDecimal` is in minor units (EUR 0.002 is '0.2' cents), Stripe's convention. A
 * line's `netAmount` is quantity x unit price x the pro-rata fraction, computed exactly and rounded
 * once, half-up, to the minor unit.
 */
import type { PricePlan } from '../schemas/catalogue.js';
import { decimalOfNumber, divideRounded, formatDecimal, fractionDigits, multiply, parseDecimal, roundedUnits, type Decimal } from '../values/decimal.js';
import { MAX_MINOR, minorDigits } from '../values/money.js';
import { MAX_AMOUNT_CENTS } from './invoices.js';
import { formatQuantity, MICROS, parseQuantity } from './quantity.js';

/** What `priceCharge` reads of a price plan (a custom price plan is priced before it is stored). */
export interface PricingTerms {
  id: string;
  type: PricePlan['type'];
  currencyCode: string;
  price: { amount: number } | null;
  tiers: ReadonlyArray<{ upTo: number | null; unitAmount: number; flatAmount?: number | null | undefined }> | null;
  packageSize: number | null;
  freeUnits: number;
}

/** One invoice line of a charge: quantity a canonical decimal string (<= 6 fractional digits), unitAmountDecimal a canonical decimal string of MINOR units (<= 12 fractional digits), netAmount an integer of minor units rounded once half-up. */
export interface PricedLine {
  quantity: string;
  unitAmountDecimal: string;
  netAmount: number;
  label: string | null;
}

/** Fractional digits of the major unit a unit price (`per_unit` amount, a tier's `unitAmount`) may have: 0.00015 USD. */
export const UNIT_PRICE_DIGITS = 10;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

export type PriceParse = { ok: true; value: Decimal } | { ok: false; reason: 'not_finite' | 'too_many_digits'; text: string };

/**
 * The decimal a JSON number stands for, like `decimalOfNumber`, but also read from an exponent form:
 * unit prices below 10^-6 have one as their shortest text (`String(0.0000002)` is "2e-7"), which is
 * still exactly what the caller wrote when it has at most 15 significant digits.
 */
export function decimalOfPrice(value: number): PriceParse {
  const parsed = decimalOfNumber(value);
  if (parsed.ok) return parsed;
  if (parsed.reason !== 'exponent') return { ok: false, reason: parsed.reason, text: parsed.text };
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(parsed.text);
  if (!m) return { ok: false, reason: 'too_many_digits', text: parsed.text };
  const fraction = m[3] ?? '';
  if (1 + fraction.length > 15) return { ok: false, reason: 'too_many_digits', text: parsed.text };
  const magnitude = BigInt(`${m[2]}${fraction}`);
  const units = m[1] ? -magnitude : magnitude;
  const scale = fraction.length - Number(m[4]);
  return { ok: true, value: scale >= 0 ? { units, scale } : { units: units * pow10(-scale), scale: 0 } };
}

/**
 * Why a unit price of major units (`per_unit` price, a tier's `unitAmount`) is refused, at `path`, or
 * undefined when it fits: at most 10 fractional digits, 15 significant digits, 0 or more, and at most
 * `MAX_MINOR` minor units.
 */
export function unitPriceProblem(path: string, amount: number, currency: string): string | undefined {
  const max = `${formatDecimal({ units: BigInt(MAX_MINOR), scale: minorDigits(currency) })} ${currency}`;
  const parsed = decimalOfPrice(amount);
  if (!parsed.ok) return `${path} must be a unit price from 0 to ${max}, of at most 15 significant digits (got ${parsed.text})`;
  if (parsed.value.units < 0n) return `${path} must be 0 or more (got ${String(amount)})`;
  const digits = fractionDigits(parsed.value);
  if (digits > UNIT_PRICE_DIGITS) {
    return `${path} is a unit price and may have at most ${UNIT_PRICE_DIGITS} fractional digits (got ${digits}: ${formatDecimal(parsed.value)} ${currency})`;
  }
  const minor = toMinorUnits(parsed.value, minorDigits(currency));
  if (minor.units > BigInt(MAX_MINOR) * pow10(minor.scale)) return `${path} must be at most ${max} (got ${formatDecimal(parsed.value)})`;
  return undefined;
}

/** A decimal of major units as a decimal of minor units (EUR 0.002 → 0.2): the same digits, the scale moved. */
function toMinorUnits(major: Decimal, digits: number): Decimal {
  return major.scale >= digits ? { units: major.units, scale: major.scale - digits } : { units: major.units * pow10(digits - major.scale), scale: 0 };
}

/** A plan amount (a JSON number of major units, already validated) in minor units of the currency. */
function minorOf(amount: number, currency: string): Decimal {
  const parsed = decimalOfPrice(amount);
  if (!parsed.ok) throw new RangeError(`not an exact amount: ${parsed.text}`);
  return toMinorUnits(parsed.value, minorDigits(currency));
}

interface Fraction {
  num: bigint;
  den: bigint;
}

const WHOLE: Fraction = { num: 1n, den: 1n };

/** quantity (micro-units) x unit (minor units) x fraction, rounded once, half-up, to the minor unit. */
function net(quantityMicros: bigint, unit: Decimal, f: Fraction): number {
  return Number(divideRounded(quantityMicros * unit.units * f.num, MICROS * pow10(unit.scale) * f.den));
}

function line(quantityMicros: bigint, unit: Decimal, f: Fraction, label: string | null): PricedLine {
  return { quantity: formatQuantity(quantityMicros), unitAmountDecimal: formatDecimal(unit), netAmount: net(quantityMicros, unit, f), label };
}

function priceOf(plan: PricingTerms): Decimal {
  if (!plan.price) throw new RangeError(`price plan ${plan.id} (${plan.type}) has no price`);
  return minorOf(plan.price.amount, plan.currencyCode);
}

interface Tier {
  /** First unit of the tier (1 for the first), and its last (null: unbounded), both inclusive. */
  from: bigint;
  upTo: bigint | null;
  unit: Decimal;
  flat: Decimal | null;
}

function tiersOf(plan: PricingTerms): Tier[] {
  if (!plan.tiers || plan.tiers.length === 0) throw new RangeError(`price plan ${plan.id} (${plan.type}) has no tiers`);
  let from = 1n;
  return plan.tiers.map((t) => {
    const tier: Tier = {
      from,
      upTo: t.upTo === null ? null : BigInt(t.upTo),
      unit: minorOf(t.unitAmount, plan.currencyCode),
      flat: t.flatAmount === null || t.flatAmount === undefined || t.flatAmount === 0 ? null : minorOf(t.flatAmount, plan.currencyCode),
    };
    if (tier.upTo !== null) from = tier.upTo + 1n;
    return tier;
  });
}

const range = (t: Tier) => (t.upTo === null ? `${t.from}+` : `${t.from}–${t.upTo}`);

/** Micro-units of q beyond `freeUnits` (never negative). */
function billable(plan: PricingTerms, quantityMicros: bigint): bigint {
  const free = BigInt(plan.freeUnits) * MICROS;
  return quantityMicros > free ? quantityMicros - free : 0n;
}

/**
 * The lines a charge costs for one period. `quantityMicros` is q in millionths (usage aggregated over the period, or the item's quantity).
 * `fraction` (optional, num/den, e.g. days used / days of the full period) scales every amount of the charge (pro rata), applied before the single rounding.
 *
 * - flat_fee: one line, quantity q, unit the amount.
 * - per_unit: one line, quantity max(0, q - freeUnits), unit the amount.
 * - package: one line, quantity ceil(max(0, q - freeUnits) / packageSize) packages, unit the package price, label "3 packages of 100".
 * - graduated: per tier reached, a line of the units in it at its unitAmount ("units 11–100", "units 101+"), then, when the tier has a flatAmount,
 *   a line of quantity 1 at it ("tier 2 flat fee").
 * - volume: a line of all q units at the unitAmount of the tier q falls in ("tier 2 (11–100)"), then that tier's flatAmount line, if any.
 *
 * A tier is reached when some of q falls in it, so q = 0 reaches none and costs nothing (no flatAmount
 * either); graduated, volume and package then answer one line of quantity 0 and net 0 (at the first
 * tier's unit price). With a fraction, quantity and unitAmountDecimal stay the plan's terms and only
 * netAmount is scaled: netAmount = round(quantity x unit x num / den).
 */
export function priceCharge(plan: PricingTerms, quantityMicros: bigint, fraction?: { num: bigint; den: bigint }): PricedLine[] {
  if (quantityMicros < 0n) throw new RangeError('quantities are never negative');
  const f = fraction ?? WHOLE;
  if (f.den <= 0n || f.num < 0n) throw new RangeError(`a pro-rata fraction is num >= 0 over den > 0 (got ${f.num}/${f.den})`);
  switch (plan.type) {
    case 'flat_fee':
      return [line(quantityMicros, priceOf(plan), f, null)];
    case 'per_unit':
      return [line(billable(plan, quantityMicros), priceOf(plan), f, null)];
    case 'package': {
      if (!plan.packageSize || plan.packageSize < 1) throw new RangeError(`price plan ${plan.id} (package) has no packageSize`);
      const size = BigInt(plan.packageSize) * MICROS;
      const packages = (billable(plan, quantityMicros) + size - 1n) / size;
      return [line(packages * MICROS, priceOf(plan), f, `${packages} package${packages === 1n ? '' : 's'} of ${plan.packageSize}`)];
    }
    case 'graduated': {
      const tiers = tiersOf(plan);
      const lines: PricedLine[] = [];
      for (const [i, t] of tiers.entries()) {
        const below = (t.from - 1n) * MICROS;
        if (quantityMicros <= below) break;
        const top = t.upTo === null ? quantityMicros : t.upTo * MICROS;
        const units = (quantityMicros < top ? quantityMicros : top) - below;
        lines.push(line(units, t.unit, f, `units ${range(t)}`));
        if (t.flat) lines.push(line(MICROS, t.flat, f, `tier ${i + 1} flat fee`));
      }
      return lines.length ? lines : [line(0n, tiers[0]!.unit, f, `units ${range(tiers[0]!)}`)];
    }
    case 'volume': {
      const tiers = tiersOf(plan);
      if (quantityMicros === 0n) return [line(0n, tiers[0]!.unit, f, `tier 1 (${range(tiers[0]!)})`)];
      const i = tiers.findIndex((t) => t.upTo === null || quantityMicros <= t.upTo * MICROS);
      const t = tiers[i === -1 ? tiers.length - 1 : i]!;
      const n = (i === -1 ? tiers.length - 1 : i) + 1;
      const lines = [line(quantityMicros, t.unit, f, `tier ${n} (${range(t)})`)];
      if (t.flat) lines.push(line(MICROS, t.flat, f, `tier ${n} flat fee`));
      return lines;
    }
  }
}

/**
 * Why a flat charge (one billed by the item's quantity) of `plan` at `quantity` is refused, as a
 * clause for the caller to prefix with what it prices, or undefined when it fits: the quantity must
 * be one (`parseQuantity`), and one whole period of the charge, before discounts and tax, must stay
 * within what an invoice may total (`MAX_AMOUNT_CENTS`), or no billing run could ever invoice it.
 * Every operation that gives an item its quantity or its price plan asks this.
 */
export function chargeCapProblem(plan: PricingTerms, quantity: string | number): string | undefined {
  const parsed = parseQuantity(quantity);
  if (!parsed.ok) return `the quantity ${parsed.message}`;
  // Exactly, from each line's terms: a line's `netAmount` is a double, inexact beyond 2^53.
  const net = priceCharge(plan, parsed.micros).reduce((sum, l) => sum + roundedUnits(multiply(parseDecimal(l.quantity)!, parseDecimal(l.unitAmountDecimal)!), 0), 0n);
  if (net <= BigInt(MAX_AMOUNT_CENTS)) return undefined;
  const digits = minorDigits(plan.currencyCode);
  const major = (units: bigint) => `${formatDecimal({ units, scale: digits })} ${plan.currencyCode}`;
  return `at quantity ${formatQuantity(parsed.micros)} it costs ${major(net)} a period, more than the ${major(BigInt(MAX_AMOUNT_CENTS))} an invoice may total; lower the quantity or the price`;
}

/** A validated JSON number of major units as the exact canonical decimal text stored ("0.002", "49.9"). */
export function decimalTextOf(amount: number): string {
  const parsed = decimalOfPrice(amount);
  if (!parsed.ok) throw new RangeError(`not an exact amount: ${parsed.text}`);
  return formatDecimal(parsed.value);
}
