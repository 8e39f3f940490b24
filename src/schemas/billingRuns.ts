import { z } from 'zod';
import { dateTime } from './common.js';

export const BILLING_RUN_TRIGGERS = ['api', 'schedule', 'cli'] as const;
export type BillingRunTrigger = (typeof BILLING_RUN_TRIGGERS)[number];

/** At most this many invoice ids, skipped and failed subscriptions a run lists; the counts say how many there were. */
export const RUN_LIST_LIMIT = 100;

export const billingRunSchema = z.object({
  id: z.string(),
  trigger: z.enum(BILLING_RUN_TRIGGERS).describe('api: run_billing; schedule: the server\'s job loop; cli: billing-mcp jobs run.'),
  status: z.enum(['completed', 'failed']).describe('failed: at least one subscription failed (see failed).'),
  subscription: z.string().nullable().describe('The one subscription billed; null: every due one.'),
  asOf: dateTime.describe('Everything due up to this instant was billed.'),
  startedAt: dateTime,
  finishedAt: dateTime,
  subscriptionsBilled: z.number().int(),
  subscriptionsSkipped: z.number().int(),
  subscriptionsFailed: z.number().int(),
  invoicesCreated: z.number().int(),
  invoices: z.array(z.string()).describe(`Ids of the invoices created, at most ${RUN_LIST_LIMIT}.`),
  skipped: z.array(z.object({ subscription: z.string(), reason: z.string() })).describe(`At most ${RUN_LIST_LIMIT}.`),
  failed: z.array(z.object({ subscription: z.string(), error: z.string() })).describe(`At most ${RUN_LIST_LIMIT}.`),
});
export type BillingRun = z.infer<typeof billingRunSchema>;
