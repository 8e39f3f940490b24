import { z } from 'zod';
import { dateTime } from './common.js';
import { usageMetricSchema } from './catalogue.js';
import { measurementSchema } from './measurements.js';
import { usageEventSchema } from './usageEvents.js';

const quantity = z.string().describe('Decimal string, e.g. "12.5".');

export const measurementValueSchema = z.object({
  id: z.string(),
  measurement: measurementSchema.describe('Deprecated.'),
  quantity,
  measuredAt: dateTime.describe('When the usage happened.'),
  subscriptionItem: z.string(),
  subscription: z.string(),
  valueId: z.string().nullable().describe('The `id` sent for count_unique.'),
  createdAt: dateTime,
});
export type MeasurementValue = z.infer<typeof measurementValueSchema>;

export const measurementValueBatchSchema = z.object({
  data: z.array(measurementValueSchema).describe('Values recorded, in request order; a measurementCode entry yields one per item.'),
});

export const usageEntrySchema = z.object({
  subscriptionItem: z.string(),
  measurement: measurementSchema.nullable().describe('Null for a usage metric.'),
  usageMetric: usageMetricSchema.nullable().describe("The product's usage metric, or null for a measurement."),
  periodStart: dateTime.describe("Start of the item's current billing interval."),
  periodEnd: dateTime.describe('Its end (exclusive).'),
  value: z
    .string()
    .describe(
      'The aggregate of the interval\'s values as a decimal string ("0" when none); recurring: the last value carried forward; instant_metered: "0" (each value is billed on its own).',
    ),
  timeWeightedValue: z
    .string()
    .nullable()
    .describe('Recurring measurements with fairBilling: the value weighted by how long each level held while the item was active.'),
  eventCount: z.number().int().describe('Values or matching events in the interval; once it is invoiced, those billed.'),
  lateEvents: z.number().int().describe('Events that came after their interval was invoiced: never in value (not billed); in an invoiced interval not in eventCount either.'),
  events: z.array(z.union([measurementValueSchema, usageEventSchema])).describe('A page of them, newest first.'),
});
export type UsageEntry = z.infer<typeof usageEntrySchema>;

export const usageSchema = z.object({
  data: z.array(usageEntrySchema).describe('One entry per item and measurement or usage metric.'),
});
