import { CONVENTION_FIELDS } from '../src/schemas/common.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { meteredSubscription, ok, setup, type TestEnv } from './helpers.js';
import { eachSchema, type SchemaNode } from './schemaWalk.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; description?: string; anyOf?: Schema[] };

/** Paths of input properties (nested ones included) that carry no description. */
function undocumented(schema: Schema, at = ''): string[] {
  const out: string[] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const path = at ? `${at}.${name}` : name;
    if (!at && CONVENTION_FIELDS.has(name)) continue;
    if (!prop.description) out.push(path);
    for (const variant of [prop, prop.items, ...(prop.anyOf ?? [])]) {
      if (variant?.properties) out.push(...undocumented(variant, path));
      if (variant?.items?.properties) out.push(...undocumented(variant.items, `${path}[]`));
    }
  }
  return out;
}

/** Where a schema would read differently in some clients: what the MCP Inspector's portability lint flags. */
function unportable(schema: unknown, at: string): string[] {
  const out: string[] = [];
  eachSchema(schema, at, (s, where) => {
    if (Array.isArray(s.type)) out.push(`${where}: type is an array`);
    if ('$ref' in s || '$defs' in s) out.push(`${where}: $ref/$defs`);
    if (s.format && s.pattern) out.push(`${where}: pattern beside format ${String(s.format)}`);
    for (const branch of (s.anyOf ?? s.oneOf ?? []) as SchemaNode[]) {
      if (!branch.type) out.push(`${where}: an anyOf/oneOf branch without type`);
    }
  });
  return out;
}

describe('tools/list', () => {
  it('matches one reviewed snapshot per tool (any change to the tool surface shows up in review)', async () => {
    const { tools } = await env.mcp.listTools();
    for (const tool of tools) await expect(JSON.stringify(tool, null, 2)).toMatchFileSnapshot(`./__snapshots__/tools/${tool.name}.json`);
    const discovery = await setup({ toolsets: undefined });
    try {
      const listed = (await discovery.mcp.listTools()).tools;
      for (const name of ['list_toolsets', 'enable_toolsets']) {
        await expect(JSON.stringify(listed.find((t) => t.name === name), null, 2)).toMatchFileSnapshot(`./__snapshots__/tools/${name}.json`);
      }
    } finally {
      await discovery.close();
    }
  });

  it('every input and output schema is portable: one type per schema, no references, no patterns beside formats', async () => {
    const { tools } = await env.mcp.listTools();
    const findings = tools.flatMap((t) => [...unportable(t.inputSchema, `${t.name}.input`), ...unportable(t.outputSchema, `${t.name}.output`)]);
    expect(findings).toEqual([]);
  });

  it('every tool declares a title, all four annotations, an output schema and a described input field', async () => {
    const { tools } = await env.mcp.listTools();
    expect(tools.length).toBe(OPERATIONS.length);
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      }
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(undocumented(tool.inputSchema as Schema), tool.name).toEqual([]);
    }
  });

  it('read operations are read-only and the rest are not', () => {
    for (const op of OPERATIONS) {
      expect(op.kind === 'read' || op.kind === 'list', op.name).toBe(op.method === 'GET');
    }
  });
});

describe('read-only mode and toolsets come from the definitions', () => {
  it('--read-only keeps only tools with readOnlyHint, and REST refuses writes', async () => {
    const ro = await setup({ readOnly: true });
    try {
      const { tools } = await ro.mcp.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      expect(tools.map((t) => t.name)).not.toContain('create_unit');
      const res = await ro.http('POST', '/catalogue/units', { body: { name: 'x' } });
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/read-only/);
      const call = await ro.mcp.callTool({ name: 'create_unit', arguments: { name: 'x' } });
      expect(call.isError).toBe(true);
    } finally {
      await ro.close();
    }
  });

  it('--toolsets keeps the named groups only', async () => {
    const only = await setup({ toolsets: ['webhooks'] });
    try {
      const names = (await only.mcp.listTools()).tools.map((t) => t.name);
      const expected = OPERATIONS.filter((op) => op.toolset === 'webhooks').map((op) => op.name);
      expect(names.sort()).toEqual(expected.sort());
      expect(names).not.toContain('list_units');
    } finally {
      await only.close();
    }
  });
});

describe('OpenAPI', () => {
  it('is a valid OpenAPI 3.1 document covering every operation', async () => {
    const res = await env.http('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    // Every operation, and the health checks, which are the only paths without a tool.
    expect(ids.sort()).toEqual([...OPERATIONS.map((o) => o.name), 'healthz', 'readyz'].sort());
    expect(doc.paths['/catalogue/measurements'].get.deprecated).toBe(true);
  });

  it('documents the success response of an operation that maps its REST body with the schema of that body', async () => {
    const doc = (await env.http('GET', '/openapi.json', { token: null })).body;
    const schema = doc.paths['/subscriptions/{id}/estimated-invoice'].get.responses['200'].content['application/json'].schema;
    expect(schema).toMatchObject({ type: 'string' });
    expect(schema.properties).toBeUndefined();
    const id = await meteredSubscription(env.mcp, { eventName: 'openapi', aggregation: 'count' }, 'OpenApiEstimate');
    const res = await env.http('GET', `/subscriptions/${id}/estimated-invoice`);
    expect(res.status).toBe(200);
    expect(typeof res.body).toBe('string');
  });
});

describe('Streamable HTTP /mcp', () => {
  it('answers tools/list and tools/call statelessly with JSON', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const list = await env.http('POST', '/mcp', { headers, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(list.status).toBe(200);
    expect(list.body.result.tools.length).toBe(OPERATIONS.length);
    const created = await env.http('POST', '/mcp', {
      headers,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_unit', arguments: { name: 'via /mcp' } } },
    });
    expect(created.body.result.structuredContent.name).toBe('via /mcp');
    const bad = await env.http('POST', '/mcp', {
      headers,
      body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_unit', arguments: {} } },
    });
    expect(bad.body.result.isError).toBe(true);
    expect(bad.body.result.content[0].text).toMatch(/^Validation failed: name is required/);
  });
});

describe('Streamable HTTP with the SDK client', () => {
  it('connects, lists and calls tools over real HTTP with the bearer token', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${env.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${env.org.apiKey}` } },
    });
    const client = new Client({ name: 'remote-agent', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('billing-mcp');
      expect((await client.listTools()).tools.length).toBe(OPERATIONS.length);
      const unit = await ok(client, 'create_unit', { name: 'remote' });
      expect(unit.name).toBe('remote');
    } finally {
      await client.close();
    }
  });

  it('keeps concurrent callers apart even when they use the same JSON-RPC ids', async () => {
    const other = await env.newOrg('Concurrent org');
    await env.http('POST', '/catalogue/units', { token: other.apiKey, body: { name: 'theirs' } });
    await env.http('POST', '/catalogue/units', { body: { name: 'ours' } });
    const listFor = (token: string) =>
      env.http('POST', '/mcp', {
        token,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_units', arguments: { limit: 100 } } },
      });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => listFor(i % 2 ? other.apiKey : env.org.apiKey)));
    results.forEach((res, i) => {
      expect(res.body.id).toBe(7);
      const names = res.body.result.structuredContent.data.map((u: { name: string }) => u.name);
      if (i % 2) expect(names).toEqual(['theirs']);
      else {
        expect(names).toContain('ours');
        expect(names).not.toContain('theirs');
      }
    });
  });

  it('answers a notification with 202 and a body that is not JSON-RPC with an error', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const note = await env.http('POST', '/mcp', { headers, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    expect(note.status).toBe(202);
    const bad = await env.http('POST', '/mcp', { headers, body: { hello: 'world' } });
    expect(bad.body.error.code).toBe(-32600);
    const unparsable = await env.http('POST', '/mcp', { headers, body: '{' });
    expect(unparsable.status).toBe(400);
    expect(unparsable.body.error.code).toBe(-32700);
  });
});
