import { z } from 'zod';
import { dateTime, MINOR } from './common.js';

export const creditNoteSchema = z.object({
  id: z.string(),
  number: z.string().describe('CN-<year>-000001, per organisation.'),
  invoice: z.string().describe('Id of the credited invoice.'),
  customer: z.string(),
  amount: z.number().int().describe(MINOR),
  currencyCode: z.string(),
  reason: z.string(),
  createdAt: dateTime,
});
export type CreditNote = z.infer<typeof creditNoteSchema>;
