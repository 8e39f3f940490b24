/**
 * An offer as its recipients read it (issue 18): on the offer page and in the signed PDF, so that what
 * is signed is what was shown. The prices are the billing's own: each item priced by `priceCharge`,
 * and the first invoice the estimate of the proposed subscription (as if activated now).
 */
import { AppError } from '../errors.js';
import type { Estimate } from '../schemas/estimate.js';
import type { Offer } from '../schemas/offers.js';
import type { Organisation } from '../schemas/organisation.js';
import type { PricePlan } from '../schemas/catalogue.js';
import type { Tx } from '../store/store.js';
import { customerName } from './emails.js';
import { divideRounded } from '../values/decimal.js';
import { formatMoney, formatUnitAmount } from '../values/money.js';
import { chargeKindOf } from './billing/schedule.js';
import { billingAddressOf } from './billingDetails.js';
import { parseInterval } from './dates.js';
import { estimateInvoice } from './estimate.js';
import { getOrganisation } from './organisation.js';
import { priceCharge } from './pricing.js';
import { getPricePlan, getProduct, priceChangesOf, pricePlanAt } from './products.js';
import { MICROS, toMicros } from './quantity.js';

/** One item of the proposed subscription: what it costs per billing interval, and when it is billed. */
export interface PresentedItem {
  name: string;
  quantity: string;
  /** e.g. "€49.90 per month", "€10.00 per month (€120.00 per year)", "€0.01 per unit, 100 free". */
  price: string;
  /** e.g. "monthly in advance", "monthly in arrears, by usage". */
  billing: string;
}

export interface OfferPresentation {
  offer: Offer;
  seller: Organisation;
  /** The customer as addressed: company, else first and last name, else customer number. */
  customerName: string;
  /** The customer's time zone: dates are shown on their calendar. */
  timeZone: string;
  items: PresentedItem[];
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

async function presentItems(tx: Tx, org: string, subscriptionId: string, now: Date): Promise<PresentedItem[]> {
  const out: PresentedItem[] = [];
  for (const item of await tx.subscriptions.items(org, [subscriptionId])) {
    const product = await getProduct(tx, org, item.productId);
    const plan = pricePlanAt(await getPricePlan(tx, org, item.pricePlanId), await priceChangesOf(tx, org, item.pricePlanId), now.toISOString());
    const kind = chargeKindOf(product, plan.type);
    const { adverb } = intervalWords(plan.billingInterval);
    const name = item.name ?? product.name;
    if (kind === 'flat') {
      const net = priceCharge(plan, toMicros(item.quantity)).reduce((sum, l) => sum + l.netAmount, 0);
      const billing = `${adverb} ${plan.payInAdvance ? 'in advance' : 'in arrears'}`;
      out.push({ name, quantity: item.quantity, price: flatPrice(net, plan), billing });
    } else {
      const billing = kind === 'instant' ? 'as used' : `${adverb} in arrears, by usage`;
      out.push({ name, quantity: item.quantity, price: usagePrice(plan), billing });
    }
  }
  return out;
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

/** Everything the offer page and the signed document show of `offer` (its read shape) at `now`. */
export async function presentOffer(tx: Tx, org: string, offer: Offer, now: Date): Promise<OfferPresentation> {
  const customer = offer.customer;
  const subscription = (await tx.subscriptions.get(org, offer.subscription.id))!;
  return {
    offer,
    seller: await getOrganisation(tx, org),
    customerName: customerName(customer),
    timeZone: customer.timeZone,
    items: await presentItems(tx, org, subscription.id, now),
    estimate: await firstInvoice(tx, org, subscription.id, now),
    hasInvoiceAddress: (await billingAddressOf(tx, org, subscription)) !== undefined,
  };
}
