import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRefusal, hostRefusal, urlViolation } from '../src/domain/webhooks.js';
import { EVENT_TYPES } from '../src/schemas/webhooks.js';
import { ACCEPTED, REFUSED, urlHost } from './addresses.js';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { ownFields } from './schemaWalk.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const MERGE_PATCH = 'application/merge-patch+json';
const base = { url: 'https://hooks.example.com/billing', events: ['payment_plan.created'] };

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

describe('hostRefusal', () => {
  it.each(REFUSED)('%s is refused: %s', (address, reason) => {
    expect(addressRefusal(address)).toBe(reason);
    expect(hostRefusal(urlHost(address))).toBe(reason);
  });

  it.each(ACCEPTED)('%s is public', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
    expect(hostRefusal(urlHost(address))).toBeUndefined();
  });

  it.each([
    '127.255.255.254',
    '172.31.255.255',
    '0.1.2.3',
    '[0:0:0:0:0:0:0:1]',
    '[fc00::1]',
    '[febf::1]',
    '[::ffff:7f00:1]',
    '[::ffff:c0a8:1]',
    'localhost',
    'LOCALHOST',
    'localhost.',
    'api.localhost',
    'printer.local',
    'db.internal',
    'svc.corp.internal.',
  ])('%s is refused', (host) => {
    expect(hostRefusal(host)).toBeDefined();
  });

  it.each([
    '1.0.0.1',
    '11.0.0.1',
    '172.15.255.255',
    '192.169.0.1',
    '169.253.1.1',
    '[2606:4700::1111]',
    '[fbff::1]',
    '[::ffff:808:808]',
    'example.com',
    'localhost.example.com',
    'example.local.com',
    'internal',
    'mylocal',
  ])('%s is not refused', (host) => {
    expect(hostRefusal(host)).toBeUndefined();
  });
});

describe('urlViolation', () => {
  it.each([
    ['ftp://example.com/hook', false, 'unsupported_scheme'],
    ['mailto:ops@example.com', false, 'unsupported_scheme'],
    ['not a url', false, 'invalid_url'],
    ['/relative/path', false, 'invalid_url'],
    ['http://127.0.0.1/hook', false, 'private_address'],
    ['http://2130706433/hook', false, 'private_address'],
    ['http://[::ffff:127.0.0.1]/hook', false, 'private_address'],
    ['http://127.0.0.1/hook', true, undefined],
    ['ftp://127.0.0.1/hook', true, 'unsupported_scheme'],
    ['https://example.com/hook', false, undefined],
    ['http://example.com:8080/hook?x=1', false, undefined],
  ] as const)('%s (private allowed: %s) -> %s', (url, allowPrivate, code) => {
    expect(urlViolation(url, allowPrivate)?.code).toBe(code);
  });
});

describe('create_webhook', () => {
  it('creates with defaults and shows a secret only in the create response', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    expect(w).toMatchObject({ ...base, version: 'v1', enabled: true });
    expect(w.secret).toMatch(SECRET);
    const other = await ok(env.mcp, 'create_webhook', base);
    expect(other.secret).not.toBe(w.secret);

    const got = await call(env.mcp, 'get_webhook', { id: w.id });
    expect(got.body).not.toHaveProperty('secret');
    expect(got.text).not.toContain(w.secret);
    const { secret: _secret, ...shown } = w;
    expect(got.body).toEqual(shown);

    const list = await call(env.mcp, 'list_webhooks', { limit: 100 });
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(w.id);
    for (const x of list.body.data) expect(x).not.toHaveProperty('secret');
    expect(list.text).not.toContain('whsec_');

    const updated = await call(env.mcp, 'update_webhook', { id: w.id, enabled: false });
    expect(updated.body).not.toHaveProperty('secret');
    expect(updated.text).not.toContain(w.secret);
  });

  it('answers 201 with Location over HTTP, and the secret only there', async () => {
    const res = await env.http('POST', '/webhooks', { body: { ...base, enabled: false } });
    expect(res.status).toBe(201);
    expect(res.body.secret).toMatch(SECRET);
    expect(res.body.enabled).toBe(false);
    expect(res.headers.get('location')).toBe(`/webhooks/${res.body.id}`);
    const got = await env.http('GET', `/webhooks/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('secret');
    const list = await env.http('GET', '/webhooks?limit=100');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it('validates events: at least one, known types only, no repeats', async () => {
    const empty = await fails(env.mcp, 'create_webhook', { ...base, events: [] }, 422);
    expect(paths(empty)).toEqual(['events']);
    expect(empty.detail).toContain('at least 1');
    const unknown = await fails(env.mcp, 'create_webhook', { ...base, events: ['payment_plan.created', 'invoice.unpaid'] }, 422);
    expect(paths(unknown)).toEqual(['events[1]']);
    expect(unknown.detail).toContain('payment_plan.rate_paid');
    const repeated = await fails(
      env.mcp,
      'create_webhook',
      { ...base, events: ['payment_plan.created', 'payment_plan.completed', 'payment_plan.created'] },
      422,
    );
    expect(paths(repeated)).toEqual(['events']);
    expect(repeated.detail).toContain('repeated: payment_plan.created');
    expect(paths(await fails(env.mcp, 'create_webhook', { url: base.url }, 422))).toEqual(['events']);
    const all = await ok(env.mcp, 'create_webhook', { ...base, events: [...EVENT_TYPES] });
    expect(all.events).toEqual([...EVENT_TYPES]);
  });

  it('accepts version v1 only', async () => {
    expect((await ok(env.mcp, 'create_webhook', { ...base, version: 'v1' })).version).toBe('v1');
    const p = await fails(env.mcp, 'create_webhook', { ...base, version: 'v2' }, 422);
    expect(paths(p)).toEqual(['version']);
    expect(p.detail).toContain('"v1"');
  });

  it.each([
    ['ftp://hooks.example.com/billing', 'http or https'],
    ['not a url', 'absolute http or https URL'],
    ['http://127.0.0.1/hook', 'BILLING_WEBHOOK_ALLOW_PRIVATE=true'],
    ['http://10.1.2.3/hook', 'BILLING_WEBHOOK_ALLOW_PRIVATE=true'],
    ['https://192.168.0.1/hook', 'BILLING_WEBHOOK_ALLOW_PRIVATE=true'],
    ['http://169.254.1.1/hook', 'BILLING_WEBHOOK_ALLOW_PRIVATE=true'],
    ['http://[::1]:8080/hook', 'BILLING_WEBHOOK_ALLOW_PRIVATE=true'],
    ['http://localhost:8080/hook', 'BILLING_WEBHOOK_ALLOW_PRIVATE=true'],
    [`https://example.com/${'a'.repeat(2048)}`, 'at most 2048 characters'],
  ])('rejects url %s', async (url, says) => {
    const p = await fails(env.mcp, 'create_webhook', { ...base, url }, 422);
    expect(paths(p)).toEqual(['url']);
    expect(p.detail).toContain(says);
  });

  it('accepts a public https url', async () => {
    const w = await ok(env.mcp, 'create_webhook', { ...base, url: 'https://93.184.215.14:8443/hooks?source=billing' });
    expect(w.url).toBe('https://93.184.215.14:8443/hooks?source=billing');
  });

  it.each(REFUSED)('refuses a url on %s, which is not public unicast (%s)', async (address, reason) => {
    const url = `http://${urlHost(address)}:8080/hooks`;
    const p = await fails(env.mcp, 'create_webhook', { ...base, url }, 422);
    expect(paths(p)).toEqual(['url']);
    expect(p.detail).toContain(`(${reason})`);
    expect(p.detail).toContain('BILLING_WEBHOOK_ALLOW_PRIVATE=true');
  });

  it.each(ACCEPTED)('accepts a url on the public unicast address %s', async (address) => {
    const url = `https://${urlHost(address)}/hooks`;
    expect((await ok(env.mcp, 'create_webhook', { ...base, url })).url).toBe(new URL(url).href);
  });

  it('refuses the same addresses on update, over MCP and REST', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    for (const [address, reason] of REFUSED) {
      const url = `https://${urlHost(address)}/hooks`;
      const p = await fails(env.mcp, 'update_webhook', { id: w.id, url }, 422);
      expect(paths(p)).toEqual(['url']);
      expect(p.detail).toContain(`(${reason})`);
      const res = await env.http('PATCH', `/webhooks/${w.id}`, { body: { url }, contentType: MERGE_PATCH });
      expect(res.status).toBe(422);
      expect(res.body.violations.map((v: { propertyPath: string }) => v.propertyPath)).toEqual(['url']);
    }
    expect((await ok(env.mcp, 'get_webhook', { id: w.id })).url).toBe(base.url);
  });

  it('describes every input field for a model, listing the event types', async () => {
    const { tools } = await env.mcp.listTools();
    for (const name of ['create_webhook', 'list_webhooks', 'get_webhook', 'update_webhook', 'delete_webhook']) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.description, name).toBeTruthy();
      for (const [field, schema] of ownFields(tool!.inputSchema)) {
        expect((schema as { description?: string }).description, `${name}.${field}`).toBeTruthy();
      }
    }
    const create = tools.find((t) => t.name === 'create_webhook')!;
    const events = create.inputSchema.properties!.events as { description: string; items: { enum: string[] } };
    expect(events.description).toBeTruthy();
    expect(events.items.enum).toEqual([...EVENT_TYPES]);
  });
});

describe('private targets allowed by configuration', () => {
  let open: TestEnv;
  beforeAll(async () => {
    open = await setup({ webhookAllowPrivate: true });
  });
  afterAll(() => open.close());

  it('accepts private urls on create and update, but still only http or https', async () => {
    const w = await ok(open.mcp, 'create_webhook', { ...base, url: 'http://127.0.0.1:9000/hook' });
    expect(w.url).toBe('http://127.0.0.1:9000/hook');
    const u = await ok(open.mcp, 'update_webhook', { id: w.id, url: 'http://localhost:9000/hook' });
    expect(u.url).toBe('http://localhost:9000/hook');
    expect(paths(await fails(open.mcp, 'create_webhook', { ...base, url: 'ftp://127.0.0.1/hook' }, 422))).toEqual(['url']);
  });
});

describe('update_webhook (JSON merge patch)', () => {
  it('changes only the fields sent; events is replaced as a whole', async () => {
    env.setNow('2026-10-01T10:00:00Z');
    const w = await ok(env.mcp, 'create_webhook', { ...base, events: ['payment_plan.created', 'payment_plan.completed'] });
    env.setNow('2026-10-01T11:00:00Z');
    const disabled = await ok(env.mcp, 'update_webhook', { id: w.id, enabled: false });
    const { secret: _secret, ...before } = w;
    expect(disabled).toEqual({ ...before, enabled: false, updatedAt: '2026-10-01T11:00:00.000Z' });

    const replaced = await ok(env.mcp, 'update_webhook', { id: w.id, events: ['payment_plan.broken'] });
    expect(replaced.events).toEqual(['payment_plan.broken']);
    expect(replaced.enabled).toBe(false);
    expect(replaced.url).toBe(base.url);
    expect(await ok(env.mcp, 'get_webhook', { id: w.id })).toEqual(replaced);
  });

  it('applies a merge patch over HTTP', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const res = await env.http('PATCH', `/webhooks/${w.id}`, {
      body: { url: 'https://new.example.com/hook', events: ['payment_plan.canceled', 'payment_plan.extended'] },
      contentType: MERGE_PATCH,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: w.id,
      url: 'https://new.example.com/hook',
      events: ['payment_plan.canceled', 'payment_plan.extended'],
      version: 'v1',
      enabled: true,
    });
    expect(res.body).not.toHaveProperty('secret');
  });

  it.each(['url', 'events', 'version', 'enabled'])('refuses null for %s (the field cannot be removed)', async (field) => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const p = await fails(env.mcp, 'update_webhook', { id: w.id, [field]: null }, 422);
    expect(paths(p)).toEqual([field]);
    expect(p.detail).toContain(`${field} is required and cannot be removed`);
    const res = await env.http('PATCH', `/webhooks/${w.id}`, { body: { [field]: null }, contentType: MERGE_PATCH });
    expect(res.status).toBe(422);
    expect(paths(res.body)).toEqual([field]);
    const { secret: _secret, ...unchanged } = w;
    expect(await ok(env.mcp, 'get_webhook', { id: w.id })).toEqual(unchanged);
  });

  it('refuses unknown keys, including secret', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    expect((await fails(env.mcp, 'update_webhook', { id: w.id, secret: 'whsec_x' }, 422)).detail).toContain("'secret'");
    const res = await env.http('PATCH', `/webhooks/${w.id}`, { body: { enabled: false, colour: 'red' }, contentType: MERGE_PATCH });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain("'colour'");
    expect((await ok(env.mcp, 'get_webhook', { id: w.id })).enabled).toBe(true);
  });

  it('refuses invalid values with the rules of create', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    expect(paths(await fails(env.mcp, 'update_webhook', { id: w.id, url: 'http://192.168.0.1/' }, 422))).toEqual(['url']);
    expect(paths(await fails(env.mcp, 'update_webhook', { id: w.id, url: 'ftp://example.com/' }, 422))).toEqual(['url']);
    expect(paths(await fails(env.mcp, 'update_webhook', { id: w.id, events: [] }, 422))).toEqual(['events']);
    const repeated = { id: w.id, events: ['payment_plan.broken', 'payment_plan.broken'] };
    expect(paths(await fails(env.mcp, 'update_webhook', repeated, 422))).toEqual(['events']);
    expect(paths(await fails(env.mcp, 'update_webhook', { id: w.id, version: 'v0' }, 422))).toEqual(['version']);
    expect(paths(await fails(env.mcp, 'update_webhook', { id: w.id, enabled: 'no' }, 422))).toEqual(['enabled']);
    const { secret: _secret, ...unchanged } = w;
    expect(await ok(env.mcp, 'get_webhook', { id: w.id })).toEqual(unchanged);
  });

  it('answers 415 to a PATCH sent as application/json', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const res = await env.http('PATCH', `/webhooks/${w.id}`, { body: { enabled: false } });
    expect(res.status).toBe(415);
    expect(res.body.type).toBe('/problems/unsupported-media-type');
    expect(res.body.detail).toContain(MERGE_PATCH);
    expect((await ok(env.mcp, 'get_webhook', { id: w.id })).enabled).toBe(true);
  });
});

describe('delete_webhook', () => {
  it('answers 204 without a body over HTTP, then 404', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const res = await env.http('DELETE', `/webhooks/${w.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await env.http('GET', `/webhooks/${w.id}`)).status).toBe(404);
    expect((await env.http('DELETE', `/webhooks/${w.id}`)).status).toBe(404);
  });

  it('returns structured content over MCP, then the webhook is gone', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    expect(await ok(env.mcp, 'delete_webhook', { id: w.id })).toEqual({ id: w.id, deleted: true });
    await fails(env.mcp, 'get_webhook', { id: w.id }, 404);
    await fails(env.mcp, 'update_webhook', { id: w.id, enabled: false }, 404);
    await fails(env.mcp, 'delete_webhook', { id: w.id }, 404);
  });
});

describe('tenancy and permissions', () => {
  it("answers 404 for another organisation's webhook and leaves it untouched", async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const org = await env.newOrg();
    const stranger = await env.mcpFor(org.apiKey);
    await fails(stranger, 'get_webhook', { id: w.id }, 404);
    await fails(stranger, 'update_webhook', { id: w.id, enabled: false }, 404);
    await fails(stranger, 'delete_webhook', { id: w.id }, 404);
    expect((await ok(stranger, 'list_webhooks', {})).data).toEqual([]);
    expect((await env.http('GET', `/webhooks/${w.id}`, { token: org.apiKey })).status).toBe(404);
    expect((await ok(env.mcp, 'get_webhook', { id: w.id })).enabled).toBe(true);
  });

  it('answers 403 to a key without webhook permissions and hides the tools from it', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const token = await env.newKey(env.org, ['measurement:read']);
    expect((await env.http('POST', '/webhooks', { body: base, token })).status).toBe(403);
    expect((await env.http('GET', '/webhooks', { token })).status).toBe(403);
    expect((await env.http('GET', `/webhooks/${w.id}`, { token })).status).toBe(403);
    const patch = await env.http('PATCH', `/webhooks/${w.id}`, { body: { enabled: false }, contentType: MERGE_PATCH, token });
    expect(patch.status).toBe(403);
    expect((await env.http('DELETE', `/webhooks/${w.id}`, { token })).status).toBe(403);
    const { tools } = await (await env.mcpFor(token)).listTools();
    expect(tools.filter((t) => t.name.includes('webhook'))).toEqual([]);
  });

  it('lets a webhook:read key read but not write', async () => {
    const w = await ok(env.mcp, 'create_webhook', base);
    const token = await env.newKey(env.org, ['webhook:read']);
    expect((await env.http('GET', `/webhooks/${w.id}`, { token })).status).toBe(200);
    expect((await env.http('POST', '/webhooks', { body: base, token })).status).toBe(403);
    const patch = await env.http('PATCH', `/webhooks/${w.id}`, { body: { enabled: false }, contentType: MERGE_PATCH, token });
    expect(patch.status).toBe(403);
    expect((await env.http('DELETE', `/webhooks/${w.id}`, { token })).status).toBe(403);
  });
});
