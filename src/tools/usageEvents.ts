import { z } from 'zod';
import { AppError } from '../errors.js';
import { ingestUsageEventCalls, ingestUsageEvents, listUsageEvents, MAX_EVENTS } from '../domain/usageEvents.js';
import { defineOperation } from '../registry/operation.js';
import { dateTimeInput, jsonSchemaOf } from '../schemas/common.js';
import { ingestResultSchema, usageEventListSchema } from '../schemas/usageEvents.js';
import { usageEventListView } from '../schemas/views.js';

const ref = z.string().min(1).max(255);

/**
 * An event as the tool documents it. Events are checked by hand, one by one (`ingestUsageEvents`), so
 * that a bad event is an error of the answer rather than of the whole call: the array takes any
 * value, and this schema only describes them.
 */
const eventDoc = z.strictObject({
  id: ref.describe('Your unique id; a repeat is a duplicate.'),
  eventName: ref.describe('The usageMetric.eventName it counts for.'),
  timestamp: dateTimeInput.optional().describe('When it happened (default now): up to 35 days old, 5 minutes ahead.'),
  subscription: ref.optional().describe('Id or number; or customer.'),
  customer: ref.optional().describe('Id or number: every active subscription of it metering eventName.'),
  properties: z.record(z.string(), z.union([z.string(), z.number()])).optional().describe('e.g. {"tokens": 120, "model": "large"}; what a metric sums, averages, maxes: a number.'),
});
const eventJsonSchema = jsonSchemaOf(eventDoc);

const events = z
  .array(z.unknown().meta(eventJsonSchema))
  .min(1, { message: 'must contain at least 1 event' })
  .max(MAX_EVENTS, { message: `must contain at most ${MAX_EVENTS} events; split them into several calls` })
  .describe('Events, or CloudEvents 1.0 (type, time, subject, data).');

const cloudEvent = { type: 'object', description: 'A CloudEvent 1.0: id, source, type (the event name), time, subject (subscription, else customer), data (the properties).' };

/** `?atomic=`: true or false; anything else is a 400 naming the parameter (CONTRACT section 2: query parameters). */
function atomicOf(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  const message = `atomic must be true or false (got '${value}')`;
  throw new AppError('bad_request', message, [{ propertyPath: 'atomic', message, code: 'invalid_type' }]);
}

/**
 * The events of a CloudEvents body: `application/cloudevents-batch+json` takes an array of them,
 * `application/cloudevents+json` one (an object); another shape is a 400 naming what to send.
 */
function cloudEvents(body: unknown, batch: boolean): unknown[] {
  if (batch) {
    if (Array.isArray(body)) return body;
    throw new AppError('bad_request', 'application/cloudevents-batch+json takes a JSON array of CloudEvents; send a single CloudEvent as application/cloudevents+json');
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return [body];
  throw new AppError('bad_request', 'application/cloudevents+json takes one CloudEvent, a JSON object; send an array of them as application/cloudevents-batch+json');
}

export const usageEventOperations = [
  defineOperation({
    name: 'ingest_usage_events',
    title: 'Ingest usage events',
    description: `Send usage events (up to ${MAX_EVENTS}); products' usageMetric bills them. Each id is stored once (retries are safe). A bad event is reported in errors and never blocks the others unless atomic; events no item meters (name, or time outside the subscription) are kept as unmatched.`,
    toolset: 'usage',
    method: 'POST',
    path: '/usage-events',
    permission: 'usage-event:write',
    kind: 'action',
    annotations: { destructiveHint: false, idempotentHint: true },
    input: z.strictObject({
      events,
      atomic: z.boolean().default(false).describe('true: store all events or none (422 with the errors).'),
    }),
    output: ingestResultSchema,
    requestBody: {
      kind: 'json',
      mediaTypes: {
        'application/cloudevents+json': cloudEvent,
        'application/cloudevents-batch+json': { type: 'array', items: cloudEvent, maxItems: MAX_EVENTS },
      },
      query: ['atomic'],
      toInput: (body, mediaType, query) => {
        const atomic = atomicOf(query.get('atomic'));
        const base = atomic === undefined ? {} : { atomic };
        if (mediaType === 'application/cloudevents-batch+json') return { ...base, events: cloudEvents(body, true) };
        if (mediaType === 'application/cloudevents+json') return { ...base, events: cloudEvents(body, false) };
        const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : { events: body };
        return 'events' in object || Object.keys(object).length === 0 ? { ...base, ...object } : { ...base, events: [object] };
      },
    },
    handler: (ctx, input) => ingestUsageEvents(ctx.tx, ctx.org, input.events, input.atomic, ctx.now),
    // Every unit takes the organisation's next event sequence numbers (rollups read them in commit order).
    serializeOn: 'usage-event-sequence',
    // Single events (the body itself, or one CloudEvent) share units of work; a batch fills its own.
    coalesce: { when: (input) => input.events.length === 1, run: (ctx, inputs) => ingestUsageEventCalls(ctx.tx, ctx.org, inputs, ctx.now) },
  }),
  defineOperation({
    name: 'list_usage_events',
    title: 'List usage events',
    description: 'List received usage events, newest first, e.g. to check what arrived or find unmatched ones; page with cursor.',
    toolset: 'usage',
    method: 'GET',
    path: '/usage-events',
    permission: 'usage-event:read',
    kind: 'list',
    input: z.strictObject({
      subscription: ref.optional().describe('Id or number.'),
      customer: ref.optional().describe('Id or number.'),
      eventName: ref.optional().describe('Exact name.'),
      from: dateTimeInput.optional().describe('Timestamps from (inclusive).'),
      to: dateTimeInput.optional().describe('Timestamps before (exclusive).'),
      unmatched: z.boolean().optional().describe('true: only events no item meters (never billed).'),
      limit: z.number().int().min(1).max(100).default(30),
      cursor: ref.optional().describe('meta.nextCursor of the previous page.'),
    }),
    output: usageEventListSchema,
    mcp: usageEventListView,
    handler: (ctx, input) => listUsageEvents(ctx.tx, ctx.org, input),
  }),
];
