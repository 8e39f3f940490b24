import { z } from 'zod';
import { QUANTITY_DIGITS } from '../domain/plans.js';
import { microsOfNumber } from '../domain/quantity.js';
import { orderProducts, updateSubscriptionItem } from '../domain/subscriptions/items.js';
import {
  activateSubscription,
  cancelSubscription,
  createSubscription,
  pauseSubscription,
  resumeSubscription,
  revokeCancellation,
  terminateSubscription,
  updateSubscription,
} from '../domain/subscriptions/lifecycle.js';
import { getSubscription, getSubscriptionItem, listSubscriptions } from '../domain/subscriptions/readModel.js';
import { estimateInvoice } from '../domain/estimate.js';
import { defineOperation } from '../registry/operation.js';
import { estimateSchema } from '../schemas/estimate.js';
import { amountInput, COUPON_FREQUENCIES, currencyCodeInput, customPricePlanShape } from '../schemas/catalogue.js';
import { dateTimeInput, filterBy, idOrNumber, listOf, MAJOR, pageInput, pathId, text255, paged } from '../schemas/common.js';
import { SUBSCRIPTION_STATUSES, subscriptionItemSchema, subscriptionSchema, type Subscription } from '../schemas/subscriptions.js';
import type { Tx } from '../store/store.js';
import { listView, subscriptionItemView, subscriptionRow, subscriptionStateView, subscriptionView } from '../schemas/views.js';

const ref = (what: string) => z.string().min(1).max(255).describe(what);

export const periods = z
  .array(
    z.strictObject({
      contractPeriod: z
        .string()
        .regex(/^[1-9]\d{0,2}[DWMY]$/, { message: 'must be 1 to 999 followed by D, W, M or Y, e.g. 12M or 1Y' })
        .describe('Term length, e.g. 12M.'),
      cancellationPeriod: z
        .string()
        .regex(/^(0|[1-9]\d{0,2})[DWMY]$/, { message: 'must be 0 to 999 followed by D, W, M or Y, e.g. 3M or 0D' })
        .describe('Notice to cancel at a term end, e.g. 3M.'),
    }),
  )
  .min(1, { message: 'must contain at least 1 item' })
  .max(10, { message: 'must contain at most 10 items' })
  .describe('Contract terms: the first is the initial term, the last repeats as the renewal term.');

const nullableText = (what: string) => text255.nullable().optional().describe(what);
const customFields = z
  .record(z.string(), z.unknown())
  .describe('Custom field values by key (create_custom_field).');
const billingGroup = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .optional()
  .describe('Billing group id, aligning billing dates; null: anniversary billing.');
const paymentMethod = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .optional()
  .describe("Customer's payment method id; null: their default.");
const invoiceAddress = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .optional()
  .describe("Customer's invoice address id; null: their default.");

const quantity = z
  .number()
  .gt(0, { message: 'must be greater than 0' })
  .refine((v) => microsOfNumber(v) !== undefined, { message: `must have at most ${QUANTITY_DIGITS} fractional digits` });

const discount = z
  .strictObject({
    name: text255.nullable().optional().describe('Invoice label of an inline discount.'),
    coupon: ref('Id or code of an enabled coupon (list_coupons).').optional(),
    type: z.enum(['percentage', 'fixed_amount']).optional().describe('Kind of inline discount.'),
    frequency: z.enum(COUPON_FREQUENCIES).optional().describe('once (the next invoice; default), limited (frequencyInterval invoices) or forever.'),
    percentage: z
      .number()
      .gt(0, { message: 'must be more than 0' })
      .max(100, { message: 'must be at most 100' })
      .optional()
      .describe('Percent off; with type percentage.'),
    fixedAmount: z
      .strictObject({
        amount: amountInput('positive').describe(`${MAJOR}, at most the currency's minor-unit digits.`),
        currency: currencyCodeInput.describe("The subscription's currency code."),
      })
      .optional()
      .describe(`Amount off per invoice, ${MAJOR}; with type fixed_amount.`),
    frequencyInterval: z.number().int().min(1).optional().describe('Invoices discounted; with frequency limited.'),
  })
  .describe('A coupon, or an inline discount (type with percentage or fixedAmount).');

const orderEntry = {
  product: ref('Product id (list_products).'),
  quantity: quantity.optional().describe('Default 1; not for a metered product.'),
  pricePlan: ref('Price plan of the product (list_price_plans), in the subscription currency.').optional(),
  customPricePlan: z
    .strictObject(customPricePlanShape)
    .optional()
    .describe('A price just for this item, in the subscription currency.'),
  periods: periods.optional().describe("Own contract terms; default the subscription's."),
  customName: text255.optional().describe("Invoice name instead of the product's."),
  customDescription: z.string().max(1000).optional().describe('Item description on invoices.'),
  furtherInformation: text255.optional().describe("Printed after the item's invoice lines."),
  discount: discount.optional(),
  autoAssignProductGroup: z.boolean().optional().describe('Ignored.'),
};

/** The fields of the subscription a create_subscription or an offer proposes (without its customer). */
export const subscriptionInputShape = {
  plan: ref('Plan id or code (list_plans), not archived.'),
  periods,
  billingGroup,
  startDate: dateTimeInput.optional().describe('Contract start; default: on activation.'),
  name: nullableText('Grouping header on invoices; default the plan name.'),
  number: text255.min(1).optional().describe('Unique subscription number; generated (SUB-000001) when omitted.'),
  externalId: nullableText('Id in an external system.'),
  poNumber: nullableText('Purchase order number.'),
  customFields: customFields.optional(),
  paymentMethod,
  invoiceAddress,
  addons: z
    .array(z.strictObject({ product: ref('Product id of a plan addon.'), pricePlan: ref('Price plan id of that addon.') }))
    .max(50, { message: 'must contain at most 50 items' })
    .optional()
    .describe("Plan addons to include, from get_plan's addons."),
};

const annotate = (destructiveHint: boolean) => ({ destructiveHint, idempotentHint: false });

/** A state transition that takes nothing but the subscription id: PUT /subscriptions/{id}/<segment>. */
function transition(t: {
  name: string;
  title: string;
  segment: string;
  destructive: boolean;
  description: string;
  run: (tx: Tx, org: string, id: string, now: Date) => Promise<Subscription>;
}) {
  return defineOperation({
    name: t.name,
    title: t.title,
    description: t.description,
    toolset: 'subscriptions',
    method: 'PUT',
    path: `/subscriptions/{id}/${t.segment}`,
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(t.destructive),
    input: z.strictObject({ id: idOrNumber('subscription') }),
    output: subscriptionSchema,
    mcp: { output: subscriptionStateView },
    handler: (ctx, input) => t.run(ctx.tx, ctx.org, input.id, ctx.now),
  });
}

export const subscriptionOperations = [
  defineOperation({
    name: 'create_subscription',
    title: 'Create subscription',
    description:
      "Subscribe a customer to a plan priced in the customer's currency. Items come from the plan's charges and listed addons.",
    toolset: 'subscriptions',
    method: 'POST',
    path: '/subscriptions',
    permission: 'subscription:write',
    kind: 'create',
    input: z.strictObject({
      customer: idOrNumber('customer'),
      ...subscriptionInputShape,
      activate: z.boolean().optional().describe('true: active at once; else draft.'),
    }),
    output: subscriptionSchema,
    mcp: subscriptionView,
    handler: (ctx, input) => createSubscription(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_subscriptions',
    title: 'List subscriptions',
    description: 'List subscriptions, oldest first, optionally by customer, status or externalId.',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscriptions',
    permission: 'subscription:read',
    kind: 'list',
    customerAccess: { permission: 'customer:self:read', customerField: 'customer' },
    input: z.strictObject({
      ...pageInput,
      customer: filterBy('customer', 'subscriptions'),
      status: z.enum(SUBSCRIPTION_STATUSES).optional().describe('Only subscriptions in this status.'),
      externalId: text255.min(1).optional().describe("Only the subscriptions with this externalId (another system's id)."),
    }),
    output: listOf(subscriptionSchema),
    mcp: listView(subscriptionRow),
    handler: (ctx, input) => paged(input, (page) => listSubscriptions(ctx.tx, ctx.org, input, page, ctx.now)),
  }),
  defineOperation({
    name: 'get_subscription',
    title: 'Get subscription',
    description:
      'Get a subscription with its items, periods and computed fields (nextBillingDate, nextPossibleCancellationDate, …).',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscriptions/{id}',
    permission: 'subscription:read',
    kind: 'read',
    customerAccess: { permission: 'customer:self:read', resultCustomer: (s) => s.customer.id },
    input: z.strictObject({ id: idOrNumber('subscription') }),
    output: subscriptionSchema,
    mcp: subscriptionView,
    handler: (ctx, input) => getSubscription(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'update_subscription',
    title: 'Update subscription',
    description:
      'Replace the contract periods (required) and change other fields: omitted ones stay, null clears. Cancelled and terminated subscriptions cannot change.',
    toolset: 'subscriptions',
    method: 'PUT',
    path: '/subscriptions/{id}',
    permission: 'subscription:write',
    kind: 'update',
    input: z.strictObject({
      id: idOrNumber('subscription'),
      periods,
      billingGroup,
      startDate: dateTimeInput.nullable().optional().describe('Contract start; only while draft.'),
      poNumber: nullableText('Purchase order number.'),
      name: nullableText('Grouping header on invoices.'),
      number: text255.min(1).optional().describe('Unique subscription number.'),
      externalId: nullableText('Id in an external system.'),
      customFields: customFields.optional().describe('Replaces the whole custom-field map (create_custom_field).'),
      paymentMethod,
      invoiceAddress,
    }),
    output: subscriptionSchema,
    mcp: subscriptionView,
    handler: (ctx, { id, ...input }) => updateSubscription(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  transition({
    name: 'activate_subscription',
    title: 'Activate subscription',
    segment: 'activate',
    destructive: false,
    description:
      'Activate a draft subscription: its contract and billing start (at startDate, or now).',
    run: activateSubscription,
  }),
  transition({
    name: 'pause_subscription',
    title: 'Pause subscription',
    segment: 'pause',
    destructive: false,
    description:
      'Pause an active subscription: it is not billed until resume_subscription.',
    run: pauseSubscription,
  }),
  defineOperation({
    name: 'resume_subscription',
    title: 'Resume subscription',
    description:
      'Resume a paused subscription. Without nextBillingDate every billing period missed while paused is billed.',
    toolset: 'subscriptions',
    method: 'PUT',
    path: '/subscriptions/{id}/resume',
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(false),
    input: z.strictObject({
      id: idOrNumber('subscription'),
      nextBillingDate: dateTimeInput
        .nullable()
        .optional()
        .describe("Every item's next billing date, not before the pause began; the pause is never billed."),
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionStateView },
    handler: (ctx, { id, ...input }) => resumeSubscription(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'cancel_subscription',
    title: 'Cancel subscription',
    description:
      'Cancel an active or paused subscription at a term end its cancellation period allows; until then revoke_subscription_cancellation undoes it. To end it now: terminate_subscription.',
    toolset: 'subscriptions',
    method: 'PUT',
    path: '/subscriptions/{id}/cancel',
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(true),
    input: z.strictObject({
      id: idOrNumber('subscription'),
      cancellationDate: dateTimeInput.optional().describe('A term end from nextPossibleCancellationDate or later (in a trial: up to trialEndsOn); default the first.'),
      reason: z
        .strictObject({
          code: z.string().min(1).max(64).describe('Machine code, e.g. too_expensive.'),
          name: text255.min(1).optional().describe('Readable reason; default the code.'),
        })
        .optional()
        .describe('Why the customer cancels.'),
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionStateView },
    handler: (ctx, { id, ...input }) => {
      ctx.afterCommit(() => ctx.deliveries.kick());
      return cancelSubscription(ctx.tx, ctx.org, id, input, ctx.now);
    },
  }),
  transition({
    name: 'revoke_subscription_cancellation',
    title: 'Revoke subscription cancellation',
    segment: 'revoke-cancellation',
    destructive: false,
    description:
      'Undo a pending cancellation: the subscription continues and renews.',
    run: revokeCancellation,
  }),
  transition({
    name: 'terminate_subscription',
    title: 'Terminate subscription',
    segment: 'terminate',
    destructive: true,
    description:
      'End a draft, active or paused subscription now, regardless of contract terms; final. To end it at a term end: cancel_subscription.',
    run: terminateSubscription,
  }),
  defineOperation({
    name: 'order_subscription_products',
    title: 'Order products for a subscription',
    description:
      "Add products to a draft, active or paused subscription, or an open offer's, as addon items; all or nothing. Each entry takes exactly one of pricePlan or customPricePlan.",
    toolset: 'subscriptions',
    method: 'POST',
    path: '/subscriptions/{id}/products',
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(false),
    input: z.strictObject({
      id: idOrNumber('subscription'),
      billingStart: dateTimeInput.optional().describe('Billing start of all ordered items, not before startDate.'),
      startDate: dateTimeInput.optional().describe('Start of all ordered items.'),
      endDate: dateTimeInput.optional().describe('End of all ordered items: future, after startDate.'),
      products: z
        .array(
          z.strictObject({
            ...orderEntry,
            children: z.array(z.strictObject(orderEntry)).max(20, { message: 'must contain at most 20 items' }).optional().describe('Items ordered under this one (no deeper nesting).'),
          }),
        )
        .min(1, { message: 'must contain at least 1 item' })
        .max(50, { message: 'must contain at most 50 items' })
        .describe('Products to order.'),
    }),
    output: subscriptionSchema,
    mcp: subscriptionView,
    handler: (ctx, { id, ...input }) => orderProducts(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'get_estimated_invoice',
    title: 'Get estimated invoice',
    description:
      'Preview the invoice the next billing run would create for an active subscription, usage so far included; for a draft or offer one, its first invoice as if activated now. The structured result has the figures in minor units.',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscriptions/{id}/estimated-invoice',
    permission: 'subscription:read',
    kind: 'read',
    customerAccess: { permission: 'customer:self:read', resultCustomer: (e) => e.customer },
    input: z.strictObject({ id: idOrNumber('subscription') }),
    output: estimateSchema,
    text: (e) => e.estimate,
    restBody: { schema: estimateSchema.shape.estimate, of: (e) => e.estimate },
    handler: (ctx, input) => estimateInvoice(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'get_subscription_item',
    title: 'Get subscription item',
    description: 'Get one subscription item: product, price plan, quantity, billing dates, discounts, periods.',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscription-items/{id}',
    permission: 'subscription:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('subscription item') }),
    output: subscriptionItemSchema,
    mcp: { output: subscriptionItemView },
    handler: (ctx, input) => getSubscriptionItem(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'update_subscription_item',
    title: 'Update subscription item',
    description:
      "Change an item's quantity, name, description, furtherInformation or billingEnd (removes an addon); absent fields stay. Not once the subscription is cancelled or terminated.",
    toolset: 'subscriptions',
    method: 'PATCH',
    path: '/subscription-items/{id}',
    permission: 'subscription:write',
    kind: 'update',
    contentType: 'application/merge-patch+json',
    input: z.strictObject({
      id: pathId('subscription item'),
      quantity: quantity
        .optional()
        .describe('New quantity; not for a metered product. proRata in advance: the rest of the billed period is settled on the next invoice (or at its end).'),
      name: text255.min(1).nullable().optional().describe("Item name on invoices; null: the product's name."),
      description: z.string().max(1000).nullable().optional().describe('Item description; null clears it.'),
      furtherInformation: text255.nullable().optional().describe("Printed after the item's invoice lines; null clears it."),
      billingEnd: dateTimeInput
        .nullable()
        .optional()
        .describe('End of the item and its children: a term end of its periods (a wrong date gets the possible ones); null: none.'),
    }),
    output: subscriptionItemSchema,
    mcp: { output: subscriptionItemView },
    handler: (ctx, { id, ...patch }) => updateSubscriptionItem(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
