import { DateTime } from 'luxon';
import { conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer } from '../schemas/customers.js';
import type { Invoice } from '../schemas/invoices.js';
import type { Installment, PaymentPlan, PaymentPlanStatus } from '../schemas/paymentPlans.js';
import type { EventType } from '../schemas/webhooks.js';
import type { PaymentPlanFilter } from '../store/ports/paymentPlans.js';
import type { Tx } from '../store/store.js';
import { paymentMethodViolation } from './billingDetails.js';
import { emitEvent } from './events.js';
import { applyInvoicePayment, findInvoice, getInvoice, makeDueNow, paymentTime } from './invoices.js';
import { formatMoney } from '../values/money.js';
import { assertPayingCustomer } from './statusRules.js';

/* ---------------------------------------------------------------------------------------------
 * Schedules: pure functions.
 * ------------------------------------------------------------------------------------------- */

/** `<n>D|W|M|Y` with n from 1 to 999: days, weeks, months or years between installments. */
export const INTERVAL_PATTERN = /^([1-9]\d{0,2})([DWMY])$/;
const UNITS = { D: 'days', W: 'weeks', M: 'months', Y: 'years' } as const;

/**
 * `count` amounts of minor units (count <= total) that sum to `total`: equal shares, and when `total`
 * does not divide evenly the remainder goes to the end of the schedule, one minor unit to each of the
 * last installments (11 in 4: 2, 3, 3, 3), so no two installments differ by more than one unit and the
 * last is never smaller than an earlier one. Integer arithmetic only.
 */
export function splitAmount(total: number, count: number): number[] {
  if (!Number.isSafeInteger(total) || !Number.isSafeInteger(count) || count < 1 || total < count) {
    throw new RangeError(`cannot split ${total} minor units into ${count} installments of at least 1`);
  }
  const remainder = total % count;
  const share = (total - remainder) / count;
  return Array.from({ length: count }, (_, i) => (i >= count - remainder ? share + 1 : share));
}

/**
 * `count` due dates from `first` (YYYY-MM-DD), each `interval` after the previous, always counted from
 * `first` so that month ends do not drift: 2026-01-31 + 1M steps gives 02-28, 03-31, 04-30.
 */
export function scheduleDates(first: string, interval: string, count: number): string[] {
  const m = INTERVAL_PATTERN.exec(interval);
  if (!m) throw new RangeError(`not an interval: ${interval}`);
  const step = Number(m[1]);
  const unit = UNITS[m[2] as keyof typeof UNITS];
  const anchor = DateTime.fromISO(first, { zone: 'UTC' });
  return Array.from({ length: count }, (_, k) => anchor.plus({ [unit]: step * k }).toISODate() as string);
}

/** The calendar date (UTC) of an instant. */
export function dateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/**
 * An installment still open after its due date plus `graceDays` full days breaks the plan: due on
 * 2026-03-01 with 7 grace days, it breaks from 2026-03-09T00:00Z on. Returns the latest due date that
 * is overdue at `now`.
 */
export function overdueCutoff(now: Date, graceDays: number): string {
  return dateOf(new Date(now.getTime() - (graceDays + 1) * 86_400_000));
}

export interface AllocationStep {
  /** The installment the payment covered fully. */
  installment: Installment;
  /** The whole schedule at that moment. */
  installments: Installment[];
}

/**
 * Applies a payment to the open installments oldest first. Each installment covered fully becomes
 * paid (with `paidAt`) and is reported as a step; a rest smaller than the next installment stays on
 * it as a partial payment. The caller has checked that the amount does not exceed what is open.
 */
export function allocatePayment(
  installments: readonly Installment[],
  amount: number,
  paidAt: string,
): { installments: Installment[]; steps: AllocationStep[] } {
  let schedule = [...installments];
  const steps: AllocationStep[] = [];
  let rest = amount;
  for (let i = 0; i < schedule.length && rest > 0; i++) {
    const current = schedule[i] as Installment;
    if (current.status !== 'open') continue;
    const take = Math.min(rest, current.amount - current.amountPaid);
    rest -= take;
    const amountPaid = current.amountPaid + take;
    const full = amountPaid === current.amount;
    const next: Installment = full ? { ...current, amountPaid, status: 'paid', paidAt } : { ...current, amountPaid };
    schedule = schedule.with(i, next);
    if (full) steps.push({ installment: next, installments: schedule });
  }
  return { installments: schedule, steps };
}

/** What is still to be paid on the open installments. */
export function openAmount(installments: readonly Installment[]): number {
  return installments.filter((i) => i.status === 'open').reduce((sum, i) => sum + i.amount - i.amountPaid, 0);
}

/* ------------------------------------------------------------------------------------------- */

export interface ScheduleInput {
  installments?: Array<{ dueAt: string; amount: number }> | undefined;
  installmentCount?: number | undefined;
  firstDueAt?: string | undefined;
  interval?: string | undefined;
}

const GENERATED = ['installmentCount', 'firstDueAt', 'interval'] as const;
const EITHER = 'give either installments [{ dueAt, amount }], or installmentCount + firstDueAt + interval';

/** The due dates and amounts of a schedule that must cover `total` minor units of `currency`, starting no earlier than `today`. */
function buildSchedule(input: ScheduleInput, total: number, currency: string, today: string): Array<{ dueAt: string; amount: number }> {
  const given = GENERATED.filter((k) => input[k] !== undefined);
  if (input.installments !== undefined) {
    if (given.length) {
      throw invalidMany(
        given.map((k) => ({ propertyPath: k, message: `${k} cannot be combined with installments; ${EITHER}`, code: 'exclusive' })),
      );
    }
    const violations: Violation[] = [];
    input.installments.forEach((inst, i) => {
      const previous = input.installments?.[i - 1];
      if (inst.dueAt < today) {
        violations.push({
          propertyPath: `installments[${i}].dueAt`,
          message: `installments[${i}].dueAt ${inst.dueAt} lies in the past; due dates start today (${today}) at the earliest`,
          code: 'past',
        });
      } else if (previous && inst.dueAt <= previous.dueAt) {
        violations.push({
          propertyPath: `installments[${i}].dueAt`,
          message: `installments[${i}].dueAt ${inst.dueAt} must be after installments[${i - 1}].dueAt ${previous.dueAt}; due dates must strictly increase`,
          code: 'not_increasing',
        });
      }
    });
    const sum = input.installments.reduce((s, inst) => s + inst.amount, 0);
    if (sum !== total) {
      violations.push({
        propertyPath: 'installments',
        message: `the installment amounts sum to ${sum} (${formatMoney(sum, currency)}) but must sum to exactly ${total} (${formatMoney(total, currency)}), the amount due on the invoice; amounts are integers of the minor unit of ${currency}`,
        code: 'sum_mismatch',
      });
    }
    if (violations.length) throw invalidMany(violations);
    return input.installments;
  }
  if (given.length === 0) throw invalid('installments', `A schedule is required: ${EITHER}`, 'required');
  const missing = GENERATED.filter((k) => input[k] === undefined);
  if (missing.length) {
    throw invalidMany(
      missing.map((k) => ({
        propertyPath: k,
        message: `${k} is required when generating a schedule; give installmentCount, firstDueAt and interval together (or installments instead)`,
        code: 'required',
      })),
    );
  }
  const count = input.installmentCount as number;
  const first = input.firstDueAt as string;
  if (first < today) {
    throw invalid('firstDueAt', `firstDueAt ${first} lies in the past; due dates start today (${today}) at the earliest`, 'past');
  }
  if (total < count) {
    throw invalid(
      'installmentCount',
      `${count} installments cannot split ${total} minor units (${formatMoney(total, currency)}): every installment needs at least 1 minor unit; use at most ${total} installments`,
      'too_many',
    );
  }
  const amounts = splitAmount(total, count);
  const dates = scheduleDates(first, input.interval as string, count);
  // A calendar date is YYYY-MM-DD (CONTRACT section 2): a schedule may not run past 9999-12-31.
  const last = dates[dates.length - 1] as string;
  if (!/^\d{4}-/.test(last)) {
    throw invalid('interval', `${count} installments every ${input.interval} from ${first} would fall due until ${last}, after 9999-12-31; give an earlier firstDueAt, a shorter interval or fewer installments`, 'out_of_range');
  }
  return dates.map((dueAt, i) => ({ dueAt, amount: amounts[i] as number }));
}

const HINTS: Record<PaymentPlanStatus, string> = {
  active: '',
  broken: ' A broken plan can only be extended with a new schedule (extend_payment_plan).',
  completed: ' Completed plans are final.',
  canceled: ' Canceled plans are final.',
};

function requireStatus(plan: PaymentPlan, action: string, allowed: PaymentPlanStatus[]): void {
  if (allowed.includes(plan.status)) return;
  throw conflict(
    `Payment plan ${plan.id} is ${plan.status}; ${action} is allowed only while it is ${allowed.join(' or ')}.${HINTS[plan.status]}`,
  );
}

async function emitPlanEvent(tx: Tx, org: string, type: EventType, plan: PaymentPlan, now: Date, installment?: Installment) {
  const data: Record<string, unknown> = installment ? { paymentPlan: plan, installment } : { paymentPlan: plan };
  await emitEvent(tx, org, { type, subjectId: plan.id, data }, now);
}

/** The plan with totalAmount, the sum of its installments, in the field order of the resource. */
const withTotal = (p: Omit<PaymentPlan, 'totalAmount'>): PaymentPlan => ({
  id: p.id,
  invoiceId: p.invoiceId,
  status: p.status,
  totalAmount: p.installments.reduce((sum, i) => sum + i.amount, 0),
  currencyCode: p.currencyCode,
  paymentMethodId: p.paymentMethodId,
  createdAt: p.createdAt,
  updatedAt: p.updatedAt,
  completedAt: p.completedAt,
  brokenAt: p.brokenAt,
  canceledAt: p.canceledAt,
  brokenReason: p.brokenReason,
  installments: p.installments,
});

export interface PaymentPlanInput extends ScheduleInput {
  invoice: string;
  paymentMethod?: string | undefined;
}

export async function createPaymentPlan(tx: Tx, org: string, input: PaymentPlanInput, now: Date): Promise<PaymentPlan> {
  const invoice = await findInvoice(tx, org, input.invoice);
  if (!invoice) {
    throw invalid(
      'invoice',
      `invoice ${input.invoice} does not exist in this organisation; use the id or number of an open invoice (list_invoices with status open)`,
      'unknown_reference',
    );
  }
  if (invoice.status !== 'open') {
    throw conflict(
      `Invoice ${invoice.number ?? invoice.id} is ${invoice.status}; a payment plan can only split an open invoice${invoice.status === 'draft' ? ' (finalize it first with finalize_invoice)' : ''}`,
    );
  }
  assertPayingCustomer((await tx.customers.get(org, invoice.customer)) as Customer, invoice.number ?? invoice.id);
  const methodViolation = input.paymentMethod ? await paymentMethodViolation(tx, org, invoice.customer, input.paymentMethod, now, 'leave paymentMethod out') : undefined;
  if (methodViolation) throw invalidMany([methodViolation]);
  const existing = await tx.paymentPlans.findOpenForInvoice(org, invoice.id);
  if (existing) {
    throw conflict(
      `Invoice ${invoice.number} already has the ${existing.status} payment plan ${existing.id}; ${existing.status === 'broken' ? 'extend it (extend_payment_plan)' : 'cancel it (cancel_payment_plan) first, or extend it'} instead of creating another`,
    );
  }
  const schedule = buildSchedule(input, invoice.amountDue, invoice.currencyCode, dateOf(now));
  const at = now.toISOString();
  const plan = withTotal({
    id: newId(),
    invoiceId: invoice.id,
    status: 'active',
    currencyCode: invoice.currencyCode,
    paymentMethodId: input.paymentMethod ?? null,
    createdAt: at,
    updatedAt: at,
    completedAt: null,
    brokenAt: null,
    canceledAt: null,
    brokenReason: null,
    installments: schedule.map((s, i) => ({
      id: newId(),
      position: i + 1,
      dueAt: s.dueAt,
      amount: s.amount,
      amountPaid: 0,
      status: 'open',
      paidAt: null,
    })),
  });
  await tx.paymentPlans.insert(org, plan);
  await emitPlanEvent(tx, org, 'payment_plan.created', plan, now);
  return plan;
}

export async function getPaymentPlan(tx: Tx, org: string, id: string): Promise<PaymentPlan> {
  const plan = await tx.paymentPlans.get(org, id);
  if (!plan) throw notFound('Payment plan', id);
  return plan;
}

export async function listPaymentPlans(tx: Tx, org: string, filter: PaymentPlanFilter, page: PageRequest) {
  const invoice = filter.invoice === undefined ? undefined : (await getInvoice(tx, org, filter.invoice)).id;
  return tx.paymentPlans.list(org, { ...filter, invoice }, page);
}

/**
 * A payment on an active plan: it covers open installments oldest first (`payment_plan.rate_paid` for
 * each one covered fully), is recorded on the invoice, and the payment that covers the last open
 * installment completes the plan and settles the invoice (`payment_plan.completed` instead).
 * `paymentId` names the invoice payment it records (a SEPA collection refers to it).
 */
export async function recordPaymentPlanPayment(
  tx: Tx,
  org: string,
  id: string,
  input: { amount: number; paidAt?: string | undefined },
  now: Date,
  paymentId?: string,
): Promise<PaymentPlan> {
  const plan = await getPaymentPlan(tx, org, id);
  requireStatus(plan, 'recording a payment', ['active']);
  const invoice = await getInvoice(tx, org, plan.invoiceId);
  const paidAt = await paymentTime(tx, org, invoice, input.paidAt, now);
  const open = openAmount(plan.installments);
  if (input.amount > open) {
    throw invalid(
      'amount',
      `amount ${input.amount} exceeds the ${open} minor units (${formatMoney(open, plan.currencyCode)}) still open on payment plan ${plan.id}; overpayments are not accepted`,
      'overpayment',
    );
  }
  const { installments, steps } = allocatePayment(plan.installments, input.amount, paidAt);
  const at = now.toISOString();
  const completed = installments.every((i) => i.status === 'paid');
  const updated: PaymentPlan = {
    ...plan,
    installments,
    status: completed ? 'completed' : 'active',
    completedAt: completed ? at : null,
    updatedAt: at,
  };
  await tx.paymentPlans.update(org, updated);
  // After the plan: the invoice a completed plan settles is no longer under it (invoice.paid shows that).
  await applyInvoicePayment(tx, org, invoice, { id: paymentId, amount: input.amount, paidAt, paymentPlanId: plan.id }, now);
  const ratesPaid = completed ? steps.slice(0, -1) : steps;
  for (const step of ratesPaid) {
    await emitPlanEvent(tx, org, 'payment_plan.rate_paid', { ...plan, installments: step.installments, updatedAt: at }, now, step.installment);
  }
  if (completed) await emitPlanEvent(tx, org, 'payment_plan.completed', updated, now);
  return updated;
}

/** Active → broken: the installment fails, the rest of the invoice is due at once, dunning resumes. */
async function breakPlan(tx: Tx, org: string, plan: PaymentPlan, installmentId: string, reason: string, now: Date) {
  const at = now.toISOString();
  const broken: PaymentPlan = {
    ...plan,
    status: 'broken',
    brokenAt: at,
    brokenReason: reason,
    updatedAt: at,
    installments: plan.installments.map((i) => (i.id === installmentId ? { ...i, status: 'failed' } : i)),
  };
  await tx.paymentPlans.update(org, broken);
  await makeDueNow(tx, org, plan.invoiceId, now);
  await emitPlanEvent(tx, org, 'payment_plan.broken', broken, now);
  return broken;
}

/** A failed collection of an installment (e.g. a returned direct debit) breaks the plan. */
export async function failPaymentPlanInstallment(
  tx: Tx,
  org: string,
  id: string,
  installmentId: string,
  reason: string,
  now: Date,
): Promise<PaymentPlan> {
  const plan = await getPaymentPlan(tx, org, id);
  const installment = plan.installments.find((i) => i.id === installmentId);
  if (!installment) throw notFound('Installment', installmentId);
  requireStatus(plan, 'failing an installment', ['active']);
  if (installment.status !== 'open') {
    throw conflict(`Installment ${installment.position} of payment plan ${plan.id} is ${installment.status}; only an open installment can fail`);
  }
  return breakPlan(tx, org, plan, installment.id, reason, now);
}

/**
 * A collection of `amount` on an installment came back (a returned direct debit; the invoice payment
 * is reopened by the caller): the installment loses the amount and shows `failed`. An active plan, or
 * one this collection had completed, breaks with `reason` (payment_plan.broken, the rest due at once)
 * when the return leaves its invoice open. A completed plan whose invoice stays settled (the credit
 * of its credit notes, back from the customer's balance, covers the amount) does not: nothing is due
 * to schedule or dun, so it stays completed and only records the failed installment, as a broken one
 * does; a canceled one is left as it is.
 */
export async function returnInstallmentCollection(
  tx: Tx,
  org: string,
  id: string,
  installmentId: string,
  amount: number,
  reason: string,
  now: Date,
): Promise<PaymentPlan> {
  const plan = await getPaymentPlan(tx, org, id);
  if (plan.status === 'canceled') return plan;
  const installments = plan.installments.map((i): Installment =>
    i.id === installmentId ? { ...i, amountPaid: i.amountPaid - amount, status: 'failed', paidAt: null } : i,
  );
  if (plan.status !== 'broken' && (await getInvoice(tx, org, plan.invoiceId)).status === 'open') {
    return breakPlan(tx, org, { ...plan, completedAt: null, installments }, installmentId, reason, now);
  }
  const failed: PaymentPlan = { ...plan, updatedAt: now.toISOString(), installments };
  await tx.paymentPlans.update(org, failed);
  return failed;
}

/**
 * The overdue rule of the jobs run: an active plan whose oldest open installment is still open
 * `graceDays` full days after its due date breaks. Returns whether it broke.
 */
export async function breakIfOverdue(tx: Tx, org: string, id: string, graceDays: number, now: Date): Promise<boolean> {
  const plan = await tx.paymentPlans.get(org, id);
  if (plan?.status !== 'active') return false;
  const cutoff = overdueCutoff(now, graceDays);
  const overdue = plan.installments.find((i) => i.status === 'open' && i.dueAt <= cutoff);
  if (!overdue) return false;
  const reason = `Installment ${overdue.position} (${formatMoney(overdue.amount, plan.currencyCode)}, due ${overdue.dueAt}) was still open ${graceDays} days after its due date`;
  await breakPlan(tx, org, plan, overdue.id, reason, now);
  return true;
}

/** → canceled (canceledAt, payment_plan.canceled); installments stay as they are. Not broken any more: brokenAt and brokenReason are cleared. */
async function cancel(tx: Tx, org: string, plan: PaymentPlan, now: Date): Promise<PaymentPlan> {
  const at = now.toISOString();
  const canceled: PaymentPlan = { ...plan, status: 'canceled', canceledAt: at, brokenAt: null, brokenReason: null, updatedAt: at };
  await tx.paymentPlans.update(org, canceled);
  await emitPlanEvent(tx, org, 'payment_plan.canceled', canceled, now);
  return canceled;
}

/**
 * Active → canceled. A broken plan is repaired with extend_payment_plan instead, unless its invoice
 * is no longer open: one settled before such plans ended with it (`endPlanOfSettledInvoice`) can be
 * canceled, as nothing else can end it.
 */
export async function cancelPaymentPlan(tx: Tx, org: string, id: string, now: Date): Promise<PaymentPlan> {
  const plan = await getPaymentPlan(tx, org, id);
  const settledBroken = plan.status === 'broken' && (await getInvoice(tx, org, plan.invoiceId)).status !== 'open';
  if (!settledBroken) requireStatus(plan, 'cancel', ['active']);
  return cancel(tx, org, plan, now);
}

/**
 * A broken plan ends when its invoice is settled outside it (a direct payment, a credit note,
 * void_invoice): nothing is left to schedule, so it is canceled (canceledAt, payment_plan.canceled)
 * instead of staying broken for good. Its installments stay as they were, as on a plan canceled by
 * hand. An active plan never gets here: its invoice is paid and credited only through the plan.
 */
export async function endPlanOfSettledInvoice(tx: Tx, org: string, invoice: Invoice, now: Date): Promise<void> {
  if (invoice.status === 'open') return;
  const plan = await tx.paymentPlans.findOpenForInvoice(org, invoice.id);
  if (plan?.status === 'broken') await cancel(tx, org, plan, now);
}

/**
 * When the money left on a partly paid installment arrived. Payments fill the open installments
 * oldest first in the order they were recorded, and a returned collection had paid the rest of its
 * installment: so it is the plan's last standing payment recorded before that collection
 * (`returnedPaymentId`, the invoice payment it recorded), or, on an installment whose collection did
 * not come back, the plan's last standing payment.
 */
function partPaidAt(invoice: Invoice, planId: string, returnedPaymentId: string | undefined): string | undefined {
  let paidAt: string | undefined;
  for (const p of invoice.payments) {
    if (p.id === returnedPaymentId) break;
    if (p.paymentPlanId === planId && p.returnedAt === null) paidAt = p.paidAt;
  }
  return paidAt;
}

/**
 * Active or broken → active with a new schedule for what the invoice still owes. Paid installments
 * stay; an unpaid one with a partial payment stays as a paid installment of the part paid (paid when
 * that money arrived); the others are replaced. Positions follow the due dates again (a kept
 * installment on the day of a new one comes first). `brokenAt` and `brokenReason` are cleared.
 */
export async function extendPaymentPlan(tx: Tx, org: string, id: string, input: ScheduleInput, now: Date): Promise<PaymentPlan> {
  const plan = await getPaymentPlan(tx, org, id);
  requireStatus(plan, 'extend', ['active', 'broken']);
  const invoice = await getInvoice(tx, org, plan.invoiceId);
  if (invoice.status !== 'open') {
    throw conflict(
      `Invoice ${invoice.number ?? invoice.id} of payment plan ${plan.id} is ${invoice.status}; only a plan on an open invoice can be extended. Nothing is left to schedule: cancel it (cancel_payment_plan)`,
    );
  }
  const schedule = buildSchedule(input, invoice.amountDue, invoice.currencyCode, dateOf(now));
  const at = now.toISOString();
  const partlyPaid = plan.installments.filter((i) => i.status !== 'paid' && i.amountPaid > 0).map((i) => i.id);
  const returned = new Map(
    (await tx.sepa.returnedInstallmentCollections(org, partlyPaid)).map((r) => [r.installmentId, r.invoicePaymentId]),
  );
  const kept = plan.installments
    .filter((i) => i.status === 'paid' || i.amountPaid > 0)
    .map((i): Installment =>
      i.status === 'paid' ? i : { ...i, amount: i.amountPaid, status: 'paid', paidAt: partPaidAt(invoice, plan.id, returned.get(i.id)) ?? at },
    );
  const installments: Installment[] = [
    ...kept,
    ...schedule.map((s): Installment => ({ id: newId(), position: 0, dueAt: s.dueAt, amount: s.amount, amountPaid: 0, status: 'open', paidAt: null })),
  ]
    .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0))
    .map((i, k) => ({ ...i, position: k + 1 }));
  const extended = withTotal({ ...plan, status: 'active', brokenAt: null, brokenReason: null, updatedAt: at, installments });
  await tx.paymentPlans.update(org, extended);
  await emitPlanEvent(tx, org, 'payment_plan.extended', extended, now);
  return extended;
}
