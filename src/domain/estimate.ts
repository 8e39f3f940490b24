import { conflict } from '../errors.js';
import type { Estimate } from '../schemas/estimate.js';
import type { SubscriptionRecord } from '../store/ports/subscriptions.js';
import type { Tx } from '../store/store.js';
import { CatalogueCache, computeDue } from './billing/compute.js';
import { zoned } from './dates.js';
import { invoiceTotals } from './invoices.js';
import { formatMoney, formatUnitAmount, rateOfE4 } from '../values/money.js';
import { activatedState } from './subscriptions/lifecycle.js';
import { FINAL } from './subscriptionStates.js';
import { loadSubscription } from './subscriptions/records.js';


function render(e: Omit<Estimate, 'estimate'>, header: string[]): string {
  const width = 72;
  const money = (minor: number) => formatMoney(minor, e.currencyCode);
  const row = (left: string, right: string) => `${left}${' '.repeat(Math.max(1, width - left.length - right.length))}${right}`;
  const lines = [...header, ''];
  for (const l of e.lines) {
    const qty = l.netAmount < 0 ? '' : ` ${l.quantity} × ${formatUnitAmount(l.unitAmountDecimal, e.currencyCode)}`;
    lines.push(row(`${l.description}${qty}`, money(l.netAmount)));
  }
  lines.push('-'.repeat(width));
  lines.push(row('Net', money(e.netAmount)));
  for (const t of e.taxes) lines.push(row(`Tax ${t.rate}% on ${money(t.netAmount)}`, money(t.taxAmount)));
  lines.push(row(`Gross (${e.currencyCode})`, money(e.grossAmount)));
  if (e.creditNoteAmount !== null) {
    lines.push('', `Credit note on the invoice that billed the period (a decrease this invoice cannot absorb): ${money(e.creditNoteAmount)}`);
  }
  return lines.join('\n');
}

/** Subscriptions not billed yet whose estimate is their first invoice as if activated now (an offer's page shows it). */
const NOT_YET_ACTIVE = new Set(['draft', 'offer']);

/**
 * An offer's subscription whose startDate has passed starts when the offer is signed (startDate
 * cleared: activation starts it), rather than billing every period since then at once: the record as
 * signing at `now` leaves it. Any other subscription is returned as it is.
 */
export function offerStartAt(record: SubscriptionRecord, now: Date): SubscriptionRecord {
  if (record.status !== 'offer' || record.startDate === null || record.startDate >= now.toISOString()) return record;
  return { ...record, startDate: null };
}

/**
 * The invoice the next billing run would create for the subscription (CONTRACT section 8): the
 * billing run's own computation (`computeDue`) with nothing written, for the first billing date still
 * to bill, usage measured so far included. For an unchanged subscription the invoice equals it line
 * for line and cent for cent. A draft or offer subscription is billed as activation at `now` would
 * leave it (`activatedState`, in memory; an offer's with a passed start as signing starts it,
 * `offerStartAt`): its first invoice. A cancelled or terminated one shows its final invoice until
 * that is issued; a paused one is not billed and has none.
 */
export async function estimateInvoice(tx: Tx, org: string, id: string, now: Date): Promise<Estimate> {
  const stored = await loadSubscription(tx, org, id);
  const preview = NOT_YET_ACTIVE.has(stored.status);
  if (stored.status === 'paused') {
    throw conflict(
      `Subscription ${stored.number} is paused: nothing is billed while paused, so there is no next invoice to estimate; resume_subscription bills the periods that came due`,
    );
  }
  const { record, items } = preview ? await activatedState(tx, org, offerStartAt(stored, now), now) : { record: stored, items: undefined };
  const { customer, address, drafts } = await computeDue(tx, org, record, { asOf: null, now, cache: new CatalogueCache(), items });
  const draft = drafts[0];
  if (!draft) {
    const ended = FINAL.includes(record.status) ? ` (it is ${record.status} and its last period is invoiced)` : '';
    throw conflict(`Subscription ${record.number} has nothing left to bill${ended}, so there is no next invoice to estimate`);
  }
  const totals = invoiceTotals(draft.lines);
  const result: Omit<Estimate, 'estimate'> = {
    subscription: record.id,
    customer: record.customerId,
    billingDate: draft.billingDate,
    currencyCode: customer.currencyCode,
    lines: draft.lines.map((l) => ({
      description: l.description,
      periodStart: l.periodStart,
      periodEnd: l.periodEnd,
      quantity: l.quantity,
      unitAmountDecimal: l.unitAmountDecimal,
      netAmount: l.netAmount,
      taxRate: rateOfE4(l.taxRateE4),
    })),
    netAmount: totals.netAmount,
    taxAmount: totals.taxAmount,
    grossAmount: totals.grossAmount,
    taxes: totals.taxes.map((t) => ({ rate: rateOfE4(t.rateE4), netAmount: t.netAmount, taxAmount: t.taxAmount })),
    creditNoteAmount: draft.credits.length ? -invoiceTotals(draft.credits).grossAmount : null,
  };
  const localDate = zoned(draft.billingDate, customer.timeZone).toISODate() as string;
  const who = customer.companyName ?? [customer.firstName, customer.lastName].filter(Boolean).join(' ');
  const header = [
    `Estimated ${preview ? 'first ' : ''}invoice for subscription ${record.number}${record.name ? ` (${record.name})` : ''}${preview ? `, as if activated now (it is ${stored.status})` : ''}`,
    `Customer: ${customer.customerNumber} ${who}`,
    `Billing date: ${localDate} (${customer.timeZone})`,
    address ? `Invoice address: ${address.street}${address.houseNumber ? ` ${address.houseNumber}` : ''}, ${address.zip} ${address.city}, ${address.countryCode}` : 'Invoice address: none (no tax applied)',
  ];
  if (record.trialEndsOn && record.trialEndsOn > now.toISOString()) {
    header.push(`Trial until ${zoned(record.trialEndsOn, customer.timeZone).toISODate()}: items whose price plan has applyTrial are free until then and bill from then`);
  }
  return { estimate: render(result, header), ...result };
}
