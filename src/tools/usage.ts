import { z } from 'zod';
import { MAX_QUANTITY_TEXT, formatQuantity, parseQuantity } from '../domain/quantity.js';
import { getMeasurementValue, getSubscriptionUsage, recordMeasurement, recordMeasurementBatch, recordMeasurements } from '../domain/usage.js';
import type { InstantBilling } from '../domain/billing/instant.js';
import { defineOperation, type OperationContext } from '../registry/operation.js';
import { dateTimeInput, idOrNumber, pageInput, pathId } from '../schemas/common.js';
import { measurementValueBatchSchema, measurementValueSchema, usageSchema } from '../schemas/usage.js';
import { measurementBatchView, measurementValueView, usageView } from '../schemas/views.js';

/** Batches larger than this are refused (CONTRACT section 2). */
const MAX_BATCH = 1000;

const DEPRECATED = 'Deprecated: usage metrics on products replace it; it keeps working.';

/**
 * A quantity in canonical form, so that "2.50" and 2.5 are the same request to an idempotency key.
 * One that breaks its rules (range, digits, no exponent) passes as sent: the domain refuses it with
 * the value's other problems (`parseQuantity` in `plan`), so that a batch reports them all at once.
 */
const quantity = z
  .union([z.string(), z.number()], {
    error: (issue) =>
      issue.input === undefined
        ? 'is required: send the measured quantity as a decimal string such as "12.5"'
        : 'must be a decimal string such as "12.5" or "3" (a JSON number is accepted too)',
  })
  .transform((value) => {
    const parsed = parseQuantity(value);
    return parsed.ok ? formatQuantity(parsed.micros) : value;
  })
  .describe(
    `Measured quantity as a decimal string, e.g. "12.5" (a number is accepted): 0 to ${MAX_QUANTITY_TEXT}, at most 6 decimals, no exponent.`,
  );

const ref = z.string().min(1).max(255);

const value = {
  quantity,
  measuredAt: dateTimeInput
    .optional()
    .describe(
      'When the usage happened (default now); decides the billing interval. At most 5 minutes ahead, and before the end of a cancelled or terminated subscription or item.',
    ),
  subscriptionItem: ref
    .optional()
    .describe('Id of the item to record on (items[].id of get_subscription), whose product has a measurement. Give it, or measurementCode with subscription.'),
  measurementCode: ref
    .optional()
    .describe('Measurement code (list_measurements): records on every item of subscription that measures it.'),
  subscription: ref.optional().describe('Id or number (SUB-000001) of the subscription; required with measurementCode alone.'),
  id: ref
    .optional()
    .describe('Not the value id: the identity count_unique counts once per interval (user id, device id); required for count_unique.'),
};

/** A batch entry: the same fields, described by reference to create_subscription_measurement. */
const batchValue = {
  quantity: value.quantity.describe('Decimal string, e.g. "12.5".'),
  measuredAt: value.measuredAt.describe('When the usage happened (default now).'),
  subscriptionItem: value.subscriptionItem.describe('Id of the item to record on.'),
  measurementCode: value.measurementCode.describe('Measurement code, with subscription.'),
  subscription: value.subscription.describe('Id or number of the subscription.'),
  id: value.id.describe('Identity for count_unique.'),
};

/**
 * Instant usage is invoiced as it is recorded, and the invoice's events go out once the unit commits;
 * a request that records no instant usage wakes no webhook delivery (ingestion is the hot path).
 */
const instantBilling = (ctx: OperationContext): InstantBilling => ({
  paymentTermDays: ctx.config.paymentTermDays,
  onInvoice: () => ctx.afterCommit(() => ctx.deliveries.kick()),
});

export const usageOperations = [
  defineOperation({
    name: 'create_subscription_measurement',
    title: 'Record measurement value',
    description: `${DEPRECATED} Record a usage value on one item, or by measurementCode on every item of a subscription measuring it (the first value is returned). Accepted while the subscription is active or paused, or before the end of a cancelled or terminated one. Retry with the same idempotencyKey to never record twice.`,
    toolset: 'usage',
    method: 'POST',
    path: '/subscription-measurements',
    permission: 'subscription:write',
    kind: 'create',
    deprecated: true,
    input: z.strictObject(value),
    output: measurementValueSchema,
    mcp: { output: measurementValueView },
    handler: (ctx, input) => recordMeasurement(ctx.tx, ctx.org, input, ctx.now, instantBilling(ctx)),
    coalesce: { run: (ctx, inputs) => recordMeasurements(ctx.tx, ctx.org, inputs, ctx.now, instantBilling(ctx)) },
  }),
  defineOperation({
    name: 'create_subscription_measurements_batch',
    title: 'Record measurement values in a batch',
    description: `${DEPRECATED} Record up to ${MAX_BATCH} usage values, all or none (problems are reported together as values[i].field); each entry as in create_subscription_measurement, whose rules apply. Use it to upload usage collected over time.`,
    toolset: 'usage',
    method: 'POST',
    path: '/subscription-measurements/batch',
    permission: 'subscription:write',
    kind: 'create',
    deprecated: true,
    input: z.strictObject({
      values: z
        .array(z.strictObject(batchValue))
        .min(1, { message: 'must contain at least 1 entry' })
        .max(MAX_BATCH, { message: `must contain at most ${MAX_BATCH} entries; split the upload into several batches` })
        .describe('The values to record.'),
    }),
    output: measurementValueBatchSchema,
    mcp: measurementBatchView,
    location: (result) => `/subscription-measurements/${result.data[0]?.id}`,
    handler: async (ctx, input) => {
      return { data: await recordMeasurementBatch(ctx.tx, ctx.org, input.values, ctx.now, instantBilling(ctx)) };
    },
  }),
  defineOperation({
    name: 'get_subscription_measurement',
    title: 'Get measurement value',
    description: `${DEPRECATED} Get one recorded measurement value by its id (not the count_unique id).`,
    toolset: 'usage',
    method: 'GET',
    path: '/subscription-measurements/{id}',
    permission: 'subscription:read',
    kind: 'read',
    deprecated: true,
    input: z.strictObject({ id: pathId('measurement value') }),
    output: measurementValueSchema,
    mcp: { output: measurementValueView },
    handler: (ctx, input) => getMeasurementValue(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'get_subscription_usage',
    title: 'Get subscription usage',
    description: "Show a subscription's usage in each item's current billing interval: per item and usage metric (or measurement) the aggregated value, the event count and a page of the events, newest first. Use it to check what will be billed.",
    toolset: 'usage',
    method: 'GET',
    path: '/subscriptions/{id}/usage',
    permission: 'subscription:read',
    kind: 'read',
    input: z.strictObject({
      id: idOrNumber('subscription'),
      page: pageInput.page.describe("Page of each entry's values."),
      limit: pageInput.limit.describe('Values per entry (default 30); 0: aggregates only.'),
    }),
    output: usageSchema,
    mcp: { output: usageView },
    handler: (ctx, input) => getSubscriptionUsage(ctx.tx, ctx.org, input.id, { page: input.page, limit: input.limit ?? 30 }, ctx.now),
  }),
];
