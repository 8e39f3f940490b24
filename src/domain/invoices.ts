import { conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId, UUID_RE } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Invoice, InvoiceLine, InvoiceStatus, InvoiceTax } from '../schemas/invoices.js';
import type { InvoiceFilter } from '../store/repos/invoices.js';
import type { Tx } from '../store/store.js';
import { customerIdOf, findCustomer } from './customers.js';
import { decimal, multiply, parseDecimal, roundedUnits } from './decimal.js';
import { formatMoney, percentOf, rateOfE4, rateToE4 } from './money.js';
import { QUANTITY_DIGITS } from './quantity.js';
import { findSubscription, subscriptionIdOf } from './subscriptions/records.js';

/* ---------------------------------------------------------------------------------------------
 * Invoice math: integers of the currency's minor unit, in the exact decimal arithmetic of
 * `decimal.ts` (BigInt; no binary floating point). Rounding is half-up on the magnitude (half away
 * from zero), to the minor unit, once per line; tax per rate on the summed net.
 * ------------------------------------------------------------------------------------------- */

/** The largest amount in minor units an invoice line or total may reach (9,999,999,999.99 EUR, 999,999,999,999 JPY). */
export const MAX_AMOUNT_CENTS = 999_999_999_999;

/** quantity (a decimal string, at most 6 fractional digits) x unitAmount in minor units, exactly, rounded half-up to the minor unit. */
function lineNetUnits(quantity: string, unitAmount: number): bigint {
  const q = parseDecimal(quantity);
  if (!q || q.units < 0n || q.scale > QUANTITY_DIGITS) throw new RangeError(`not a quantity: ${quantity}`);
  return roundedUnits(multiply(q, decimal(unitAmount)), 0);
}

/**
 * Net amount of a line in minor units: quantity (a decimal string with at most 6 fractional digits, so
 * that billing runs can bill usage) times the unit amount in minor units, rounded half-up to the minor unit.
 */
export function lineNetAmount(quantity: string, unitAmount: number): number {
  const net = lineNetUnits(quantity, unitAmount);
  if (net > BigInt(MAX_AMOUNT_CENTS) || net < -BigInt(MAX_AMOUNT_CENTS)) {
    throw new RangeError(`line amount out of range: ${quantity} x ${unitAmount}`);
  }
  return Number(net);
}

export interface TaxableLine {
  netAmount: number;
  taxRateE4: number;
}

export interface Totals {
  netAmount: number;
  taxAmount: number;
  grossAmount: number;
  /** One entry per rate, in the order the rates first appear on the lines. */
  taxes: Array<{ rateE4: number; netAmount: number; taxAmount: number }>;
}

/** Totals of an invoice: the net of the lines, tax per rate on the summed net of that rate. */
export function invoiceTotals(lines: readonly TaxableLine[]): Totals {
  const byRate = new Map<number, number>();
  for (const l of lines) byRate.set(l.taxRateE4, (byRate.get(l.taxRateE4) ?? 0) + l.netAmount);
  const taxes = [...byRate].map(([rateE4, netAmount]) => ({
    rateE4,
    netAmount,
    taxAmount: percentOf(netAmount, rateE4),
  }));
  const netAmount = taxes.reduce((sum, t) => sum + t.netAmount, 0);
  const taxAmount = taxes.reduce((sum, t) => sum + t.taxAmount, 0);
  return { netAmount, taxAmount, grossAmount: netAmount + taxAmount, taxes };
}

/* ------------------------------------------------------------------------------------------- */

export interface InvoiceLineInput {
  description: string;
  /** A whole number > 0 for manual lines. */
  quantity: number;
  unitAmount: number;
  taxRate: number;
}

export interface InvoiceInput {
  customer: string;
  subscription?: string | undefined;
  dueAt?: string | undefined;
  status: 'draft' | 'open';
  lines: InvoiceLineInput[];
}

/** `INV-<year>-000001`, counted per organisation and calendar year (UTC) of issue. */
async function nextInvoiceNumber(tx: Tx, org: string, issuedAt: Date): Promise<string> {
  const year = issuedAt.getUTCFullYear();
  const n = await tx.system.nextCounter(org, `invoice:${year}`);
  return `INV-${year}-${String(n).padStart(6, '0')}`;
}

/**
 * Issues a draft: it gets its number, issuedAt and (unless given) dueAt now. An invoice with nothing
 * to pay is settled at once.
 */
async function issue(tx: Tx, org: string, invoice: Invoice, now: Date): Promise<Invoice> {
  const at = now.toISOString();
  const settled = invoice.grossAmount === 0;
  return {
    ...invoice,
    number: await nextInvoiceNumber(tx, org, now),
    status: settled ? 'paid' : 'open',
    issuedAt: at,
    dueAt: invoice.dueAt ?? at,
    paidAt: settled ? at : null,
    amountDue: settled ? 0 : invoice.amountDue,
    updatedAt: at,
  };
}

function lineViolations(lines: InvoiceLineInput[]): Violation[] {
  const violations: Violation[] = [];
  lines.forEach((l, i) => {
    if (rateToE4(l.taxRate) === undefined) {
      violations.push({
        propertyPath: `lines[${i}].taxRate`,
        message: `lines[${i}].taxRate must be a percentage with at most 4 fractional digits (got ${l.taxRate}), e.g. 19, 7 or 8.1`,
        code: 'rate_precision',
      });
    }
    const net = lineNetUnits(String(l.quantity), l.unitAmount);
    if (net > BigInt(MAX_AMOUNT_CENTS) || net < -BigInt(MAX_AMOUNT_CENTS)) {
      violations.push({
        propertyPath: `lines[${i}]`,
        message: `lines[${i}]: quantity x unitAmount must stay within ±${MAX_AMOUNT_CENTS} cents; split the amount over several invoices`,
        code: 'too_large',
      });
    }
  });
  return violations;
}

/**
 * The id of the subscription an invoice names by id or number. An id of no subscription is kept as
 * given (a manual invoice may refer to a subscription billed elsewhere); an unknown number is a violation.
 */
async function invoiceSubscription(tx: Tx, org: string, ref: string | undefined, violations: Violation[]): Promise<string | null> {
  if (ref === undefined) return null;
  const subscription = await findSubscription(tx, org, ref);
  if (subscription) return subscription.id;
  if (!UUID_RE.test(ref)) {
    violations.push({
      propertyPath: 'subscription',
      message: `subscription '${ref}' is neither the id nor the number of a subscription; use one from list_subscriptions, or omit it for a one-off invoice`,
      code: 'unknown_reference',
    });
  }
  return ref;
}

export async function createInvoice(tx: Tx, org: string, input: InvoiceInput, now: Date): Promise<Invoice> {
  const customer = await findCustomer(tx, org, input.customer);
  const violations: Violation[] = [];
  if (!customer) {
    violations.push({
      propertyPath: 'customer',
      message: `customer ${input.customer} does not exist in this organisation; use the id or number of an existing customer (list_customers, create_customer)`,
      code: 'unknown_reference',
    });
  }
  const subscription = await invoiceSubscription(tx, org, input.subscription, violations);
  violations.push(...lineViolations(input.lines));
  if (violations.length || !customer) throw invalidMany(violations);

  const lines: InvoiceLine[] = input.lines.map((l, i) => ({
    id: newId(),
    position: i + 1,
    description: l.description,
    quantity: l.quantity,
    unitAmount: l.unitAmount,
    netAmount: lineNetAmount(String(l.quantity), l.unitAmount),
    taxRate: l.taxRate,
    periodStart: null,
    periodEnd: null,
  }));
  const totals = invoiceTotals(lines.map((l) => ({ netAmount: l.netAmount, taxRateE4: rateToE4(l.taxRate) as number })));
  if (totals.grossAmount < 0) {
    throw invalid(
      'lines',
      `The invoice would total ${totals.grossAmount} cents (${formatMoney(totals.grossAmount, customer.currencyCode)}); an invoice cannot be negative. Discount lines (negative unitAmount) may reduce it to 0 at most`,
      'negative_total',
    );
  }
  if (totals.grossAmount > MAX_AMOUNT_CENTS) {
    throw invalid('lines', `The invoice would total ${totals.grossAmount} cents; at most ${MAX_AMOUNT_CENTS} cents is allowed`, 'too_large');
  }
  const at = now.toISOString();
  const draft: Invoice = {
    id: newId(),
    number: null,
    customer: customer.id,
    subscription,
    status: 'draft',
    currencyCode: customer.currencyCode,
    lines,
    taxes: totals.taxes.map((t): InvoiceTax => ({ rate: rateOfE4(t.rateE4), netAmount: t.netAmount, taxAmount: t.taxAmount })),
    netAmount: totals.netAmount,
    taxAmount: totals.taxAmount,
    grossAmount: totals.grossAmount,
    amountPaid: 0,
    amountDue: totals.grossAmount,
    issuedAt: null,
    dueAt: input.dueAt === undefined ? null : new Date(input.dueAt).toISOString(),
    paidAt: null,
    voidedAt: null,
    dunningPaused: false,
    payments: [],
    createdAt: at,
    updatedAt: at,
  };
  const invoice = input.status === 'open' ? await issue(tx, org, draft, now) : draft;
  await tx.invoices.insert(org, invoice);
  return invoice;
}

/** An invoice by id or by number (INV-2026-000001): every input naming an invoice accepts both. */
export async function findInvoice(tx: Tx, org: string, ref: string): Promise<Invoice | undefined> {
  return (await tx.invoices.get(org, ref)) ?? (await tx.invoices.getByNumber(org, ref));
}

/** The invoice `ref` (id or number) names; a 404 when none does. */
export async function getInvoice(tx: Tx, org: string, ref: string): Promise<Invoice> {
  const invoice = await findInvoice(tx, org, ref);
  if (!invoice) throw notFound('Invoice', ref);
  return invoice;
}

/** The id of the invoice `ref` (id or number) names, for a list filter; `ref` itself, matching nothing, when none does. */
export async function invoiceIdOf(tx: Tx, org: string, ref: string): Promise<string> {
  return (await findInvoice(tx, org, ref))?.id ?? ref;
}

export async function listInvoices(tx: Tx, org: string, filter: InvoiceFilter, page: PageRequest) {
  const customer = filter.customer === undefined ? undefined : await customerIdOf(tx, org, filter.customer);
  const subscription = filter.subscription === undefined ? undefined : await subscriptionIdOf(tx, org, filter.subscription);
  return tx.invoices.list(org, { ...filter, customer, subscription }, page);
}

function statusConflict(invoice: Invoice, action: string, allowed: InvoiceStatus[], hint = ''): never {
  throw conflict(
    `Invoice ${invoice.number ?? invoice.id} is ${invoice.status}; ${action} is allowed only for ${allowed.join(' or ')} invoices.${hint ? ` ${hint}` : ''}`,
  );
}

export async function finalizeInvoice(tx: Tx, org: string, id: string, now: Date): Promise<Invoice> {
  const invoice = await getInvoice(tx, org, id);
  if (invoice.status !== 'draft') statusConflict(invoice, 'finalize', ['draft']);
  const issued = await issue(tx, org, invoice, now);
  await tx.invoices.update(org, issued);
  return getInvoice(tx, org, invoice.id);
}

export async function voidInvoice(tx: Tx, org: string, id: string, now: Date): Promise<Invoice> {
  const invoice = await getInvoice(tx, org, id);
  if (invoice.status !== 'draft' && invoice.status !== 'open') {
    statusConflict(invoice, 'void', ['draft', 'open'], 'Paid and void invoices are final.');
  }
  if (invoice.dunningPaused) {
    const plan = await tx.paymentPlans.findOpenForInvoice(org, invoice.id);
    throw conflict(
      `Invoice ${invoice.number ?? invoice.id} is covered by the active payment plan ${plan?.id}; cancel the plan (cancel_payment_plan) before voiding the invoice`,
    );
  }
  const at = now.toISOString();
  await tx.invoices.update(org, { ...invoice, status: 'void', voidedAt: at, updatedAt: at });
  return getInvoice(tx, org, invoice.id);
}

/** A payment time given on input: not after `now`; defaults to `now`. */
export function paymentTime(paidAt: string | undefined, now: Date): string {
  if (paidAt === undefined) return now.toISOString();
  const at = new Date(paidAt);
  if (at.getTime() > now.getTime()) {
    throw invalid('paidAt', `paidAt ${paidAt} lies in the future; a payment can only be recorded once it was received (omit paidAt for now)`, 'future');
  }
  return at.toISOString();
}

/**
 * Adds a payment to an open invoice; the payment that covers the amount due settles it (status paid,
 * paidAt). The caller has checked the amount against the amount due.
 */
export async function applyInvoicePayment(
  tx: Tx,
  org: string,
  invoice: Invoice,
  payment: { amount: number; paidAt: string; paymentPlanId: string | null },
  now: Date,
): Promise<Invoice> {
  const at = now.toISOString();
  await tx.invoices.insertPayment(org, invoice.id, { id: newId(), ...payment, createdAt: at });
  const amountPaid = invoice.amountPaid + payment.amount;
  const settled = amountPaid === invoice.grossAmount;
  await tx.invoices.update(org, {
    ...invoice,
    amountPaid,
    status: settled ? 'paid' : invoice.status,
    paidAt: settled ? payment.paidAt : invoice.paidAt,
    updatedAt: at,
  });
  return getInvoice(tx, org, invoice.id);
}

export async function recordInvoicePayment(
  tx: Tx,
  org: string,
  id: string,
  input: { amount: number; paidAt?: string | undefined },
  now: Date,
): Promise<Invoice> {
  const invoice = await getInvoice(tx, org, id);
  if (invoice.status !== 'open') {
    statusConflict(invoice, 'recording a payment', ['open'], invoice.status === 'draft' ? 'Finalize it first (finalize_invoice).' : '');
  }
  if (invoice.dunningPaused) {
    const plan = await tx.paymentPlans.findOpenForInvoice(org, invoice.id);
    throw conflict(
      `Invoice ${invoice.number} is being paid through the active payment plan ${plan?.id}; record the payment on the plan (record_payment_plan_payment) instead`,
    );
  }
  const paidAt = paymentTime(input.paidAt, now);
  if (input.amount > invoice.amountDue) {
    throw invalid(
      'amount',
      `amount ${input.amount} exceeds the ${invoice.amountDue} cents still due on invoice ${invoice.number} (${formatMoney(invoice.amountDue, invoice.currencyCode)}); overpayments are not accepted`,
      'overpayment',
    );
  }
  return applyInvoicePayment(tx, org, invoice, { amount: input.amount, paidAt, paymentPlanId: null }, now);
}

/** A broken payment plan makes the rest of its invoice due at once. */
export async function makeDueNow(tx: Tx, org: string, invoiceId: string, now: Date): Promise<void> {
  const invoice = await getInvoice(tx, org, invoiceId);
  const at = now.toISOString();
  await tx.invoices.update(org, { ...invoice, dueAt: at, updatedAt: at });
}

export interface BilledLineInput {
  description: string;
  quantity: string;
  unitAmountDecimal: string;
  netAmount: number;
  taxRateE4: number;
  periodStart: string | null;
  periodEnd: string | null;
}

export async function issueBilledInvoice(
  tx: Tx,
  org: string,
  input: { customerId: string; subscriptionId: string | null; currencyCode: string; issuedAt: string; lines: BilledLineInput[]; paymentTermDays: number },
  now: Date,
): Promise<Invoice> {
  const totals = invoiceTotals(input.lines);
  const at = now.toISOString();
  const issued = new Date(input.issuedAt);
  const settled = totals.grossAmount === 0;
  const invoice: Invoice = {
    id: newId(),
    number: await nextInvoiceNumber(tx, org, issued),
    customer: input.customerId,
    subscription: input.subscriptionId,
    status: settled ? 'paid' : 'open',
    currencyCode: input.currencyCode,
    lines: input.lines.map((l, i) => ({
      id: newId(),
      position: i + 1,
      description: l.description,
      quantity: Number(l.quantity),
      unitAmount: Math.round(Number(l.unitAmountDecimal)),
      netAmount: l.netAmount,
      taxRate: rateOfE4(l.taxRateE4),
      periodStart: l.periodStart,
      periodEnd: l.periodEnd,
    })),
    taxes: totals.taxes.map((t): InvoiceTax => ({ rate: rateOfE4(t.rateE4), netAmount: t.netAmount, taxAmount: t.taxAmount })),
    netAmount: totals.netAmount,
    taxAmount: totals.taxAmount,
    grossAmount: totals.grossAmount,
    amountPaid: settled ? 0 : 0,
    amountDue: settled ? 0 : totals.grossAmount,
    issuedAt: issued.toISOString(),
    dueAt: new Date(issued.getTime() + input.paymentTermDays * 86_400_000).toISOString(),
    paidAt: settled ? issued.toISOString() : null,
    voidedAt: null,
    dunningPaused: false,
    payments: [],
    createdAt: at,
    updatedAt: at,
  };
  await tx.invoices.insert(org, invoice);
  return invoice;
}
