import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLSETS } from '../src/config.js';
import { DEFAULT_TOOLSETS } from '../src/mcp/discovery.js';
import { OPERATIONS } from '../src/tools/index.js';
import { call, fails, ok, setup, type TestEnv } from './helpers.js';

const namesIn = (toolsets: readonly string[]) => OPERATIONS.filter((op) => toolsets.includes(op.toolset)).map((op) => op.name);

describe('discovery on demand (stdio without --toolsets)', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setup({ toolsets: undefined });
  });
  afterAll(() => env.close());

  it('starts with the default toolsets plus list_toolsets and enable_toolsets, and announces list changes', async () => {
    const names = (await env.mcp.listTools()).tools.map((t) => t.name);
    expect(names.sort()).toEqual(['enable_toolsets', 'list_toolsets', ...namesIn(DEFAULT_TOOLSETS)].sort());
    expect(env.mcp.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(env.mcp.getInstructions()).toMatch(/enable_toolsets/);
  });

  it('list_toolsets names every toolset with its purpose, whether it is enabled, and its tools', async () => {
    const { toolsets } = await ok(env.mcp, 'list_toolsets');
    expect(toolsets.map((t: { name: string }) => t.name)).toEqual([...TOOLSETS]);
    const invoices = toolsets.find((t: { name: string }) => t.name === 'invoices');
    expect(invoices).toMatchObject({ enabled: false, tools: namesIn(['invoices']) });
    expect(invoices.purpose.length).toBeGreaterThan(10);
    expect(toolsets.find((t: { name: string }) => t.name === 'customers').enabled).toBe(true);
  });

  it('list_toolsets says each toolset once: a summary line and a table in the text, the data in structuredContent', async () => {
    const result = await env.mcp.callTool({ name: 'list_toolsets', arguments: {} });
    const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
    const { toolsets } = result.structuredContent as { toolsets: Array<{ name: string; enabled: boolean; purpose: string; tools: string[] }> };
    const lines = text.split('\n');
    expect(lines[0]).toBe(`${TOOLSETS.length} toolsets, ${DEFAULT_TOOLSETS.length} enabled; enable_toolsets adds one and names the tools it adds.`);
    expect(lines[1]).toBe('name | enabled | tools | purpose');
    expect(lines.slice(2)).toEqual(toolsets.map((t) => `${t.name} | ${t.enabled} | ${t.tools.length} | ${t.purpose}`));
    for (const t of toolsets) expect(text.split(t.purpose).length - 1, t.name).toBe(1);
    expect(text).not.toContain('{');
    expect(text.length).toBeLessThan(1_500);
  });

  it('each purpose names what its toolset holds, briefly', async () => {
    const { toolsets } = await ok(env.mcp, 'list_toolsets');
    const purpose = (name: string): string => toolsets.find((t: { name: string }) => t.name === name).purpose;
    expect(purpose('payments')).toMatch(/Payment plans.*SEPA direct debit: creditor, mandates, collections, returns/);
    expect(purpose('invoices')).toMatch(/PDF.*credit notes, billing runs, the organisation as seller and sent e-mails/);
    expect(purpose('usage')).toMatch(/^Usage events \(the way to report usage\)/);
    expect(purpose('dunning')).toMatch(/dunning letters/);
    for (const t of toolsets) expect(t.purpose.length, t.name).toBeLessThanOrEqual(130);
  });

  it('a tool of a toolset not enabled says how to enable it; enable_toolsets adds it once and notifies', async () => {
    const problem = await fails(env.mcp, 'create_invoice', { customer: 'x', lines: [] }, 403);
    expect(problem.detail).toMatch(/toolset 'invoices'.*enable_toolsets \{ "toolsets": \["invoices"\] \}/);
    let notified = 0;
    env.mcp.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++;
    });
    const first = await ok(env.mcp, 'enable_toolsets', { toolsets: ['invoices'] });
    expect(first.added.sort()).toEqual(namesIn(['invoices']).sort());
    expect(first.enabled).toEqual(['customers', 'subscriptions', 'invoices']);
    await expect.poll(() => notified).toBe(1);
    expect((await env.mcp.listTools()).tools.map((t) => t.name)).toContain('create_invoice');
    const again = await ok(env.mcp, 'enable_toolsets', { toolsets: ['invoices'] });
    expect(again.added).toEqual([]);
    await new Promise((r) => setTimeout(r, 20));
    expect(notified).toBe(1);
  });

  it('rejects an unknown toolset naming the allowed ones', async () => {
    const problem = await fails(env.mcp, 'enable_toolsets', { toolsets: ['billing'] }, 422);
    expect(problem.violations[0].propertyPath).toBe('toolsets[0]');
    expect(problem.detail).toMatch(/catalogue/);
  });

  it('lists only the tools the token may call', async () => {
    const key = await env.newKey(env.org, ['customer:read']);
    const client = await env.mcpFor(key);
    const { toolsets } = await ok(client, 'list_toolsets');
    expect(toolsets.find((t: { name: string }) => t.name === 'customers').tools).toEqual(
      expect.arrayContaining(['list_customers', 'get_customer']),
    );
    expect(toolsets.find((t: { name: string }) => t.name === 'customers').tools).not.toContain('create_customer');
    expect(toolsets.find((t: { name: string }) => t.name === 'webhooks').tools).toEqual([]);
  });
});

describe('protocol errors and modes', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setup();
  });
  afterAll(() => env.close());

  it('an unknown tool is the JSON-RPC error -32602, not a tool result', async () => {
    const error = await env.mcp.callTool({ name: 'create_unicorn', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    // The client's McpError puts the prefix before the message once; the server sends it without.
    expect((error as McpError).message).toBe("MCP error -32602: Unknown tool 'create_unicorn'; tools/list names the tools this token can use");
    const res = await env.http('POST', '/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_unicorn', arguments: {} } },
    });
    expect(res.body.error).toEqual({ code: -32602, message: "Unknown tool 'create_unicorn'; tools/list names the tools this token can use" });
  });

  it('tools/list with a key that does not authenticate is a JSON-RPC error stated once', async () => {
    const client = await env.mcpFor('bm_not_a_key');
    const error = await client.listTools().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32600);
    expect((error as McpError).message).toMatch(/^MCP error -32600: Unauthorized: /);
    expect((error as McpError).message.split('MCP error').length - 1).toBe(1);
  });

  it('malformed tools/call params are the JSON-RPC error -32602 naming the field; logging/setLevel is answered', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const rpc = (method: string, params: unknown) => env.http('POST', '/mcp', { headers, body: { jsonrpc: '2.0', id: 1, method, params } });
    for (const [params, field] of [
      [undefined, 'params'],
      [{}, 'name'],
      [{ name: 7 }, 'name'],
      [{ name: 'list_units', arguments: 5 }, 'arguments'],
    ] as const) {
      const res = await rpc('tools/call', params);
      expect(res.body.error.code, JSON.stringify(params)).toBe(-32602);
      expect(res.body.error.message).toMatch(new RegExp(`^Invalid params: .*\\b${field}\\b`));
    }
    expect((await rpc('logging/setLevel', { level: 'info' })).body.result).toEqual({});
  });

  it('a write tool in read-only mode says the mode forbids it', async () => {
    const ro = await setup({ readOnly: true });
    try {
      const result = await call(ro.mcp, 'create_unit', { name: 'x' });
      expect(result.isError).toBe(true);
      expect(result.body.status).toBe(403);
      expect(result.text).toMatch(/^Forbidden: The server runs in read-only mode; create_unit changes data/);
    } finally {
      await ro.close();
    }
  });

  it('/mcp lists the toolsets chosen by ?toolsets= or the MCP-Toolsets header, all by default', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const list = (path: string, extra: Record<string, string> = {}) =>
      env.http('POST', path, { headers: { ...headers, ...extra }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    const names = (res: { body: any }) => res.body.result.tools.map((t: { name: string }) => t.name).sort();
    expect(names(await list('/mcp'))).toEqual(OPERATIONS.map((op) => op.name).sort());
    expect(names(await list('/mcp?toolsets=webhooks,usage'))).toEqual(namesIn(['webhooks', 'usage']).sort());
    expect(names(await list('/mcp', { 'mcp-toolsets': 'catalogue' }))).toEqual(namesIn(['catalogue']).sort());
    expect(names(await list('/mcp?toolsets=all'))).toHaveLength(OPERATIONS.length);
    const bad = await list('/mcp?toolsets=catalogue,nope');
    expect(bad.status).toBe(400);
    expect(bad.body.violations[0].propertyPath).toBe('toolsets');
  });

  it('a call over /mcp to a tool outside the chosen toolsets says which toolset it needs and how this request adds it', async () => {
    const res = await env.http('POST', '/mcp?toolsets=webhooks', {
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_units', arguments: {} } },
    });
    expect(res.body.result.isError).toBe(true);
    expect(res.body.result.content[0].text).toMatch(
      /toolset 'catalogue', which is not enabled: this request chose its toolsets; add 'catalogue' to \?toolsets= or the MCP-Toolsets header/,
    );
    expect(res.body.result.content[0].text).not.toMatch(/started without/);
  });

  it('a call to a tool outside the toolsets a stdio server was started with says so', async () => {
    const only = await setup({ toolsets: ['webhooks'] });
    try {
      const problem = await fails(only.mcp, 'list_units', {}, 403);
      expect(problem.detail).toBe("list_units belongs to the toolset 'catalogue', which is not enabled: this server was started without it");
    } finally {
      await only.close();
    }
  });

  it('in read-only mode the discovery tools stay, being read-only: they change the tool list, no data', async () => {
    const ro = await setup({ toolsets: undefined, readOnly: true });
    try {
      const { tools } = await ro.mcp.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_toolsets', 'enable_toolsets']));
      expect(tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name)).toEqual([]);
      const { added } = await ok(ro.mcp, 'enable_toolsets', { toolsets: ['catalogue'] });
      expect(added).toContain('list_units');
      expect(added).not.toContain('create_unit');
    } finally {
      await ro.close();
    }
  });
});
