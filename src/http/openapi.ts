import { problemSchema } from '../schemas/common.js';
import type { Catalog } from '../registry/catalog.js';
import { toJsonSchema } from '../registry/jsonSchema.js';
import { acceptsIdempotencyKey, pathParams, successStatus } from '../registry/operation.js';
import { SERVER_INFO } from '../mcp/server.js';

type Json = Record<string, unknown>;

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Malformed JSON or a bad query parameter',
  '401': 'Missing, unknown, expired or revoked token',
  '403': 'The token lacks the permission',
  '404': 'Unknown id (including another organisation’s)',
  '409': 'The resource’s state forbids the operation',
  '413': 'Body over 1 MiB',
  '415': 'Wrong content type',
  '422': 'Validation failed; violations name each field',
};

/** The answers of the health checks (src/http/app.ts sends these very objects). */
export const LIVE = { status: 'ok' } as const;
export const READY = { status: 'ready' } as const;

/** A health check's 200 answer: the one object it sends. */
function healthAnswer(description: string, answer: { status: string }): Json {
  const schema = { type: 'object', properties: { status: { type: 'string', const: answer.status } }, required: ['status'], additionalProperties: false };
  return { description, content: { 'application/json': { schema } } };
}

/** `/healthz` and `/readyz`: routes beside the operations, so no MCP tool; no bearer token. */
function healthPaths(): Record<string, Json> {
  const check = (operationId: string, summary: string, description: string, responses: Json): Json => ({
    get: { operationId, summary, description, tags: ['health'], security: [], responses },
  });
  return {
    '/healthz': check('healthz', 'Liveness', 'The server answers; the database is not asked.', {
      '200': healthAnswer('Alive', LIVE),
    }),
    '/readyz': check('readyz', 'Readiness', 'The database answers: a load balancer sends requests only while this is 200.', {
      '200': healthAnswer('Ready', READY),
      '503': {
        description: 'The database is not reachable; detail says why, Retry-After when to ask again',
        headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 } } },
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    }),
  };
}

/** OpenAPI 3.1 generated from the same zod schemas as the MCP tools. */
export function buildOpenApi(catalog: Catalog): Json {
  const paths: Record<string, Json> = {};
  for (const op of catalog.operations) {
    const input = catalog.restInputSchema(op.name) as { properties?: Record<string, Json>; required?: string[] };
    const props = input.properties ?? {};
    const required = new Set(input.required ?? []);
    const inPath = pathParams(op);
    const parameters: Json[] = inPath.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: props[name] ?? { type: 'string' },
    }));
    const bodyProps: Record<string, Json> = {};
    const inQuery = op.method === 'GET' || op.method === 'DELETE';
    // The query parameters a body operation declares (`?atomic=true`), which a JSON object body may carry too.
    const alsoInQuery = op.requestBody?.kind === 'json' ? op.requestBody.query : [];
    for (const [name, schema] of Object.entries(props)) {
      if (inPath.includes(name)) continue;
      if (inQuery || alsoInQuery.includes(name)) {
        const query: Json = { name, in: 'query', required: inQuery && required.has(name), schema };
        if (name === 'order') {
          query.name = 'order[createdAt]';
          query.schema = { type: 'string', enum: ['asc', 'desc'] };
        }
        if (typeof schema.description === 'string') query.description = schema.description;
        parameters.push(query);
      }
      if (!inQuery) bodyProps[name] = schema;
    }
    if (acceptsIdempotencyKey(op)) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Replays the first response for the same key and body within 24 h.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
    }
    const status = String(successStatus(op));
    const responses: Json = {
      [status]:
        status === '204'
          ? { description: 'Deleted' }
          : op.restDocument
            ? { description: 'Success', content: { [op.restDocument.mediaType]: { schema: { type: 'string', contentMediaType: op.restDocument.mediaType } } } }
            : { description: 'Success', content: { 'application/json': { schema: toJsonSchema(op.restBody?.schema ?? op.output, 'output') } } },
    };
    for (const [code, description] of Object.entries(ERROR_STATUSES)) {
      responses[code] = { description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    }
    const operation: Json = {
      operationId: op.name,
      summary: op.title,
      description: op.description,
      tags: [op.toolset],
      parameters,
      responses,
    };
    // No bearer token: the input authorizes the call (token refresh).
    if (op.authentication === 'none') operation.security = [];
    if (op.deprecated) operation.deprecated = true;
    if (op.permission) operation['x-permission'] = op.permission;
    if (op.requestBody?.kind === 'text') {
      operation.requestBody = {
        required: true,
        content: { [op.requestBody.mediaType]: { schema: { type: 'string', description: bodyProps[op.requestBody.field]?.description } } },
      };
    } else if (op.method !== 'GET' && op.method !== 'DELETE') {
      const bodyRequired = [...required].filter((n) => !inPath.includes(n));
      const bodySchema: Json = { type: 'object', properties: bodyProps, additionalProperties: false };
      if (bodyRequired.length) bodySchema.required = bodyRequired;
      operation.requestBody = {
        required: bodyRequired.length > 0,
        content: {
          [op.contentType ?? 'application/json']: { schema: bodySchema },
          ...Object.fromEntries(Object.entries(op.requestBody?.kind === 'json' ? op.requestBody.mediaTypes : {}).map(([type, schema]) => [type, { schema }])),
        },
      };
    }
    const path = op.path;
    paths[path] = { ...(paths[path] ?? {}), [op.method.toLowerCase()]: operation };
  }
  Object.assign(paths, healthPaths());
  return {
    openapi: '3.1.0',
    info: {
      title: 'billing-mcp REST facade',
      version: SERVER_INFO.version,
      description: 'Every operation but the health checks is also an MCP tool of the same name at POST /mcp.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Problem: toJsonSchema(problemSchema, 'output') },
    },
  };
}
