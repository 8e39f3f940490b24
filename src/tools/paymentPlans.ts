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
import { PAYMENT_PLAN_STATUSES, paymentPlanListItemSchema, paymentPlanSchema } from '../schemas/paymentPlans.js';
import { cents, paidAt } from './invoices.js';
import { paymentPlanListView } from '../schemas/views.js';

const MAX_INSTALLMENTS = 120;

/** Every state change writes its event to the outbox; the worker sends it once the change commits. */
function deliverAfterCommit(ctx: OperationContext): void {
  ctx.afterCommit(() => ctx.deliveries.kick());
}

const schedule = {
  installments: z
    .array(
      z.strictObject({
        dueAt: date.describe('From today on, increasing.'),
        amount: cents('Amount'),
      }),
    )
    .min(1, { message: 'must contain at least 1 installment' })
    .max(MAX_INSTALLMENTS, { message: `must contain at most ${MAX_INSTALLMENTS} installments` })
    .optional()
    .describe("Explicit schedule summing to the invoice's amountDue; or give installmentCount, firstDueAt and interval."),
  installmentCount: z
    .number()
    .int({ message: 'must be a whole number' })
    .min(1, { message: `must be from 1 to ${MAX_INSTALLMENTS}` })
    .max(MAX_INSTALLMENTS, { message: `must be from 1 to ${MAX_INSTALLMENTS}` })
    .optional()
    .describe('Generated schedule: number of installments; a remainder goes one minor unit each to the last ones.'),
  firstDueAt: date
    .optional()
    .describe('Generated schedule: first due date, from today on.'),
  interval: z
    .string()
    .regex(INTERVAL_PATTERN, { message: 'must be <n>D, <n>W, <n>M or <n>Y with n from 1 to 999, e.g. 1M' })
    .optional()
    .describe('Generated schedule: time between due dates, e.g. 1M, 2W, 30D.'),
};

export const paymentPlanOperations = [
  defineOperation({
    name: 'create_payment_plan',
    title: 'Create payment plan',
    description:
      'Split an open invoice that has no active or broken plan into installments. While the plan is active, dunning pauses and payments go through record_payment_plan_payment. Emits payment_plan.created.',
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
        .describe('Id of an active payment method of the customer.'),
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
    description: 'Get a payment plan with its installments: due dates, amounts, amounts paid, statuses.',
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
    description: 'List payment plans, e.g. to find the plan of an invoice.',
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
        .describe('Only plans in this status.'),
    }),
    output: listOf(paymentPlanListItemSchema),
    restBody: {
      schema: listOf(paymentPlanSchema),
      of: (page) => ({ ...page, data: page.data.map(({ invoiceNumber: _number, ...plan }) => plan) }),
    },
    mcp: paymentPlanListView,
    handler: async (ctx, { invoice, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listPaymentPlans(ctx.tx, ctx.org, { invoice, status }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'record_payment_plan_payment',
    title: 'Record payment plan payment',
    description:
      'Record money received for an active payment plan, at most what is still open; it pays the open installments oldest first. Emits payment_plan.rate_paid per installment paid, or payment_plan.completed with the last (the invoice is then paid).',
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
    description:
      'Record that collecting an open installment of an active plan failed (e.g. a bounced direct debit): the plan breaks, the rest of the invoice is due at once and dunning resumes. Emits payment_plan.broken; extend_payment_plan repairs the plan.',
    toolset: 'payments',
    method: 'POST',
    path: '/payment-plans/{id}/installments/{installmentId}/fail',
    permission: 'payment-plan:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    input: z.strictObject({
      id: pathId('active payment plan'),
      installmentId: pathId('open installment'),
      reason: z
        .string()
        .trim()
        .min(1, { message: 'must be 1 to 255 characters' })
        .max(255, { message: 'must be 1 to 255 characters' })
        .describe('Why collection failed, e.g. "SEPA return MD06"; shown as brokenReason.'),
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
    description:
      'Cancel an active payment plan: the invoice is dunned again and payments go through record_invoice_payment. Emits payment_plan.canceled. A broken plan cannot be canceled, only extended.',
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
    description:
      'Give an active or broken payment plan a new schedule for what its invoice (still open) owes: paid installments stay, open and failed ones are replaced, and the plan is active again. Emits payment_plan.extended.',
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
