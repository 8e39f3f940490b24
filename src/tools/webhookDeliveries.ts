import { z } from 'zod';
import { listWebhookDeliveries, retryWebhookDelivery } from '../domain/events.js';
import { defineOperation } from '../registry/operation.js';
import { listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';
import { DELIVERY_STATUSES, webhookDeliverySchema } from '../schemas/webhookDeliveries.js';
import { deliveryRow, listView } from '../schemas/views.js';

export const webhookDeliveryOperations = [
  defineOperation({
    name: 'list_webhook_deliveries',
    title: 'List webhook deliveries',
    description:
      'List the deliveries of one webhook, oldest first, paginated (page, limit 0-100); optionally only those with one status. Each shows the event, the body sent, its status (pending, delivered, failed, skipped), the number of attempts, the last HTTP status and error, when the next attempt is due, and every attempt. Use it to see whether a receiver got an event and why not. Deliveries are retried up to 3 times on the configured delays; failed ones can be sent again with retry_webhook_delivery. An unknown webhook id is a 404.',
    toolset: 'webhooks',
    method: 'GET',
    path: '/webhooks/{id}/deliveries',
    permission: 'webhook:read',
    kind: 'list',
    input: z.strictObject({
      id: pathId('webhook'),
      ...pageInput,
      status: z
        .enum(DELIVERY_STATUSES)
        .optional()
        .describe(
          'Only deliveries with this status: pending (waiting for an attempt), delivered (2xx received), failed (all attempts failed) or skipped (webhook disabled).',
        ),
    }),
    output: listOf(webhookDeliverySchema),
    mcp: listView(deliveryRow),
    handler: async (ctx, { id, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listWebhookDeliveries(ctx.tx, ctx.org, id, { status }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'retry_webhook_delivery',
    title: 'Retry webhook delivery',
    description:
      "Send a delivery again now, with the same id and body, whatever its status (a failed one, one skipped while the webhook was disabled, or a delivered one the receiver lost); a pending one is sent now instead of waiting for its next retry. It becomes pending and gets a new round: the attempt now and up to 3 automatic retries. Rejected (409): the delivery's webhook is disabled (enable it first with update_webhook). An unknown delivery id is a 404.",
    toolset: 'webhooks',
    method: 'POST',
    path: '/webhook-deliveries/{id}/retry',
    permission: 'webhook:write',
    kind: 'action',
    annotations: { destructiveHint: false, openWorldHint: true },
    input: z.strictObject({ id: pathId('webhook delivery (the X-Webhook-Id of the event)') }),
    output: webhookDeliverySchema,
    handler: async (ctx, input) => {
      ctx.afterCommit(() => ctx.deliveries.kick());
      return retryWebhookDelivery(ctx.tx, ctx.org, input.id, ctx.now);
    },
  }),
];
