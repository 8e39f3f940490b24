import type { PricePlan } from '../schemas/catalogue.js';
import { decimal, divideRounded, formatDecimal } from './decimal.js';
import { minorDigits } from './money.js';
import { formatQuantity, MICROS } from './quantity.js';

export interface PricedLine {
  quantity: string;
  unitAmountDecimal: string;
  netAmount: number;
  label: string | null;
}

export function unitAmountDecimalOf(plan: PricePlan): string {
  return formatDecimal(decimal(Math.round(plan.price.amount * 10 ** minorDigits(plan.currencyCode))));
}

export function priceCharge(plan: PricePlan, quantityMicros: bigint, fraction?: { num: bigint; den: bigint }): PricedLine[] {
  const unit = BigInt(Math.round(plan.price.amount * 10 ** minorDigits(plan.currencyCode)));
  const free = plan.type === 'per_unit' ? BigInt(plan.freeUnits) * MICROS : 0n;
  const q = quantityMicros > free ? quantityMicros - free : 0n;
  const num = fraction?.num ?? 1n;
  const den = fraction?.den ?? 1n;
  return [{ quantity: formatQuantity(q), unitAmountDecimal: unit.toString(), netAmount: Number(divideRounded(q * unit * num, MICROS * den)), label: null }];
}
