/**
 * An offer as its recipients read it (issue 18): on the offer page and in the signed PDF, so that what
 * is signed is what was shown. The prices are the billing's own: each item priced by `priceCharge`,
 * and the first invoice the estimate of the proposed subscription (as if activated now). Its terms
 * have a fingerprint (`termsFingerprint`) that the page's form carries, so that an acceptance is of
 * the terms the page showed.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import type { Estimate } from '../schemas/estimate.js';
import type { Offer } from '../schemas/offers.js';
import type { Organisation } from '../schemas/organisation.js';
import type { PricePlan } from '../schemas/catalogue.js';
import type { AppliedDiscountRecord, PeriodRecord, SubscriptionRecord } from '../store/ports/subscriptions.js';
import type { Tx } from '../store/store.js';
import { customerName } from './emails.js';
import { divideRounded } from '../values/decimal.js';
import { formatMoney, formatUnitAmount, toMinor } from '../values/money.js';
import { chargeKindOf } from './billing/schedule.js';
import { billingAddressOf } from './billingDetails.js';
import { discountsByItem, findCoupon } from './coupons.js';
import { parseInterval, zoned } from './dates.js';
import { estimateInvoice, offerStartAt } from './estimate.js';
import { getOrganisation } from './organisation.js';
import { priceCharge } from './pricing.js';
import { getPricePlan, getProduct, priceChangesOf, pricePlanAt } from './products.js';
import { MICROS, toMicros } from './quantity.js';
import { activatedState } from './subscriptions/lifecycle.js';

/** One item of the proposed subscription: what it costs per billing interval, and when it is billed. */
export interface PresentedItem {
  name: string;
  quantity: string;
  /** e.g. "€49.90 per month", "€10.00 per month (€120.00 per year)", "€0.01 per unit, 100 free". */
  price: string;
  /** e.g. "monthly in advance", "monthly in arrears, by usage". */
  billing: string;
  /** Each discount with its terms, e.g. "Discount coupon WELCOME20: 20% off, on the first 3 invoices". */
  discounts: string[];
  /** Whether it is free during the subscription's trial (its price plan has applyTrial). */
  inTrial: boolean;
}

/** When the subscription starts and for how long it runs. */
export interface PresentedContract {
  /** A startDate still ahead; null: it starts when activated (`activatedBy`). */
  start: string | null;
  /** What activates it: signing the offer (autoActivateSubscription), or the seller afterwards. */
  activatedBy: 'signing' | 'seller';
  /** e.g. "12 months (cancellation 3 months before its end); renewed by 12 months at a time until cancelled". */
  term: string;
}

/** The plan's trial as activation now would start it, and the items free during it. */
export interface PresentedTrial {
  until: string;
  items: string[];
}

export interface OfferPresentation {
  offer: Offer;
  seller: Organisation;
  /** The customer as addressed: company, else first and last name, else customer number. */
  customerName: string;
  /** The customer's time zone: dates are shown on their calendar. */
  timeZone: string;
  contract: PresentedContract;
  items: PresentedItem[];
  /** null without a trial, or when no item is free during it. */
  trial: PresentedTrial | null;
  /** The first invoice (the estimate); null when the subscription bills nothing on its own schedule. */
  estimate: Estimate | null;
  /** Whether an invoice address is known: without one the estimate carries no tax yet. */
  hasInvoiceAddress: boolean;
}

const UNIT_NAMES = { D: ['day', 'daily'], W: ['week', 'weekly'], M: ['month', 'monthly'], Y: ['year', 'yearly'] } as const;

/** "month" and "monthly" for 1M, "3 months" and "every 3 months" for 3M. */
function intervalWords(billingInterval: string): { per: string; adverb: string } {
  const { count, unit } = parseInterval(billingInterval);
  const [noun, adverb] = UNIT_NAMES[unit];
  return count === 1 ? { per: noun, adverb } : { per: `${count} ${noun}s`, adverb: `every ${count} ${noun}s` };
}

/** The length of an interval in its own measure: months for M and Y, days for D and W. */
function lengthOf(interval: string): { measure: 'months' | 'days'; count: number } {
  const { count, unit } = parseInterval(interval);
  if (unit === 'M' || unit === 'Y') return { measure: 'months', count: unit === 'Y' ? count * 12 : count };
  return { measure: 'days', count: unit === 'W' ? count * 7 : count };
}

/**
 * A flat price of `net` minor units per billing interval, shown per the plan's `showPricePerInterval`
 * with the billed amount after it: 120 a year shown per month is "€10.00 per month (€120.00 per
 * year)", the share rounded half-up to the minor unit. The billed amount alone when the two intervals
 * are as long, or when one counts months and the other days (a month has no fixed number of days).
 */
function flatPrice(net: number, plan: PricePlan): string {
  const billed = `${formatMoney(net, plan.currencyCode)} per ${intervalWords(plan.billingInterval).per}`;
  const bill = lengthOf(plan.billingInterval);
  const show = lengthOf(plan.showPricePerInterval);
  if (show.measure !== bill.measure || show.count === bill.count) return billed;
  const shown = divideRounded(BigInt(net) * BigInt(show.count), BigInt(bill.count));
  return `${formatMoney(shown, plan.currencyCode)} per ${intervalWords(plan.showPricePerInterval).per} (${billed})`;
}

/** The price of one unit of usage beyond the free units, as the plan's first tier or package prices it. */
function usagePrice(plan: PricePlan): string {
  const [line] = priceCharge(plan, (BigInt(plan.freeUnits) + 1n) * MICROS);
  const unit = formatUnitAmount(line!.unitAmountDecimal, plan.currencyCode);
  const text =
    plan.type === 'package' ? `${unit} per ${plan.packageSize} units` : plan.type === 'per_unit' ? `${unit} per unit` : `from ${unit} per unit`;
  return plan.freeUnits > 0 ? `${text}, ${plan.freeUnits} free` : text;
}

const DURATION_UNITS = { D: 'day', W: 'week', M: 'month', Y: 'year' } as const;

/** "12 months", "1 week". */
function duration(interval: string): string {
  const { count, unit } = parseInterval(interval);
  return `${count} ${DURATION_UNITS[unit]}${count === 1 ? '' : 's'}`;
}

/** The contract terms in order, the last renewing (CONTRACT section 5: the last period repeats as the renewal term). */
function termText(periods: readonly PeriodRecord[]): string {
  const terms = periods.map((p) => `${duration(p.contractPeriod)} (cancellation ${duration(p.cancellationPeriod)} before its end)`);
  return `${terms.join(', then ')}; renewed by ${duration(periods.at(-1)!.contractPeriod)} at a time until cancelled`;
}

/** How many of the item's invoices a discount reduces: "on the first 3 invoices", "on every invoice". */
function invoicesReduced(spec: { frequency: 'once' | 'limited' | 'forever'; frequencyInterval: number | null }): string {
  if (spec.frequency === 'forever') return 'on every invoice';
  const count = spec.frequency === 'once' ? 1 : (spec.frequencyInterval ?? 1);
  return count === 1 ? 'on the first invoice only' : `on the first ${count} invoices`;
}

/** Each discount of an item with its terms, named as its invoice line names it ("Discount coupon WELCOME20"). */
async function discountTexts(tx: Tx, org: string, discounts: readonly AppliedDiscountRecord[], currency: string): Promise<string[]> {
  const out: string[] = [];
  for (const d of discounts) {
    if (d.status !== 'active') continue;
    const coupon = d.couponId ? await findCoupon(tx, org, d.couponId) : undefined;
    const spec = coupon ?? d.discount;
    if (!spec) continue;
    const label = coupon ? `coupon ${coupon.code}` : (d.discount?.name ?? 'discount');
    const off = spec.type === 'percentage' ? `${spec.percentage}%` : formatMoney(toMinor(spec.fixedAmount!.amount, currency), currency);
    out.push(`Discount ${label}: ${off} off, ${invoicesReduced(spec)}`);
  }
  return out;
}

async function presentItems(tx: Tx, org: string, subscriptionId: string, currency: string, now: Date): Promise<PresentedItem[]> {
  const items = await tx.subscriptions.items(org, [subscriptionId]);
  const discounts = discountsByItem(await tx.subscriptions.discounts(org, items.map((i) => i.id)));
  const out: PresentedItem[] = [];
  for (const item of items) {
    const product = await getProduct(tx, org, item.productId);
    const plan = pricePlanAt(await getPricePlan(tx, org, item.pricePlanId), await priceChangesOf(tx, org, item.pricePlanId), now.toISOString());
    const kind = chargeKindOf(product, plan.type);
    const { adverb } = intervalWords(plan.billingInterval);
    const shared = {
      name: item.name ?? product.name,
      quantity: item.quantity,
      discounts: await discountTexts(tx, org, discounts.get(item.id) ?? [], currency),
      inTrial: plan.applyTrial,
    };
    if (kind === 'flat') {
      const net = priceCharge(plan, toMicros(item.quantity)).reduce((sum, l) => sum + l.netAmount, 0);
      out.push({ ...shared, price: flatPrice(net, plan), billing: `${adverb} ${plan.payInAdvance ? 'in advance' : 'in arrears'}` });
    } else {
      out.push({ ...shared, price: usagePrice(plan), billing: kind === 'instant' ? 'as used' : `${adverb} in arrears, by usage` });
    }
  }
  return out;
}

/** The trial activation now would start (`activatedState`), with the items free during it; null when none is. */
async function presentTrial(tx: Tx, org: string, proposed: SubscriptionRecord, items: readonly PresentedItem[], now: Date): Promise<PresentedTrial | null> {
  const free = items.filter((i) => i.inTrial).map((i) => i.name);
  if (!free.length) return null;
  const { trialEndsOn } = (await activatedState(tx, org, proposed, now)).record;
  return trialEndsOn ? { until: trialEndsOn, items: free } : null;
}

/** The estimate, or null when it has nothing to bill (a conflict of estimateInvoice). */
async function firstInvoice(tx: Tx, org: string, subscriptionId: string, now: Date): Promise<Estimate | null> {
  try {
    return await estimateInvoice(tx, org, subscriptionId, now);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'conflict') return null;
    throw err;
  }
}

/**
 * Everything the offer page and the signed document show of `offer` (its read shape) at `now`. A
 * start that has passed is shown as signing leaves it (`offerStartAt`): from the activation.
 */
export async function presentOffer(tx: Tx, org: string, offer: Offer, now: Date): Promise<OfferPresentation> {
  const customer = offer.customer;
  const subscription = offerStartAt((await tx.subscriptions.get(org, offer.subscription.id))!, now);
  const items = await presentItems(tx, org, subscription.id, customer.currencyCode, now);
  return {
    offer,
    seller: await getOrganisation(tx, org),
    customerName: customerName(customer),
    timeZone: customer.timeZone,
    contract: {
      start: subscription.startDate,
      activatedBy: offer.autoActivateSubscription ? 'signing' : 'seller',
      term: termText(subscription.periods),
    },
    items,
    trial: await presentTrial(tx, org, subscription, items, now),
    estimate: await firstInvoice(tx, org, subscription.id, now),
    hasInvoiceAddress: (await billingAddressOf(tx, org, subscription)) !== undefined,
  };
}

/**
 * A digest of the terms `p` shows: the offer's texts, the plan, the contract, each item with its
 * price, discounts and trial, and the first invoice, its dates as the customer's calendar days (the
 * page shows days, so a form stays valid through the day it was loaded). Status, validity, contact
 * and signatures are left out: they are not what is agreed to. The page's form carries it, and an
 * acceptance with another digest is refused: the terms changed after the page was loaded.
 */
export function termsFingerprint(p: OfferPresentation): string {
  const day = (instant: string) => zoned(instant, p.timeZone).toISODate();
  const { offer, estimate: e } = p;
  const terms = {
    name: offer.name,
    description: offer.description,
    sections: offer.sections.map((s) => s.rendered),
    plan: offer.subscription.plan.name,
    contract: p.contract,
    items: p.items,
    trial: p.trial && { ...p.trial, until: day(p.trial.until) },
    estimate: e && {
      billingDate: day(e.billingDate),
      lines: e.lines.map((l) => [l.description, l.quantity, l.unitAmountDecimal, l.netAmount, l.taxRate]),
      totals: [e.currencyCode, e.netAmount, e.taxes, e.grossAmount],
    },
  };
  return createHash('sha256').update(JSON.stringify(terms)).digest('base64url');
}
