import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ok, setup, type TestEnv } from './helpers.js';
import { onPostgres } from './pgStore.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
  for (let i = 1; i <= 7; i++) await ok(env.mcp, 'create_unit', { name: `unit ${i}` });
});
afterAll(() => env.close());

describe('pagination', () => {
  it('defaults to page 1 with 30 items, oldest first', async () => {
    const res = await env.http('GET', '/catalogue/units');
    expect(res.body.meta.pagination).toEqual({ totalItems: 7, itemsPerPage: 30, currentPage: 1, lastPage: 1, pageTotalItems: 7 });
    expect(res.body.data.map((u: { name: string }) => u.name)).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => `unit ${i}`));
  });

  it('serves the last, partial page', async () => {
    const res = await env.http('GET', '/catalogue/units?page=3&limit=3');
    expect(res.body.meta.pagination).toEqual({ totalItems: 7, itemsPerPage: 3, currentPage: 3, lastPage: 3, pageTotalItems: 1 });
    expect(res.body.data.map((u: { name: string }) => u.name)).toEqual(['unit 7']);
    const past = await env.http('GET', '/catalogue/units?page=4&limit=3');
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.pagination.pageTotalItems).toBe(0);
  });

  it('limit=0 returns no rows but the counts, lastPage 1', async () => {
    const res = await env.http('GET', '/catalogue/units?limit=0');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [],
      meta: { pagination: { totalItems: 7, itemsPerPage: 0, currentPage: 1, lastPage: 1, pageTotalItems: 0 } },
    });
  });

  it('accepts itemsPerPage as an alias of limit, and order[createdAt]=desc', async () => {
    const res = await env.http('GET', '/catalogue/units?itemsPerPage=2&order[createdAt]=desc');
    expect(res.body.data.map((u: { name: string }) => u.name)).toEqual(['unit 7', 'unit 6']);
    expect(res.body.meta.pagination.lastPage).toBe(4);
    const mcp = await ok(env.mcp, 'list_units', { limit: 2, order: { createdAt: 'desc' } });
    expect(mcp.data.map((u: { name: string }) => u.name)).toEqual(['unit 7', 'unit 6']);
  });

  it.each([
    ['limit=101', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['itemsPerPage=101', 'itemsPerPage'],
    ['page=0', 'page'],
    ['page=x', 'page'],
    ['order[createdAt]=sideways', 'order.createdAt'],
  ])('%s is a 400 naming %s', async (query, param) => {
    const res = await env.http('GET', `/catalogue/units?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('/problems/bad-request');
    expect(res.body.violations.map((v: { propertyPath: string }) => v.propertyPath)).toEqual([param]);
  });

  it('rejects the same out-of-range values over MCP, naming the field', async () => {
    const r = await call(env.mcp, 'list_units', { limit: 101 });
    expect(r.isError).toBe(true);
    expect(r.body.violations[0].propertyPath).toBe('limit');
  });
});

describe('HTTP conventions', () => {
  it('400 for malformed JSON and for a body that is not an object', async () => {
    const bad = await env.http('POST', '/catalogue/units', { body: '{"name":' });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe('/problems/bad-request');
    expect((await env.http('POST', '/catalogue/units', { body: '["x"]' })).status).toBe(400);
  });

  it('415 for a body that is not application/json', async () => {
    const res = await env.http('POST', '/catalogue/units', { body: 'name=x', contentType: 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(res.body.type).toBe('/problems/unsupported-media-type');
    const charset = await env.http('POST', '/catalogue/units', { body: { name: 'charset' }, contentType: 'application/json; charset=utf-8' });
    expect(charset.status).toBe(201);
  });

  it('413 for a body over 1 MiB, and nothing is created', async () => {
    const res = await env.http('POST', '/catalogue/units', { body: { name: 'x'.repeat(1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.type).toBe('/problems/payload-too-large');
  });

  it('405 with Allow for a known path and an unsupported method; 404 for an unknown path', async () => {
    const res = await env.http('DELETE', '/catalogue/units');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST');
    const mcpGet = await env.http('GET', '/mcp');
    expect(mcpGet.status).toBe(405);
    expect((await env.http('DELETE', '/mcp')).status).toBe(405);
    const missing = await env.http('GET', '/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body.type).toBe('/problems/not-found');
  });

  it('422 problems carry violations with dotted and bracketed property paths', async () => {
    const res = await env.http('GET', '/catalogue/units?order[createdAt]=up');
    expect(res.body.violations[0].propertyPath).toBe('order.createdAt');
    const created = await env.http('POST', '/catalogue/units', { body: { name: 42 } });
    expect(created.status).toBe(422);
    expect(created.body).toMatchObject({ type: '/problems/validation', title: 'Validation failed', status: 422 });
    expect(created.body.violations[0]).toMatchObject({ propertyPath: 'name', code: 'invalid_type' });
  });

  it('health and readiness need no token', async () => {
    expect((await env.http('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
    expect((await env.http('GET', '/readyz', { token: null })).body).toEqual({ status: 'ready' });
  });
});

describe('idempotency', () => {
  const countUnits = async () => (await ok(env.mcp, 'list_units', { limit: 0 })).meta.pagination.totalItems;

  it('replays the first HTTP response for the same key and body, without a second effect', async () => {
    const before = await countUnits();
    const headers = { 'idempotency-key': 'create-unit-1' };
    const first = await env.http('POST', '/catalogue/units', { body: { name: 'idem' }, headers });
    const second = await env.http('POST', '/catalogue/units', { body: { name: 'idem' }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await countUnits()).toBe(before + 1);
  });

  it('rejects the same key with a different body (422) and changes nothing', async () => {
    const headers = { 'idempotency-key': 'create-unit-2' };
    await env.http('POST', '/catalogue/units', { body: { name: 'idem-2' }, headers });
    const before = await countUnits();
    const res = await env.http('POST', '/catalogue/units', { body: { name: 'idem-3' }, headers });
    expect(res.status).toBe(422);
    expect(res.body.violations[0].propertyPath).toBe('idempotencyKey');
    expect(await countUnits()).toBe(before);
  });

  it('keys are per organisation', async () => {
    const other = await env.newOrg('Idempotency org');
    const headers = { 'idempotency-key': 'create-unit-1' };
    const res = await env.http('POST', '/catalogue/units', { body: { name: 'idem' }, headers, token: other.apiKey });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });

  it('replays over MCP with idempotencyKey', async () => {
    const before = await countUnits();
    const a = await ok(env.mcp, 'create_unit', { name: 'mcp-idem', idempotencyKey: 'mcp-1' });
    const b = await ok(env.mcp, 'create_unit', { name: 'mcp-idem', idempotencyKey: 'mcp-1' });
    expect(b).toEqual(a);
    expect(await countUnits()).toBe(before + 1);
    const r = await call(env.mcp, 'create_unit', { name: 'mcp-other', idempotencyKey: 'mcp-1' });
    expect(r.body.status).toBe(422);
  });

  it('a key longer than 255 characters is rejected', async () => {
    const res = await env.http('POST', '/catalogue/units', { body: { name: 'long key' }, headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(res.status).toBe(422);
  });

  // Holding SQLite's single writer keeps the first request in flight; PostgreSQL has no such lock to
  // hold (there the second request waits for, or replays, the first: test/multiInstance.test.ts).
  it.skipIf(onPostgres())('a request with a key still in flight gets 409', async () => {
    let release!: () => void;
    const held = env.app.store.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    const headers = { 'idempotency-key': 'in-flight' };
    const first = env.http('POST', '/catalogue/units', { body: { name: 'in flight' }, headers });
    await new Promise((r) => setTimeout(r, 100));
    const second = await env.http('POST', '/catalogue/units', { body: { name: 'in flight' }, headers });
    release();
    await held;
    expect(second.status).toBe(409);
    expect(second.body.type).toBe('/problems/conflict');
    expect((await first).status).toBe(201);
  });
});
