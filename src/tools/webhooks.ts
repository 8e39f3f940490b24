import { z } from 'zod';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  updateWebhook,
  URL_MAX_LENGTH,
} from '../domain/webhooks.js';
import { defineOperation } from '../registry/operation.js';
import { listOf, pageInput, pathId, paged } from '../schemas/common.js';
import { EVENT_TYPES, EVENT_VERSIONS, webhookSchema, webhookWithSecretSchema } from '../schemas/webhooks.js';

const URL_RULES =
  'An absolute http or https URL; a private, loopback or link-local host only if the server sets BILLING_WEBHOOK_ALLOW_PRIVATE=true.';
const VERSION_RULES = 'Event schema version.';
const ENABLED_RULES = 'false: kept, but receives nothing.';

const url = z.string().max(URL_MAX_LENGTH, { message: `must be at most ${URL_MAX_LENGTH} characters` });
const events = z
  .array(z.enum(EVENT_TYPES))
  .min(1, { message: 'must contain at least 1 event type' })
  .max(EVENT_TYPES.length, { message: `must contain at most ${EVENT_TYPES.length} event types, each once` });
const version = z.enum(EVENT_VERSIONS);
const enabled = z.boolean();

export const webhookOperations = [
  defineOperation({
    name: 'create_webhook',
    title: 'Create webhook',
    description:
      'Register a URL that receives events (invoices, credit notes, subscriptions, offers, payment plans) as signed HTTP POSTs. Only this response shows the signing secret (whsec_...): give it to the receiver now, it cannot be read again.',
    toolset: 'webhooks',
    method: 'POST',
    path: '/webhooks',
    permission: 'webhook:write',
    kind: 'create',
    input: z.strictObject({
      url: url.describe(`Where events are sent. ${URL_RULES}`),
      events: events.describe('Event types to deliver, each once.'),
      version: version.default('v1').describe(VERSION_RULES),
      enabled: enabled.default(true).describe(ENABLED_RULES),
    }),
    output: webhookWithSecretSchema,
    handler: (ctx, input) => createWebhook(ctx.tx, ctx.org, input, ctx.config.webhookAllowPrivate, ctx.now),
  }),
  defineOperation({
    name: 'list_webhooks',
    title: 'List webhooks',
    description: 'List webhooks (url, events, version, enabled); secrets are never shown.',
    toolset: 'webhooks',
    method: 'GET',
    path: '/webhooks',
    permission: 'webhook:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(webhookSchema),
    handler: (ctx, input) => paged(input, (page) => listWebhooks(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_webhook',
    title: 'Get webhook',
    description: 'Get a webhook: url, events, version, enabled; the secret is not shown.',
    toolset: 'webhooks',
    method: 'GET',
    path: '/webhooks/{id}',
    permission: 'webhook:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('webhook') }),
    output: webhookSchema,
    handler: (ctx, input) => getWebhook(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_webhook',
    title: 'Update webhook',
    description:
      'Enable, disable or move a webhook or change its events: a sent field replaces its value (events the whole list), omitted fields stay, null is rejected. The secret stays.',
    toolset: 'webhooks',
    method: 'PATCH',
    path: '/webhooks/{id}',
    permission: 'webhook:write',
    kind: 'update',
    contentType: 'application/merge-patch+json',
    input: z.strictObject({
      id: pathId('webhook'),
      url: url.nullable().optional().describe('Where events are sent, as in create_webhook.'),
      events: events.nullable().optional().describe('Event types to deliver, each once.'),
      version: version.nullable().optional().describe(VERSION_RULES),
      enabled: enabled.nullable().optional().describe(ENABLED_RULES),
    }),
    output: webhookSchema,
    handler: (ctx, { id, ...patch }) => updateWebhook(ctx.tx, ctx.org, id, patch, ctx.config.webhookAllowPrivate, ctx.now),
  }),
  defineOperation({
    name: 'delete_webhook',
    title: 'Delete webhook',
    description: 'Delete a webhook and its secret for good, e.g. for a retired endpoint; to pause deliveries, update_webhook with enabled false.',
    toolset: 'webhooks',
    method: 'DELETE',
    path: '/webhooks/{id}',
    permission: 'webhook:write',
    kind: 'delete',
    input: z.strictObject({ id: pathId('webhook') }),
    output: z.object({ id: z.string(), deleted: z.literal(true) }),
    handler: (ctx, input) => deleteWebhook(ctx.tx, ctx.org, input.id),
  }),
];
