import { z } from 'zod';
import { timestamps } from './common.js';

export const AGGREGATION_TYPES = ['count', 'count_unique', 'max', 'sum', 'last_value', 'average'] as const;
export const MEASUREMENT_TYPES = ['instant_metered', 'metered', 'recurring'] as const;
export type AggregationType = (typeof AGGREGATION_TYPES)[number];
export type MeasurementType = (typeof MEASUREMENT_TYPES)[number];

export const unitSchema = z.object({
  id: z.string(),
  name: z.string(),
  ...timestamps,
});
export type Unit = z.infer<typeof unitSchema>;

export const measurementSchema = z.object({
  id: z.string(),
  unit: z.object({ id: z.string(), name: z.string() }),
  code: z.string(),
  description: z.string().nullable(),
  aggregationType: z.enum(AGGREGATION_TYPES),
  fairBilling: z.boolean(),
  type: z.enum(MEASUREMENT_TYPES),
  ...timestamps,
});
export type Measurement = z.infer<typeof measurementSchema>;
