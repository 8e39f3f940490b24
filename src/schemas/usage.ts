import { z } from 'zod';
import { dateTime } from './common.js';
import { measurementSchema } from './measurements.js';

const quantity = z
  .string()
  .describe('The quantity as a canonical decimal string: no trailing zeros, at most 6 fractional digits ("12.5", "3", "0.000001").');

export const measurementValueSchema = z.object({
  id: z.string().describe('Id of the measurement value (get_subscription_measurement).'),
  measurement: measurementSchema.describe('Deprecated (interface section 9): the measurement the value was recorded for.'),
  quantity,
  measuredAt: dateTime.describe('When the usage happened (UTC); decides the billing interval the value counts in.'),
  subscriptionItem: z.string().describe('Id of the subscription item the value was recorded on.'),
  subscription: z.string().describe('Id of the subscription of that item.'),
  valueId: z.string().nullable().describe('The identity sent as `id` with the value, which count_unique counts once per interval; null when none was sent.'),
  createdAt: dateTime.describe('When the value was recorded (UTC).'),
});
export type MeasurementValue = z.infer<typeof measurementValueSchema>;

export const measurementValueBatchSchema = z.object({
  data: z.array(measurementValueSchema).describe('Every value recorded, in the order of the request (an entry targeting several items by measurementCode yields one value per item).'),
});

export const usageEntrySchema = z.object({
  subscriptionItem: z.string().describe('Id of the subscription item.'),
  measurement: measurementSchema.describe('The measurement aggregated.'),
  periodStart: dateTime.describe("Start of the item's current billing interval (inclusive)."),
  periodEnd: dateTime.describe("End of the item's current billing interval (exclusive). For an ended item, the interval it ended in."),
  value: z
    .string()
    .describe(
      'The aggregated quantity of the interval as a decimal string: count, count_unique, max, sum, average (half-up to 6 decimals) or last_value of the values measured in it ("0" when none); recurring: the last value measured up to the interval end, carried from earlier intervals; instant_metered: always "0" (every push is billed on its own).',
    ),
  timeWeightedValue: z
    .string()
    .nullable()
    .describe(
      'Recurring measurements with fairBilling only (null otherwise): the value weighted by how long each level held within the interval, counting only the time the item was active (the rest of a running interval at the latest value), over the whole interval; exact, half-up to 6 decimals.',
    ),
  eventCount: z.number().int().describe('Number of values measured in the interval.'),
  events: z.array(measurementValueSchema).describe('The values measured in the interval, newest first, one page (page, limit).'),
});
export type UsageEntry = z.infer<typeof usageEntrySchema>;

export const usageSchema = z.object({
  data: z.array(usageEntrySchema).describe('One entry per item and measurement: items whose product has a measurement, and any other measurement an item has values of.'),
});
