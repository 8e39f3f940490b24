import { z } from 'zod';
import { getWebhookDelivery, listWebhookDeliveries, retryWebhookDelivery } from '../domain/events.js';
import { defineOperation } from '../registry/operation.js';
import { listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';
import { DELIVERY_STATUSES, webhookDeliveryRowSchema, webhookDeliverySchema } from '../schemas/webhookDeliveries.js';
import { deliveryRow, listView } from '../schemas/views.js';

export const webhookDeliveryOperations = [
  defineOperation({
    name: 'list_webhook_deliveries',
    title: 'List webhook deliveries',
    description:
      'List the deliveries of a webhook with their status, attempts and last error, e.g. to see whether a receiver got an event and why not. get_webhook_delivery shows the body and every attempt; retry_webhook_delivery sends one again.',
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
        .describe('Only deliveries in this status.'),
    }),
    output: listOf(webhookDeliveryRowSchema),
    mcp: listView(deliveryRow),
    handler: async (ctx, { id, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listWebhookDeliveries(ctx.tx, ctx.org, id, { status }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_webhook_delivery',
    title: 'Get webhook delivery',
    description: 'Get one delivery with the body it sends and every attempt (status code, error, duration).',
    toolset: 'webhooks',
    method: 'GET',
    path: '/webhook-deliveries/{id}',
    permission: 'webhook:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('delivery (X-Webhook-Id)') }),
    output: webhookDeliverySchema,
    handler: (ctx, input) => getWebhookDelivery(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'retry_webhook_delivery',
    title: 'Retry webhook delivery',
    description:
      'Send a delivery again now with the same id and body, in any status (failed, skipped, or delivered but lost), then up to 3 automatic retries. Its webhook must be enabled (update_webhook).',
    toolset: 'webhooks',
    method: 'POST',
    path: '/webhook-deliveries/{id}/retry',
    permission: 'webhook:write',
    kind: 'action',
    annotations: { destructiveHint: false, openWorldHint: true },
    input: z.strictObject({ id: pathId('delivery (X-Webhook-Id)') }),
    output: webhookDeliverySchema,
    handler: async (ctx, input) => {
      ctx.afterCommit(() => ctx.deliveries.kick());
      return retryWebhookDelivery(ctx.tx, ctx.org, input.id, ctx.now);
    },
  }),
];
