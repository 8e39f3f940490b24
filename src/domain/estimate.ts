import type { DateTime } from 'luxon';
import { conflict } from '../errors.js';
import type { PricePlan, Product } from '../schemas/catalogue.js';
import type { Customer } from '../schemas/customers.js';
import type { Estimate, EstimateLine } from '../schemas/estimate.js';
import type { ItemRecord, SubscriptionRecord } from '../store/repos/subscriptions.js';
import type { Tx } from '../store/store.js';
import { defaultInvoiceAddress, getInvoiceAddress } from './billingDetails.js';
import { findBillingGroup } from './billingGroups.js';
import { findCoupon, percentageE2 } from './coupons.js';
import { addInterval, parseInterval, periodContaining, toIso, zoned } from './dates.js';
import { invoiceTotals } from './invoices.js';
import { formatMoney, percentOf, rateOfE4, rateToE4, toMinor } from './money.js';
import { getPricePlan, getProduct } from './products.js';
import { priceCharge, type PricedLine } from './pricing.js';
import { formatQuantity, toMicros } from './quantity.js';
import { alignmentOf, itemBillingStart, loadSubscription } from './subscriptions.js';
import { currentInterval, intervalValue, timeWeightedValue } from './usage.js';

/** The rate of a product's tax group for a country at a date: the latest `validFrom` not after it; reverse charge is 0. */
function taxRateE4(product: Product, countryCode: string | undefined, onDate: string): number {
  const group = product.taxGroup;
  if (!group || !countryCode || group.reverseChargeType !== 'REVERSE_CHARGE_DEACTIVATED') return 0;
  const rate = group.taxes
    .filter((t) => t.countryCode === countryCode && t.validFrom <= onDate)
    .sort((a, b) => (a.validFrom < b.validFrom ? 1 : -1))[0];
  return rate ? (rateToE4(rate.rate) ?? 0) : 0;
}

/** Whole local days between two instants (pro rata is by days). */
function days(from: DateTime, to: DateTime): number {
  return Math.round(to.startOf('day').diff(from.startOf('day'), 'days').days);
}

interface ItemCharge {
  item: ItemRecord;
  product: Product;
  pricePlan: PricePlan;
}

/** One estimate line of a charge's priced lines: their summed net; the unit price when it is one whole number of minor units. */
function summed(lines: PricedLine[]): { unitAmount: number | null; netAmount: number } {
  const unit = lines.length === 1 && !lines[0]!.unitAmountDecimal.includes('.') ? Number(lines[0]!.unitAmountDecimal) : null;
  return { unitAmount: unit, netAmount: lines.reduce((sum, l) => sum + l.netAmount, 0) };
}

async function chargeLine(
  tx: Tx,
  org: string,
  record: SubscriptionRecord,
  { item, product, pricePlan }: ItemCharge,
  timeZone: string,
  now: Date,
): Promise<Omit<EstimateLine, 'taxRate'>> {
  const name = item.name ?? product.name;
  if (pricePlan.type !== 'flat_fee' && product.measurement) {
    const interval = await currentInterval(tx, org, record, item, timeZone, now);
    const m = product.measurement;
    const used = m.type === 'recurring' && m.fairBilling ? await timeWeightedValue(tx, org, interval, m) : await intervalValue(tx, org, interval, m);
    const note = pricePlan.freeUnits ? `, ${pricePlan.freeUnits} free` : '';
    const lines = priceCharge(pricePlan, used);
    return {
      description: `${name} (${m.code}: ${formatQuantity(used)} so far${note})`,
      periodStart: interval.from,
      periodEnd: interval.to,
      quantity: lines.length === 1 ? lines[0]!.quantity : formatQuantity(used),
      ...summed(lines),
    };
  }
  const group = record.billingGroupId ? await findBillingGroup(tx, org, record.billingGroupId) : undefined;
  const interval = parseInterval(pricePlan.billingInterval);
  const start = zoned(itemBillingStart(record, item, now), timeZone);
  const due = zoned(item.nextBillingAt as string, timeZone);
  const at = pricePlan.payInAdvance ? due : due.minus({ milliseconds: 1 });
  const period = periodContaining(start, interval, alignmentOf(group), at);
  let description = name;
  const full = days(period.start, addInterval(period.start, interval));
  const actual = days(period.start, period.end);
  const partial = pricePlan.proRata && actual < full;
  if (partial) description = `${name} (pro rata ${actual}/${full} days)`;
  const lines = priceCharge(pricePlan, toMicros(item.quantity), partial ? { num: BigInt(actual), den: BigInt(full) } : undefined);
  return { description, periodStart: toIso(period.start), periodEnd: toIso(period.end), quantity: item.quantity, ...summed(lines) };
}

async function discountLines(
  tx: Tx,
  org: string,
  item: ItemRecord,
  line: { netAmount: number },
  currency: string,
): Promise<Array<{ description: string; netAmount: number }>> {
  const out = [];
  for (const d of await tx.subscriptions.discounts(org, [item.id])) {
    if (d.status !== 'active') continue;
    const coupon = d.couponId ? await findCoupon(tx, org, d.couponId) : undefined;
    const spec = coupon ?? d.discount;
    if (!spec) continue;
    const label = coupon ? `coupon ${coupon.code}` : (d.discount?.name ?? 'discount');
    if (spec.type === 'percentage' && spec.percentage !== null) {
      const off = percentOf(line.netAmount, percentageE2(spec.percentage) ?? 0, 2);
      out.push({ description: `  Discount ${label} (${spec.percentage}%)`, netAmount: -off });
    } else if (spec.fixedAmount) {
      const off = Math.min(toMinor(spec.fixedAmount.amount, currency), line.netAmount);
      out.push({ description: `  Discount ${label}`, netAmount: -off });
    }
  }
  return out;
}

function render(e: Omit<Estimate, 'estimate'>, header: string[]): string {
  const width = 72;
  const money = (minor: number) => formatMoney(minor, e.currencyCode);
  const row = (left: string, right: string) => `${left}${' '.repeat(Math.max(1, width - left.length - right.length))}${right}`;
  const lines = [...header, ''];
  for (const l of e.lines) {
    const period = l.periodStart ? ` ${l.periodStart.slice(0, 10)} – ${l.periodEnd?.slice(0, 10)}` : '';
    const qty = l.quantity !== null && l.unitAmount !== null ? ` ${l.quantity} × ${money(l.unitAmount)}` : '';
    lines.push(row(`${l.description}${period}${qty}`, money(l.netAmount)));
  }
  lines.push('-'.repeat(width));
  lines.push(row('Net', money(e.netAmount)));
  for (const t of e.taxes) lines.push(row(`Tax ${t.rate}% on ${money(t.netAmount)}`, money(t.taxAmount)));
  lines.push(row(`Gross (${e.currencyCode})`, money(e.grossAmount)));
  return lines.join('\n');
}

/**
 * The invoice the next billing run would create for the subscription, usage so far included: every
 * item due at the subscription's next billing date (flat fees for the period they pay, in advance or
 * in arrears, pro rata by days for a short aligned period; usage of the current interval minus free
 * units), item discounts before tax, tax per the product's tax group for the invoice address's
 * country at the billing date (reverse charge 0 %), rounded half-up per line, tax per rate on the
 * summed net.
 */
export async function estimateInvoice(tx: Tx, org: string, id: string, now: Date): Promise<Estimate> {
  const record = await loadSubscription(tx, org, id);
  if (record.status !== 'active') {
    throw conflict(`Subscription ${record.number} is ${record.status}: only an active subscription is billed, so there is no next invoice to estimate`);
  }
  const customer = (await tx.customers.get(org, record.customerId)) as Customer;
  const items = (await tx.subscriptions.items(org, [record.id])).filter(
    (i) => i.nextBillingAt && !(i.billingEnd && Date.parse(i.billingEnd) <= now.getTime()),
  );
  const billingDate = items.map((i) => i.nextBillingAt as string).sort()[0];
  if (!billingDate) throw conflict(`Subscription ${record.number} has no item left to bill`);
  const address = record.invoiceAddressId
    ? await getInvoiceAddress(tx, org, record.customerId, record.invoiceAddressId)
    : await defaultInvoiceAddress(tx, org, record.customerId);
  const localDate = zoned(billingDate, customer.timeZone).toISODate() as string;

  const lines: Array<EstimateLine & { taxRateE4: number }> = [];
  for (const item of items.filter((i) => i.nextBillingAt === billingDate)) {
    const product = await getProduct(tx, org, item.productId);
    const pricePlan = await getPricePlan(tx, org, item.pricePlanId);
    const rateE4 = taxRateE4(product, address?.countryCode, localDate);
    const line = await chargeLine(tx, org, record, { item, product, pricePlan }, customer.timeZone, now);
    const rates = { taxRate: rateOfE4(rateE4), taxRateE4: rateE4 };
    lines.push({ ...line, ...rates });
    for (const d of await discountLines(tx, org, item, line, customer.currencyCode)) {
      lines.push({ ...d, periodStart: null, periodEnd: null, quantity: null, unitAmount: null, ...rates });
    }
  }
  const totals = invoiceTotals(lines);
  const result: Omit<Estimate, 'estimate'> = {
    subscription: record.id,
    customer: record.customerId,
    billingDate,
    currencyCode: customer.currencyCode,
    lines: lines.map(({ taxRateE4: _e4, ...l }) => l),
    netAmount: totals.netAmount,
    taxAmount: totals.taxAmount,
    grossAmount: totals.grossAmount,
    taxes: totals.taxes.map((t) => ({ rate: rateOfE4(t.rateE4), netAmount: t.netAmount, taxAmount: t.taxAmount })),
  };
  const who = customer.companyName ?? [customer.firstName, customer.lastName].filter(Boolean).join(' ');
  const header = [
    `Estimated invoice for subscription ${record.number}${record.name ? ` (${record.name})` : ''}`,
    `Customer: ${customer.customerNumber} ${who}`,
    `Billing date: ${localDate} (${customer.timeZone})`,
    address ? `Invoice address: ${address.street}${address.houseNumber ? ` ${address.houseNumber}` : ''}, ${address.zip} ${address.city}, ${address.countryCode}` : 'Invoice address: none (no tax applied)',
  ];
  return { estimate: render(result, header), ...result };
}
