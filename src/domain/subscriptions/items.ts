/** Items of a subscription: ordering products (addons, custom prices, discounts) and changing an item. */
import { conflict, invalid, invalidMany, notFound, type Violation } from '../../errors.js';
import { newId } from '../../ids.js';
import type { PricePlan, Product } from '../../schemas/catalogue.js';
import type { Customer } from '../../schemas/customers.js';
import type { Subscription, SubscriptionItem } from '../../schemas/subscriptions.js';
import type { AppliedDiscountRecord, InlineDiscount, ItemRecord, SubscriptionRecord, SubscriptionStatus } from '../../store/ports/subscriptions.js';
import type { Tx } from '../../store/store.js';
import { findCoupon } from '../coupons.js';
import { amountViolation } from '../../values/money.js';
import { chargeKindOf, itemEnd } from '../billing/schedule.js';
import { zoned } from '../dates.js';
import { chargeCapProblem, type PricingTerms } from '../pricing.js';
import { createCustomPricePlan, getPricePlan, getProduct, pricePlanViolations, type CustomPricePlanInput } from '../products.js';
import { pricePlanViolation } from '../statusRules.js';
import { FINAL } from '../subscriptionStates.js';
import { parseQuantity, toMicros } from '../quantity.js';
import { assertOfferTermsOpen, cancellationDateOf, scheduleItem, timeZoneOf } from './lifecycle.js';
import { getSubscriptionItem, toResource } from './readModel.js';
import { blankItem, loadSubscription } from './records.js';
import { newPeriods, reachableTermEnd, type PeriodInput } from './terms.js';


export interface DiscountInput {
  name?: string | null | undefined;
  coupon?: string | undefined;
  type?: 'percentage' | 'fixed_amount' | undefined;
  frequency?: 'once' | 'limited' | 'forever' | undefined;
  percentage?: number | undefined;
  fixedAmount?: { amount: number; currency: string } | undefined;
  frequencyInterval?: number | undefined;
}

export interface OrderEntry {
  product: string;
  quantity?: number | undefined;
  pricePlan?: string | undefined;
  customPricePlan?: CustomPricePlanInput | undefined;
  periods?: PeriodInput[] | undefined;
  customName?: string | undefined;
  customDescription?: string | undefined;
  furtherInformation?: string | undefined;
  discount?: DiscountInput | undefined;
  autoAssignProductGroup?: boolean | undefined;
}

export interface OrderInput {
  billingStart?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  products: Array<OrderEntry & { children?: OrderEntry[] | undefined }>;
}

const ORDERABLE: readonly SubscriptionStatus[] = ['draft', 'active', 'paused', 'offer'];

async function discountOf(
  tx: Tx,
  org: string,
  path: string,
  d: DiscountInput,
  currency: string,
  violations: Violation[],
): Promise<Pick<AppliedDiscountRecord, 'couponId' | 'discount'> | undefined> {
  const at = `${path}.discount`;
  if (d.coupon !== undefined) {
    const inline = (['type', 'frequency', 'percentage', 'fixedAmount', 'frequencyInterval'] as const).filter((k) => d[k] !== undefined);
    if (inline.length) {
      violations.push({ propertyPath: at, message: `${at} takes either a coupon or inline fields (${inline.join(', ')}), not both`, code: 'ambiguous' });
      return undefined;
    }
    const coupon = await findCoupon(tx, org, d.coupon);
    if (!coupon) {
      violations.push({ propertyPath: `${at}.coupon`, message: `${at}.coupon '${d.coupon}' does not exist; pick one from list_coupons`, code: 'not_found' });
      return undefined;
    }
    if (!coupon.isEnabled) {
      violations.push({ propertyPath: `${at}.coupon`, message: `coupon ${coupon.code} is disabled and cannot be applied`, code: 'disabled' });
      return undefined;
    }
    if (coupon.fixedAmount && coupon.fixedAmount.currency !== currency) {
      violations.push({
        propertyPath: `${at}.coupon`,
        message: `coupon ${coupon.code} takes off ${coupon.fixedAmount.currency} but the subscription is billed in ${currency}`,
        code: 'currency_mismatch',
      });
      return undefined;
    }
    return { couponId: coupon.id, discount: null };
  }
  const before = violations.length;
  if (!d.type) violations.push({ propertyPath: `${at}.type`, message: `${at}.type is required for an inline discount: percentage or fixed_amount (or give a coupon)`, code: 'required' });
  if (d.type === 'percentage' && d.percentage === undefined) {
    violations.push({ propertyPath: `${at}.percentage`, message: `${at}.percentage is required when type is percentage (more than 0, at most 100)`, code: 'required' });
  }
  if (d.type !== 'percentage' && d.percentage !== undefined) {
    violations.push({ propertyPath: `${at}.percentage`, message: `${at}.percentage is only for type percentage`, code: 'forbidden' });
  }
  if (d.type === 'fixed_amount' && d.fixedAmount === undefined) {
    violations.push({ propertyPath: `${at}.fixedAmount`, message: `${at}.fixedAmount { amount, currency } is required when type is fixed_amount`, code: 'required' });
  }
  if (d.type !== 'fixed_amount' && d.fixedAmount !== undefined) {
    violations.push({ propertyPath: `${at}.fixedAmount`, message: `${at}.fixedAmount is only for type fixed_amount`, code: 'forbidden' });
  }
  if (d.fixedAmount && d.fixedAmount.currency !== currency) {
    violations.push({
      propertyPath: `${at}.fixedAmount.currency`,
      message: `${at}.fixedAmount.currency must be the subscription's currency ${currency} (got ${d.fixedAmount.currency})`,
      code: 'currency_mismatch',
    });
  } else if (d.fixedAmount) {
    const amount = amountViolation(`${at}.fixedAmount.amount`, d.fixedAmount.amount, currency);
    if (amount) violations.push(amount);
  }
  const frequency = d.frequency ?? 'once';
  if (frequency === 'limited' && d.frequencyInterval === undefined) {
    violations.push({ propertyPath: `${at}.frequencyInterval`, message: `${at}.frequencyInterval (invoices to discount, >= 1) is required when frequency is limited`, code: 'required' });
  }
  if (frequency !== 'limited' && d.frequencyInterval !== undefined) {
    violations.push({ propertyPath: `${at}.frequencyInterval`, message: `${at}.frequencyInterval is only for frequency limited`, code: 'forbidden' });
  }
  if (violations.length > before) return undefined;
  const discount: InlineDiscount = {
    name: d.name ?? null,
    type: d.type!,
    frequency,
    percentage: d.percentage ?? null,
    fixedAmount: d.fixedAmount ?? null,
    frequencyInterval: d.frequencyInterval ?? null,
  };
  return { couponId: null, discount };
}

/** The terms a custom price plan will be priced by once stored (`createCustomPricePlan`), for the checks before anything is written. */
function customTerms(input: CustomPricePlanInput): PricingTerms {
  return {
    id: 'customPricePlan',
    type: input.type,
    currencyCode: input.currencyCode,
    price: input.price ?? null,
    tiers: input.tiers ?? null,
    packageSize: input.packageSize ?? null,
    freeUnits: input.freeUnits,
  };
}

/**
 * Order products (interface: POST /subscriptions/{id}/products): each entry becomes an addon item
 * (its children items with `parent` set), priced by a price plan of its product or by a custom price
 * plan, optionally discounted. Everything is checked before anything is written.
 */
export async function orderProducts(tx: Tx, org: string, id: string, input: OrderInput, now: Date): Promise<Subscription> {
  const record = await loadSubscription(tx, org, id);
  // Products ordered for an offer's subscription change what the offer proposes: not once it has left open.
  await assertOfferTermsOpen(tx, org, record, ['its items (ordering products)']);
  if (!ORDERABLE.includes(record.status)) {
    throw conflict(`Cannot order products for subscription ${record.number}: its status is ${record.status}; ordering is allowed while ${ORDERABLE.join(', ')}`);
  }
  const customer = (await tx.customers.get(org, record.customerId)) as Customer;
  const violations: Violation[] = [];
  if (input.startDate && input.endDate && input.endDate <= input.startDate) {
    violations.push({ propertyPath: 'endDate', message: 'endDate must be after startDate', code: 'before_start' });
  }
  // An item never starts before its subscription (whose start is unknown until a draft is activated).
  if (input.startDate && record.startDate && Date.parse(input.startDate) < Date.parse(record.startDate)) {
    violations.push({
      propertyPath: 'startDate',
      message: `startDate must not be before the subscription's start ${record.startDate}; omit it to start the items when ordered (or at the subscription's start)`,
      code: 'before_subscription_start',
    });
  }
  if (input.startDate && input.billingStart && Date.parse(input.billingStart) < Date.parse(input.startDate)) {
    violations.push({ propertyPath: 'billingStart', message: 'billingStart must not be before startDate', code: 'before_start' });
  }
  if (input.endDate && Date.parse(input.endDate) <= now.getTime()) {
    violations.push({ propertyPath: 'endDate', message: 'endDate must lie in the future', code: 'in_the_past' });
  }

  interface Planned {
    path: string;
    entry: OrderEntry;
    product: Product;
    pricePlan?: PricePlan;
    discount?: Pick<AppliedDiscountRecord, 'couponId' | 'discount'>;
    children: Planned[];
  }

  const check = async (entry: OrderEntry, path: string): Promise<Planned | undefined> => {
    const product = await tx.products.get(org, entry.product);
    if (!product) {
      violations.push({ propertyPath: `${path}.product`, message: `${path}.product '${entry.product}' does not exist; pick one from list_products`, code: 'not_found' });
      return undefined;
    }
    const resolved = await getProduct(tx, org, product.id);
    const before = violations.length;
    if ((entry.pricePlan === undefined) === (entry.customPricePlan === undefined)) {
      violations.push({
        propertyPath: path,
        message: `${path} needs exactly one of pricePlan (an id from list_price_plans of the product) or customPricePlan (a price just for this item)`,
        code: 'price_plan_choice',
      });
    }
    let pricePlan: PricePlan | undefined;
    if (entry.pricePlan !== undefined) {
      pricePlan = await tx.products.getPricePlan(org, entry.pricePlan);
      const unusable = pricePlan && pricePlanViolation(pricePlan, `${path}.pricePlan`);
      if (!pricePlan || pricePlan.product !== product.id) {
        violations.push({
          propertyPath: `${path}.pricePlan`,
          message: pricePlan
            ? `${path}.pricePlan ${pricePlan.id} belongs to another product; use a price plan of product ${product.id} (list_price_plans)`
            : `${path}.pricePlan '${entry.pricePlan}' does not exist; pick one from list_price_plans of the product`,
          code: pricePlan ? 'wrong_product' : 'not_found',
        });
        pricePlan = undefined;
      } else if (unusable) {
        violations.push(unusable);
      } else if (pricePlan.currencyCode !== customer.currencyCode) {
        violations.push({
          propertyPath: `${path}.pricePlan`,
          message: `${path}.pricePlan is priced in ${pricePlan.currencyCode} but the subscription is billed in ${customer.currencyCode}`,
          code: 'currency_mismatch',
        });
      }
    }
    if (entry.customPricePlan && entry.customPricePlan.currencyCode !== customer.currencyCode) {
      violations.push({
        propertyPath: `${path}.customPricePlan.currencyCode`,
        message: `${path}.customPricePlan.currencyCode must be the subscription's currency ${customer.currencyCode}`,
        code: 'currency_mismatch',
      });
    } else if (entry.customPricePlan) {
      violations.push(...pricePlanViolations(entry.customPricePlan, `${path}.customPricePlan.`));
    }
    if (entry.quantity !== undefined && resolved.usageMetric) {
      violations.push({
        propertyPath: `${path}.quantity`,
        message: `${path}.quantity cannot be set: product ${resolved.name} has a usage metric (event ${resolved.usageMetric.eventName}), and since the third quarter of 2026 usage events alone drive such an item's quantity (interface section 9); omit quantity and send events with ingest_usage_events`,
        code: 'usage_metric_quantity',
      });
    } else if (entry.quantity !== undefined && resolved.measurement) {
      violations.push({
        propertyPath: `${path}.quantity`,
        message: `${path}.quantity cannot be set: product ${resolved.name} is metered by ${resolved.measurement.code}, so its quantity comes from usage; omit quantity`,
        code: 'metered_quantity',
      });
    }
    if (violations.length === before) {
      const terms = pricePlan ?? customTerms(entry.customPricePlan!);
      const problem = chargeKindOf(resolved, terms.type) === 'flat' ? chargeCapProblem(terms, entry.quantity ?? 1) : undefined;
      const field = `${path}.${entry.quantity !== undefined ? 'quantity' : pricePlan ? 'pricePlan' : 'customPricePlan'}`;
      if (problem) violations.push({ propertyPath: field, message: `${field}: ${problem}`, code: 'too_large' });
    }
    const discount = entry.discount ? await discountOf(tx, org, path, entry.discount, customer.currencyCode, violations) : undefined;
    return { path, entry, product: resolved, ...(pricePlan ? { pricePlan } : {}), ...(discount ? { discount } : {}), children: [] };
  };

  const planned: Planned[] = [];
  for (const [i, entry] of input.products.entries()) {
    const p = await check(entry, `products[${i}]`);
    for (const [j, child] of (entry.children ?? []).entries()) {
      const c = await check(child, `products[${i}].children[${j}]`);
      if (p && c) p.children.push(c);
    }
    if (p) planned.push(p);
  }
  if (violations.length) throw invalidMany(violations);

  const at = now.toISOString();
  const timeZone = customer.timeZone;
  const write = async (p: Planned, parentId: string | null) => {
    const pricePlan =
      p.pricePlan ?? (await createCustomPricePlan(tx, org, p.product.id, p.entry.customPricePlan!, now, `${p.path}.customPricePlan.`));
    let item: ItemRecord = {
      ...blankItem(record.id, p.product.id, pricePlan.id, 'addon', String(p.entry.quantity ?? 1), at),
      parentId,
      name: p.entry.customName ?? null,
      description: p.entry.customDescription ?? null,
      furtherInformation: p.entry.furtherInformation ?? null,
      periods: p.entry.periods ? newPeriods(p.entry.periods, at) : null,
      // On a running subscription an item starts when it is ordered, unless a start is given: its
      // billing never reaches back before the order.
      startDate: input.startDate ? new Date(input.startDate).toISOString() : record.status === 'active' || record.status === 'paused' ? at : null,
      billingStart: input.billingStart ? new Date(input.billingStart).toISOString() : null,
      billingEnd: input.endDate ? new Date(input.endDate).toISOString() : null,
    };
    if (record.status === 'active' || record.status === 'paused') item = await scheduleItem(tx, org, record, item, timeZone, now);
    await tx.subscriptions.insertItem(org, item);
    if (p.discount) {
      await tx.subscriptions.insertDiscount(org, { id: newId(), itemId: item.id, ...p.discount, status: 'active', appliedIntervals: 0, createdAt: at });
    }
    for (const c of p.children) await write(c, item.id);
  };
  for (const p of planned) await write(p, null);
  const updated = { ...record, updatedAt: at };
  await tx.subscriptions.update(org, updated);
  return toResource(tx, org, updated, now);
}

/** The fields of the item patch that change the item (a field sent with its current value changes nothing). */
function itemChanges(item: ItemRecord, patch: Parameters<typeof updateSubscriptionItem>[3]): string[] {
  const changed: string[] = [];
  if (patch.quantity !== undefined) {
    const parsed = parseQuantity(patch.quantity);
    if (!parsed.ok || parsed.micros !== toMicros(item.quantity)) changed.push('quantity');
  }
  for (const field of ['name', 'description', 'furtherInformation'] as const) {
    if (patch[field] !== undefined && patch[field] !== item[field]) changed.push(field);
  }
  if (patch.billingEnd !== undefined && !sameInstant(patch.billingEnd, item.billingEnd)) changed.push('billingEnd');
  return changed.map((f) => `item ${item.id} ${f}`);
}

const sameInstant = (a: string | null, b: string | null) => (a === null || b === null ? a === b : Date.parse(a) === Date.parse(b));

/** The item and the items ordered as its children: they end with it. */
async function withChildren(tx: Tx, org: string, item: ItemRecord): Promise<{ family: ItemRecord[]; others: ItemRecord[] }> {
  const all = await tx.subscriptions.items(org, [item.subscriptionId]);
  const inFamily = (i: ItemRecord) => i.id === item.id || i.parentId === item.id;
  return { family: all.filter(inFamily), others: all.filter((i) => !inFamily(i)) };
}

/**
 * When an item asked to end at `wanted` ends. On a running subscription: at a contract term end of
 * the item's own periods (counted from the item's start) whose cancellation period still allows it,
 * or, for an item that inherits the subscription's periods, at a date `cancel_subscription` would
 * take; never after the subscription's own pending end, and never so that nothing is left to bill.
 * Before activation no term runs yet: any date after the item's start.
 */
async function itemEndDate(tx: Tx, org: string, subscription: SubscriptionRecord, item: ItemRecord, wanted: string, others: ItemRecord[], now: Date): Promise<string> {
  const start = item.billingStart ?? item.startDate;
  if (subscription.startDate === null || item.activatedAt === null) {
    if (Date.parse(wanted) <= now.getTime()) throw invalid('billingEnd', 'billingEnd must lie in the future', 'in_the_past');
    if (start && Date.parse(wanted) <= Date.parse(start)) throw invalid('billingEnd', `billingEnd must be after the item's start ${start}`, 'before_start');
    return new Date(wanted).toISOString();
  }
  const timeZone = await timeZoneOf(tx, org, subscription);
  const date = item.periods
    ? reachableTermEnd(zoned(item.startDate ?? subscription.startDate, timeZone), item.periods, zoned(now, timeZone), zoned(wanted, timeZone), {
        field: 'billingEnd',
        whose: "the item's own periods (counted from its startDate)",
        omittable: false,
      })
    : await cancellationDateOf(tx, org, subscription, wanted, now, { field: 'billingEnd', whose: 'the subscription (the item inherits its periods)', omittable: false });
  if (subscription.cancellationDate && date > subscription.cancellationDate) {
    throw invalid('billingEnd', `billingEnd must not be after ${subscription.cancellationDate}, when subscription ${subscription.number} is cancelled and all its items end`, 'after_subscription_end');
  }
  const billsAfter = (i: ItemRecord) => {
    const end = itemEnd(subscription, i);
    return end === null || end > date;
  };
  if (date !== subscription.cancellationDate && !others.some(billsAfter)) {
    throw conflict(
      `Ending item ${item.id} at ${date} would leave subscription ${subscription.number} nothing to bill after it; cancel_subscription ends the whole subscription (at a contract term end)`,
    );
  }
  return date;
}

/**
 * Sets or clears an item's end (`billingEnd`) and its children's with it: ending shortens a child's
 * later end to the item's, clearing drops the end the children shared with the item. Billing follows
 * (`scheduleItem`): the last period is cut short as a cancellation cuts it, and a cleared end bills
 * on. An item that has ended, or a plan charge while a plan change is pending (which ends it), keeps its end.
 */
async function setItemEnd(tx: Tx, org: string, subscription: SubscriptionRecord, item: ItemRecord, wanted: string | null, now: Date): Promise<void> {
  if (item.billingEnd !== null && Date.parse(item.billingEnd) <= now.getTime()) {
    throw conflict(`Item ${item.id} ended at ${item.billingEnd}; an ended item's end no longer changes (order the product again to add it anew)`);
  }
  if (item.type === 'charge' && subscription.pendingPlanId) {
    throw conflict(
      `Subscription ${subscription.number} changes plan at ${subscription.pendingPlanApplyAt}, which ends its plan's charges then; revoke_subscription_plan_change first to end item ${item.id} at another date`,
    );
  }
  const { family, others } = await withChildren(tx, org, item);
  const end = wanted === null ? null : await itemEndDate(tx, org, subscription, item, wanted, others, now);
  const timeZone = await timeZoneOf(tx, org, subscription);
  for (const member of family) {
    const own = member.id === item.id;
    const billingEnd =
      own || (end === null ? sameInstant(member.billingEnd, item.billingEnd) : member.billingEnd === null || member.billingEnd > end) ? end : member.billingEnd;
    if (!own && sameInstant(billingEnd, member.billingEnd)) continue;
    const changed: ItemRecord = { ...member, billingEnd, updatedAt: now.toISOString() };
    await tx.subscriptions.updateItem(org, changed.activatedAt === null ? changed : await scheduleItem(tx, org, subscription, changed, timeZone, now));
  }
}

/**
 * Merge patch of an item: quantity, name, description, its end. A quantity change on an item whose
 * product has a measurement is a 422 (interface sections 7 and 9: usage drives such quantities). The
 * items of an offer that has left open do not change (`assertOfferTermsOpen`).
 */
export async function updateSubscriptionItem(
  tx: Tx,
  org: string,
  id: string,
  patch: {
    quantity?: number | undefined;
    name?: string | null | undefined;
    description?: string | null | undefined;
    furtherInformation?: string | null | undefined;
    billingEnd?: string | null | undefined;
  },
  now: Date,
): Promise<SubscriptionItem> {
  const item = await tx.subscriptions.getItem(org, id);
  if (!item) throw notFound('Subscription item', id);
  const subscription = await loadSubscription(tx, org, item.subscriptionId);
  await assertOfferTermsOpen(tx, org, subscription, itemChanges(item, patch));
  if (FINAL.includes(subscription.status)) {
    throw conflict(`Subscription ${subscription.number} is ${subscription.status}, which is final; its items can no longer change`);
  }
  if (patch.quantity !== undefined) {
    const product = await getProduct(tx, org, item.productId);
    if (product.usageMetric) {
      throw invalid(
        'quantity',
        `quantity of this item cannot be changed by hand: its product ${product.name} has a usage metric (event ${product.usageMetric.eventName}), and since the third quarter of 2026 usage events alone drive such an item's quantity (interface section 9); send events with ingest_usage_events instead`,
        'usage_metric_quantity',
      );
    }
    if (product.measurement) {
      throw invalid(
        'quantity',
        `quantity of this item cannot be changed by hand: its product ${product.name} is metered by measurement ${product.measurement.code}, so usage drives the quantity; record usage with create_subscription_measurement instead`,
        'metered_quantity',
      );
    }
    const pricePlan = await getPricePlan(tx, org, item.pricePlanId);
    const problem = chargeKindOf(product, pricePlan.type) === 'flat' ? chargeCapProblem(pricePlan, patch.quantity) : undefined;
    if (problem) throw invalid('quantity', `quantity: ${problem}`, 'too_large');
  }
  const quantity = patch.quantity === undefined ? item.quantity : String(patch.quantity);
  let billing = item;
  if (quantity !== item.quantity && item.activatedAt !== null) {
    // A change while the item bills: periods are billed at each quantity for the days it held.
    await tx.subscriptions.insertQuantityChange(org, {
      id: newId(),
      itemId: item.id,
      changedAt: now.toISOString(),
      oldQuantity: item.quantity,
      newQuantity: quantity,
    });
    // An item whose periods have ended settles the change at the end of its last billed period.
    if (item.nextBillingAt === null) billing = await scheduleItem(tx, org, subscription, item, await timeZoneOf(tx, org, subscription), now);
  }
  await tx.subscriptions.updateItem(org, {
    ...billing,
    quantity,
    name: patch.name === undefined ? item.name : patch.name,
    description: patch.description === undefined ? item.description : patch.description,
    furtherInformation: patch.furtherInformation === undefined ? item.furtherInformation : patch.furtherInformation,
    updatedAt: now.toISOString(),
  });
  if (patch.billingEnd !== undefined && !sameInstant(patch.billingEnd, item.billingEnd)) {
    await setItemEnd(tx, org, subscription, (await tx.subscriptions.getItem(org, id)) as ItemRecord, patch.billingEnd, now);
  }
  return getSubscriptionItem(tx, org, id, now);
}

