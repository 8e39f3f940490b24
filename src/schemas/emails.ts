import { z } from 'zod';
import { dateTime, timestamps } from './common.js';

export const EMAIL_KINDS = ['invoice', 'dunning', 'sepa_pre_notification'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];
export const EMAIL_STATUSES = ['queued', 'sent', 'failed', 'not_sent'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const emailSchema = z.object({
  id: z.string(),
  kind: z.enum(EMAIL_KINDS),
  invoice: z.string(),
  customer: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  body: z.string().describe('Plain text.'),
  status: z.enum(EMAIL_STATUSES).describe('failed: given up after retries; not_sent: never attempted (lastError says why).'),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  nextAttemptAt: dateTime.nullable(),
  sentAt: dateTime.nullable(),
  attachments: z.array(z.string()).describe('File names.'),
  ...timestamps,
});
export type Email = z.infer<typeof emailSchema>;
