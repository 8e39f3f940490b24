import { z } from 'zod';
import { QUANTITY_DIGITS } from '../domain/plans.js';
import { microsOfNumber } from '../domain/quantity.js';
import {
  activateSubscription,
  cancelSubscription,
  createSubscription,
  getSubscription,
  getSubscriptionItem,
  listSubscriptions,
  orderProducts,
  pauseSubscription,
  resumeSubscription,
  revokeCancellation,
  terminateSubscription,
  updateSubscription,
  updateSubscriptionItem,
} from '../domain/subscriptions.js';
import { estimateInvoice } from '../domain/estimate.js';
import { defineOperation } from '../registry/operation.js';
import { estimateSchema } from '../schemas/estimate.js';
import { amountInput, currencyCodeInput, customPricePlanShape } from '../schemas/catalogue.js';
import { dateTimeInput, filterBy, idOrNumber, listOf, MAJOR, pageInput, pathId, text255, paged } from '../schemas/common.js';
import { SUBSCRIPTION_STATUSES, subscriptionItemSchema, subscriptionSchema, type Subscription } from '../schemas/subscriptions.js';
import type { Tx } from '../store/store.js';
import { listView, subscriptionItemView, subscriptionRow, subscriptionView } from '../schemas/views.js';

const ref = (what: string) => z.string().min(1).max(255).describe(what);

export const periods = z
  .array(
    z.strictObject({
      contractPeriod: z
        .string()
        .regex(/^[1-9]\d{0,2}[DWMY]$/, { message: 'must be 1 to 999 followed by D, W, M or Y, e.g. 12M or 1Y' })
        .describe('Length of the contract term: 1 to 999 followed by D, W, M or Y (12M, 1Y, 30D).'),
      cancellationPeriod: z
        .string()
        .regex(/^(0|[1-9]\d{0,2})[DWMY]$/, { message: 'must be 0 to 999 followed by D, W, M or Y, e.g. 3M or 0D' })
        .describe('Notice needed before a term end to cancel at it: 0 to 999 followed by D, W, M or Y (3M, 30D, 0D).'),
    }),
  )
  .min(1, { message: 'must contain at least 1 item' })
  .describe(
    'Contract terms, at least one: the first is the initial term, the last repeats as the renewal term. Example: [{ contractPeriod: "12M", cancellationPeriod: "3M" }].',
  );

const nullableText = (what: string) => text255.nullable().optional().describe(`${what}; at most 255 characters, null clears it.`);
const customFields = z
  .record(z.string(), z.unknown())
  .describe('Values of the subscription custom fields configured with create_custom_field (entity subscription), by key; unknown keys, wrong types and missing required keys are rejected.');
const billingGroup = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .optional()
  .describe('Billing group (ULID, or the same value as a UUID) that aligns billing periods, e.g. to month ends; null for anniversary billing.');
const paymentMethod = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .optional()
  .describe("Id of one of the customer's payment methods; null or omitted: the customer's default applies.");
const invoiceAddress = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .optional()
  .describe("Id of one of the customer's invoice addresses; null or omitted: the customer's default applies.");

const quantity = z
  .number()
  .gt(0, { message: 'must be greater than 0' })
  .refine((v) => microsOfNumber(v) !== undefined, { message: `must have at most ${QUANTITY_DIGITS} fractional digits` });

const discount = z
  .strictObject({
    name: text255.nullable().optional().describe('Name shown on the invoice for an inline discount.'),
    coupon: ref('Id or code of an enabled coupon (list_coupons). Give either coupon or the inline fields below.').optional(),
    type: z.enum(['percentage', 'fixed_amount']).optional().describe('Inline discount: percentage or fixed_amount.'),
    frequency: z.enum(['once', 'limited']).optional().describe('once (default: the next invoice) or limited (frequencyInterval invoices).'),
    percentage: z
      .number()
      .gt(0, { message: 'must be more than 0' })
      .max(100, { message: 'must be at most 100' })
      .optional()
      .describe('Percent off, more than 0 and at most 100; only with type percentage.'),
    fixedAmount: z
      .strictObject({
        amount: amountInput('positive').describe(`Amount off; ${MAJOR}, at most the currency's minor-unit digits.`),
        currency: currencyCodeInput.describe("ISO 4217 code; must be the subscription's currency."),
      })
      .optional()
      .describe(`Amount off per invoice, ${MAJOR}; only with type fixed_amount.`),
    frequencyInterval: z.number().int().min(1).optional().describe('How many invoices are discounted (>= 1); only with frequency limited.'),
  })
  .describe('A discount on the item: a coupon reference, or an inline discount (type plus percentage or fixedAmount).');

const orderEntry = {
  product: ref('Id of the product to order (list_products).'),
  quantity: quantity
    .optional()
    .describe('Quantity, more than 0 (default 1). Not allowed for a product with a measurement: usage drives its quantity.'),
  pricePlan: ref('Id of a price plan of this product (list_price_plans). Give exactly one of pricePlan or customPricePlan.').optional(),
  customPricePlan: z
    .strictObject(customPricePlanShape)
    .optional()
    .describe("A price just for this item (type, currencyCode = the subscription's currency, price.amount, billingInterval, …)."),
  periods: periods.optional().describe('Own contract periods of the item; omitted: it inherits the subscription periods.'),
  customName: text255.optional().describe("Name of the item on invoices instead of the product's name."),
  customDescription: z.string().max(1000).optional().describe('Description of the item on invoices, at most 1000 characters.'),
  discount: discount.optional(),
  autoAssignProductGroup: z.boolean().optional().describe('Accepted for compatibility; product groups are not modelled, so it has no effect.'),
};

/** The fields of the subscription a create_subscription or an offer proposes (without its customer). */
export const subscriptionInputShape = {
  plan: ref('Id of the plan (list_plans); archived plans are rejected.'),
  periods,
  billingGroup,
  startDate: dateTimeInput.optional().describe('When the contract starts; default: the moment of activation.'),
  name: nullableText('Name used as grouping header on invoices (default the plan name)'),
  number: text255.min(1).optional().describe('Unique subscription number; generated as SUB-000001… when omitted.'),
  externalId: nullableText('Id in an external system'),
  poNumber: nullableText('Purchase order number'),
  customFields: customFields.optional(),
  paymentMethod,
  invoiceAddress,
  addons: z
    .array(z.strictObject({ product: ref('Product id of one of the plan addons.'), pricePlan: ref('Price plan id of that addon.') }))
    .optional()
    .describe("Addons of the plan to include, as { product, pricePlan } pairs from get_plan's addons."),
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
    mcp: { output: subscriptionView },
    handler: (ctx, input) => t.run(ctx.tx, ctx.org, input.id, ctx.now),
  });
}

export const subscriptionOperations = [
  defineOperation({
    name: 'create_subscription',
    title: 'Create subscription',
    description:
      "Subscribe a customer to a plan. Items are created from the plan's charges; addons only when listed. Created in status draft (activate: true makes it active at once). number is generated (SUB-000001) unless given; name defaults to the plan name. Rejected (422): unknown customer/plan/billing group, a payment method or invoice address of another customer, an addon that is not the plan's, a plan priced in another currency than the customer's, a duplicate number, custom fields that do not fit the configuration.",
    toolset: 'subscriptions',
    method: 'POST',
    path: '/subscriptions',
    permission: 'subscription:write',
    kind: 'create',
    input: z.strictObject({
      customer: idOrNumber('customer'),
      ...subscriptionInputShape,
      activate: z.boolean().optional().describe('true: activate immediately (status active); default false (draft).'),
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionView },
    handler: (ctx, input) => createSubscription(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_subscriptions',
    title: 'List subscriptions',
    description: 'List subscriptions, oldest first, paginated (page, limit 0-100), optionally filtered by customer and status.',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscriptions',
    permission: 'subscription:read',
    kind: 'list',
    customerAccess: { permission: 'customer:self:read', customerField: 'customer' },
    input: z.strictObject({
      ...pageInput,
      customer: filterBy('customer', 'subscriptions'),
      status: z.enum(SUBSCRIPTION_STATUSES).optional().describe(`Only subscriptions in this status: ${SUBSCRIPTION_STATUSES.join(', ')}.`),
    }),
    output: listOf(subscriptionSchema),
    mcp: listView(subscriptionRow),
    handler: (ctx, input) => paged(input, (page) => listSubscriptions(ctx.tx, ctx.org, input, page, ctx.now)),
  }),
  defineOperation({
    name: 'get_subscription',
    title: 'Get subscription',
    description:
      'Get a subscription with its customer, plan, items, periods and computed fields: nextBillingDate, contractDetails, isCancellationPending, nextPossibleCancellationDate (the next three term ends a cancellation can still reach), defaultPaymentMethod/defaultInvoiceAddress.',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscriptions/{id}',
    permission: 'subscription:read',
    kind: 'read',
    customerAccess: { permission: 'customer:self:read', resultCustomer: (s) => s.customer.id },
    input: z.strictObject({ id: idOrNumber('subscription') }),
    output: subscriptionSchema,
    mcp: { output: subscriptionView },
    handler: (ctx, input) => getSubscription(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'update_subscription',
    title: 'Update subscription',
    description:
      'Replace the contract periods (required) and change other fields; omitted fields stay unchanged, null clears a nullable one. startDate may change only while draft (409 otherwise); cancelled and terminated subscriptions cannot change (409). Rejected (422): duplicate number, unknown billing group, custom fields that do not fit the configuration.',
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
      poNumber: nullableText('Purchase order number'),
      name: nullableText('Name used as grouping header on invoices'),
      number: text255.min(1).optional().describe('Unique subscription number.'),
      externalId: nullableText('Id in an external system'),
      customFields: customFields.optional().describe('Replaces the whole custom-field map; validated against the configuration.'),
      paymentMethod,
      invoiceAddress,
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionView },
    handler: (ctx, { id, ...input }) => updateSubscription(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  transition({
    name: 'activate_subscription',
    title: 'Activate subscription',
    segment: 'activate',
    destructive: false,
    description:
      'Activate a draft subscription: the contract starts (at startDate, or now) and billing of every item starts. Only from draft (409 otherwise).',
    run: activateSubscription,
  }),
  transition({
    name: 'pause_subscription',
    title: 'Pause subscription',
    segment: 'pause',
    destructive: false,
    description:
      'Pause an active subscription: it is not billed until resumed (resume_subscription). Only from active (409 otherwise).',
    run: pauseSubscription,
  }),
  defineOperation({
    name: 'resume_subscription',
    title: 'Resume subscription',
    description:
      "Resume a paused subscription (paused → active). With nextBillingDate it becomes every item's next billing date: billing starts from it and periods before it are never billed. Without it (or null) every billing period missed while paused is billed. Only from paused (409 otherwise); a date before the pause began is rejected (422).",
    toolset: 'subscriptions',
    method: 'PUT',
    path: '/subscriptions/{id}/resume',
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(false),
    input: z.strictObject({
      id: idOrNumber('subscription'),
      nextBillingDate: dateTimeInput.nullable().optional().describe('When billing resumes; null or omitted: bill every missed period.'),
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionView },
    handler: (ctx, { id, ...input }) => resumeSubscription(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'cancel_subscription',
    title: 'Cancel subscription',
    description:
      'Schedule the cancellation of an active or paused subscription at a contract term end that its cancellation period still allows (see nextPossibleCancellationDate); without cancellationDate the first possible one is used. Until that date the cancellation is pending (isCancellationPending) and revoke_subscription_cancellation undoes it; then it becomes cancelled. 409 from another status or when a cancellation is already pending; 422 for a date that is not a reachable term end.',
    toolset: 'subscriptions',
    method: 'PUT',
    path: '/subscriptions/{id}/cancel',
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(true),
    input: z.strictObject({
      id: idOrNumber('subscription'),
      cancellationDate: dateTimeInput.optional().describe('One of nextPossibleCancellationDate (or a later term end); default the first of them.'),
      reason: z
        .strictObject({
          code: z.string().min(1).max(64).describe('Short machine code of the reason, e.g. too_expensive.'),
          name: text255.min(1).optional().describe('Readable reason; default the code.'),
        })
        .optional()
        .describe('Why the customer cancels.'),
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionView },
    handler: (ctx, { id, ...input }) => cancelSubscription(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  transition({
    name: 'revoke_subscription_cancellation',
    title: 'Revoke subscription cancellation',
    segment: 'revoke-cancellation',
    destructive: false,
    description:
      'Undo a pending cancellation: the subscription continues and renews. 409 when no cancellation is pending.',
    run: revokeCancellation,
  }),
  transition({
    name: 'terminate_subscription',
    title: 'Terminate subscription',
    segment: 'terminate',
    destructive: true,
    description:
      'End a draft, active or paused subscription immediately, regardless of contract terms (use cancel_subscription to end it at a term end). Final: it cannot be undone. 409 from cancelled or terminated.',
    run: terminateSubscription,
  }),
  defineOperation({
    name: 'order_subscription_products',
    title: 'Order products for a subscription',
    description:
      'Add products to a draft, active or paused subscription as addon items. Each entry takes exactly one of pricePlan (belonging to the product, in the subscription currency) or customPricePlan; children become items with parent set (one level); discount is a coupon reference or an inline discount. billingStart/startDate/endDate apply to all entries. Nothing is written unless every entry is valid (422 naming products[i].field).',
    toolset: 'subscriptions',
    method: 'POST',
    path: '/subscriptions/{id}/products',
    permission: 'subscription:write',
    kind: 'action',
    annotations: annotate(false),
    input: z.strictObject({
      id: idOrNumber('subscription'),
      billingStart: dateTimeInput.optional().describe('When billing of the ordered items starts (not before startDate).'),
      startDate: dateTimeInput.optional().describe('When the ordered items start.'),
      endDate: dateTimeInput.optional().describe('When the ordered items end (after startDate, in the future).'),
      products: z
        .array(
          z.strictObject({
            ...orderEntry,
            children: z.array(z.strictObject(orderEntry)).optional().describe('Items ordered under this one (same fields, no further nesting).'),
          }),
        )
        .min(1, { message: 'must contain at least 1 item' })
        .describe('The products to order.'),
    }),
    output: subscriptionSchema,
    mcp: { output: subscriptionView },
    handler: (ctx, { id, ...input }) => orderProducts(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'get_estimated_invoice',
    title: 'Get estimated invoice',
    description:
      'Preview the invoice the next billing run would create for an active subscription, usage so far included: one line per item due at the next billing date (flat fees for the period they pay, usage of the current interval minus free units), item discounts, net, tax per rate (from the product tax group and the invoice address country), gross. The text is the plain-text preview; the structured result has the same figures in minor units (cents). Over REST the body is the preview as a JSON string. 409 for a subscription that is not active.',
    toolset: 'subscriptions',
    method: 'GET',
    path: '/subscriptions/{id}/estimated-invoice',
    permission: 'subscription:read',
    kind: 'read',
    customerAccess: { permission: 'customer:self:read', resultCustomer: (e) => e.customer },
    input: z.strictObject({ id: idOrNumber('subscription') }),
    output: estimateSchema,
    text: (e) => e.estimate,
    restBody: (e) => e.estimate,
    handler: (ctx, input) => estimateInvoice(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'get_subscription_item',
    title: 'Get subscription item',
    description: 'Get one item of a subscription: product, price plan, quantity, billing dates, discounts, periods.',
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
      "Change an item's quantity, name or description (JSON merge patch: absent fields stay, null clears name/description). A quantity change on an item whose product has a measurement is rejected (422): usage drives that quantity. Items of cancelled or terminated subscriptions cannot change (409).",
    toolset: 'subscriptions',
    method: 'PATCH',
    path: '/subscription-items/{id}',
    permission: 'subscription:write',
    kind: 'update',
    contentType: 'application/merge-patch+json',
    input: z.strictObject({
      id: pathId('subscription item'),
      quantity: quantity.optional().describe(`New quantity, more than 0, at most ${QUANTITY_DIGITS} fractional digits.`),
      name: text255.min(1).nullable().optional().describe("Item name on invoices; null restores the product's name."),
      description: z.string().max(1000).nullable().optional().describe('Item description, at most 1000 characters; null clears it.'),
    }),
    output: subscriptionItemSchema,
    mcp: { output: subscriptionItemView },
    handler: (ctx, { id, ...patch }) => updateSubscriptionItem(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
