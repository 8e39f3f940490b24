/**
 * `instant_metered` usage (interface 2.7): every value pushed is billed at once, on an invoice of its
 * own issued in the unit of work that records it, exactly once (its key is the value's id). The
 * subscription's state does not hold the charge back: the usage happened and was accepted.
 */
import type { Customer } from '../../schemas/customers.js';
import type { MeasurementValueRecord } from '../../store/ports/usage.js';
import type { Tx } from '../../store/store.js';
import { billingAddressOf } from '../billingDetails.js';
import { zoned } from '../dates.js';
import { issueBilledInvoice, type BilledLineInput } from '../invoices.js';
import { getOrganisation } from '../organisation.js';
import { priceCharge } from '../pricing.js';
import { getPricePlan, getProduct } from '../products.js';
import { formatQuantity } from '../quantity.js';
import { discountLines, itemLineText, reverseChargeOf, taxRateE4, usageLabel } from './compute.js';
import type { BillingSettings } from './run.js';

/** How instant invoices are issued: the payment terms, and what to do once one is (kick the webhook delivery after the commit). */
export interface InstantBilling extends BillingSettings {
  onInvoice(): void;
}

export async function billInstantValues(tx: Tx, org: string, values: readonly MeasurementValueRecord[], now: Date, settings: InstantBilling): Promise<void> {
  for (const value of values) {
    if (!value.instant) continue;
    const item = (await tx.subscriptions.getItem(org, value.itemId))!;
    const record = (await tx.subscriptions.get(org, item.subscriptionId))!;
    const customer = (await tx.customers.get(org, record.customerId)) as Customer;
    const product = await getProduct(tx, org, item.productId);
    const plan = await getPricePlan(tx, org, item.pricePlanId);
    const address = await billingAddressOf(tx, org, record);
    const seller = await getOrganisation(tx, org);
    const sellerCountry = seller.address?.countryCode ?? null;
    const rate = taxRateE4(product, address, sellerCountry, zoned(value.measuredAt, customer.timeZone).toISODate() as string);
    const reverse = reverseChargeOf(product, address, sellerCountry);
    const name = item.name ?? product.name;
    const lines: BilledLineInput[] = priceCharge(plan, value.quantityMicros).map((p) => ({
      description: itemLineText(item, `${name} (${usageLabel(product)}: ${formatQuantity(value.quantityMicros)}${p.label ? `, ${p.label}` : ''})`),
      quantity: p.quantity,
      unitAmountDecimal: p.unitAmountDecimal,
      netAmount: p.netAmount,
      taxRateE4: rate,
      periodStart: value.measuredAt,
      periodEnd: value.measuredAt,
    }));
    const net = lines.reduce((sum, l) => sum + l.netAmount, 0);
    const { lines: off, consumed } = await discountLines(tx, org, await tx.subscriptions.discounts(org, [item.id]), net, rate, customer.currencyCode);
    const invoice = await issueBilledInvoice(
      tx,
      org,
      {
        customer,
        subscription: record,
        parties: { address: address ?? null, seller, reverseCharges: reverse ? [reverse] : [] },
        issuedAt: value.measuredAt,
        lines: [...lines, ...off],
        paymentTermDays: seller.paymentTermDays ?? settings.paymentTermDays,
      },
      now,
    );
    await tx.billing.claim(org, [{ itemId: item.id, periodKey: value.id, kind: 'instant' }], invoice.id);
    for (const d of consumed) await tx.subscriptions.updateDiscount(org, d);
    await tx.subscriptions.updateItem(org, { ...item, lastBilledAt: value.measuredAt, lastBilledFrom: value.measuredAt, lastBilledTo: value.measuredAt, updatedAt: now.toISOString() });
    await tx.subscriptions.update(org, { ...record, lastBillingAt: value.measuredAt, updatedAt: now.toISOString() });
    settings.onInvoice();
  }
}
