import { z } from 'zod';
import { MAX_QUANTITY_TEXT, formatQuantity, parseQuantity } from '../domain/quantity.js';
import { getMeasurementValue, getSubscriptionUsage, recordMeasurement, recordMeasurementBatch } from '../domain/usage.js';
import { defineOperation } from '../registry/operation.js';
import { dateTimeInput, idOrNumber, pageInput, pathId } from '../schemas/common.js';
import { measurementValueBatchSchema, measurementValueSchema, usageSchema } from '../schemas/usage.js';
import { measurementBatchView, measurementValueView, usageView } from '../schemas/views.js';

/** Batches larger than this are refused (CONTRACT section 2). */
const MAX_BATCH = 1000;

const DEPRECATED =
  'Deprecated: the subscription measurement endpoints are being replaced by usage metrics on products (interface section 9); they keep working.';

const quantity = z
  .union([z.string(), z.number()], {
    error: (issue) =>
      issue.input === undefined
        ? 'is required: send the measured quantity as a decimal string such as "12.5"'
        : 'must be a decimal string such as "12.5" or "3" (a JSON number is accepted too)',
  })
  .transform((value, ctx) => {
    const parsed = parseQuantity(value);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.message });
      return z.NEVER;
    }
    return formatQuantity(parsed.micros);
  })
  .describe(
    `The measured quantity: a decimal string such as "12.5", "3" or "0.000001" (a JSON number is accepted and turned into that string). 0 or more, below 10^12 (at most ${MAX_QUANTITY_TEXT}), at most 6 fractional digits, no exponent; anything else is rejected.`,
  );

const ref = z.string().min(1).max(255);

const value = {
  quantity,
  measuredAt: dateTimeInput
    .optional()
    .describe(
      'When the usage happened, with an offset (2026-03-31T23:59:59Z); default now. It decides the billing interval the value counts in; more than 5 minutes in the future is rejected, and so is a time at or after the end of a cancelled or terminated subscription or of the item.',
    ),
  subscriptionItem: ref
    .optional()
    .describe('Id of the subscription item to record on (items[].id of get_subscription); its product must have a measurement. Give this, or measurementCode with subscription.'),
  measurementCode: ref
    .optional()
    .describe(
      'Code of a measurement (list_measurements): records the value on every item of `subscription` whose product measures it. With subscriptionItem as well, it must be that item\'s code.',
    ),
  subscription: ref
    .optional()
    .describe('Id or number (SUB-000001) of the subscription; required with measurementCode alone, and when given with subscriptionItem the item must belong to it.'),
  id: ref
    .optional()
    .describe(
      'Not the value\'s id: the identity that count_unique counts once per billing interval (a user id, a device id), 1 to 255 characters. Required when the measurement aggregates count_unique, stored and shown as valueId otherwise.',
    ),
};

const RULES =
  'Rejected with 422, naming the field: neither subscriptionItem nor measurementCode; an unknown item, subscription or code; an item of another subscription; an item whose product has no measurement; a code no item of the subscription measures; a quantity that is negative, has more than 6 fractional digits or is 10^12 or more; a count_unique measurement without id; measuredAt more than 5 minutes ahead. Rejected with 409: a draft subscription, or measuredAt at or after the end of a cancelled or terminated subscription (or the item\'s billingEnd).';

export const usageOperations = [
  defineOperation({
    name: 'create_subscription_measurement',
    title: 'Record measurement value',
    description: `${DEPRECATED} Record a usage value on a subscription: on one item (subscriptionItem), or by measurementCode on every item of the subscription measuring that code (one value per item; the first is returned). Values are accepted while the subscription is active or paused, and for a cancelled or terminated one when measured before its end. The value counts in the billing interval containing measuredAt; see get_subscription_usage for the aggregated result. Retry with the same idempotencyKey to never record a value twice. ${RULES}`,
    toolset: 'usage',
    method: 'POST',
    path: '/subscription-measurements',
    permission: 'subscription:write',
    kind: 'create',
    deprecated: true,
    input: z.strictObject(value),
    output: measurementValueSchema,
    mcp: { output: measurementValueView },
    handler: (ctx, input) => recordMeasurement(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'create_subscription_measurements_batch',
    title: 'Record measurement values in a batch',
    description: `${DEPRECATED} Record up to ${MAX_BATCH} usage values in one call, all or none: when any entry is rejected nothing is stored and every problem is reported at once as values[i].field. Each entry takes the fields of create_subscription_measurement. Use it to upload usage collected over time. ${RULES}`,
    toolset: 'usage',
    method: 'POST',
    path: '/subscription-measurements/batch',
    permission: 'subscription:write',
    kind: 'create',
    deprecated: true,
    input: z.strictObject({
      values: z
        .array(z.strictObject(value))
        .min(1, { message: 'must contain at least 1 entry' })
        .max(MAX_BATCH, { message: `must contain at most ${MAX_BATCH} entries; split the upload into several batches` })
        .describe(`The values, 1 to ${MAX_BATCH} entries, each like the input of create_subscription_measurement.`),
    }),
    output: measurementValueBatchSchema,
    mcp: measurementBatchView,
    location: (result) => `/subscription-measurements/${result.data[0]?.id}`,
    handler: async (ctx, input) => ({ data: await recordMeasurementBatch(ctx.tx, ctx.org, input.values, ctx.now) }),
  }),
  defineOperation({
    name: 'get_subscription_measurement',
    title: 'Get measurement value',
    description: `${DEPRECATED} Get one recorded measurement value by its id (not by the count_unique id): quantity, measuredAt, item, subscription and measurement.`,
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
    description: `${DEPRECATED} Show a subscription's usage in each item's current billing interval: per item and measurement the interval bounds, the aggregated value (count, count_unique, max, sum, average or last_value of the interval's values; recurring: the last value carried forward; instant_metered: "0", each push is billed on its own), the fair-billing value of recurring measurements, the number of values and a page of them, newest first (page, limit). Use it to check what will be billed.`,
    toolset: 'usage',
    method: 'GET',
    path: '/subscriptions/{id}/usage',
    permission: 'subscription:read',
    kind: 'read',
    deprecated: true,
    input: z.strictObject({
      id: idOrNumber('subscription'),
      page: pageInput.page.describe('Page of each entry\'s events, 1-based. Default 1.'),
      limit: pageInput.limit.describe('Events per entry, 0 to 100 (default 30); 0 returns only the aggregates and counts.'),
    }),
    output: usageSchema,
    mcp: { output: usageView },
    handler: (ctx, input) => getSubscriptionUsage(ctx.tx, ctx.org, input.id, { page: input.page, limit: input.limit ?? 30 }, ctx.now),
  }),
];
