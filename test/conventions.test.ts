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
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
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

  it('HEAD answers like GET without the body; another method on the fixed routes is a 405 with Allow', async () => {
    const headers = { authorization: `Bearer ${env.org.apiKey}`, 'accept-encoding': 'identity' };
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/customers', '/catalogue/units?limit=2']) {
      const get = await fetch(`${env.url}${path}`, { headers });
      const head = await fetch(`${env.url}${path}`, { method: 'HEAD', headers });
      expect([head.status, await head.text()], path).toEqual([200, '']);
      for (const name of ['content-type', 'content-length']) expect(head.headers.get(name), `${path} ${name}`).toBe(get.headers.get(name));
    }
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      const res = await env.http('POST', path, { token: null });
      expect([res.status, res.headers.get('allow'), res.body.detail], path).toEqual([405, 'GET, HEAD', `POST is not allowed on ${path}; allowed: GET, HEAD`]);
    }
  });

  it('an unknown query parameter is a 400 naming it and the allowed ones, on every method; nothing is stored', async () => {
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Query typo' });
    const events = { events: [{ id: 'query-typo-1', eventName: 'api_call', customer: customer.id }] };
    const typo = await env.http('POST', '/usage-events?atomc=true', { body: events });
    expect([typo.status, typo.body.violations]).toEqual([
      400,
      [{ propertyPath: 'atomc', message: "'atomc' is not a query parameter of POST /usage-events; allowed: atomic", code: 'unrecognized_keys' }],
    ]);
    expect((await ok(env.mcp, 'list_usage_events')).data).toEqual([]);
    expect((await env.http('POST', '/usage-events?atomic=true', { body: events })).body.accepted).toBe(1);

    const units = (await ok(env.mcp, 'list_units', { limit: 0 })).meta.pagination.totalItems;
    const id = '01960000-0000-7000-8000-000000000000';
    const refused = [
      await env.http('POST', '/catalogue/units?name=x', { body: { name: 'query' } }),
      await env.http('PUT', `/catalogue/measurements/${id}?force=1`, { body: {} }),
      await env.http('PATCH', `/webhooks/${id}?force=1`, { body: {}, contentType: 'application/merge-patch+json' }),
      await env.http('DELETE', `/webhooks/${id}?force=1`),
    ];
    expect(refused.map((r) => [r.status, r.body.violations[0].propertyPath, r.body.detail])).toEqual([
      [400, 'name', "'name' is not a query parameter of POST /catalogue/units; it takes none (its input goes in the body)"],
      [400, 'force', "'force' is not a query parameter of PUT /catalogue/measurements/{id}; it takes none (its input goes in the body)"],
      [400, 'force', "'force' is not a query parameter of PATCH /webhooks/{id}; it takes none (its input goes in the body)"],
      [400, 'force', "'force' is not a query parameter of DELETE /webhooks/{id}; it takes none"],
    ]);
    expect((await ok(env.mcp, 'list_units', { limit: 0 })).meta.pagination.totalItems).toBe(units);
  });

  it('an unknown key of order[…] is the one violation, at its own path, over REST and MCP', async () => {
    const violation = { propertyPath: 'order.name', message: "'name' is not a field of order; allowed: createdAt", code: 'unrecognized_keys' };
    const rest = await env.http('GET', '/customers?order[name]=asc');
    expect([rest.status, rest.body.violations]).toEqual([400, [violation]]);
    expect((await call(env.mcp, 'list_customers', { order: { name: 'asc' } })).body.violations).toEqual([violation]);
    const wrong = await env.http('GET', '/customers?order[createdAt]=up');
    expect(wrong.body.violations.map((v: { propertyPath: string }) => v.propertyPath)).toEqual(['order.createdAt']);
  });

  it('a path parameter takes the longest customer number there is (255 characters)', async () => {
    const number = 'N'.repeat(255);
    const created = await env.http('POST', '/customers', { body: { lastName: 'Long number', customerNumber: number } });
    expect(created.status).toBe(201);
    const res = await env.http('GET', `/customers/${number}`);
    expect([res.status, res.body.id]).toEqual([200, created.body.id]);
    expect((await env.http('GET', `/customers/${number}/invoice-addresses`)).status).toBe(200);
  });

  it('the OpenAPI document lists the query parameters of body operations and needs no token for token refresh', async () => {
    const doc = (await env.http('GET', '/openapi.json', { token: null })).body;
    expect(doc.paths['/usage-events'].post.parameters).toContainEqual(expect.objectContaining({ name: 'atomic', in: 'query', required: false }));
    expect(doc.paths['/customers/token/refresh'].post.security).toEqual([]);
    expect(doc.paths['/customers'].get.security).toBeUndefined();
    expect(doc.security).toEqual([{ bearer: [] }]);
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
    expect(res.body.violations).toEqual([
      { propertyPath: 'idempotencyKey', message: 'The idempotency key must be at most 255 characters (got 256)', code: 'too_long' },
    ]);
  });

  it('an empty key is rejected as empty, over HTTP and MCP, and nothing is created', async () => {
    const before = await countUnits();
    const empty = { propertyPath: 'idempotencyKey', message: 'The idempotency key is empty; send 1 to 255 characters, or no key', code: 'too_short' };
    const res = await env.http('POST', '/catalogue/units', { body: { name: 'empty key' }, headers: { 'idempotency-key': '' } });
    expect([res.status, res.body.violations]).toEqual([422, [empty]]);
    const r = await call(env.mcp, 'create_unit', { name: 'empty key', idempotencyKey: '' });
    expect([r.body.status, r.body.violations]).toEqual([422, [empty]]);
    expect(await countUnits()).toBe(before);
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
