import { invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { Coupon } from '../schemas/catalogue.js';
import type { PageRequest } from '../schemas/common.js';
import type { AppliedDiscountRecord } from '../store/ports/subscriptions.js';
import type { Tx } from '../store/store.js';
import { decimalOfNumber, unitsAt } from '../values/decimal.js';
import { amountViolation, toMinor } from '../values/money.js';

export interface CouponInput {
  code: string;
  name: string;
  type: Coupon['type'];
  frequency: Coupon['frequency'];
  percentage?: number | null | undefined;
  fixedAmount?: { amount: number; currency: string } | null | undefined;
  frequencyInterval?: number | null | undefined;
  isEnabled: boolean;
}

/** Percentages: more than 0, at most 100, at most 2 fractional digits; kept as hundredths of a percent. */
export function percentageE2(value: number): number | undefined {
  const parsed = decimalOfNumber(value);
  const scaled = parsed.ok ? unitsAt(parsed.value, 2) : undefined;
  return scaled !== undefined && scaled > 0n && scaled <= 10_000n ? Number(scaled) : undefined;
}

/** A field that belongs to one value of a selector: required with it, forbidden without it. */
function belongsTo(
  field: string,
  value: unknown,
  selector: string,
  actual: string,
  owner: string,
  hint: string,
): Violation | undefined {
  const present = value !== undefined && value !== null;
  if (actual === owner && !present) {
    return { propertyPath: field, message: `${field} is required when ${selector} is ${owner}: ${hint}`, code: `${field}_required` };
  }
  if (actual !== owner && present) {
    return {
      propertyPath: field,
      message: `${field} is only for ${selector} ${owner} (got ${selector} ${actual}); omit it or use ${selector} ${owner}`,
      code: `${field}_forbidden`,
    };
  }
  return undefined;
}

export async function createCoupon(tx: Tx, org: string, input: CouponInput, now: Date): Promise<Coupon> {
  const violations = [
    belongsTo('percentage', input.percentage, 'type', input.type, 'percentage', 'the discount in percent, more than 0 and at most 100'),
    belongsTo('fixedAmount', input.fixedAmount, 'type', input.type, 'fixed_amount', 'give { amount, currency }, e.g. { "amount": 10, "currency": "EUR" }'),
    belongsTo('frequencyInterval', input.frequencyInterval, 'frequency', input.frequency, 'limited', 'the number of invoices (1 or more) the discount applies to'),
    input.fixedAmount ? amountViolation('fixedAmount.amount', input.fixedAmount.amount, input.fixedAmount.currency) : undefined,
  ].filter((v): v is Violation => v !== undefined);
  const existing = await tx.billingSetup.findCouponByCode(org, input.code);
  if (existing) {
    violations.push({
      propertyPath: 'code',
      message: `code must be unique: coupon ${existing.id} already has the code '${input.code}'`,
      code: 'unique',
    });
  }
  if (violations.length) throw invalidMany(violations);
  const at = now.toISOString();
  const percentage = input.type === 'percentage' ? (input.percentage ?? null) : null;
  const fixedAmount = input.type === 'fixed_amount' ? (input.fixedAmount ?? null) : null;
  const coupon: Coupon = {
    id: newId(),
    code: input.code,
    name: input.name,
    type: input.type,
    frequency: input.frequency,
    percentage,
    fixedAmount,
    frequencyInterval: input.frequency === 'limited' ? (input.frequencyInterval ?? null) : null,
    isEnabled: input.isEnabled,
    createdAt: at,
    updatedAt: at,
  };
  await tx.billingSetup.insertCoupon(org, {
    ...coupon,
    percentageE2: percentage === null ? null : (percentageE2(percentage) ?? null),
    fixedAmount: fixedAmount && { cents: toMinor(fixedAmount.amount, fixedAmount.currency), currency: fixedAmount.currency },
  });
  return coupon;
}

export async function listCoupons(tx: Tx, org: string, page: PageRequest) {
  return tx.billingSetup.listCoupons(org, page);
}

/** The coupon with this id, else the one with this code; undefined when the organisation has neither. */
export async function findCoupon(tx: Tx, org: string, idOrCode: string): Promise<Coupon | undefined> {
  return (await tx.billingSetup.getCoupon(org, idOrCode)) ?? (await tx.billingSetup.findCouponByCode(org, idOrCode));
}

/**
 * PUT: omitted fields stay. A disabled coupon cannot be newly applied (order products refuses it);
 * discounts it already gave keep running to their end.
 */
export async function updateCoupon(
  tx: Tx,
  org: string,
  idOrCode: string,
  patch: { name?: string | undefined; isEnabled?: boolean | undefined },
  now: Date,
): Promise<Coupon> {
  const current = await findCoupon(tx, org, idOrCode);
  if (!current) throw notFound('Coupon', idOrCode);
  const next: Coupon = { ...current, name: patch.name ?? current.name, isEnabled: patch.isEnabled ?? current.isEnabled, updatedAt: now.toISOString() };
  await tx.billingSetup.updateCoupon(org, current.id, next);
  return next;
}

/** Applied discounts by the id of their item, each item's in the order they were read (creation order). */
export function discountsByItem(rows: readonly AppliedDiscountRecord[]): Map<string, AppliedDiscountRecord[]> {
  const byItem = new Map<string, AppliedDiscountRecord[]>();
  for (const d of rows) {
    const list = byItem.get(d.itemId);
    if (list) list.push(d);
    else byItem.set(d.itemId, [d]);
  }
  return byItem;
}
