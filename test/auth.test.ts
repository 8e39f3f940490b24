import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fails, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

async function revoke(keyId: string) {
  await env.app.store.transaction((tx) => tx.system.revokeApiKey(keyId, new Date().toISOString()));
}

describe('401 over HTTP', () => {
  it.each([
    ['missing', null, /Missing API key/],
    ['unknown', 'bmk_nope', /Unknown API key/],
  ])('%s key', async (_, token, detail) => {
    const res = await env.http('GET', '/catalogue/units', { token });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: '/problems/unauthorized', status: 401 });
    expect(res.body.detail).toMatch(detail);
  });

  it('a non-bearer scheme is rejected', async () => {
    const res = await env.http('GET', '/catalogue/units', { token: null, headers: { authorization: `Basic ${env.org.apiKey}` } });
    expect(res.status).toBe(401);
  });

  it('an expired key', async () => {
    const key = await env.newKey(env.org, ['*'], '2020-01-01T00:00:00Z');
    const res = await env.http('GET', '/catalogue/units', { token: key });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/expired/);
    const future = await env.newKey(env.org, ['*'], '2999-01-01T00:00:00Z');
    expect((await env.http('GET', '/catalogue/units', { token: future })).status).toBe(200);
  });

  it('a revoked key stops working on the next request, over REST and /mcp', async () => {
    const other = await env.newOrg('Revocation org');
    expect((await env.http('GET', '/catalogue/units', { token: other.apiKey })).status).toBe(200);
    await revoke(other.keyId);
    const res = await env.http('GET', '/catalogue/units', { token: other.apiKey });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/revoked/);
    const mcp = await env.http('POST', '/mcp', {
      token: other.apiKey,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.status).toBe(401);
  });
});

describe('revocation in an open MCP session', () => {
  it('stops the next tool call of a client that is already connected', async () => {
    const other = await env.newOrg('Open session org');
    const client = await env.mcpFor(other.apiKey);
    await ok(client, 'list_units');
    await revoke(other.keyId);
    const p = await fails(client, 'list_units', {}, 401);
    expect(p.detail).toMatch(/revoked/);
  });
});

describe('permissions', () => {
  it('403 over HTTP and isError over MCP without the permission; write implies read', async () => {
    const readOnly = await env.newKey(env.org, ['measurement:read']);
    const res = await env.http('POST', '/catalogue/units', { token: readOnly, body: { name: 'forbidden' } });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('measurement:write');
    expect((await env.http('GET', '/catalogue/units', { token: readOnly })).status).toBe(200);

    const writer = await env.newKey(env.org, ['measurement:write']);
    expect((await env.http('GET', '/catalogue/units', { token: writer })).status).toBe(200);

    const client = await env.mcpFor(await env.newKey(env.org, ['tax-group:read']));
    const p = await fails(client, 'list_units', {}, 403);
    expect(p.type).toBe('/problems/forbidden');
  });

  it('tools a token can never call are absent from its tools/list', async () => {
    const client = await env.mcpFor(await env.newKey(env.org, ['measurement:read']));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_measurements');
    expect(names).toContain('get_measurement');
    expect(names).not.toContain('create_measurement');
    expect(names).not.toContain('create_unit');
    const all = (await env.mcp.listTools()).tools.map((t) => t.name);
    expect(all).toContain('create_measurement');
  });
});

describe('organisations are isolated', () => {
  it("another organisation's ids are 404 on every surface, and its lists are empty", async () => {
    const mine = await ok(env.mcp, 'create_unit', { name: 'isolated unit' });
    const m = await ok(env.mcp, 'create_measurement', {
      unit: mine.id,
      code: 'isolated',
      aggregationType: 'sum',
      type: 'metered',
    });
    const other = await env.newOrg('Isolation org');
    const client = await env.mcpFor(other.apiKey);
    await fails(client, 'get_measurement', { id: m.id }, 404);
    await fails(client, 'update_measurement', { id: m.id, description: 'x' }, 404);
    expect((await env.http('GET', `/catalogue/measurements/${m.id}`, { token: other.apiKey })).status).toBe(404);
    expect((await ok(client, 'list_measurements')).data).toEqual([]);
    const r = await call(client, 'create_measurement', { unit: mine.id, code: 'x', aggregationType: 'sum', type: 'metered' });
    expect(r.body.violations[0].propertyPath).toBe('unit');
    // the same code is free in another organisation
    await ok(client, 'create_unit', { name: 'isolated unit' });
    await ok(client, 'create_measurement', { unit: 'isolated unit', code: 'isolated', aggregationType: 'sum', type: 'metered' });
  });
});
