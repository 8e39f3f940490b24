import { z } from 'zod';
import { changeSubscriptionPlan, previewSubscriptionPlanChange, revokeSubscriptionPlanChange } from '../domain/subscriptions/planChange.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber } from '../schemas/common.js';
import { APPLY_AT, planChangePreviewSchema, planChangeSchema } from '../schemas/planChanges.js';
import { subscriptionSchema } from '../schemas/subscriptions.js';
import { subscriptionPlanView } from '../schemas/views.js';

const changeInput = z.strictObject({
  id: idOrNumber('subscription'),
  plan: z.string().min(1).max(255).describe("Id or code of an active plan of the same family (list_plans)."),
  applyAt: z.enum(APPLY_AT).optional().describe("Default: the plan's changeApplyBehaviour."),
  keepQuantities: z.boolean().optional().describe("false: the new plan's quantities."),
});

const RULES =
  "As the current plan's changeBehaviour allows (upgrade: higher yearly total of flat fees). immediately: unused prepaid days of proRata prices are credited (credit notes), the new plan is invoiced now for the rest of the cycle, usage so far at old prices. end_of_period: pending until the period ends.";

export const planChangeOperations = [
  defineOperation({
    name: 'change_subscription_plan',
    title: 'Change subscription plan',
    description: `Move an active subscription to another plan of its family, keeping item quantities. ${RULES}`,
    toolset: 'subscriptions',
    method: 'POST',
    path: '/subscriptions/{id}/change-plan',
    permission: 'subscription:write',
    kind: 'action',
    input: changeInput,
    output: planChangeSchema,
    mcp: { output: planChangeSchema.extend({ subscription: subscriptionPlanView }) },
    handler: (ctx, { id, ...input }) => changeSubscriptionPlan(ctx.tx, ctx.org, id, input, ctx.now, { paymentTermDays: ctx.config.paymentTermDays }),
  }),
  defineOperation({
    name: 'preview_subscription_plan_change',
    title: 'Preview subscription plan change',
    description: 'What change_subscription_plan with the same input would credit and invoice, by the same code; nothing is kept.',
    toolset: 'subscriptions',
    method: 'POST',
    path: '/subscriptions/{id}/change-plan/preview',
    permission: 'subscription:read',
    kind: 'action',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    dryRun: true,
    input: changeInput,
    output: planChangePreviewSchema,
    handler: (ctx, { id, ...input }) => previewSubscriptionPlanChange(ctx.tx, ctx.org, id, input, ctx.now, { paymentTermDays: ctx.config.paymentTermDays }),
  }),
  defineOperation({
    name: 'revoke_subscription_plan_change',
    title: 'Revoke subscription plan change',
    description: 'Drop the pending plan change (pendingPlanChange); the current plan runs on.',
    toolset: 'subscriptions',
    method: 'DELETE',
    path: '/subscriptions/{id}/pending-plan-change',
    permission: 'subscription:write',
    kind: 'action',
    annotations: { destructiveHint: false, idempotentHint: false },
    input: z.strictObject({ id: idOrNumber('subscription') }),
    output: subscriptionSchema,
    mcp: { output: subscriptionPlanView },
    handler: (ctx, { id }) => revokeSubscriptionPlanChange(ctx.tx, ctx.org, id, ctx.now),
  }),
];
