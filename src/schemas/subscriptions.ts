import { z } from 'zod';
import { invoiceAddressSchema, paymentMethodSchema } from './billingDetails.js';
import { billingGroupSchema, COUPON_FREQUENCIES, couponSchema, fixedAmountSchema, planSchema, pricePlanSchema, productSchema } from './catalogue.js';
import { dateTime, timestamps } from './common.js';
import { customerSchema } from './customers.js';
import { measurementValueSchema } from './usage.js';

export const SUBSCRIPTION_STATUSES = ['draft', 'active', 'paused', 'cancelled', 'terminated', 'offer'] as const;
export const ITEM_STATUSES = [...SUBSCRIPTION_STATUSES, 'ended'] as const;

export const periodSchema = z.object({
  id: z.string(),
  contractPeriodCount: z.number().int().describe('12 for 12M.'),
  contractPeriod: z.string(),
  cancellationPeriod: z.string(),
  ...timestamps,
});
export type Period = z.infer<typeof periodSchema>;

const inlineDiscountSchema = z.object({
  name: z.string().nullable(),
  type: z.enum(['percentage', 'fixed_amount']),
  frequency: z.enum(COUPON_FREQUENCIES),
  percentage: z.number().nullable(),
  fixedAmount: fixedAmountSchema,
  frequencyInterval: z.number().int().nullable(),
});

export const appliedDiscountSchema = z.object({
  id: z.string(),
  coupon: couponSchema.nullable(),
  status: z.enum(['active', 'expired']),
  discount: inlineDiscountSchema.nullable(),
  appliedIntervals: z.number().int(),
});

export const subscriptionItemSchema = z.object({
  id: z.string(),
  subscription: z.string(),
  parent: z.string().nullable().describe('Parent item id.'),
  plan: z.object({ id: z.string(), code: z.string(), name: z.string() }),
  measurementValues: z.array(measurementValueSchema).describe('Latest 5 values, newest first (all: get_subscription_usage).'),
  billing: z.object({
    lastBilledAt: dateTime.nullable(),
    lastBilledTo: dateTime.nullable(),
    lastBilledFrom: dateTime.nullable(),
    nextBillingAt: dateTime.nullable(),
    billingInterval: z.string(),
  }),
  name: z.string(),
  description: z.string().nullable(),
  furtherInformation: z.string().nullable(),
  quantity: z.number(),
  pricePlan: pricePlanSchema,
  status: z.enum(ITEM_STATUSES),
  product: productSchema,
  appliedDiscounts: z.array(appliedDiscountSchema),
  periods: z.array(periodSchema).describe("Own periods, or the subscription's when inheritedPeriod."),
  activatedAt: dateTime.nullable(),
  type: z.enum(['charge', 'addon']),
  currentMeasurementValue: measurementValueSchema
    .nullable()
    .describe('Deprecated: the latest value.'),
  currentUsage: z
    .object({
      value: z.string().describe("The metric's value so far (decimal), as billed."),
      eventCount: z.number().int().describe('Events matching the metric.'),
      periodStart: dateTime,
      periodEnd: dateTime,
    })
    .nullable()
    .describe("Products with a usageMetric: its current billing interval; else null."),
  inheritedPeriod: z.boolean(),
  startDate: dateTime.nullable(),
  billingStart: dateTime.nullable(),
  billingEnd: dateTime.nullable(),
  ...timestamps,
});
export type SubscriptionItem = z.infer<typeof subscriptionItemSchema>;

export const subscriptionSchema = z.object({
  id: z.string(),
  externalId: z.string().nullable(),
  paymentMethod: paymentMethodSchema.nullable().describe("null: the customer's default."),
  invoiceAddress: invoiceAddressSchema.nullable().describe("null: the customer's default."),
  number: z.string(),
  customer: customerSchema,
  plan: planSchema,
  name: z.string().nullable(),
  items: z.array(subscriptionItemSchema),
  billingGroup: billingGroupSchema.nullable(),
  periods: z.array(periodSchema),
  status: z.enum(SUBSCRIPTION_STATUSES),
  activatedAt: dateTime.nullable(),
  poNumber: z.string().nullable(),
  contractDetails: z.object({ contractStart: dateTime.nullable(), contractEnd: dateTime.nullable() }),
  trialEndsOn: dateTime.nullable(),
  pendingPlanChange: z
    .object({ plan: z.object({ id: z.string(), code: z.string(), name: z.string() }), applyAt: dateTime })
    .nullable()
    .describe('A plan change due at applyAt, or null.'),
  customFields: z.record(z.string(), z.unknown()),
  defaultPaymentMethod: z.boolean(),
  defaultInvoiceAddress: z.boolean(),
  nextBillingDate: dateTime.nullable(),
  lastBillingAt: dateTime.nullable(),
  cancellationDate: dateTime.nullable(),
  cancelledAt: dateTime.nullable(),
  cancellationReason: z
    .object({ id: z.string(), code: z.string(), name: z.string(), createdAt: dateTime, updatedAt: dateTime })
    .nullable(),
  isCancellationPending: z.boolean(),
  nextPossibleCancellationDate: z.array(dateTime).nullable(),
  partner: z.object({ id: z.string(), name: z.string(), number: z.string(), email: z.string() }).nullable(),
  startDate: dateTime.nullable(),
  pausedAt: dateTime.nullable(),
  terminatedAt: dateTime.nullable(),
  ...timestamps,
});
export type Subscription = z.infer<typeof subscriptionSchema>;
