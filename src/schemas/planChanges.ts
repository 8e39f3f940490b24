import { z } from 'zod';
import { dateTime, MINOR } from './common.js';
import { invoiceLineSchema } from './invoices.js';
import { subscriptionSchema } from './subscriptions.js';

export const APPLY_AT = ['immediately', 'end_of_period'] as const;

export const planChangeSchema = z.object({
  subscription: subscriptionSchema,
  applyAt: dateTime.describe('When the change takes or took effect.'),
  applied: z.boolean().describe('false: pending until applyAt (pendingPlanChange).'),
  invoice: z.string().nullable().describe('Id of the invoice issued at the change, or null.'),
  creditNotes: z.array(z.string()).describe('Ids of the credit notes for unused time paid in advance.'),
});

export const planChangePreviewSchema = z.object({
  applyAt: dateTime,
  creditNotes: z.array(
    z.object({
      invoice: z.string().describe('Id of the credited invoice.'),
      amount: z.number().int().describe(`${MINOR}, tax included.`),
      lines: z.array(z.object({ description: z.string(), netAmount: z.number().int().describe(MINOR), taxRate: z.number().describe('Percent.') })),
    }),
  ),
  invoice: z
    .object({
      lines: z.array(invoiceLineSchema.omit({ id: true, position: true, unitAmount: true })),
      netAmount: z.number().int().describe(MINOR),
      taxAmount: z.number().int().describe(MINOR),
      grossAmount: z.number().int().describe(MINOR),
    })
    .nullable()
    .describe('The invoice issued at the change, or null when nothing is due then.'),
});
