import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBillingGroup } from '../src/domain/billingGroups.js';
import { findCoupon } from '../src/domain/coupons.js';
import { validateCustomFields } from '../src/domain/customFields.js';
import { ULID_RE, ulidToUuid } from '../src/ids.js';
import { fails, ok, paths, setup, type Org, type TestEnv } from './helpers.js';
import { ownFields } from './schemaWalk.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

async function freshOrg(): Promise<{ org: Org; mcp: Client }> {
  const org = await env.newOrg();
  return { org, mcp: await env.mcpFor(org.apiKey) };
}

const ids = (page: { data: Array<{ id: string }> }) => page.data.map((x) => x.id);

describe('billing groups', () => {
  it('creates an end_of_month group with a ULID id and no custom day', async () => {
    env.setNow('2030-01-01T00:00:00Z');
    const g = await ok(env.mcp, 'create_billing_group', { name: 'Month ends', type: 'end_of_month' });
    expect(g).toEqual({
      id: expect.stringMatching(ULID_RE),
      name: 'Month ends',
      type: 'end_of_month',
      customDay: null,
      customMonth: null,
      createdAt: '2030-01-01T00:00:00.000Z',
      updatedAt: '2030-01-01T00:00:00.000Z',
    });
    expect(g.id).toBe(g.id.toUpperCase());
    expect((await ok(env.mcp, 'create_billing_group', { name: 'Anniversary', type: 'anniversary', customDay: null })).customDay).toBeNull();
  });

  it('takes customDay with custom_day, and customMonth for yearly cycles', async () => {
    const monthly = await ok(env.mcp, 'create_billing_group', { name: '15th', type: 'custom_day', customDay: 15 });
    expect(monthly).toMatchObject({ type: 'custom_day', customDay: 15, customMonth: null });
    const yearly = await ok(env.mcp, 'create_billing_group', { name: 'March 1st', type: 'custom_day', customDay: 1, customMonth: 3 });
    expect(yearly).toMatchObject({ customDay: 1, customMonth: 3 });
    expect((await ok(env.mcp, 'create_billing_group', { name: '28th', type: 'custom_day', customDay: 28, customMonth: 12 })).customDay).toBe(28);
  });

  it.each([
    [{ type: 'custom_day' }, ['customDay']],
    [{ type: 'custom_day', customDay: null }, ['customDay']],
    [{ type: 'custom_day', customMonth: 3 }, ['customDay']],
    [{ type: 'end_of_month', customDay: 5 }, ['customDay']],
    [{ type: 'anniversary', customMonth: 5 }, ['customMonth']],
    [{ type: 'end_of_month', customDay: 5, customMonth: 5 }, ['customDay', 'customMonth']],
    [{ type: 'custom_day', customDay: 0 }, ['customDay']],
    [{ type: 'custom_day', customDay: 29 }, ['customDay']],
    [{ type: 'custom_day', customDay: 1.5 }, ['customDay']],
    [{ type: 'custom_day', customDay: 1, customMonth: 0 }, ['customMonth']],
    [{ type: 'custom_day', customDay: 1, customMonth: 13 }, ['customMonth']],
    [{ type: 'weekly' }, ['type']],
    [{ type: 'anniversary', name: '' }, ['name']],
    [{ type: 'anniversary', name: 'n'.repeat(256) }, ['name']],
  ])('rejects %j at %j', async (input, expected) => {
    expect(paths(await fails(env.mcp, 'create_billing_group', { name: 'G', ...input }, 422))).toEqual(expected);
  });

  it('finds a group by its ULID in any case or the same bits as a UUID, only in its organisation', async () => {
    const g = await ok(env.mcp, 'create_billing_group', { name: 'Find me', type: 'anniversary' });
    const org = env.org.organisationId;
    const find = (o: string, ref: string) => env.app.store.read((tx) => findBillingGroup(tx, o, ref));
    expect(await find(org, g.id)).toEqual(g);
    expect(await find(org, g.id.toLowerCase())).toEqual(g);
    expect(await find(org, ulidToUuid(g.id))).toEqual(g);
    expect(await find(org, ulidToUuid(g.id).toUpperCase())).toEqual(g);
    expect(await find(org, '01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
    expect(await find(org, 'not-an-id')).toBeUndefined();
    const other = await env.newOrg();
    expect(await find(other.organisationId, g.id)).toBeUndefined();
  });

  it('pages the list over MCP and HTTP, and answers 201 with Location', async () => {
    const { org, mcp } = await freshOrg();
    const a = await ok(mcp, 'create_billing_group', { name: 'A', type: 'anniversary' });
    const res = await env.http('POST', '/billing-groups', { token: org.apiKey, body: { name: 'B', type: 'custom_day', customDay: 3 } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/billing-groups/${res.body.id}`);
    const page = await ok(mcp, 'list_billing_groups', { limit: 1, page: 2 });
    expect(ids(page)).toEqual([res.body.id]);
    expect(page.meta.pagination).toEqual({ totalItems: 2, itemsPerPage: 1, currentPage: 2, lastPage: 2, pageTotalItems: 1 });
    const list = await env.http('GET', '/billing-groups', { token: org.apiKey });
    expect(ids(list.body)).toEqual([a.id, res.body.id]);
    const bad = await env.http('POST', '/billing-groups', { token: org.apiKey, body: { name: 'C', type: 'custom_day' } });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['customDay']);
  });
});

describe('coupons', () => {
  it('creates a percentage coupon for once with defaults', async () => {
    env.setNow('2030-02-01T00:00:00Z');
    const c = await ok(env.mcp, 'create_coupon', { code: 'TEN', name: 'Ten percent', type: 'percentage', frequency: 'once', percentage: 10 });
    expect(c).toEqual({
      id: expect.any(String),
      code: 'TEN',
      name: 'Ten percent',
      type: 'percentage',
      frequency: 'once',
      percentage: 10,
      fixedAmount: null,
      frequencyInterval: null,
      isEnabled: true,
      createdAt: '2030-02-01T00:00:00.000Z',
      updatedAt: '2030-02-01T00:00:00.000Z',
    });
  });

  it('creates a fixed-amount coupon for a limited number of invoices', async () => {
    const c = await ok(env.mcp, 'create_coupon', {
      code: 'FIVE',
      name: 'Five off',
      type: 'fixed_amount',
      frequency: 'limited',
      fixedAmount: { amount: 5.5, currency: 'USD' },
      frequencyInterval: 3,
      isEnabled: false,
      percentage: null,
    });
    expect(c).toMatchObject({ percentage: null, fixedAmount: { amount: 5.5, currency: 'USD' }, frequencyInterval: 3, isEnabled: false });
    const listed = await ok(env.mcp, 'list_coupons', {});
    const { updatedAt, ...row } = c;
    expect(updatedAt).toEqual(expect.any(String));
    expect(listed.data).toContainEqual(row);
    expect((await env.http('GET', '/coupons')).body.data).toContainEqual(c);
  });

  it('keeps percentages exactly: 0.01, 12.5, 33.33, 100', async () => {
    for (const [i, percentage] of [0.01, 12.5, 33.33, 100].entries()) {
      const c = await ok(env.mcp, 'create_coupon', { code: `P${i}`, name: 'P', type: 'percentage', frequency: 'once', percentage });
      expect((await ok(env.mcp, 'list_coupons', { limit: 100 })).data.find((x: { id: string }) => x.id === c.id).percentage).toBe(
        percentage,
      );
    }
  });

  const percent = { name: 'C', type: 'percentage', frequency: 'once', percentage: 10 };
  const fixed = { name: 'C', type: 'fixed_amount', frequency: 'once', fixedAmount: { amount: 10, currency: 'EUR' } };

  it.each([
    [{ ...percent, percentage: undefined }, ['percentage']],
    [{ ...percent, percentage: null }, ['percentage']],
    [{ ...percent, fixedAmount: { amount: 1, currency: 'EUR' } }, ['fixedAmount']],
    [{ ...fixed, fixedAmount: undefined }, ['fixedAmount']],
    [{ ...fixed, percentage: 5 }, ['percentage']],
    [{ ...percent, percentage: undefined, type: 'fixed_amount' }, ['fixedAmount']],
    [{ ...percent, frequency: 'limited' }, ['frequencyInterval']],
    [{ ...percent, frequencyInterval: 2 }, ['frequencyInterval']],
    [{ ...percent, percentage: 0 }, ['percentage']],
    [{ ...percent, percentage: -5 }, ['percentage']],
    [{ ...percent, percentage: 100.01 }, ['percentage']],
    [{ ...percent, percentage: 12.345 }, ['percentage']],
    [{ ...fixed, fixedAmount: { amount: 0, currency: 'EUR' } }, ['fixedAmount.amount']],
    [{ ...fixed, fixedAmount: { amount: 1.005, currency: 'EUR' } }, ['fixedAmount.amount']],
    [{ ...fixed, fixedAmount: { amount: 1, currency: 'eur' } }, ['fixedAmount.currency']],
    [{ ...fixed, fixedAmount: { amount: 1 } }, ['fixedAmount.currency']],
    [{ ...percent, frequency: 'limited', frequencyInterval: 0 }, ['frequencyInterval']],
    [{ ...percent, frequency: 'limited', frequencyInterval: 1.5 }, ['frequencyInterval']],
    [{ ...percent, type: 'free' }, ['type']],
    [{ ...percent, frequency: 'always' }, ['frequency']],
    [{ ...percent, name: '' }, ['name']],
    [{ ...percent, code: '' }, ['code']],
    [{ ...percent, code: 'c'.repeat(256) }, ['code']],
  ])('rejects %j at %j', async (input, expected) => {
    expect(paths(await fails(env.mcp, 'create_coupon', { code: 'REJECTED', ...input }, 422))).toEqual(expected);
  });

  it('rejects a code already used in the organisation; another organisation may use it', async () => {
    await ok(env.mcp, 'create_coupon', { code: 'ONCE', ...percent });
    const p = await fails(env.mcp, 'create_coupon', { code: 'ONCE', ...fixed }, 422);
    expect(paths(p)).toEqual(['code']);
    expect(p.detail).toContain('unique');
    const { mcp } = await freshOrg();
    await ok(mcp, 'create_coupon', { code: 'ONCE', ...percent });
  });

  it('finds a coupon by id or code, only in its organisation', async () => {
    const c = await ok(env.mcp, 'create_coupon', { code: 'FINDME', ...percent });
    const find = (o: string, ref: string) => env.app.store.read((tx) => findCoupon(tx, o, ref));
    expect(await find(env.org.organisationId, c.id)).toEqual(c);
    expect(await find(env.org.organisationId, 'FINDME')).toEqual(c);
    expect(await find(env.org.organisationId, 'findme')).toBeUndefined();
    const other = await env.newOrg();
    expect(await find(other.organisationId, c.id)).toBeUndefined();
    expect(await find(other.organisationId, 'FINDME')).toBeUndefined();
  });

  it('pages the list over MCP and HTTP, and answers 201 with Location', async () => {
    const { org, mcp } = await freshOrg();
    const res = await env.http('POST', '/coupons', { token: org.apiKey, body: { code: 'A', ...percent } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/coupons/${res.body.id}`);
    const b = await ok(mcp, 'create_coupon', { code: 'B', ...fixed });
    const page = await ok(mcp, 'list_coupons', { limit: 1, order: { createdAt: 'desc' } });
    expect(ids(page)).toEqual([b.id]);
    expect(page.meta.pagination.lastPage).toBe(2);
    const list = await env.http('GET', '/coupons?itemsPerPage=5', { token: org.apiKey });
    expect(ids(list.body)).toEqual([res.body.id, b.id]);
  });
});

describe('custom fields', () => {
  it('creates with defaults and lists, filtered by entity over MCP and HTTP', async () => {
    const { org, mcp } = await freshOrg();
    env.setNow('2030-03-01T00:00:00Z');
    const f = await ok(mcp, 'create_custom_field', { key: 'poRef', entity: 'subscription', type: 'string' });
    expect(f).toEqual({
      id: expect.any(String),
      key: 'poRef',
      entity: 'subscription',
      type: 'string',
      options: null,
      required: false,
      createdAt: '2030-03-01T00:00:00.000Z',
    });
    const g = await ok(mcp, 'create_custom_field', { key: 'tier', entity: 'customer', type: 'select', options: ['gold', 'silver'], required: true });
    expect(g).toMatchObject({ options: ['gold', 'silver'], required: true });
    expect(ids(await ok(mcp, 'list_custom_fields', {}))).toEqual([f.id, g.id]);
    expect(ids(await ok(mcp, 'list_custom_fields', { entity: 'customer' }))).toEqual([g.id]);
    const res = await env.http('GET', '/custom-fields?entity=subscription&limit=1', { token: org.apiKey });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([f.id]);
    expect((await env.http('GET', '/custom-fields?entity=invoice', { token: org.apiKey })).status).toBe(400);
  });

  it.each([
    [{ key: '1abc' }, ['key']],
    [{ key: 'a-b' }, ['key']],
    [{ key: '' }, ['key']],
    [{ key: `a${'b'.repeat(64)}` }, ['key']],
    [{ entity: 'invoice' }, ['entity']],
    [{ type: 'json' }, ['type']],
    [{ type: 'select' }, ['options']],
    [{ type: 'select', options: null }, ['options']],
    [{ type: 'select', options: [] }, ['options']],
    [{ type: 'select', options: ['a', 'b', 'a'] }, ['options[2]']],
    [{ type: 'select', options: ['a', ''] }, ['options[1]']],
    [{ type: 'string', options: ['a'] }, ['options']],
  ])('rejects %j at %j', async (input, expected) => {
    const p = await fails(env.mcp, 'create_custom_field', { key: 'field', entity: 'product', type: 'string', ...input }, 422);
    expect(paths(p)).toEqual(expected);
  });

  it('accepts a 64-character key and every type', async () => {
    const { mcp } = await freshOrg();
    expect((await ok(mcp, 'create_custom_field', { key: `a${'b'.repeat(63)}`, entity: 'product', type: 'number' })).key).toHaveLength(64);
    for (const type of ['string', 'boolean', 'date']) await ok(mcp, 'create_custom_field', { key: `k_${type}`, entity: 'product', type });
  });

  it('keeps keys unique per entity; a deleted key can be configured again', async () => {
    const { org, mcp } = await freshOrg();
    const f = await ok(mcp, 'create_custom_field', { key: 'ref', entity: 'product', type: 'string' });
    const p = await fails(mcp, 'create_custom_field', { key: 'ref', entity: 'product', type: 'number' }, 422);
    expect(paths(p)).toEqual(['key']);
    expect(p.detail).toContain('unique');
    await ok(mcp, 'create_custom_field', { key: 'ref', entity: 'customer', type: 'number' });
    await ok(mcp, 'create_custom_field', { key: 'Ref', entity: 'product', type: 'number' });
    expect(await ok(mcp, 'delete_custom_field', { id: f.id })).toEqual({ id: f.id, deleted: true });
    await fails(mcp, 'delete_custom_field', { id: f.id }, 404);
    const again = await env.http('POST', '/custom-fields', { token: org.apiKey, body: { key: 'ref', entity: 'product', type: 'boolean' } });
    expect(again.status).toBe(201);
    expect(again.headers.get('location')).toBe(`/custom-fields/${again.body.id}`);
    const del = await env.http('DELETE', `/custom-fields/${again.body.id}`, { token: org.apiKey });
    expect(del.status).toBe(204);
    expect((await env.http('DELETE', `/custom-fields/${again.body.id}`, { token: org.apiKey })).status).toBe(404);
  });

  it('stops accepting and requiring a deleted key; values already stored stay', async () => {
    const { mcp } = await freshOrg();
    const f = await ok(mcp, 'create_custom_field', { key: 'sku', entity: 'product', type: 'string', required: true });
    const product = await ok(mcp, 'create_product', { name: 'P', customFields: { sku: 'A' } });
    await ok(mcp, 'delete_custom_field', { id: f.id });
    await ok(mcp, 'create_product', { name: 'No sku needed' });
    expect(paths(await fails(mcp, 'create_product', { name: 'P', customFields: { sku: 'A' } }, 422))).toEqual(['customFields.sku']);
    expect((await ok(mcp, 'get_product', { id: product.id })).customFields).toEqual({ sku: 'A' });
  });

  it('validates values per entity for subscriptions and customers too', async () => {
    const { org, mcp } = await freshOrg();
    await ok(mcp, 'create_custom_field', { key: 'tier', entity: 'customer', type: 'select', options: ['gold'], required: true });
    await ok(mcp, 'create_custom_field', { key: 'seats', entity: 'subscription', type: 'number' });
    const check = (entity: 'customer' | 'subscription' | 'product', values: Record<string, unknown>) =>
      env.app.store.read((tx) => validateCustomFields(tx, org.organisationId, entity, values));
    expect(await check('customer', { tier: 'gold' })).toEqual([]);
    expect(paths({ violations: await check('customer', {}) })).toEqual(['customFields.tier']);
    expect(paths({ violations: await check('customer', { tier: 'gold', seats: 3 }) })).toEqual(['customFields.seats']);
    expect(await check('subscription', { seats: 3 })).toEqual([]);
    const wrong = await check('subscription', { seats: '3', tier: 'gold' });
    expect(paths({ violations: wrong })).toEqual(['customFields.seats', 'customFields.tier']);
    expect(wrong[1]!.message).toContain('the configured subscription keys are seats');
    expect(await check('product', {})).toEqual([]);
  });
});

describe('descriptions, isolation and permissions', () => {
  const tools = [
    'create_billing_group',
    'list_billing_groups',
    'create_coupon',
    'list_coupons',
    'create_custom_field',
    'list_custom_fields',
    'delete_custom_field',
  ];

  it('describes every input field, nested ones included', async () => {
    const { tools: listed } = await env.mcp.listTools();
    for (const name of tools) {
      const tool = listed.find((t) => t.name === name);
      expect(tool?.outputSchema, name).toBeDefined();
      for (const [field, schema] of ownFields(tool?.inputSchema)) {
        expect((schema as { description?: string }).description, `${name}.${field}`).toBeTruthy();
      }
    }
    const coupon = listed.find((t) => t.name === 'create_coupon')!;
    const fixedAmount = coupon.inputSchema.properties!.fixedAmount as { anyOf: Array<{ properties?: Record<string, { description?: string }> }> };
    const inner = fixedAmount.anyOf.find((s) => s.properties)!.properties!;
    expect(inner.amount!.description).toBeTruthy();
    expect(inner.currency!.description).toBeTruthy();
  });

  it("shows nothing of another organisation's setup and answers 404 to deleting its custom field", async () => {
    const f = await ok(env.mcp, 'create_custom_field', { key: 'mine', entity: 'product', type: 'string' });
    await ok(env.mcp, 'create_billing_group', { name: 'Mine', type: 'anniversary' });
    await ok(env.mcp, 'create_coupon', { code: 'MINE', name: 'Mine', type: 'percentage', frequency: 'once', percentage: 1 });
    const { org, mcp } = await freshOrg();
    await fails(mcp, 'delete_custom_field', { id: f.id }, 404);
    expect((await env.http('DELETE', `/custom-fields/${f.id}`, { token: org.apiKey })).status).toBe(404);
    expect((await ok(mcp, 'list_custom_fields', {})).data).toEqual([]);
    expect((await ok(mcp, 'list_billing_groups', {})).data).toEqual([]);
    expect((await ok(mcp, 'list_coupons', {})).data).toEqual([]);
    expect(ids(await ok(env.mcp, 'list_custom_fields', { limit: 100 }))).toContain(f.id);
    await ok(mcp, 'create_custom_field', { key: 'mine', entity: 'product', type: 'string' });
  });

  it('answers 403 without the permissions; read keys read but cannot write', async () => {
    const none = await env.mcpFor(await env.newKey(env.org, ['product:write']));
    await fails(none, 'create_billing_group', { name: 'X', type: 'anniversary' }, 403);
    await fails(none, 'list_billing_groups', {}, 403);
    await fails(none, 'create_coupon', { code: 'X', name: 'X', type: 'percentage', frequency: 'once', percentage: 1 }, 403);
    await fails(none, 'list_coupons', {}, 403);
    await fails(none, 'create_custom_field', { key: 'x', entity: 'product', type: 'string' }, 403);
    await fails(none, 'list_custom_fields', {}, 403);
    await fails(none, 'delete_custom_field', { id: 'x' }, 403);
    const { tools: listed } = await none.listTools();
    expect(listed.filter((t) => tools.includes(t.name))).toEqual([]);
    const readerKey = await env.newKey(env.org, ['billing-group:read', 'coupon:read', 'custom-field:read']);
    const reader = await env.mcpFor(readerKey);
    await ok(reader, 'list_billing_groups', {});
    await ok(reader, 'list_coupons', {});
    await ok(reader, 'list_custom_fields', {});
    await fails(reader, 'create_billing_group', { name: 'X', type: 'anniversary' }, 403);
    await fails(reader, 'create_coupon', { code: 'X', name: 'X', type: 'percentage', frequency: 'once', percentage: 1 }, 403);
    await fails(reader, 'create_custom_field', { key: 'x', entity: 'product', type: 'string' }, 403);
    expect((await env.http('POST', '/coupons', { token: readerKey, body: {} })).status).toBe(403);
    expect((await env.http('DELETE', '/custom-fields/x', { token: readerKey })).status).toBe(403);
  });
});
