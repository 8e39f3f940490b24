import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';
import { buildFixture, type Fixture } from './fixtures.js';

let env: TestEnv;
let f: Fixture;
let other: any;
let ownSubscription: any;
let otherSubscription: any;
let ownEmail: any;
let otherEmail: any;
const periods = [{ contractPeriod: '1M', cancellationPeriod: '0D' }];

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-01T12:00:00Z');
  f = await buildFixture(env.mcp);
  other = await ok(env.mcp, 'create_customer', { lastName: 'Neighbour' });
  ownSubscription = await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods, activate: true });
  otherSubscription = await ok(env.mcp, 'create_subscription', { customer: other.id, plan: f.plan.id, periods });
  ownEmail = await ok(env.mcp, 'create_customer_email_address', { id: f.customer.id, email: 'me@example.com' });
  otherEmail = await ok(env.mcp, 'create_customer_email_address', { id: other.id, email: 'them@example.com' });
});
afterAll(() => env.close());

async function tokensFor(customerId: string, apiKey = env.org.apiKey) {
  const res = await env.http('POST', `/customers/${customerId}/authenticate`, { token: apiKey });
  expect(res.status).toBe(200);
  return res.body.data as { accessToken: string; refreshToken: string };
}

describe('authenticate_customer', () => {
  it('answers { data: { accessToken, refreshToken } } over HTTP and MCP', async () => {
    const pair = await tokensFor(f.customer.id);
    expect(pair.accessToken).toMatch(/^bmca_/);
    expect(pair.refreshToken).toMatch(/^bmcr_/);
    const viaMcp = await ok(env.mcp, 'authenticate_customer', { id: f.customer.id });
    expect(Object.keys(viaMcp.data).sort()).toEqual(['accessToken', 'refreshToken']);
  });

  it("is 404 for an unknown customer or another organisation's, and 403 for a customer token", async () => {
    expect((await env.http('POST', '/customers/nope/authenticate')).status).toBe(404);
    const org = await env.newOrg('Auth elsewhere');
    expect((await env.http('POST', `/customers/${f.customer.id}/authenticate`, { token: org.apiKey })).status).toBe(404);
    const { accessToken } = await tokensFor(f.customer.id);
    const res = await env.http('POST', `/customers/${f.customer.id}/authenticate`, { token: accessToken });
    expect(res.status).toBe(403);
  });

  it('needs customer:write: a narrower key can neither mint a token nor see the tool (issue 16)', async () => {
    for (const permissions of [['coupon:read'], ['customer:read'], ['measurement:read', 'subscription:write']]) {
      const narrow = await env.newKey(env.org, permissions);
      const res = await env.http('POST', `/customers/${f.customer.id}/authenticate`, { token: narrow });
      expect(res.status, permissions.join()).toBe(403);
      expect(res.body.detail).toMatch(/customer:write/);
      const client = await env.mcpFor(narrow);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('authenticate_customer');
      expect((await fails(client, 'authenticate_customer', { id: f.customer.id }, 403)).detail).toMatch(/customer:write/);
    }
    const writer = await env.newKey(env.org, ['customer:write']);
    await tokensFor(f.customer.id, writer);
  });

  it('keeps no token in clear: it takes no idempotency key, so no answer is stored for a replay', async () => {
    const headers = { 'idempotency-key': 'mint-once' };
    const first = await env.http('POST', `/customers/${f.customer.id}/authenticate`, { headers });
    const second = await env.http('POST', `/customers/${f.customer.id}/authenticate`, { headers });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.accessToken).not.toBe(first.body.data.accessToken);
    const stored = JSON.stringify(await env.sql.all('SELECT * FROM idempotency_keys'));
    expect(stored).not.toContain(first.body.data.accessToken);
    expect(stored).not.toContain(first.body.data.refreshToken);
  });
});

describe('what a customer token reaches', () => {
  let token: string;
  beforeAll(async () => {
    token = (await tokensFor(f.customer.id)).accessToken;
  });
  const as = (method: string, path: string, body?: unknown) => env.http(method, path, { token, ...(body === undefined ? {} : { body }) });

  it('its own account, subscriptions, e-mail addresses and payment methods', async () => {
    expect((await as('GET', `/customers/${f.customer.id}`)).body.id).toBe(f.customer.id);
    const subs = await as('GET', '/subscriptions');
    expect(subs.status).toBe(200);
    expect(subs.body.data.map((s: any) => s.id)).toEqual([ownSubscription.id]);
    expect((await as('GET', `/subscriptions?customer=${f.customer.id}`)).body.data).toHaveLength(1);
    expect((await as('GET', `/subscriptions/${ownSubscription.id}`)).status).toBe(200);
    expect((await as('GET', `/customers/${f.customer.id}/email-addresses`)).body.data.map((e: any) => e.id)).toEqual([ownEmail.id]);
    expect((await as('GET', `/customer-email-addresses/${ownEmail.id}`)).status).toBe(200);
    expect((await as('GET', `/customers/${f.customer.id}/payment-methods`)).body.data).toHaveLength(1);
    const added = await as('POST', `/customers/${f.customer.id}/payment-methods`, { type: 'paypal', paypal: { email: 'me@example.com' } });
    expect(added.status).toBe(201);
  });

  it("another customer's ids are 404", async () => {
    expect((await as('GET', `/customers/${other.id}`)).status).toBe(404);
    expect((await as('GET', `/subscriptions/${otherSubscription.id}`)).status).toBe(404);
    expect((await as('GET', `/subscriptions?customer=${other.id}`)).status).toBe(404);
    expect((await as('GET', `/customers/${other.id}/email-addresses`)).status).toBe(404);
    expect((await as('GET', `/customer-email-addresses/${otherEmail.id}`)).status).toBe(404);
    expect((await as('GET', `/customers/${other.id}/payment-methods`)).status).toBe(404);
    const add = await as('POST', `/customers/${other.id}/payment-methods`, { type: 'paypal', paypal: { email: 'x@example.com' } });
    expect(add.status).toBe(404);
    const count = await ok(env.mcp, 'list_payment_methods', { id: other.id });
    expect(count.data).toHaveLength(0);
  });

  it('every other route is 403', async () => {
    const allowed = OPERATIONS.filter((op) => op.customerAccess).map((op) => op.name).sort();
    expect(allowed).toEqual([
      'create_payment_method',
      'get_customer',
      'get_customer_email_address',
      'get_estimated_invoice',
      'get_payment_method',
      'get_subscription',
      'list_customer_email_addresses',
      'list_payment_methods',
      'list_subscriptions',
      'refresh_customer_token',
    ]);
    const probed: string[] = [];
    for (const op of OPERATIONS.filter((o) => !o.customerAccess)) {
      const path = op.path.replace(/\{(\w+)\}/g, (_, name) => (name === 'id' ? f.customer.id : 'x'));
      const res = await env.http(op.method, path, {
        token,
        ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { body: {}, contentType: op.requestBody?.kind === 'text' ? op.requestBody.mediaType : (op.contentType ?? 'application/json') }),
      });
      expect(res.status, `${op.method} ${path} (${op.name})`).toBe(403);
      probed.push(op.name);
    }
    expect(probed.length).toBe(OPERATIONS.length - allowed.length);
  });

  it('over MCP it sees and calls only its tools', async () => {
    const client = await env.mcpFor(token);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(OPERATIONS.filter((op) => op.customerAccess).map((op) => op.name).sort());
    const mine = await ok(client, 'list_subscriptions');
    expect(mine.data.map((s: any) => s.id)).toEqual([ownSubscription.id]);
    await fails(client, 'get_subscription', { id: otherSubscription.id }, 404);
    await fails(client, 'get_customer', { id: other.id }, 404);
    await fails(client, 'update_customer', { id: f.customer.id, lastName: 'Hacker' }, 403);
    await fails(client, 'list_customers', {}, 403);
    await fails(client, 'update_customer_email_address', { id: ownEmail.id, default: true }, 403);
    await fails(client, 'delete_customer_email_address', { id: ownEmail.id }, 403);
  });

  it("over MCP the customer field may be left out: it names the token's own customer", async () => {
    const client = await env.mcpFor(token);
    expect((await ok(client, 'get_customer', {})).id).toBe(f.customer.id);
    expect((await ok(client, 'get_customer', { id: f.customer.customerNumber })).id).toBe(f.customer.id);
    expect((await ok(client, 'list_customer_email_addresses', {})).data.map((e: any) => e.id)).toEqual([ownEmail.id]);
    expect((await ok(client, 'list_payment_methods', {})).data.length).toBeGreaterThan(0);
    expect((await ok(client, 'list_subscriptions', {})).data.map((s: any) => s.id)).toEqual([ownSubscription.id]);
    // An API key still has to name the customer.
    expect((await fails(env.mcp, 'get_customer', {}, 400)).violations.map((v: any) => v.propertyPath)).toEqual(['id']);
  });
});

describe('lifetimes, rotation and revocation', () => {
  it('the access token expires after 15 minutes; the refresh token gives a new pair', async () => {
    env.setNow('2026-03-01T12:00:00Z');
    const pair = await tokensFor(f.customer.id);
    env.setNow('2026-03-01T12:14:59Z');
    expect((await env.http('GET', `/customers/${f.customer.id}`, { token: pair.accessToken })).status).toBe(200);
    env.setNow('2026-03-01T12:15:00Z');
    const expired = await env.http('GET', `/customers/${f.customer.id}`, { token: pair.accessToken });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toMatch(/expired/);
    const refreshed = await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect((await env.http('GET', `/customers/${f.customer.id}`, { token: refreshed.body.data.accessToken })).status).toBe(200);
    env.setNow('2026-03-01T12:00:00Z');
  });

  it('a used refresh token presented again revokes the whole family', async () => {
    const pair = await tokensFor(f.customer.id);
    const first = await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.refreshToken } });
    expect(first.status).toBe(200);
    const reuse = await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.refreshToken } });
    expect(reuse.status).toBe(401);
    expect(reuse.body.detail).toMatch(/already used/);
    expect((await env.http('GET', `/customers/${f.customer.id}`, { token: first.body.data.accessToken })).status).toBe(401);
    const next = await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: first.body.data.refreshToken } });
    expect(next.status).toBe(401);
    expect(next.body.detail).toMatch(/revoked/);
  });

  it('the refresh token expires after 30 days; garbage and access tokens are not refresh tokens', async () => {
    const pair = await tokensFor(f.customer.id);
    env.setNow('2026-03-31T12:00:00Z');
    expect((await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.refreshToken } })).status).toBe(401);
    env.setNow('2026-03-01T12:00:00Z');
    expect((await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: 'bmcr_nope' } })).status).toBe(401);
    expect((await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.accessToken } })).status).toBe(401);
    expect((await env.http('POST', '/customers/token/refresh', { token: null, body: {} })).status).toBe(422);
  });

  it('lifetimes are configurable', async () => {
    const short = await setup({ customerAccessTokenTtlSeconds: 60, customerRefreshTokenTtlSeconds: 120 });
    try {
      short.setNow('2026-03-01T12:00:00Z');
      const customer = await ok(short.mcp, 'create_customer', { lastName: 'Short' });
      const pair = (await ok(short.mcp, 'authenticate_customer', { id: customer.id })).data;
      short.setNow('2026-03-01T12:01:00Z');
      expect((await short.http('GET', `/customers/${customer.id}`, { token: pair.accessToken })).status).toBe(401);
      short.setNow('2026-03-01T12:02:00Z');
      expect((await short.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.refreshToken } })).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('revoking the API key that minted a customer token ends it at once, refresh included', async () => {
    const org = env.org;
    const key = await env.newKey(org, ['*']);
    const pair = await tokensFor(f.customer.id, key);
    expect((await env.http('GET', `/customers/${f.customer.id}`, { token: pair.accessToken })).status).toBe(200);
    const keys = await env.app.store.read((tx) => tx.system.listApiKeys(org.organisationId));
    const minted = keys[keys.length - 1]!;
    await env.app.store.transaction((tx) => tx.system.revokeApiKey(minted.id, new Date().toISOString()));
    const res = await env.http('GET', `/customers/${f.customer.id}`, { token: pair.accessToken });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/revoked/);
    expect((await env.http('POST', '/customers/token/refresh', { token: null, body: { refreshToken: pair.refreshToken } })).status).toBe(401);
  });
});
