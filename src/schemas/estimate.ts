import { z } from 'zod';
import { dateTime, MINOR } from './common.js';

export const estimateLineSchema = z.object({
  description: z.string(),
  periodStart: dateTime.nullable(),
  periodEnd: dateTime.nullable(),
  quantity: z.string().nullable().describe('Decimal string; null on discount lines.'),
  unitAmount: z.number().int().nullable().describe(`${MINOR}; null on discount lines.`),
  netAmount: z.number().int().describe(`${MINOR}; negative for a discount.`),
  taxRate: z.number().describe('Percent.'),
});
export type EstimateLine = z.infer<typeof estimateLineSchema>;

export const estimateSchema = z.object({
  estimate: z.string().describe('Plain-text preview.'),
  subscription: z.string(),
  customer: z.string(),
  billingDate: dateTime.describe('Date of the next billing run.'),
  currencyCode: z.string(),
  lines: z.array(estimateLineSchema),
  netAmount: z.number().int().describe(MINOR),
  taxAmount: z.number().int().describe(MINOR),
  grossAmount: z.number().int().describe(MINOR),
  taxes: z.array(z.object({ rate: z.number(), netAmount: z.number().int().describe(MINOR), taxAmount: z.number().int().describe(MINOR) })),
});
export type Estimate = z.infer<typeof estimateSchema>;
