import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { buildFixture, type Fixture } from './fixtures.js';

let env: TestEnv;
let f: Fixture;
const NOW = '2026-01-15T10:00:00.000Z';
const yearly = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];

beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  f = await buildFixture(env.mcp, '-features');
});
afterAll(() => env.close());
beforeEach(() => env.setNow(NOW));

let counter = 0;
/** A fresh feature of the given type, with a unique id. */
async function feature(type = 'switch', extra: Record<string, unknown> = {}): Promise<any> {
  counter += 1;
  const config =
    type === 'custom'
      ? [
          { value: 'basic', label: 'Basic' },
          { value: 'pro', label: 'Pro' },
        ]
      : type === 'quantity'
        ? [
            { value: 5, label: '5 users' },
            { value: 'unlimited', label: 'Unlimited' },
          ]
        : type === 'range'
          ? { min: 1, max: 100 }
          : undefined;
  return ok(env.mcp, 'create_feature', { id: `f-${counter}`, name: `Feature ${counter}`, type, ...(config ? { config } : {}), ...extra });
}

const subscribe = (extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, activate: true, ...extra });

const entitlements = async (subscriptionId: string, extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'list_subscription_entitlements', { id: subscriptionId, ...extra });

/** Feature id → value of the subscription's entitlements (of the features named). */
async function granted(subscriptionId: string, featureIds: string[]): Promise<Array<[string, unknown]>> {
  const { data } = await entitlements(subscriptionId, { limit: 100 });
  return data.filter((e: any) => featureIds.includes(e.feature.id)).map((e: any) => [e.feature.id, e.value]);
}

describe('create_feature', () => {
  it('creates a draft with a slug generated from the name, made unique', async () => {
    const mcp = env.mcp;
    const a = await ok(mcp, 'create_feature', { name: 'Max Users (Ünlimited)!', type: 'switch' });
    expect(a).toEqual({
      id: 'max-users-unlimited',
      name: 'Max Users (Ünlimited)!',
      description: null,
      status: 'draft',
      type: 'switch',
      config: null,
      unit: null,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect((await ok(mcp, 'create_feature', { name: 'Max users unlimited', type: 'switch' })).id).toBe('max-users-unlimited-2');
    expect((await ok(mcp, 'create_feature', { name: 'Max users: unlimited', type: 'switch' })).id).toBe('max-users-unlimited-3');
    expect((await ok(mcp, 'create_feature', { name: '!!!', type: 'switch' })).id).toBe('feature');
    const long = await ok(mcp, 'create_feature', { name: 'x'.repeat(100), type: 'switch' });
    expect(long.id).toBe('x'.repeat(64));
    expect((await ok(mcp, 'create_feature', { name: 'x'.repeat(100), type: 'switch' })).id).toBe(`${'x'.repeat(62)}-2`);
    expect(await ok(mcp, 'get_feature', { id: a.id })).toEqual(a);
  });

  it('keeps a given slug, status, description and unit; a taken or malformed slug is a 422', async () => {
    const c = await ok(env.mcp, 'create_feature', {
      id: 'disk_space',
      name: 'Disk space',
      description: 'Storage per account',
      status: 'active',
      type: 'range',
      config: { min: 0, max: 500, unlimited: true },
      unit: 'GB',
    });
    expect(c).toMatchObject({ id: 'disk_space', status: 'active', description: 'Storage per account', unit: 'GB', config: { min: 0, max: 500, unlimited: true } });
    const dup = await fails(env.mcp, 'create_feature', { id: 'disk_space', name: 'Again', type: 'switch' }, 422);
    expect(paths(dup)).toEqual(['id']);
    expect(dup.detail).toContain('unique');
    for (const bad of ['Disk', '-disk', 'disk space', 'a'.repeat(65), '']) {
      expect(paths(await fails(env.mcp, 'create_feature', { id: bad, name: 'Bad', type: 'switch' }, 422))).toEqual(['id']);
    }
    expect(paths(await fails(env.mcp, 'create_feature', { name: 'Archived', type: 'switch', status: 'archived' }, 422))).toEqual(['status']);
    const other = await env.mcpFor((await env.newOrg()).apiKey);
    expect((await ok(other, 'create_feature', { id: 'disk_space', name: 'Mine', type: 'switch' })).id).toBe('disk_space');
  });

  it('stores the config of each type: levels for custom and quantity, a range object with unlimited false by default', async () => {
    expect((await feature('custom')).config).toEqual([
      { value: 'basic', label: 'Basic' },
      { value: 'pro', label: 'Pro' },
    ]);
    expect((await feature('quantity')).config).toEqual([
      { value: 5, label: '5 users' },
      { value: 'unlimited', label: 'Unlimited' },
    ]);
    expect((await feature('range')).config).toEqual({ min: 1, max: 100, unlimited: false });
    expect((await feature('range', { config: { min: 3, max: 3 } })).config).toEqual({ min: 3, max: 3, unlimited: false });
    expect((await feature('switch', { config: null })).config).toBeNull();
  });

  it.each([
    ['switch with levels', 'switch', [{ value: 'a', label: 'A' }], 'config'],
    ['switch with a range', 'switch', { min: 0, max: 1 }, 'config'],
    ['custom without config', 'custom', undefined, 'config'],
    ['custom with a range', 'custom', { min: 0, max: 1 }, 'config'],
    ['custom with no levels', 'custom', [], 'config'],
    ['custom with a number value', 'custom', [{ value: 1, label: 'One' }], 'config[0].value'],
    ['custom with a repeated value', 'custom', [{ value: 'a', label: 'A' }, { value: 'a', label: 'B' }], 'config[1].value'],
    ['quantity without config', 'quantity', null, 'config'],
    ['quantity with a negative value', 'quantity', [{ value: -1, label: 'x' }], 'config[0].value'],
    ['quantity with a fraction', 'quantity', [{ value: 1.5, label: 'x' }], 'config[0].value'],
    ['quantity with a name', 'quantity', [{ value: 'many', label: 'x' }], 'config[0].value'],
    ['quantity with unlimited twice', 'quantity', [{ value: 'unlimited', label: 'x' }, { value: 'unlimited', label: 'y' }], 'config[1].value'],
    ['quantity with a range', 'quantity', { min: 0, max: 1 }, 'config'],
    ['range with levels', 'range', [{ value: 1, label: 'x' }], 'config'],
    ['range without config', 'range', undefined, 'config'],
    ['range with min > max', 'range', { min: 5, max: 4 }, 'config.max'],
  ])('rejects %s (422)', async (_, type, config, path) => {
    const problem = await fails(env.mcp, 'create_feature', { name: 'Bad config', type, ...(config === undefined ? {} : { config }) }, 422);
    expect(paths(problem)).toEqual([path]);
  });

  it('rejects levels with unknown fields or no label, and a range with unknown fields', async () => {
    await fails(env.mcp, 'create_feature', { name: 'x', type: 'custom', config: [{ value: 'a' }] }, 422);
    await fails(env.mcp, 'create_feature', { name: 'x', type: 'custom', config: [{ value: 'a', label: 'A', extra: 1 }] }, 422);
    await fails(env.mcp, 'create_feature', { name: 'x', type: 'range', config: { min: 0, max: 1, step: 1 } }, 422);
  });

  it('answers 201 with Location over HTTP', async () => {
    const res = await env.http('POST', '/entitlement/features', { body: { name: 'Http feature', type: 'switch' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/entitlement/features/${res.body.id}`);
    expect((await env.http('GET', res.headers.get('location')!)).body).toEqual(res.body);
  });
});

describe('list_features and get_feature', () => {
  it('lists oldest first with status and type filters, paginated', async () => {
    const other = await env.mcpFor((await env.newOrg()).apiKey);
    const a = await ok(other, 'create_feature', { name: 'A', type: 'switch' });
    const b = await ok(other, 'create_feature', { name: 'B', type: 'range', config: { min: 0, max: 1 }, status: 'active' });
    const c = await ok(other, 'create_feature', { name: 'C', type: 'switch', status: 'active' });
    const all = await ok(other, 'list_features', {});
    expect(all.data.map((x: any) => x.id)).toEqual([a.id, b.id, c.id]);
    expect(all.meta.pagination).toEqual({ totalItems: 3, itemsPerPage: 30, currentPage: 1, lastPage: 1, pageTotalItems: 3 });
    expect((await ok(other, 'list_features', { status: 'active' })).data.map((x: any) => x.id)).toEqual([b.id, c.id]);
    expect((await ok(other, 'list_features', { type: 'switch' })).data.map((x: any) => x.id)).toEqual([a.id, c.id]);
    expect((await ok(other, 'list_features', { type: 'switch', status: 'active' })).data.map((x: any) => x.id)).toEqual([c.id]);
    const page2 = await ok(other, 'list_features', { limit: 2, page: 2 });
    expect(page2.data.map((x: any) => x.id)).toEqual([c.id]);
    expect(page2.meta.pagination.lastPage).toBe(2);
    const res = await env.http('GET', '/entitlement/features?status=frozen');
    expect(res.status).toBe(400);
  });

  it("answers 404 for an unknown id and another organisation's feature", async () => {
    const mine = await feature();
    await fails(env.mcp, 'get_feature', { id: 'no-such-feature' }, 404);
    const other = await env.mcpFor((await env.newOrg()).apiKey);
    await fails(other, 'get_feature', { id: mine.id }, 404);
    await fails(other, 'update_feature_status', { id: mine.id, status: 'active' }, 404);
    await fails(other, 'create_entitlement', { id: mine.id, product: f.product.id }, 404);
  });
});

describe('update_feature_status', () => {
  /** A feature brought into `status` the allowed way. */
  async function inStatus(status: string): Promise<any> {
    const x = await feature();
    if (status !== 'draft') await ok(env.mcp, 'update_feature_status', { id: x.id, status });
    return ok(env.mcp, 'get_feature', { id: x.id });
  }

  it.each([
    ['draft', 'active'],
    ['draft', 'archived'],
    ['active', 'archived'],
    ['archived', 'active'],
  ])('allows %s → %s', async (from, to) => {
    const x = await inStatus(from);
    env.setNow('2026-01-16T00:00:00.000Z');
    const updated = await ok(env.mcp, 'update_feature_status', { id: x.id, status: to });
    expect(updated).toEqual({ ...x, status: to, updatedAt: '2026-01-16T00:00:00.000Z' });
    expect(await ok(env.mcp, 'get_feature', { id: x.id })).toEqual(updated);
  });

  it.each(['draft', 'active', 'archived'])('treats %s → the same status as a no-op 200', async (status) => {
    const x = await inStatus(status);
    env.setNow('2026-01-16T00:00:00.000Z');
    expect(await ok(env.mcp, 'update_feature_status', { id: x.id, status, applyToExistingSubscriptions: true })).toEqual(x);
  });

  it.each([
    ['active', 'draft'],
    ['archived', 'draft'],
  ])('rejects %s → %s with a 409 naming the allowed status', async (from, to) => {
    const x = await inStatus(from);
    const problem = await fails(env.mcp, 'update_feature_status', { id: x.id, status: to }, 409);
    expect(problem.detail).toContain(`from ${from} only ${from === 'active' ? 'archived' : 'active'} is allowed`);
    expect((await ok(env.mcp, 'get_feature', { id: x.id })).status).toBe(from);
  });

  it('answers 200 over HTTP PUT and rejects an unknown status (422)', async () => {
    const x = await feature();
    const res = await env.http('PUT', `/entitlement/features/${x.id}/status`, { body: { status: 'active' } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('active');
    expect((await env.http('PUT', `/entitlement/features/${x.id}/status`, { body: { status: 'live' } })).status).toBe(422);
    expect((await env.http('PUT', '/entitlement/features/nope/status', { body: { status: 'active' } })).status).toBe(404);
  });
});

describe('create_entitlement', () => {
  it('grants on a product or a price plan, switch value true by default; 201 with Location over HTTP', async () => {
    const x = await feature();
    const e = await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id });
    expect(e).toEqual({ id: expect.any(String), feature: x.id, product: f.product.id, pricePlan: null, value: true, createdAt: NOW });
    const p = await ok(env.mcp, 'create_entitlement', { id: x.id, pricePlan: f.pricePlan.id, value: false });
    expect(p).toMatchObject({ feature: x.id, product: null, pricePlan: f.pricePlan.id, value: false });
    const res = await env.http('POST', `/entitlement/features/${x.id}/entitlements`, { body: { product: f.addonProduct.id } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/entitlement/features/${x.id}`);
  });

  it('needs exactly one existing product or price plan (422)', async () => {
    const x = await feature();
    expect(paths(await fails(env.mcp, 'create_entitlement', { id: x.id }, 422))).toEqual(['product']);
    expect(paths(await fails(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id, pricePlan: f.pricePlan.id }, 422))).toEqual(['product']);
    expect(paths(await fails(env.mcp, 'create_entitlement', { id: x.id, product: 'nope' }, 422))).toEqual(['product']);
    expect(paths(await fails(env.mcp, 'create_entitlement', { id: x.id, pricePlan: 'nope' }, 422))).toEqual(['pricePlan']);
    const other = await env.mcpFor((await env.newOrg()).apiKey);
    const theirs = await ok(other, 'create_feature', { name: 'Theirs', type: 'switch' });
    expect(paths(await fails(other, 'create_entitlement', { id: theirs.id, product: f.product.id }, 422))).toEqual(['product']);
    await fails(env.mcp, 'create_entitlement', { id: 'no-such-feature', product: f.product.id }, 404);
  });

  it.each([
    ['switch', true, true],
    ['switch', false, true],
    ['switch', 'yes', false],
    ['switch', 1, false],
    ['custom', 'pro', true],
    ['custom', 'gold', false],
    ['custom', undefined, false],
    ['quantity', 5, true],
    ['quantity', 'unlimited', true],
    ['quantity', 6, false],
    ['quantity', '5', false],
    ['range', 1, true],
    ['range', 100, true],
    ['range', 42.5, true],
    ['range', 0, false],
    ['range', 101, false],
    ['range', 'unlimited', false],
    ['range', true, false],
  ])('%s feature with value %j: accepted %s', async (type, value, accepted) => {
    const x = await feature(type);
    const args = { id: x.id, product: f.product.id, ...(value === undefined ? {} : { value }) };
    if (accepted) expect((await ok(env.mcp, 'create_entitlement', args)).value).toEqual(value);
    else expect(paths(await fails(env.mcp, 'create_entitlement', args, 422))).toEqual(['value']);
  });

  it("accepts 'unlimited' for a range that allows it", async () => {
    const x = await feature('range', { config: { min: 1, max: 10, unlimited: true } });
    expect((await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id, value: 'unlimited' })).value).toBe('unlimited');
  });

  it('holds one value per feature on a product or price plan: a second is a 409 naming the first, and changes nothing', async () => {
    const x = await feature();
    const first = await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id, value: false });
    const again = await fails(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id, value: true }, 409);
    expect(again.detail).toBe(`product ${f.product.id} already has an entitlement to feature ${x.id} (${first.id}, value false): one value per feature on a product or price plan`);
    await ok(env.mcp, 'create_entitlement', { id: x.id, pricePlan: f.pricePlan.id });
    await fails(env.mcp, 'create_entitlement', { id: x.id, pricePlan: f.pricePlan.id, value: false }, 409);
  });

  it('takes entitlements for draft and active features but not archived ones (409)', async () => {
    const x = await feature();
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id });
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'active' });
    await ok(env.mcp, 'create_entitlement', { id: x.id, pricePlan: f.pricePlan.id });
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'archived' });
    const problem = await fails(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id }, 409);
    expect(problem.detail).toContain('archived');
  });
});

describe('list_subscription_entitlements', () => {
  it('gives a new subscription the entitlements of active features on its products and price plans', async () => {
    const x = await feature('quantity', { status: 'active', unit: 'users' });
    const onProduct = await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id, value: 5 });
    const onPricePlan = await ok(env.mcp, 'create_entitlement', { id: x.id, pricePlan: f.meteredPricePlan.id, value: 'unlimited' });
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.addonProduct.id, value: 5 });
    const s = await subscribe();
    const list = await entitlements(s.id);
    const mine = list.data.filter((e: any) => e.feature.id === x.id);
    const full = await ok(env.mcp, 'get_feature', { id: x.id });
    expect(mine).toEqual([
      { feature: { id: x.id, name: full.name, type: 'quantity' }, value: 5, entitlement: onProduct.id, source: { product: f.product.id } },
      { feature: { id: x.id, name: full.name, type: 'quantity' }, value: 'unlimited', entitlement: onPricePlan.id, source: { pricePlan: f.meteredPricePlan.id } },
    ]);
    const rest = await env.http('GET', `/subscriptions/${s.id}/entitlements`);
    expect(rest.body.data.filter((e: any) => e.feature.id === x.id)).toEqual([
      { feature: full, value: 5, entitlement: onProduct.id, source: { product: f.product.id } },
      { feature: expect.objectContaining({ id: x.id }), value: 'unlimited', entitlement: onPricePlan.id, source: { pricePlan: f.meteredPricePlan.id } },
    ]);
    const withAddon = await subscribe({ addons: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] });
    expect(await granted(withAddon.id, [x.id])).toEqual([
      [x.id, 5],
      [x.id, 'unlimited'],
      [x.id, 5],
    ]);
  });

  it('reaches subscriptions that have the feature with entitlements created later, and items ordered later', async () => {
    const x = await feature('switch', { status: 'active' });
    const s = await subscribe();
    expect(await granted(s.id, [x.id])).toEqual([]);
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id });
    expect(await granted(s.id, [x.id])).toEqual([[x.id, true]]);
    const extra = await ok(env.mcp, 'create_product', { name: 'Extra seat' });
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: extra.id, value: false });
    expect(await granted(s.id, [x.id])).toEqual([[x.id, true]]);
    await ok(env.mcp, 'order_subscription_products', {
      id: s.id,
      endDate: '2026-03-01T00:00:00Z',
      products: [{ product: extra.id, customPricePlan: { type: 'flat_fee', currencyCode: 'EUR', price: { amount: 1 }, billingInterval: '1M' } }],
    });
    expect(await granted(s.id, [x.id])).toEqual([
      [x.id, true],
      [x.id, false],
    ]);
    env.setNow('2026-03-01T00:00:00Z');
    expect(await granted(s.id, [x.id])).toEqual([[x.id, true]]);
  });

  it('does not make draft features effective; activation with applyToExistingSubscriptions false reaches only later subscriptions', async () => {
    const x = await feature('custom');
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id, value: 'pro' });
    const before = await subscribe();
    expect(await granted(before.id, [x.id])).toEqual([]);
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'active', applyToExistingSubscriptions: false });
    expect(await granted(before.id, [x.id])).toEqual([]);
    const after = await subscribe();
    expect(await granted(after.id, [x.id])).toEqual([[x.id, 'pro']]);
  });

  it('with applyToExistingSubscriptions true reaches every existing subscription using the product or price plan', async () => {
    const x = await feature('range');
    await ok(env.mcp, 'create_entitlement', { id: x.id, pricePlan: f.pricePlan.id, value: 10 });
    const addon = await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.addonProduct.id, value: 20 });
    const plain = await subscribe();
    const withAddon = await subscribe({ addons: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] });
    const draft = await subscribe({ activate: false });
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'active', applyToExistingSubscriptions: true });
    expect(await granted(plain.id, [x.id])).toEqual([[x.id, 10]]);
    expect(await granted(withAddon.id, [x.id])).toEqual([
      [x.id, 10],
      [x.id, 20],
    ]);
    expect((await entitlements(withAddon.id)).data.find((e: any) => e.entitlement === addon.id).source).toEqual({ product: f.addonProduct.id });
    expect(await granted(draft.id, [x.id])).toEqual([]);
    await ok(env.mcp, 'activate_subscription', { id: draft.id });
    expect(await granted(draft.id, [x.id])).toEqual([[x.id, 10]]);
  });

  it('keeps archived features working where granted, but not for subscriptions created while archived', async () => {
    const x = await feature('switch', { status: 'active' });
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id });
    const granted1 = await subscribe();
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'archived' });
    expect(await granted(granted1.id, [x.id])).toEqual([[x.id, true]]);
    const whileArchived = await subscribe();
    expect(await granted(whileArchived.id, [x.id])).toEqual([]);
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'active' });
    expect(await granted(whileArchived.id, [x.id])).toEqual([]);
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'archived' });
    await ok(env.mcp, 'update_feature_status', { id: x.id, status: 'active', applyToExistingSubscriptions: true });
    expect(await granted(whileArchived.id, [x.id])).toEqual([[x.id, true]]);
  });

  it('is empty for a subscription that is not active, and entitles it once active until it ends', async () => {
    const x = await feature('switch', { status: 'active' });
    await ok(env.mcp, 'create_entitlement', { id: x.id, product: f.product.id });
    const s = await subscribe({ activate: false });
    expect(await entitlements(s.id)).toEqual({
      data: [],
      meta: { pagination: { totalItems: 0, itemsPerPage: 30, currentPage: 1, lastPage: 1, pageTotalItems: 0 } },
    });
    await ok(env.mcp, 'activate_subscription', { id: s.id });
    expect(await granted(s.id, [x.id])).toEqual([[x.id, true]]);
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    expect(await granted(s.id, [x.id])).toEqual([]);
    await ok(env.mcp, 'resume_subscription', { id: s.id });
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect(await granted(s.id, [x.id])).toEqual([]);
  });

  it('paginates, over MCP and HTTP', async () => {
    const other = await env.newOrg();
    const mcp = await env.mcpFor(other.apiKey);
    const g = await buildFixture(mcp, '-paging');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const x = await ok(mcp, 'create_feature', { name: `P${i}`, type: 'switch', status: 'active' });
      await ok(mcp, 'create_entitlement', { id: x.id, product: g.product.id });
      ids.push(x.id);
    }
    const s = await ok(mcp, 'create_subscription', { customer: g.customer.id, plan: g.plan.id, periods: yearly, activate: true });
    const page = await ok(mcp, 'list_subscription_entitlements', { id: s.id, limit: 2, page: 2 });
    expect(page.data.map((e: any) => e.feature.id)).toEqual([ids[2]]);
    expect(page.meta.pagination).toEqual({ totalItems: 3, itemsPerPage: 2, currentPage: 2, lastPage: 2, pageTotalItems: 1 });
    const res = await env.http('GET', `/subscriptions/${s.id}/entitlements?limit=1`, { token: other.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: any) => e.feature.id)).toEqual([ids[0]]);
    expect((await env.http('GET', `/subscriptions/${s.id}/entitlements`)).status).toBe(404);
    await fails(env.mcp, 'list_subscription_entitlements', { id: s.id }, 404);
  });
});

describe('permissions', () => {
  it('answers 403 to a key without feature:write, and hides the tools it can never call', async () => {
    const x = await feature();
    const token = await env.newKey(env.org, ['feature:read']);
    expect((await env.http('GET', `/entitlement/features/${x.id}`, { token })).status).toBe(200);
    expect((await env.http('POST', '/entitlement/features', { token, body: { name: 'n', type: 'switch' } })).status).toBe(403);
    expect((await env.http('PUT', `/entitlement/features/${x.id}/status`, { token, body: { status: 'active' } })).status).toBe(403);
    expect((await env.http('POST', `/entitlement/features/${x.id}/entitlements`, { token, body: { product: f.product.id } })).status).toBe(403);
    const client: Client = await env.mcpFor(token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['list_features', 'get_feature']));
    expect(names).not.toContain('create_feature');
    expect(names).not.toContain('list_subscription_entitlements');
    await fails(client, 'update_feature_status', { id: x.id, status: 'active' }, 403);
    const reader = await env.newKey(env.org, ['subscription:read']);
    expect((await env.http('GET', `/entitlement/features/${x.id}`, { token: reader })).status).toBe(403);
    const s = await subscribe();
    expect((await env.http('GET', `/subscriptions/${s.id}/entitlements`, { token: reader })).status).toBe(200);
  });
});
