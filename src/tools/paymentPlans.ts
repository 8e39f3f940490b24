import { z } from 'zod';
import {
  cancelPaymentPlan,
  createPaymentPlan,
  extendPaymentPlan,
  failPaymentPlanInstallment,
  getPaymentPlan,
  INTERVAL_PATTERN,
  listPaymentPlans,
  recordPaymentPlanPayment,
} from '../domain/paymentPlans.js';
import { UUID_RE } from '../ids.js';
import { defineOperation, type OperationContext } from '../registry/operation.js';
import { date, idOrNumber, filterBy, listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';
import { PAYMENT_PLAN_STATUSES, paymentPlanSchema } from '../schemas/paymentPlans.js';
import { cents, paidAt } from './invoices.js';
import { listView, paymentPlanRow } from '../schemas/views.js';

const MAX_INSTALLMENTS = 120;

/** Every state change writes its event to the outbox; the worker sends it once the change commits. */
function deliverAfterCommit(ctx: OperationContext): void {
  ctx.afterCommit(() => ctx.deliveries.kick());
}

const EVENTS_NOTE = 'Webhooks subscribed to the event receive it once the change is committed.';

const schedule = {
  installments: z
    .array(
      z.strictObject({
        dueAt: date.describe('Due date of the installment, YYYY-MM-DD; today at the earliest, each later than the previous one.'),
        amount: cents('Amount of the installment'),
      }),
    )
    .min(1, { message: 'must contain at least 1 installment' })
    .max(MAX_INSTALLMENTS, { message: `must contain at most ${MAX_INSTALLMENTS} installments` })
    .optional()
    .describe(
      `An explicit schedule, 1 to ${MAX_INSTALLMENTS} installments [{ dueAt, amount }]: due dates strictly increasing from today on, amounts > 0 summing exactly to what the invoice still owes. Give this OR installmentCount + firstDueAt + interval, not both.`,
    ),
  installmentCount: z
    .number()
    .int({ message: 'must be a whole number' })
    .min(1, { message: `must be from 1 to ${MAX_INSTALLMENTS}` })
    .max(MAX_INSTALLMENTS, { message: `must be from 1 to ${MAX_INSTALLMENTS}` })
    .optional()
    .describe(
      `Generated schedule: number of installments, 1 to ${MAX_INSTALLMENTS}. The amount owed is split equally; a remainder goes one minor unit each to the last installments. Needs firstDueAt and interval too.`,
    ),
  firstDueAt: date
    .optional()
    .describe('Generated schedule: due date of the first installment, YYYY-MM-DD, today at the earliest. Needs installmentCount and interval too.'),
  interval: z
    .string()
    .regex(INTERVAL_PATTERN, { message: 'must be <n>D, <n>W, <n>M or <n>Y with n from 1 to 999, e.g. 1M' })
    .optional()
    .describe(
      'Generated schedule: time between due dates, <n>D (days), <n>W (weeks), <n>M (months) or <n>Y (years), n from 1 to 999, e.g. 1M for monthly. Month steps keep the day of firstDueAt (the 31st falls back to the month end). Needs installmentCount and firstDueAt too.',
    ),
};

export const paymentPlanOperations = [
  defineOperation({
    name: 'create_payment_plan',
    title: 'Create payment plan',
    description: `Split an open invoice into installments the customer pays over time. Give either an explicit schedule (installments: [{ dueAt, amount }]) or a generated one (installmentCount, firstDueAt, interval). The plan starts active: dunning of the invoice pauses while it is active, and payments for the invoice are then recorded with record_payment_plan_payment. Emits payment_plan.created. ${EVENTS_NOTE} Rejected (422): an unknown invoice; no schedule, both kinds, or an incomplete generated one; due dates in the past or not strictly increasing; amounts that do not sum exactly to the invoice's amountDue; more installments than minor units (cents). Rejected (409): an invoice that is not open (finalize a draft first; paid and void invoices cannot be split), an invoice that already has an active or broken plan.`,
    toolset: 'payments',
    method: 'POST',
    path: '/payment-plans',
    permission: 'payment-plan:write',
    kind: 'create',
    annotations: { openWorldHint: true },
    input: z.strictObject({
      invoice: idOrNumber('invoice', 'open invoice to split'),
      paymentMethod: z
        .string()
        .regex(UUID_RE, { message: 'must be a payment method id (a UUID)' })
        .optional()
        .describe('Optional id (UUID) of the payment method the installments are collected with; shown as paymentMethodId.'),
      ...schedule,
    }),
    output: paymentPlanSchema,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return createPaymentPlan(ctx.tx, ctx.org, input, ctx.now);
    },
  }),
  defineOperation({
    name: 'get_payment_plan',
    title: 'Get payment plan',
    description:
      'Get one payment plan by id: status (active, completed, broken, canceled), totalAmount, the installments with their due dates, amounts, amounts paid and statuses (open, paid, failed), and when it completed, broke (with brokenReason) or was canceled. An unknown id is a 404.',
    toolset: 'payments',
    method: 'GET',
    path: '/payment-plans/{id}',
    permission: 'payment-plan:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('payment plan') }),
    output: paymentPlanSchema,
    handler: (ctx, input) => getPaymentPlan(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'list_payment_plans',
    title: 'List payment plans',
    description:
      'List the payment plans of the organisation, oldest first, paginated (page, limit 0-100); optionally only those of one invoice or with one status. Use it to find the plan of an invoice.',
    toolset: 'payments',
    method: 'GET',
    path: '/payment-plans',
    permission: 'payment-plan:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      invoice: filterBy('invoice', 'plans'),
      status: z
        .enum(PAYMENT_PLAN_STATUSES)
        .optional()
        .describe('Only plans with this status: active, completed, broken or canceled.'),
    }),
    output: listOf(paymentPlanSchema),
    mcp: listView(paymentPlanRow),
    handler: async (ctx, { invoice, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listPaymentPlans(ctx.tx, ctx.org, { invoice, status }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'record_payment_plan_payment',
    title: 'Record payment plan payment',
    description: `Record money received for an active payment plan. It is applied to the open installments oldest first and recorded on the invoice; an installment covered fully becomes paid (event payment_plan.rate_paid with that installment); a part too small for the next installment stays on it as amountPaid. The payment that covers the last open installment completes the plan instead (event payment_plan.completed) and the invoice becomes paid. ${EVENTS_NOTE} Rejected: an amount above what is still open on the plan (422), a paidAt in the future (422), a plan that is not active (409). An unknown id is a 404.`,
    toolset: 'payments',
    method: 'POST',
    path: '/payment-plans/{id}/payments',
    permission: 'payment-plan:write',
    kind: 'action',
    annotations: { destructiveHint: false, openWorldHint: true },
    input: z.strictObject({ id: pathId('active payment plan'), amount: cents('Amount received'), paidAt }),
    output: paymentPlanSchema,
    handler: async (ctx, { id: planId, ...payment }) => {
      deliverAfterCommit(ctx);
      return recordPaymentPlanPayment(ctx.tx, ctx.org, planId, payment, ctx.now);
    },
  }),
  defineOperation({
    name: 'fail_payment_plan_installment',
    title: 'Fail payment plan installment',
    description: `Record that collecting an open installment failed (e.g. a direct debit bounced). The installment becomes failed and the plan broken (brokenAt now, brokenReason your reason); the rest of the invoice is due at once (its dueAt becomes now) and dunning resumes. Emits payment_plan.broken. ${EVENTS_NOTE} A broken plan can be put back on track with extend_payment_plan. Rejected (409): a plan that is not active, an installment that is not open. An unknown plan or installment id is a 404.`,
    toolset: 'payments',
    method: 'POST',
    path: '/payment-plans/{id}/installments/{installmentId}/fail',
    permission: 'payment-plan:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    input: z.strictObject({
      id: pathId('active payment plan'),
      installmentId: pathId('open installment whose collection failed'),
      reason: z
        .string()
        .trim()
        .min(1, { message: 'must be 1 to 255 characters' })
        .max(255, { message: 'must be 1 to 255 characters' })
        .describe('Why the collection failed, 1 to 255 characters, e.g. "SEPA return MD06"; shown as brokenReason.'),
    }),
    output: paymentPlanSchema,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return failPaymentPlanInstallment(ctx.tx, ctx.org, input.id, input.installmentId, input.reason, ctx.now);
    },
  }),
  defineOperation({
    name: 'cancel_payment_plan',
    title: 'Cancel payment plan',
    description: `Cancel an active payment plan by hand: status canceled, canceledAt now; the open amount of the invoice is dunned normally again and can be paid with record_invoice_payment. Installments keep their state. Emits payment_plan.canceled. ${EVENTS_NOTE} Only an active plan can be canceled (409 otherwise: a broken plan can only be extended; completed and canceled are final). An unknown id is a 404.`,
    toolset: 'payments',
    method: 'POST',
    path: '/payment-plans/{id}/cancel',
    permission: 'payment-plan:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    input: z.strictObject({ id: pathId('active payment plan') }),
    output: paymentPlanSchema,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return cancelPaymentPlan(ctx.tx, ctx.org, input.id, ctx.now);
    },
  }),
  defineOperation({
    name: 'extend_payment_plan',
    title: 'Extend payment plan',
    description: `Give an active or broken payment plan a new schedule for what the invoice still owes: paid installments stay, the open and failed ones are replaced by the new installments (an unpaid installment with a partial payment stays as a paid installment of the part paid). The plan becomes active again, brokenAt and brokenReason are cleared and dunning pauses again. Emits payment_plan.extended. ${EVENTS_NOTE} The schedule rules of create_payment_plan apply; the amounts must sum to the invoice's amountDue (422 otherwise). Rejected (409): a completed or canceled plan, a plan whose invoice is no longer open. An unknown id is a 404.`,
    toolset: 'payments',
    method: 'POST',
    path: '/payment-plans/{id}/extend',
    permission: 'payment-plan:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    input: z.strictObject({ id: pathId('active or broken payment plan'), ...schedule }),
    output: paymentPlanSchema,
    handler: async (ctx, { id: planId, ...input }) => {
      deliverAfterCommit(ctx);
      return extendPaymentPlan(ctx.tx, ctx.org, planId, input, ctx.now);
    },
  }),
];
