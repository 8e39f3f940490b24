import { conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { CreditNote } from '../schemas/creditNotes.js';
import type { Customer } from '../schemas/customers.js';
import type { Invoice, InvoiceLine, InvoiceResource, InvoiceStatus, InvoiceTax } from '../schemas/invoices.js';
import type { InvoiceFilter, IssuedParties } from '../store/ports/invoices.js';
import type { SubscriptionRecord } from '../store/ports/subscriptions.js';
import type { Tx } from '../store/store.js';
import { billingAddressOf } from './billingDetails.js';
import { findCustomer, getCustomer } from './customers.js';
import { addInterval, toIso, zoned } from './dates.js';
import { decimal, formatDecimal, fractionDigits, multiply, parseDecimal, roundedUnits, unitsAt } from '../values/decimal.js';
import { queueInvoiceEmail } from './emails.js';
import { emitEvent } from './events.js';
import type { Links } from './links.js';
import { formatMoney, percentOf, RATE_SCALE, rateOfE4, rateToE4 } from '../values/money.js';
import { canonicalQuantity, QUANTITY_DIGITS } from './quantity.js';
import { getOrganisation } from './organisation.js';
import { endPlanOfSettledInvoice } from './paymentPlans.js';
import { findSubscription, loadSubscription } from './subscriptions/records.js';

/* ---------------------------------------------------------------------------------------------
 * Invoice math: integers of the currency's minor unit, in the exact decimal arithmetic of
 * `decimal.ts` (BigInt; no binary floating point). Rounding is half-up on the magnitude (half away
 * from zero), to the minor unit, once per line; tax per rate on the summed net.
 * ------------------------------------------------------------------------------------------- */

/** The largest amount in minor units an invoice line or total may reach (9,999,999,999.99 EUR, 999,999,999,999 JPY). */
export const MAX_AMOUNT_CENTS = 999_999_999_999;

/** Fractional digits of a unit price in minor units (`unitAmountDecimal`, Stripe's convention): 0.000001 cent and finer. */
export const UNIT_AMOUNT_DIGITS = 12;

/**
 * quantity (a decimal string, at most 6 fractional digits) x the unit price in minor units (an
 * integer, or a decimal string of at most 12 fractional digits), exactly, rounded once half-up to
 * the minor unit.
 */
function lineNetUnits(quantity: string, unitAmount: number | string): bigint {
  const q = parseDecimal(quantity);
  if (!q || q.units < 0n || q.scale > QUANTITY_DIGITS) throw new RangeError(`not a quantity: ${quantity}`);
  const u = typeof unitAmount === 'number' ? decimal(unitAmount) : parseDecimal(unitAmount);
  if (!u || u.scale > UNIT_AMOUNT_DIGITS) throw new RangeError(`not a unit amount: ${unitAmount}`);
  return roundedUnits(multiply(q, u), 0);
}

/**
 * Net amount of a line in minor units: quantity (a decimal string with at most 6 fractional digits)
 * times the unit price in minor units (an integer, or a decimal string with at most 12 fractional
 * digits), rounded once, half-up, to the minor unit.
 */
export function lineNetAmount(quantity: string, unitAmount: number | string): number {
  const net = lineNetUnits(quantity, unitAmount);
  if (net > BigInt(MAX_AMOUNT_CENTS) || net < -BigInt(MAX_AMOUNT_CENTS)) {
    throw new RangeError(`line amount out of range: ${quantity} x ${unitAmount}`);
  }
  return Number(net);
}

/** The canonical text of a unit price in minor units ("4900", "0.25"); undefined for anything else or more than 12 fractional digits. */
export function canonicalUnitAmount(value: string): string | undefined {
  const d = parseDecimal(value);
  if (!d || fractionDigits(d) > UNIT_AMOUNT_DIGITS) return undefined;
  return formatDecimal(d);
}

/** A unit price of whole minor units as an integer (`unitAmount`); null when it has a fraction of one. */
export function wholeUnitAmount(unitAmountDecimal: string): number | null {
  const d = parseDecimal(unitAmountDecimal);
  const units = d === undefined ? undefined : unitsAt(d, 0);
  return units === undefined ? null : Number(units);
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
  /** A canonical decimal string > 0, at most 6 fractional digits. */
  quantity: string;
  /** Exactly one of unitAmount (integer minor units) and unitAmountDecimal (canonical decimal string of minor units). */
  unitAmount?: number | undefined;
  unitAmountDecimal?: string | undefined;
  taxRate: number;
}

export interface InvoiceInput {
  customer: string;
  subscription?: string | undefined;
  dueAt?: string | undefined;
  status: 'draft' | 'open';
  lines: InvoiceLineInput[];
}

/**
 * `INV-<year>-000001`, counted per organisation and calendar year of issue in the customer's time
 * zone: the year of the issue date the invoice shows.
 */
async function nextInvoiceNumber(tx: Tx, org: string, issuedAt: string, timeZone: string): Promise<string> {
  const year = zoned(issuedAt, timeZone).year;
  const n = await tx.system.nextCounter(org, `invoice:${year}`);
  return `INV-${year}-${String(n).padStart(6, '0')}`;
}

/**
 * The due date of an invoice issued at `issuedAt`: the customer's `paymentTermDays`, else the
 * organisation's default (`BILLING_PAYMENT_TERM_DAYS`), calendar days later at the same wall-clock
 * time in the customer's time zone.
 */
export function dueDateOf(issuedAt: string, customer: Pick<Customer, 'paymentTermDays' | 'timeZone'>, defaultDays: number): string {
  const days = customer.paymentTermDays ?? defaultDays;
  return toIso(addInterval(zoned(issuedAt, customer.timeZone), { count: days, unit: 'D' }));
}

/**
 * The issue date (YYYY-MM-DD in `timeZone`) of an invoice issued at `issuedAt` when `dueAt` falls on
 * an earlier day, else undefined: such an invoice would be overdue the moment it is issued. Days, not
 * instants: an invoice due on its issue date (00:00 of it included) is due at once, as with 0 days of
 * payment terms.
 */
function dueBeforeIssue(dueAt: string, issuedAt: Date, timeZone: string): string | undefined {
  const issued = zoned(issuedAt, timeZone).toISODate() as string;
  return (zoned(dueAt, timeZone).toISODate() as string) < issued ? issued : undefined;
}

/**
 * The invoice with the link to its hosted page (issue 18). A draft has none: its page opens once it
 * is issued (the link is the same then, since it names the invoice, not its state).
 */
export function withHostedUrl(links: Links, org: string, invoice: Invoice): InvoiceResource {
  return { ...invoice, hostedUrl: invoice.status === 'draft' ? null : links.invoice(org, invoice.id) };
}

export type InvoiceEventType = 'invoice.created' | 'invoice.paid' | 'invoice.voided';

/**
 * Writes an invoice event (data key `invoice`: the invoice as get_invoice shows it, without the
 * `hostedUrl` answers add, which hangs on the URL the API was reached at) to the outbox of this unit of work.
 */
export async function emitInvoiceEvent(tx: Tx, org: string, type: InvoiceEventType, invoice: Invoice, now: Date): Promise<void> {
  await emitEvent(tx, org, { type, subjectId: invoice.id, data: { invoice } }, now);
}

/**
 * Issues a draft at `issuedAt`: its number (the year of issuedAt), status open, dueAt per payment
 * terms unless it has one. The customer's credit balance is taken off what is due (`creditApplied`);
 * an invoice with nothing left to pay is paid at once (paidAt = issuedAt). Writes the balance (it
 * becomes `creditBalanceAfter`), not the invoice.
 */
async function issue(tx: Tx, org: string, draft: Invoice, customer: Customer, issuedAt: string, termDays: number, now: Date): Promise<Invoice> {
  const at = now.toISOString();
  const creditApplied = Math.min(customer.creditBalance, draft.grossAmount);
  if (creditApplied > 0) await tx.customers.addCreditBalance(org, customer.id, -creditApplied, at);
  const amountDue = draft.grossAmount - creditApplied;
  const settled = amountDue === 0;
  const dueAt = draft.dueAt ?? dueDateOf(issuedAt, customer, termDays);
  return {
    ...draft,
    number: await nextInvoiceNumber(tx, org, issuedAt, customer.timeZone),
    status: settled ? 'paid' : 'open',
    issuedAt,
    dueAt,
    originalDueAt: dueAt,
    paidAt: settled ? issuedAt : null,
    creditApplied,
    amountDue,
    updatedAt: at,
  };
}

/**
 * What an invoice issued now shows for good (migration 036): the customer's name, number and time
 * zone, the subscription's number and name, the invoice address, the seller, and the reverse charges
 * of its lines.
 */
export function partiesOf(
  customer: Customer,
  subscription: Pick<SubscriptionRecord, 'number' | 'name' | 'poNumber'> | undefined,
  rest: Omit<IssuedParties, 'customer' | 'subscription'>,
): IssuedParties {
  const { customerNumber, companyName, firstName, lastName, timeZone } = customer;
  const { name, legalName, address, vatId, taxNumber, email, invoiceFooter, brandColor } = rest.seller;
  return {
    customer: { customerNumber, companyName, firstName, lastName, timeZone },
    subscription: subscription ? { number: subscription.number, name: subscription.name, poNumber: subscription.poNumber } : null,
    address: rest.address,
    seller: { name, legalName, address, vatId, taxNumber, email, invoiceFooter, brandColor },
    reverseCharges: rest.reverseCharges,
  };
}

/** The parties of an invoice issued by hand: its subscription's invoice address, else the customer's default one, and the organisation. */
async function currentParties(tx: Tx, org: string, customer: Customer, subscriptionId: string | null): Promise<IssuedParties> {
  const subscription = subscriptionId ? await tx.subscriptions.get(org, subscriptionId) : undefined;
  const [address, seller] = await Promise.all([
    billingAddressOf(tx, org, subscription ?? { customerId: customer.id, invoiceAddressId: null }),
    getOrganisation(tx, org),
  ]);
  return partiesOf(customer, subscription, { address: address ?? null, seller, reverseCharges: [] });
}

/** The customer's credit balance after `invoice` was issued (`issue`): less the credit it took. */
export function creditBalanceAfter(balance: number, invoice: Pick<Invoice, 'creditApplied'>): number {
  return balance - invoice.creditApplied;
}

/** invoice.created for an invoice just issued, and invoice.paid when it was settled at once. */
async function announceIssued(tx: Tx, org: string, invoice: Invoice, now: Date): Promise<void> {
  await emitInvoiceEvent(tx, org, 'invoice.created', invoice, now);
  if (invoice.status === 'paid') await emitInvoiceEvent(tx, org, 'invoice.paid', invoice, now);
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
    if ((l.unitAmount === undefined) === (l.unitAmountDecimal === undefined)) {
      const both = l.unitAmount !== undefined;
      violations.push({
        propertyPath: `lines[${i}].${both ? 'unitAmountDecimal' : 'unitAmount'}`,
        message: both
          ? `lines[${i}] gives both unitAmount and unitAmountDecimal; give exactly one (unitAmountDecimal for a fraction of a minor unit)`
          : `lines[${i}] needs a unit price: give unitAmount (integer, minor units) or unitAmountDecimal (decimal string of minor units, e.g. "0.25")`,
        code: both ? 'exclusive' : 'required',
      });
      return;
    }
    const net = lineNetUnits(l.quantity, (l.unitAmount ?? l.unitAmountDecimal) as number | string);
    if (net > BigInt(MAX_AMOUNT_CENTS) || net < -BigInt(MAX_AMOUNT_CENTS)) {
      violations.push({
        propertyPath: `lines[${i}]`,
        message: `lines[${i}]: quantity x unit price must stay within ±${MAX_AMOUNT_CENTS} minor units; split the amount over several invoices`,
        code: 'too_large',
      });
    }
  });
  return violations;
}

/**
 * The id of the subscription an invoice names by id or number: one of this organisation's, and of
 * the invoice's customer; anything else is a violation (an invoice never points at nothing).
 */
async function invoiceSubscription(
  tx: Tx,
  org: string,
  ref: string | undefined,
  customerId: string | undefined,
  violations: Violation[],
): Promise<string | null> {
  if (ref === undefined) return null;
  const subscription = await findSubscription(tx, org, ref);
  if (!subscription) {
    violations.push({
      propertyPath: 'subscription',
      message: `subscription '${ref}' is neither the id nor the number of a subscription; use one from list_subscriptions, or omit it for a one-off invoice`,
      code: 'unknown_reference',
    });
    return null;
  }
  if (customerId !== undefined && subscription.customerId !== customerId) {
    violations.push({
      propertyPath: 'subscription',
      message: `subscription ${subscription.number} belongs to another customer; name one of the invoice's customer, or omit it`,
      code: 'wrong_customer',
    });
  }
  return subscription.id;
}

/** A draft invoice of lines whose net amounts are known; totals per CONTRACT section 8. */
function draftOf(
  base: { customer: string; subscription: string | null; currencyCode: string; dueAt: string | null; dunningOf?: string },
  lines: InvoiceLine[],
  now: Date,
): Invoice {
  const totals = invoiceTotals(lines.map((l) => ({ netAmount: l.netAmount, taxRateE4: rateToE4(l.taxRate) as number })));
  const at = now.toISOString();
  return {
    id: newId(),
    number: null,
    customer: base.customer,
    subscription: base.subscription,
    status: 'draft',
    currencyCode: base.currencyCode,
    lines,
    taxes: totals.taxes.map((t): InvoiceTax => ({ rate: rateOfE4(t.rateE4), netAmount: t.netAmount, taxAmount: t.taxAmount })),
    netAmount: totals.netAmount,
    taxAmount: totals.taxAmount,
    grossAmount: totals.grossAmount,
    amountPaid: 0,
    amountCredited: 0,
    creditApplied: 0,
    amountDue: totals.grossAmount,
    issuedAt: null,
    dueAt: base.dueAt,
    originalDueAt: base.dueAt,
    paidAt: null,
    voidedAt: null,
    dunningPaused: false,
    dunningOf: base.dunningOf ?? null,
    payments: [],
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * A manual invoice. Issued at once (`status` open) unless a draft is asked for; `paymentTermDays` is
 * the organisation's default term, used when the customer has none and no `dueAt` is given.
 */
export async function createInvoice(tx: Tx, org: string, input: InvoiceInput, now: Date, paymentTermDays: number): Promise<Invoice> {
  const customer = await findCustomer(tx, org, input.customer);
  const violations: Violation[] = [];
  if (!customer) {
    violations.push({
      propertyPath: 'customer',
      message: `customer ${input.customer} does not exist in this organisation; use the id or number of an existing customer (list_customers, create_customer)`,
      code: 'unknown_reference',
    });
  }
  const subscription = await invoiceSubscription(tx, org, input.subscription, customer?.id, violations);
  violations.push(...lineViolations(input.lines));
  const dueTooEarly = customer && input.dueAt !== undefined ? dueBeforeIssue(input.dueAt, now, customer.timeZone) : undefined;
  if (dueTooEarly) {
    violations.push({
      propertyPath: 'dueAt',
      message: `dueAt ${input.dueAt} lies before the issue date ${dueTooEarly}${input.status === 'draft' ? ' (a draft is issued today at the earliest)' : ''}; give a later dueAt, or omit it for the payment terms`,
      code: 'before_issue',
    });
  }
  if (violations.length || !customer) throw invalidMany(violations);

  const lines: InvoiceLine[] = input.lines.map((l, i) => {
    const unitAmountDecimal = l.unitAmountDecimal ?? String(l.unitAmount);
    return {
      id: newId(),
      position: i + 1,
      description: l.description,
      quantity: l.quantity,
      unitAmountDecimal,
      unitAmount: wholeUnitAmount(unitAmountDecimal),
      netAmount: lineNetAmount(l.quantity, unitAmountDecimal),
      taxRate: l.taxRate,
      periodStart: null,
      periodEnd: null,
    };
  });
  const dueAt = input.dueAt === undefined ? null : new Date(input.dueAt).toISOString();
  const draft = draftOf({ customer: customer.id, subscription, currencyCode: customer.currencyCode, dueAt }, lines, now);
  if (draft.grossAmount < 0) {
    throw invalid(
      'lines',
      `The invoice would total ${draft.grossAmount} minor units (${formatMoney(draft.grossAmount, customer.currencyCode)}); an invoice cannot be negative. Discount lines (negative unit price) may reduce it to 0 at most`,
      'negative_total',
    );
  }
  if (draft.grossAmount > MAX_AMOUNT_CENTS) {
    throw invalid(
      'lines',
      `The invoice would total ${draft.grossAmount} minor units (${formatMoney(draft.grossAmount, customer.currencyCode)}); at most ${MAX_AMOUNT_CENTS} (${formatMoney(MAX_AMOUNT_CENTS, customer.currencyCode)}) is allowed`,
      'too_large',
    );
  }
  if (input.status === 'draft') {
    await tx.invoices.insert(org, draft);
    return draft;
  }
  const issued = await issue(tx, org, draft, customer, now.toISOString(), paymentTermDays, now);
  await tx.invoices.insert(org, issued);
  await tx.invoices.insertParties(org, issued.id, await currentParties(tx, org, customer, issued.subscription));
  await announceIssued(tx, org, issued, now);
  return issued;
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

/**
 * Issues an invoice of a billing run: numbered INV-<year of issuedAt>-000001, status open, issuedAt the billing date,
 * dueAt per payment terms, totals per CONTRACT (net = sum of line nets, tax per rate on the summed net of that rate, half-up),
 * the customer's credit balance taken off amountDue, a total of 0 (or fully covered by credit) paid at once;
 * emits invoice.created (and invoice.paid when settled at once). Lines may be negative (discount lines); the total never is.
 *
 * `paymentTermDays` is the organisation default (config); the customer's own applies when set. The
 * lines' net amounts are taken as given (the engine prorates and discounts); quantities and unit
 * prices are shown in canonical form. Malformed input is a programming error (RangeError).
 */
export async function issueBilledInvoice(
  tx: Tx,
  org: string,
  input: {
    /** The customer as the caller read it in this unit of work. */
    customer: Customer;
    /** The subscription it bills, if any. */
    subscription: Pick<SubscriptionRecord, 'id' | 'number' | 'name' | 'poNumber'> | null;
    /** The invoice address, the seller and the reverse charges of the lines, as the invoice shows them for good. */
    parties: Omit<IssuedParties, 'customer' | 'subscription'>;
    issuedAt: string;
    lines: BilledLineInput[];
    paymentTermDays: number;
  },
  now: Date,
): Promise<Invoice> {
  const { customer } = input;
  const issuedAt = new Date(input.issuedAt);
  if (Number.isNaN(issuedAt.getTime())) throw new RangeError(`issuedAt is not a date-time: ${input.issuedAt}`);
  const lines: InvoiceLine[] = input.lines.map((l, i) => {
    const unitAmountDecimal = canonicalUnitAmount(l.unitAmountDecimal);
    if (unitAmountDecimal === undefined) throw new RangeError(`lines[${i}].unitAmountDecimal is not a decimal of at most ${UNIT_AMOUNT_DIGITS} fractional digits: ${l.unitAmountDecimal}`);
    if (!Number.isSafeInteger(l.netAmount) || Math.abs(l.netAmount) > MAX_AMOUNT_CENTS) throw new RangeError(`lines[${i}].netAmount out of range: ${l.netAmount}`);
    if (!Number.isInteger(l.taxRateE4) || l.taxRateE4 < 0 || l.taxRateE4 > 100 * RATE_SCALE) throw new RangeError(`lines[${i}].taxRateE4 out of range: ${l.taxRateE4}`);
    return {
      id: newId(),
      position: i + 1,
      description: l.description,
      quantity: canonicalQuantity(l.quantity),
      unitAmountDecimal,
      unitAmount: wholeUnitAmount(unitAmountDecimal),
      netAmount: l.netAmount,
      taxRate: rateOfE4(l.taxRateE4),
      periodStart: l.periodStart,
      periodEnd: l.periodEnd,
    };
  });
  const draft = draftOf({ customer: customer.id, subscription: input.subscription?.id ?? null, currencyCode: customer.currencyCode, dueAt: null }, lines, now);
  if (draft.grossAmount < 0) throw new RangeError(`a billed invoice cannot total less than 0 (got ${draft.grossAmount})`);
  if (draft.grossAmount > MAX_AMOUNT_CENTS) throw new RangeError(`a billed invoice cannot total more than ${MAX_AMOUNT_CENTS} (got ${draft.grossAmount})`);
  const issued = await issue(tx, org, draft, customer, issuedAt.toISOString(), input.paymentTermDays, now);
  // Issued together (one round trip on PostgreSQL); the invoice row goes first, the rows naming it after.
  await Promise.all([
    tx.invoices.insert(org, issued),
    tx.invoices.insertParties(org, issued.id, partiesOf(customer, input.subscription ?? undefined, input.parties)),
    announceIssued(tx, org, issued, now),
    queueInvoiceEmail(tx, org, issued, customer, now),
  ]);
  return issued;
}

/**
 * The fee invoice of a dunning level: one line "Dunning fee, level N, invoice <number>" of `amount`
 * minor units without tax, `dunningOf` the dunned invoice, issued now and due at `dueAt`. The
 * customer's credit balance applies as to any invoice; it is announced (invoice.created) but not
 * e-mailed on its own: the dunning e-mail carries it.
 */
export async function issueFeeInvoice(
  tx: Tx,
  org: string,
  input: { dunned: Invoice; customer: Customer; level: number; amount: number; dueAt: string },
  now: Date,
): Promise<Invoice> {
  const { dunned } = input;
  const line: InvoiceLine = {
    id: newId(),
    position: 1,
    description: `Dunning fee, level ${input.level}, invoice ${dunned.number}`,
    quantity: '1',
    unitAmountDecimal: String(input.amount),
    unitAmount: input.amount,
    netAmount: input.amount,
    taxRate: 0,
    periodStart: null,
    periodEnd: null,
  };
  const base = { customer: dunned.customer, subscription: dunned.subscription, currencyCode: dunned.currencyCode, dueAt: input.dueAt, dunningOf: dunned.id };
  const issued = await issue(tx, org, draftOf(base, [line], now), input.customer, now.toISOString(), 0, now);
  await tx.invoices.insert(org, issued);
  await tx.invoices.insertParties(org, issued.id, await currentParties(tx, org, input.customer, issued.subscription));
  await announceIssued(tx, org, issued, now);
  return issued;
}

/** An invoice by id or by number (INV-2026-000001): every input naming an invoice accepts both. */
export async function findInvoice(tx: Tx, org: string, ref: string): Promise<Invoice | undefined> {
  return (await tx.invoices.get(org, ref)) ?? (await tx.invoices.getByNumber(org, ref));
}

/** The invoice `ref` (id or number) names; a 404 when none does (a list's `invoice` filter too). */
export async function getInvoice(tx: Tx, org: string, ref: string): Promise<Invoice> {
  const invoice = await findInvoice(tx, org, ref);
  if (!invoice) throw notFound('Invoice', ref);
  return invoice;
}

/**
 * A page of invoices, each with its customer's number and name. Customer and subscription may be
 * given by number; `dueBefore` and `overdueAt` may carry any offset and are compared in UTC.
 */
export async function listInvoices(tx: Tx, org: string, filter: InvoiceFilter, page: PageRequest) {
  const customer = filter.customer === undefined ? undefined : (await getCustomer(tx, org, filter.customer)).id;
  const subscription = filter.subscription === undefined ? undefined : (await loadSubscription(tx, org, filter.subscription)).id;
  const utc = (instant: string | undefined) => (instant === undefined ? undefined : new Date(instant).toISOString());
  return tx.invoices.list(org, { ...filter, customer, subscription, dueBefore: utc(filter.dueBefore), overdueAt: utc(filter.overdueAt) }, page);
}

export function statusConflict(invoice: Invoice, action: string, allowed: InvoiceStatus[], hint = ''): never {
  throw conflict(
    `Invoice ${invoice.number ?? invoice.id} is ${invoice.status}; ${action} is allowed only for ${allowed.join(' or ')} invoices.${hint ? ` ${hint}` : ''}`,
  );
}

/** An open invoice under an active payment plan is changed only through the plan. */
export async function refuseIfPlanned(tx: Tx, org: string, invoice: Invoice, action: string): Promise<void> {
  if (!invoice.dunningPaused) return;
  const plan = await tx.paymentPlans.findOpenForInvoice(org, invoice.id);
  throw conflict(
    `Invoice ${invoice.number ?? invoice.id} is covered by the active payment plan ${plan?.id}; cancel the plan (cancel_payment_plan) before ${action}`,
  );
}

export async function finalizeInvoice(tx: Tx, org: string, id: string, now: Date, paymentTermDays: number): Promise<Invoice> {
  const invoice = await getInvoice(tx, org, id);
  if (invoice.status !== 'draft') statusConflict(invoice, 'finalize', ['draft']);
  const customer = await tx.customers.get(org, invoice.customer);
  if (!customer) throw notFound('Customer', invoice.customer);
  const dueTooEarly = invoice.dueAt === null ? undefined : dueBeforeIssue(invoice.dueAt, now, customer.timeZone);
  if (dueTooEarly) {
    throw conflict(
      `Draft invoice ${invoice.id} is due ${invoice.dueAt}, before today's issue date ${dueTooEarly}; a draft's dueAt cannot be changed: void it (void_invoice) and create it again (create_invoice) with a later dueAt or none`,
    );
  }
  const issued = await issue(tx, org, invoice, customer, now.toISOString(), paymentTermDays, now);
  await tx.invoices.update(org, issued);
  await tx.invoices.insertParties(org, issued.id, await currentParties(tx, org, customer, issued.subscription));
  const stored = await getInvoice(tx, org, invoice.id);
  await announceIssued(tx, org, stored, now);
  return stored;
}

/* ---------------------------------------------------------------------------------------------
 * Credit notes (CONTRACT section 8, "Invoices and credit notes"). The core lives here, beside the
 * invoice amounts it changes; src/domain/creditNotes.ts holds the operations.
 * ------------------------------------------------------------------------------------------- */

/** `CN-<year>-000001`, counted per organisation and calendar year of creation in the customer's time zone. */
async function nextCreditNoteNumber(tx: Tx, org: string, at: Date, timeZone: string): Promise<string> {
  const year = zoned(at, timeZone).year;
  const n = await tx.system.nextCounter(org, `credit_note:${year}`);
  return `CN-${year}-${String(n).padStart(6, '0')}`;
}

/**
 * Writes a credit note of `amount` (> 0, checked by the caller against what may be credited) for an
 * open or paid invoice and applies it:
 * - open: it is taken off the amount due. When nothing is left due the invoice is void if credit
 *   notes cover all of it (nothing paid, no credit balance applied); paid otherwise (payments or
 *   the applied balance covered the rest, so gross = paid + credited + applied). `voiding` makes it
 *   void regardless: its note also covers the applied balance, which goes back to the customer.
 * - paid: the amount becomes the customer's credit balance.
 * Emits credit_note.created, then invoice.voided or invoice.paid when the status changed; a broken
 * payment plan of an invoice settled so ends (`endPlanOfSettledInvoice`).
 */
export async function issueCreditNote(
  tx: Tx,
  org: string,
  invoice: Invoice,
  input: { amount: number; reason: string; voiding?: boolean },
  now: Date,
): Promise<{ creditNote: CreditNote; invoice: Invoice }> {
  const at = now.toISOString();
  const holder = await tx.customers.get(org, invoice.customer);
  const creditNote: CreditNote = {
    id: newId(),
    number: await nextCreditNoteNumber(tx, org, now, holder?.timeZone ?? 'UTC'),
    invoice: invoice.id,
    customer: invoice.customer,
    amount: input.amount,
    currencyCode: invoice.currencyCode,
    reason: input.reason,
    createdAt: at,
  };
  await tx.creditNotes.insert(org, creditNote);
  let event: InvoiceEventType | undefined;
  if (invoice.status === 'paid') {
    await tx.customers.addCreditBalance(org, invoice.customer, input.amount, at);
  } else {
    const amountCredited = invoice.amountCredited + input.amount;
    // A voiding credit note also covers the credit balance applied to the invoice, which goes back.
    const left = invoice.amountDue + (input.voiding ? invoice.creditApplied : 0) - input.amount;
    let next: Invoice = { ...invoice, amountCredited, updatedAt: at };
    if (left === 0 && (input.voiding || (invoice.amountPaid === 0 && invoice.creditApplied === 0))) {
      if (invoice.creditApplied > 0) await tx.customers.addCreditBalance(org, invoice.customer, invoice.creditApplied, at);
      next = { ...next, status: 'void', voidedAt: at, creditApplied: 0 };
      event = 'invoice.voided';
    } else if (left === 0) {
      next = { ...next, status: 'paid', paidAt: at };
      event = 'invoice.paid';
    }
    await tx.invoices.update(org, next);
  }
  const stored = await getInvoice(tx, org, invoice.id);
  await emitEvent(tx, org, { type: 'credit_note.created', subjectId: creditNote.id, data: { creditNote } }, now);
  if (event) {
    await emitInvoiceEvent(tx, org, event, stored, now);
    await endPlanOfSettledInvoice(tx, org, stored, now);
  }
  return { creditNote, invoice: stored };
}

/**
 * Voids a draft (nothing was issued: no credit note, no event) or an open invoice: a credit note for
 * what is due and the credit balance applied to it ("Invoice voided", the gross less payments and
 * earlier credit notes) makes it void; the applied balance goes back to the customer; payments
 * already received stay recorded. So the void invoice still adds up: gross = paid + credited.
 */
export async function voidInvoice(tx: Tx, org: string, id: string, now: Date): Promise<Invoice> {
  const invoice = await getInvoice(tx, org, id);
  if (invoice.status !== 'draft' && invoice.status !== 'open') {
    statusConflict(invoice, 'void', ['draft', 'open'], 'Paid and void invoices are final; credit a paid one with create_credit_note.');
  }
  await refuseIfPlanned(tx, org, invoice, 'voiding the invoice');
  const at = now.toISOString();
  if (invoice.status === 'draft') {
    await tx.invoices.update(org, { ...invoice, status: 'void', voidedAt: at, updatedAt: at });
    return getInvoice(tx, org, invoice.id);
  }
  const amount = invoice.amountDue + invoice.creditApplied;
  return (await issueCreditNote(tx, org, invoice, { amount, reason: 'Invoice voided', voiding: true }, now)).invoice;
}

/**
 * The time zone an issued invoice shows its dates in: its customer's as it stood when it was issued
 * (migration 036), else, for an invoice issued before that was kept, the customer's current one.
 */
async function invoiceTimeZone(tx: Tx, org: string, invoice: Invoice): Promise<string> {
  const parties = await tx.invoices.getParties(org, invoice.id);
  return parties?.customer.timeZone ?? (await tx.customers.get(org, invoice.customer))?.timeZone ?? 'UTC';
}

/**
 * When the money for an issued invoice arrived (`paidAt` on input; default now): not in the future
 * and not before the invoice's issue date, the day it shows in the customer's time zone (a booking
 * date at 00:00 of that day is accepted). Earlier money would date the invoice paid before it existed.
 */
export async function paymentTime(tx: Tx, org: string, invoice: Invoice, paidAt: string | undefined, now: Date): Promise<string> {
  if (paidAt === undefined) return now.toISOString();
  const at = new Date(paidAt);
  if (at.getTime() > now.getTime()) {
    throw invalid('paidAt', `paidAt ${paidAt} lies in the future; a payment can only be recorded once it was received (omit paidAt for now)`, 'future');
  }
  const zone = await invoiceTimeZone(tx, org, invoice);
  const issued = zoned(invoice.issuedAt as string, zone).toISODate() as string;
  if ((zoned(at, zone).toISODate() as string) < issued) {
    throw invalid(
      'paidAt',
      `paidAt ${paidAt} lies before the issue date of invoice ${invoice.number} (${issued}); money for it arrives on that day or later (omit paidAt for now)`,
      'before_issue',
    );
  }
  return at.toISOString();
}

/** When an invoice that `paidAt` settles was paid: when the last of its standing payments arrived (they may be recorded out of order). */
function lastPaidAt(invoice: Invoice, paidAt: string): string {
  return invoice.payments.reduce((latest, p) => (p.returnedAt === null && p.paidAt > latest ? p.paidAt : latest), paidAt);
}

/**
 * Adds a payment to an open invoice; the payment that covers the amount due settles it (status paid,
 * paidAt the latest payment's, invoice.paid), which also ends a broken payment plan of the invoice
 * (`endPlanOfSettledInvoice`). The caller has checked the amount against the amount due. `id` names
 * the payment when something else refers to it (a SEPA collection).
 */
export async function applyInvoicePayment(
  tx: Tx,
  org: string,
  invoice: Invoice,
  payment: { id?: string | undefined; amount: number; paidAt: string; paymentPlanId: string | null },
  now: Date,
): Promise<Invoice> {
  const at = now.toISOString();
  const { id = newId(), ...rest } = payment;
  await tx.invoices.insertPayment(org, invoice.id, { id, ...rest, createdAt: at, returnedAt: null });
  const amountPaid = invoice.amountPaid + payment.amount;
  const settled = payment.amount === invoice.amountDue;
  await tx.invoices.update(org, {
    ...invoice,
    amountPaid,
    status: settled ? 'paid' : invoice.status,
    paidAt: settled ? lastPaidAt(invoice, payment.paidAt) : invoice.paidAt,
    updatedAt: at,
  });
  const stored = await getInvoice(tx, org, invoice.id);
  if (settled) {
    await emitInvoiceEvent(tx, org, 'invoice.paid', stored, now);
    await endPlanOfSettledInvoice(tx, org, stored, now);
  }
  return stored;
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
  const paidAt = await paymentTime(tx, org, invoice, input.paidAt, now);
  if (input.amount > invoice.amountDue) {
    throw invalid(
      'amount',
      `amount ${input.amount} exceeds the ${invoice.amountDue} minor units (${formatMoney(invoice.amountDue, invoice.currencyCode)}) still due on invoice ${invoice.number}; overpayments are not accepted`,
      'overpayment',
    );
  }
  return applyInvoicePayment(tx, org, invoice, { amount: input.amount, paidAt, paymentPlanId: null }, now);
}

/**
 * A payment that came back (a returned direct debit): it stays listed with `returnedAt` and its
 * amount is due again; a paid invoice is open again (what it still owes is dunned as usual).
 *
 * The invoice becomes what it would be had the payment never come, so its credit notes still count
 * against it: a credit note issued while it was paid went to the customer's credit balance
 * (`issueCreditNote`), not onto the invoice. What of those credit notes is still in the balance
 * comes back onto the invoice as credited, at most what it owes again (the balance less that much,
 * never below 0): amountDue is gross - creditApplied - paid - credited and no credit counts twice.
 * Nothing left to pay: paid again when a payment still stands (or the balance settled it), else void
 * like an unpaid invoice credited in full, its credit notes covering the gross (the part its
 * creditApplied paid becomes credited, since the balance already holds it back: nothing returns
 * twice).
 */
export async function reopenInvoicePayment(tx: Tx, org: string, invoiceId: string, paymentId: string, returnedAt: string, now: Date): Promise<Invoice> {
  const invoice = await getInvoice(tx, org, invoiceId);
  const payment = invoice.payments.find((p) => p.id === paymentId);
  if (!payment || payment.returnedAt !== null) throw new RangeError(`invoice ${invoice.id} has no standing payment ${paymentId}`);
  await tx.invoices.markPaymentReturned(org, payment.id, returnedAt);
  const at = now.toISOString();
  const amountPaid = invoice.amountPaid - payment.amount;
  if (invoice.status === 'void') {
    await tx.invoices.update(org, { ...invoice, amountPaid, updatedAt: at });
    return getInvoice(tx, org, invoice.id);
  }
  // What the invoice owes again, and the credit notes on it that went to the balance instead.
  const owed = invoice.grossAmount - invoice.creditApplied - amountPaid - invoice.amountCredited;
  const inBalance = Math.max(0, (await tx.creditNotes.totalForInvoice(org, invoice.id)) - invoice.amountCredited);
  const balance = inBalance > 0 ? ((await findCustomer(tx, org, invoice.customer))?.creditBalance ?? 0) : 0;
  const moved = Math.max(0, Math.min(inBalance, balance, owed));
  if (moved > 0) await tx.customers.addCreditBalance(org, invoice.customer, -moved, at);
  const amountCredited = invoice.amountCredited + moved;
  let next: Invoice = { ...invoice, amountPaid, amountCredited, updatedAt: at };
  let event: InvoiceEventType | undefined;
  if (owed - moved > 0) {
    next = { ...next, status: 'open', paidAt: null };
  } else if (amountPaid === 0 && inBalance - moved >= invoice.creditApplied) {
    next = { ...next, status: 'void', voidedAt: at, paidAt: null, amountCredited: amountCredited + invoice.creditApplied, creditApplied: 0 };
    event = 'invoice.voided';
  } else if (invoice.status !== 'paid') {
    next = { ...next, status: 'paid', paidAt: at };
    event = 'invoice.paid';
  }
  await tx.invoices.update(org, next);
  const stored = await getInvoice(tx, org, invoice.id);
  if (event) await emitInvoiceEvent(tx, org, event, stored, now);
  return stored;
}

/** A broken payment plan makes the rest of its invoice due at once. */
export async function makeDueNow(tx: Tx, org: string, invoiceId: string, now: Date): Promise<void> {
  const invoice = await getInvoice(tx, org, invoiceId);
  const at = now.toISOString();
  await tx.invoices.update(org, { ...invoice, dueAt: at, updatedAt: at });
}

