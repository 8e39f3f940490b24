import { z } from 'zod';
import { dateTime, MINOR } from './common.js';

export const estimateLineSchema = z.object({
  description: z.string(),
  periodStart: dateTime.nullable(),
  periodEnd: dateTime.nullable(),
  quantity: z.string().describe('Decimal string.'),
  unitAmountDecimal: z.string().describe('Unit price: decimal string of minor units (cents), e.g. "0.2" = 0.002 EUR.'),
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
  creditNoteAmount: z.number().int().nullable().describe(`Credited instead on the invoice that billed the period (a quantity decrease too large for this invoice), ${MINOR}; or null.`),
});
export type Estimate = z.infer<typeof estimateSchema>;
