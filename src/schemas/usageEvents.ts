import { z } from 'zod';
import { dateTime } from './common.js';

export const usageEventSchema = z.object({
  id: z.string().describe('Your id of the event.'),
  eventName: z.string(),
  timestamp: dateTime,
  subscription: z.string().nullable().describe('Id of the subscription it counts for; null when it reached none.'),
  customer: z.string().nullable(),
  properties: z.record(z.string(), z.union([z.string(), z.number()])),
  unmatched: z.boolean().describe('No item of its subscription (or customer) meters its name at its time: never billed.'),
  late: z.boolean().describe('Its interval was already invoiced: stored, not billed.'),
  receivedAt: dateTime,
});
export type UsageEvent = z.infer<typeof usageEventSchema>;

export const ingestResultSchema = z.object({
  accepted: z.number().int().describe('Events newly stored, late and unmatched ones included.'),
  duplicates: z.number().int().describe('Events whose id was already stored.'),
  late: z.number().int(),
  unmatched: z.number().int(),
  errors: z.array(
    z.object({
      index: z.number().int(),
      id: z.string().optional(),
      propertyPath: z.string(),
      message: z.string(),
    }),
  ).describe('Rejected events; the others were stored.'),
});
export type IngestResult = z.infer<typeof ingestResultSchema>;

export const usageEventListSchema = z.object({
  data: z.array(usageEventSchema),
  meta: z.object({ nextCursor: z.string().nullable().describe('cursor of the next page; null on the last.') }),
});
