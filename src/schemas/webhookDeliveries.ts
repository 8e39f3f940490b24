import { z } from 'zod';
import { dateTime, timestamps } from './common.js';
import { EVENT_TYPES, EVENT_VERSIONS } from './webhooks.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const deliveryAttemptSchema = z.object({
  attemptedAt: dateTime,
  statusCode: z.number().int().nullable().describe('HTTP status the receiver answered; null when no answer came.'),
  error: z.string().nullable().describe('Why the attempt failed; null for a 2xx.'),
  durationMs: z.number().int(),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

export const webhookDeliverySchema = z.object({
  id: z.string().describe('ULID of the delivery; equals event.id of the body and the X-Webhook-Id and webhook-id headers.'),
  webhook: z.string().describe('Id of the webhook.'),
  eventType: z.enum(EVENT_TYPES),
  eventVersion: z.enum(EVENT_VERSIONS),
  status: z
    .enum(DELIVERY_STATUSES)
    .describe(
      'pending: waiting for its next attempt; delivered: a 2xx came back; failed: the first attempt and 3 retries failed; skipped: the webhook was disabled before it could be sent.',
    ),
  attempts: z.number().int().describe('Attempts made so far, manual retries included.'),
  nextAttemptAt: dateTime.nullable().describe('When the next attempt is due; null unless pending.'),
  lastAttemptAt: dateTime.nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: dateTime.nullable(),
  payload: z
    .object({
      event: z.object({ id: z.string(), type: z.enum(EVENT_TYPES), version: z.enum(EVENT_VERSIONS), createdAt: dateTime }),
      data: z.record(z.string(), z.unknown()),
    })
    .describe('The body that is sent, byte for byte the same on every attempt.'),
  attemptLog: z.array(deliveryAttemptSchema).describe('Every attempt, oldest first.'),
  ...timestamps,
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
