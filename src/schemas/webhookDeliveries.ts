import { z } from 'zod';
import { dateTime, timestamps } from './common.js';
import { EVENT_TYPES, EVENT_VERSIONS } from './webhooks.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const deliveryAttemptSchema = z.object({
  attemptedAt: dateTime,
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

export const webhookDeliverySchema = z.object({
  id: z.string().describe('Also event.id and the X-Webhook-Id header.'),
  webhook: z.string(),
  eventType: z.enum(EVENT_TYPES),
  eventVersion: z.enum(EVENT_VERSIONS),
  status: z
    .enum(DELIVERY_STATUSES)
    .describe('failed: the attempt and 3 retries failed; skipped: the webhook was disabled.'),
  attempts: z.number().int(),
  nextAttemptAt: dateTime.nullable(),
  lastAttemptAt: dateTime.nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: dateTime.nullable(),
  payload: z
    .object({
      event: z.object({ id: z.string(), type: z.enum(EVENT_TYPES), version: z.enum(EVENT_VERSIONS), createdAt: dateTime }),
      data: z.record(z.string(), z.unknown()),
    })
    .describe('The body sent on every attempt.'),
  attemptLog: z.array(deliveryAttemptSchema),
  ...timestamps,
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

/**
 * A row of a webhook's delivery list (REST and MCP): the delivery without its body and attempt log,
 * which get_webhook_delivery answers (a body is a whole resource: 26 rows were about 39 KB).
 */
export const webhookDeliveryRowSchema = webhookDeliverySchema.omit({ payload: true, attemptLog: true });
export type WebhookDeliveryRow = z.infer<typeof webhookDeliveryRowSchema>;
