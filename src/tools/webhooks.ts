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

const URL_RULES = `An absolute http or https URL, at most ${URL_MAX_LENGTH} characters, e.g. https://example.com/webhooks/billing. Rejected: other schemes (ftp:, mailto:, ...), relative or malformed URLs, and hosts that are not public: IP addresses outside public unicast (private, loopback, link-local, carrier-grade NAT, multicast, broadcast, reserved, benchmarking, site- or unique-local; an IPv4 address inside IPv6, as in ::ffff:, ::, 64:ff9b:: or 2002:, counts as that IPv4 address), localhost and names ending in .localhost, .local or .internal, unless the server runs with BILLING_WEBHOOK_ALLOW_PRIVATE=true.`;
const EVENT_RULES = `At least one event type, each at most once. Allowed: ${EVENT_TYPES.join(', ')}. Unknown types and repeated types are rejected.`;
const VERSION_RULES = 'Event schema version of the deliveries; only v1 exists, anything else is rejected.';
const ENABLED_RULES = 'true: events are delivered; false: the webhook is kept but receives nothing.';
const NOT_NULL = 'null is rejected: the field is required and cannot be removed.';

const url = z.string().max(URL_MAX_LENGTH, { message: `must be at most ${URL_MAX_LENGTH} characters` });
const events = z.array(z.enum(EVENT_TYPES)).min(1, { message: 'must contain at least 1 event type' });
const version = z.enum(EVENT_VERSIONS);
const enabled = z.boolean();

export const webhookOperations = [
  defineOperation({
    name: 'create_webhook',
    title: 'Create webhook',
    description: `Register a URL that receives events as signed HTTP POSTs. Use when an integration must react to payment plan changes (${EVENT_TYPES.join(', ')}). The response is the only one that shows the signing secret (whsec_...): give it to the receiver now, it cannot be read again. Rejected (422): a url that is not an absolute http or https URL of at most ${URL_MAX_LENGTH} characters, or that targets a host that is not public (unless the server allows private targets with BILLING_WEBHOOK_ALLOW_PRIVATE=true); events empty, unknown or repeated; a version other than v1.`,
    toolset: 'webhooks',
    method: 'POST',
    path: '/webhooks',
    permission: 'webhook:write',
    kind: 'create',
    input: z.strictObject({
      url: url.describe(`Where events are sent. ${URL_RULES}`),
      events: events.describe(`Event types to deliver. ${EVENT_RULES}`),
      version: version.default('v1').describe(`${VERSION_RULES} Default v1.`),
      enabled: enabled.default(true).describe(`${ENABLED_RULES} Default true.`),
    }),
    output: webhookWithSecretSchema,
    handler: (ctx, input) => createWebhook(ctx.tx, ctx.org, input, ctx.config.webhookAllowPrivate, ctx.now),
  }),
  defineOperation({
    name: 'list_webhooks',
    title: 'List webhooks',
    description:
      'List the webhooks of the organisation (url, events, version, enabled), oldest first, paginated (page, limit 0-100). Secrets are never shown.',
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
    description: 'Get one webhook by id: url, events, version, enabled. The secret is not shown (only create_webhook shows it). An unknown id is 404.',
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
      'Change a webhook as a JSON merge patch: send only the fields to change; a sent field replaces the stored value (events replaces the whole list, it does not add to it), omitted fields stay. Use to enable or disable a webhook, move it to another URL or change its events or version. The secret stays the same and is not shown. Rejected (422): unknown fields, null for any field (every field is required and cannot be removed), and the values create_webhook rejects. Over HTTP the body must be application/merge-patch+json (415 otherwise). An unknown id is 404.',
    toolset: 'webhooks',
    method: 'PATCH',
    path: '/webhooks/{id}',
    permission: 'webhook:write',
    kind: 'update',
    contentType: 'application/merge-patch+json',
    input: z.strictObject({
      id: pathId('webhook'),
      url: url.nullable().optional().describe(`New target; omit to keep. ${URL_RULES} ${NOT_NULL}`),
      events: events
        .nullable()
        .optional()
        .describe(`New event types, replacing the whole list; omit to keep. ${EVENT_RULES} ${NOT_NULL}`),
      version: version.nullable().optional().describe(`Omit to keep. ${VERSION_RULES} ${NOT_NULL}`),
      enabled: enabled.nullable().optional().describe(`Omit to keep. ${ENABLED_RULES} ${NOT_NULL}`),
    }),
    output: webhookSchema,
    handler: (ctx, { id, ...patch }) => updateWebhook(ctx.tx, ctx.org, id, patch, ctx.config.webhookAllowPrivate, ctx.now),
  }),
  defineOperation({
    name: 'delete_webhook',
    title: 'Delete webhook',
    description:
      'Delete a webhook for good: no further events are sent to its URL and its secret is gone. Use when an endpoint is retired; to pause deliveries instead, use update_webhook with enabled false. An unknown id is 404.',
    toolset: 'webhooks',
    method: 'DELETE',
    path: '/webhooks/{id}',
    permission: 'webhook:write',
    kind: 'delete',
    input: z.strictObject({ id: pathId('webhook') }),
    output: z.object({ id: z.string().describe('Id of the deleted webhook.'), deleted: z.literal(true) }),
    handler: (ctx, input) => deleteWebhook(ctx.tx, ctx.org, input.id),
  }),
];
