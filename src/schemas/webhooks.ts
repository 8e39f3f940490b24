import { z } from 'zod';
import { timestamps } from './common.js';

export const EVENT_TYPES = [
  'payment_plan.created',
  'payment_plan.rate_paid',
  'payment_plan.completed',
  'payment_plan.broken',
  'payment_plan.canceled',
  'payment_plan.extended',
  'invoice.created',
  'invoice.paid',
  'invoice.voided',
  'invoice.dunning_level_reached',
  'credit_note.created',
  'subscription.plan_changed',
  'subscription.trial_ending',
  'offer.accepted',
  'offer.signed',
  'subscription.cancellation_scheduled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const EVENT_VERSIONS = ['v1'] as const;

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  version: z.enum(EVENT_VERSIONS),
  enabled: z.boolean(),
  ...timestamps,
});
export type Webhook = z.infer<typeof webhookSchema>;

export const webhookWithSecretSchema = webhookSchema.extend({
  secret: z.string().describe('Signing secret; shown only here.'),
});
