import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomPricePlan } from '../src/domain/products.js';
import { getPlan } from '../src/domain/plans.js';
import { fails, ok, paths, setup, type Org, type TestEnv } from './helpers.js';
import { ownFields } from './schemaWalk.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

const flatFee = { type: 'flat_fee' as const, currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' };

interface Catalogue {
  org: Org;
  mcp: Client;
  product: any;
  price: any;
  addonProduct: any;
  addonPrice: any;
  usd: any;
}

/** A fresh organisation with two products and their EUR price plans, plus a USD price of the first. */
async function catalogue(): Promise<Catalogue> {
  const org = await env.newOrg();
  const mcp = await env.mcpFor(org.apiKey);
  const product = await ok(mcp, 'create_product', { name: 'Seat' });
  const price = await ok(mcp, 'create_price_plan', { id: product.id, ...flatFee });
  const addonProduct = await ok(mcp, 'create_product', { name: 'Support' });
  const addonPrice = await ok(mcp, 'create_price_plan', { id: addonProduct.id, ...flatFee, price: { amount: 5 } });
  const usd = await ok(mcp, 'create_price_plan', { id: product.id, ...flatFee, currencyCode: 'USD' });
  return { org, mcp, product, price, addonProduct, addonPrice, usd };
}

let c: Catalogue;
beforeAll(async () => {
  c = await catalogue();
});

const charge = (x: Catalogue, quantity?: number) => ({
  product: x.product.id,
  pricePlan: x.price.id,
  ...(quantity === undefined ? {} : { quantity }),
});
const addon = (x: Catalogue) => ({ product: x.addonProduct.id, pricePlan: x.addonPrice.id });

/** How MCP names a product and a price plan inside a plan. */
const productRef = (p: any) => ({ id: p.id, name: p.name });
const pricePlanRef = (p: any) => ({
  id: p.id,
  type: p.type,
  currencyCode: p.currencyCode,
  billingInterval: p.billingInterval,
  payInAdvance: p.payInAdvance,
  price: { amount: p.price.amount },
});

describe('plans', () => {
  it('creates with defaults, a new family, resolved charges and addons; get and list return the same', async () => {
    env.setNow('2030-03-01T00:00:00Z');
    const plan = await ok(c.mcp, 'create_plan', { code: 'basic', name: 'Basic', charges: [charge(c)], addons: [addon(c)] });
    const common = {
      id: expect.any(String),
      family: { id: expect.any(String), createdAt: '2030-03-01T00:00:00.000Z', updatedAt: '2030-03-01T00:00:00.000Z' },
      code: 'basic',
      originProduct: null,
      allowCheckout: false,
      status: 'active',
      changeBehaviour: 'upgradeable_and_downgradeable',
      changeApplyBehaviour: 'end_of_period',
      trialPeriod: null,
      name: 'Basic',
      description: null,
      createdAt: '2030-03-01T00:00:00.000Z',
      updatedAt: '2030-03-01T00:00:00.000Z',
    };
    expect(plan).toEqual({
      ...common,
      charges: [{ id: expect.any(String), product: productRef(c.product), pricePlan: pricePlanRef(c.price), quantity: 1 }],
      addons: [{ id: expect.any(String), product: productRef(c.addonProduct), pricePlan: pricePlanRef(c.addonPrice) }],
    });
    expect(await ok(c.mcp, 'get_plan', { id: plan.id })).toEqual(plan);
    expect((await ok(c.mcp, 'list_plans', {})).data).toContainEqual({
      id: plan.id,
      code: 'basic',
      name: 'Basic',
      family: { id: plan.family.id },
      status: 'active',
      createdAt: '2030-03-01T00:00:00.000Z',
    });
    // REST, the store and the list over REST keep the full plan: products and price plans resolved.
    const product = (await env.http('GET', `/catalogue/products/${c.product.id}`, { token: c.org.apiKey })).body;
    const addonProduct = (await env.http('GET', `/catalogue/products/${c.addonProduct.id}`, { token: c.org.apiKey })).body;
    const full = (await env.http('GET', `/catalogue/plans/${plan.id}`, { token: c.org.apiKey })).body;
    expect(full).toEqual({
      ...common,
      id: plan.id,
      family: plan.family,
      charges: [{ id: plan.charges[0].id, product, pricePlan: { ...c.price, inUse: true }, quantity: 1 }],
      addons: [{ id: plan.addons[0].id, product: addonProduct, pricePlan: { ...c.addonPrice, inUse: true } }],
    });
    expect((await env.http('GET', '/catalogue/plans', { token: c.org.apiKey })).body.data).toContainEqual(full);
    expect(await env.app.store.read((tx) => getPlan(tx, c.org.organisationId, plan.id))).toEqual(full);
  });

  it('marks price plans used by a plan as inUse', async () => {
    const x = await catalogue();
    const list = () => env.http('GET', `/catalogue/products/${x.product.id}/price-plans`, { token: x.org.apiKey });
    expect((await list()).body.data.map((p: { inUse: boolean }) => p.inUse)).toEqual([false, false]);
    expect((await ok(x.mcp, 'get_price_plan', { id: x.price.id })).inUse).toBe(false);
    await ok(x.mcp, 'create_plan', { code: 'p', name: 'P', charges: [charge(x)] });
    expect((await list()).body.data.map((p: { id: string; inUse: boolean }) => [p.id, p.inUse])).toEqual([
      [x.price.id, true],
      [x.usd.id, false],
    ]);
    expect((await ok(x.mcp, 'get_price_plan', { id: x.price.id })).inUse).toBe(true);
    expect((await ok(x.mcp, 'get_price_plan', { id: x.usd.id })).inUse).toBe(false);
    expect((await ok(x.mcp, 'list_price_plans', { id: x.product.id })).data.map((p: { id: string }) => p.id)).toEqual([x.price.id, x.usd.id]);
  });

  it('keeps every given field, joins a given family and resolves the origin product', async () => {
    const first = await ok(c.mcp, 'create_plan', { code: 'fam-1', name: 'F1', charges: [charge(c)] });
    const plan = await ok(c.mcp, 'create_plan', {
      code: 'fam-2',
      name: 'F2',
      description: 'Second',
      status: 'active',
      allowCheckout: true,
      changeBehaviour: 'upgradeable_only',
      changeApplyBehaviour: 'immediately',
      originProduct: c.product.id,
      family: first.family.id,
      charges: [charge(c, 2.5)],
    });
    expect(plan).toMatchObject({
      description: 'Second',
      status: 'active',
      allowCheckout: true,
      changeBehaviour: 'upgradeable_only',
      changeApplyBehaviour: 'immediately',
      family: first.family,
      addons: [],
    });
    expect(plan.originProduct).toEqual({ id: c.product.id, name: 'Seat' });
    const full = (await env.http('GET', `/catalogue/plans/${plan.id}`, { token: c.org.apiKey })).body;
    expect(full.originProduct).toEqual((await env.http('GET', `/catalogue/products/${c.product.id}`, { token: c.org.apiKey })).body);
    expect(plan.charges[0].quantity).toBe(2.5);
    for (const changeBehaviour of ['downgradeable_only', 'not_changeable']) {
      await ok(c.mcp, 'create_plan', { code: `cb-${changeBehaviour}`, name: 'X', changeBehaviour, charges: [charge(c)] });
    }
  });

  it('rejects a code another plan of the organisation has, on create and update', async () => {
    const a = await ok(c.mcp, 'create_plan', { code: 'dup-a', name: 'A', charges: [charge(c)] });
    const b = await ok(c.mcp, 'create_plan', { code: 'dup-b', name: 'B', charges: [charge(c)] });
    const p = await fails(c.mcp, 'create_plan', { code: 'dup-a', name: 'C', charges: [charge(c)] }, 422);
    expect(paths(p)).toEqual(['code']);
    expect(p.detail).toContain('unique');
    expect(paths(await fails(c.mcp, 'update_plan', { id: b.id, code: 'dup-a' }, 422))).toEqual(['code']);
    expect((await ok(c.mcp, 'update_plan', { id: a.id, code: 'dup-a', name: 'A2' })).name).toBe('A2');
    const other = await catalogue();
    await ok(other.mcp, 'create_plan', { code: 'dup-a', name: 'Other', charges: [charge(other)] });
  });

  it('rejects unknown products and price plans at their paths, and a price plan of another product', async () => {
    const p = await fails(
      c.mcp,
      'create_plan',
      {
        code: 'bad-items',
        name: 'X',
        charges: [charge(c), { product: 'nope', pricePlan: c.price.id }, { product: c.product.id, pricePlan: 'nope' }],
        addons: [{ product: c.product.id, pricePlan: c.addonPrice.id }],
      },
      422,
    );
    expect(paths(p)).toEqual(['charges[1].product', 'charges[2].pricePlan', 'addons[0].pricePlan']);
    expect(p.violations[2].message).toContain(`belongs to product ${c.addonProduct.id}`);
    const other = await catalogue();
    expect(paths(await fails(c.mcp, 'create_plan', { code: 'x', name: 'X', charges: [charge(other)] }, 422))).toEqual([
      'charges[0].product',
      'charges[0].pricePlan',
    ]);
  });

  it('rejects custom and archived price plans', async () => {
    const custom = await env.app.store.transaction((tx) =>
      createCustomPricePlan(
        tx,
        c.org.organisationId,
        c.product.id,
        { ...flatFee, applyTrial: false, payInAdvance: true, proRata: false, freeUnits: 0 },
        new Date(),
      ),
    );
    const archived = await ok(c.mcp, 'create_price_plan', { id: c.product.id, ...flatFee, status: 'archived' });
    const inactive = await ok(c.mcp, 'create_price_plan', { id: c.product.id, ...flatFee, status: 'inactive' });
    const p = await fails(
      c.mcp,
      'create_plan',
      {
        code: 'statuses',
        name: 'X',
        charges: [{ product: c.product.id, pricePlan: custom.id }],
        addons: [{ product: c.product.id, pricePlan: archived.id }],
      },
      422,
    );
    expect(paths(p)).toEqual(['charges[0].pricePlan', 'addons[0].pricePlan']);
    expect(p.violations[0].message).toContain('custom');
    expect(p.violations[1].message).toContain('archived');
    await ok(c.mcp, 'create_plan', { code: 'inactive-ok', name: 'X', charges: [{ product: c.product.id, pricePlan: inactive.id }] });
  });

  it('requires one currency across charges and addons, also against the items an update keeps', async () => {
    const p = await fails(
      c.mcp,
      'create_plan',
      { code: 'mixed', name: 'X', charges: [charge(c)], addons: [{ product: c.product.id, pricePlan: c.usd.id }] },
      422,
    );
    expect(paths(p)).toEqual(['addons[0].pricePlan']);
    expect(p.detail).toContain('USD');
    const plan = await ok(c.mcp, 'create_plan', { code: 'eur', name: 'X', charges: [charge(c)], addons: [addon(c)] });
    const kept = await fails(c.mcp, 'update_plan', { id: plan.id, charges: [{ product: c.product.id, pricePlan: c.usd.id }] }, 422);
    expect(paths(kept)).toEqual(['charges[0].pricePlan']);
    expect(kept.detail).toContain("the plan's current addons");
    const both = await ok(c.mcp, 'update_plan', { id: plan.id, charges: [{ product: c.product.id, pricePlan: c.usd.id }], addons: [] });
    expect(both.charges[0].pricePlan.currencyCode).toBe('USD');
  });

  it.each([
    [{ charges: [] }, 'charges'],
    [{ charges: undefined }, 'charges'],
    [{ quantity: 0 }, 'charges[0].quantity'],
    [{ quantity: -1 }, 'charges[0].quantity'],
    [{ quantity: 0.0000001 }, 'charges[0].quantity'],
    [{ code: '' }, 'code'],
    [{ code: 'c'.repeat(256) }, 'code'],
    [{ name: '' }, 'name'],
    [{ description: 'd'.repeat(256) }, 'description'],
    [{ status: 'published' }, 'status'],
    [{ changeBehaviour: 'sideways' }, 'changeBehaviour'],
    [{ changeApplyBehaviour: 'later' }, 'changeApplyBehaviour'],
    [{ originProduct: 'nope' }, 'originProduct'],
    [{ family: 'nope' }, 'family'],
  ])('rejects %j at %s', async (change, path) => {
    const input: Record<string, unknown> = { code: 'rejected', name: 'X', charges: [charge(c)], ...change };
    if ('quantity' in change) {
      delete input.quantity;
      input.charges = [charge(c, change.quantity)];
    }
    if (input.charges === undefined) delete input.charges;
    expect(paths(await fails(c.mcp, 'create_plan', input, 422))).toEqual([path]);
  });

  it('update keeps omitted fields, null clears description and originProduct, lists are replaced whole keeping matching ids', async () => {
    const second = await ok(c.mcp, 'create_price_plan', { id: c.product.id, ...flatFee, price: { amount: 20 } });
    const plan = await ok(c.mcp, 'create_plan', {
      code: 'upd',
      name: 'Upd',
      description: 'text',
      originProduct: c.product.id,
      charges: [charge(c, 3)],
      addons: [addon(c)],
    });
    env.setNow('2030-04-01T00:00:00Z');
    const u = await ok(c.mcp, 'update_plan', { id: plan.id, description: null, originProduct: null, allowCheckout: true });
    expect(u).toEqual({ ...plan, description: null, originProduct: null, allowCheckout: true, updatedAt: '2030-04-01T00:00:00.000Z' });
    const replaced = await ok(c.mcp, 'update_plan', {
      id: plan.id,
      charges: [{ product: c.product.id, pricePlan: second.id }, charge(c, 4)],
    });
    expect(replaced.charges.map((x: any) => [x.pricePlan.id, x.quantity])).toEqual([
      [second.id, 1],
      [c.price.id, 4],
    ]);
    expect(replaced.charges[1].id).toBe(plan.charges[0].id);
    expect(replaced.charges[0].id).not.toBe(plan.charges[0].id);
    expect(replaced.addons).toEqual(plan.addons);
    const noAddons = await ok(c.mcp, 'update_plan', { id: plan.id, addons: [] });
    expect(noAddons.addons).toEqual([]);
    expect(noAddons.charges).toEqual(replaced.charges);
    expect(await ok(c.mcp, 'get_plan', { id: plan.id })).toEqual(noAddons);
    expect(paths(await fails(c.mcp, 'update_plan', { id: plan.id, charges: [] }, 422))).toEqual(['charges']);
    expect(paths(await fails(c.mcp, 'update_plan', { id: plan.id, addons: [{ product: 'nope', pricePlan: c.addonPrice.id }] }, 422))).toEqual([
      'addons[0].product',
    ]);
  });

  it('moves a plan to another existing family, never to an unknown one', async () => {
    const a = await ok(c.mcp, 'create_plan', { code: 'move-a', name: 'A', charges: [charge(c)] });
    const b = await ok(c.mcp, 'create_plan', { code: 'move-b', name: 'B', charges: [charge(c)] });
    expect(a.family.id).not.toBe(b.family.id);
    expect((await ok(c.mcp, 'update_plan', { id: b.id, family: a.family.id })).family).toEqual(a.family);
    expect(paths(await fails(c.mcp, 'update_plan', { id: b.id, family: 'nope' }, 422))).toEqual(['family']);
    const other = await catalogue();
    expect(paths(await fails(other.mcp, 'create_plan', { code: 'f', name: 'F', family: a.family.id, charges: [charge(other)] }, 422))).toEqual([
      'family',
    ]);
  });

  it('allows the status changes draft → active → archived → active and draft → archived; a same status is a no-op', async () => {
    const plan = await ok(c.mcp, 'create_plan', { code: 'life', name: 'Life', status: 'draft', charges: [charge(c)] });
    expect((await ok(c.mcp, 'update_plan', { id: plan.id, status: 'draft' })).status).toBe('draft');
    expect((await ok(c.mcp, 'update_plan', { id: plan.id, status: 'active' })).status).toBe('active');
    expect((await ok(c.mcp, 'update_plan', { id: plan.id, status: 'active' })).status).toBe('active');
    expect((await ok(c.mcp, 'update_plan', { id: plan.id, status: 'archived' })).status).toBe('archived');
    expect((await ok(c.mcp, 'update_plan', { id: plan.id, status: 'active' })).status).toBe('active');
    const draft = await ok(c.mcp, 'create_plan', { code: 'life-2', name: 'Life 2', status: 'draft', charges: [charge(c)] });
    expect((await ok(c.mcp, 'update_plan', { id: draft.id, status: 'archived' })).status).toBe('archived');
  });

  it.each([
    ['active', 'draft'],
    ['archived', 'draft'],
  ])('refuses %s → %s with a 409 naming the allowed statuses', async (from, to) => {
    const plan = await ok(c.mcp, 'create_plan', { code: `no-${from}-${to}`, name: 'X', status: from, charges: [charge(c)] });
    const p = await fails(c.mcp, 'update_plan', { id: plan.id, status: to, name: 'Changed' }, 409);
    expect(p.detail).toContain(`is ${from}`);
    expect(p.detail).toContain(from === 'active' ? 'archived only' : 'active only');
    expect((await ok(c.mcp, 'get_plan', { id: plan.id })).name).toBe('X');
  });

  it('filters and pages the list, over MCP and HTTP', async () => {
    const x = await catalogue();
    const draft = await ok(x.mcp, 'create_plan', { code: 'a', name: 'A', status: 'draft', charges: [charge(x)] });
    const active = await ok(x.mcp, 'create_plan', { code: 'b', name: 'B', status: 'active', charges: [charge(x)] });
    const active2 = await ok(x.mcp, 'create_plan', { code: 'c', name: 'C', status: 'active', charges: [charge(x)] });
    const only = await ok(x.mcp, 'list_plans', { status: 'active' });
    expect(only.data.map((p: { id: string }) => p.id)).toEqual([active.id, active2.id]);
    const page = await ok(x.mcp, 'list_plans', { limit: 1, page: 1, order: { createdAt: 'desc' } });
    expect(page.data.map((p: { id: string }) => p.id)).toEqual([active2.id]);
    expect(page.meta.pagination).toEqual({ totalItems: 3, itemsPerPage: 1, currentPage: 1, lastPage: 3, pageTotalItems: 1 });
    const res = await env.http('GET', '/catalogue/plans?status=draft', { token: x.org.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([draft.id]);
    expect((await env.http('GET', '/catalogue/plans?status=gone', { token: x.org.apiKey })).status).toBe(400);
  });

  it('serves plans over HTTP: 201 with Location, GET, PUT, 409 and 422', async () => {
    const res = await env.http('POST', '/catalogue/plans', {
      token: c.org.apiKey,
      body: { code: 'rest', name: 'Rest', status: 'active', charges: [charge(c)] },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/catalogue/plans/${res.body.id}`);
    const got = await env.http('GET', res.headers.get('location')!, { token: c.org.apiKey });
    expect(got.body).toEqual(res.body);
    const put = await env.http('PUT', `/catalogue/plans/${res.body.id}`, { token: c.org.apiKey, body: { name: 'Rest 2' } });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('Rest 2');
    expect((await env.http('PUT', `/catalogue/plans/${res.body.id}`, { token: c.org.apiKey, body: { status: 'draft' } })).status).toBe(409);
    const bad = await env.http('POST', '/catalogue/plans', { token: c.org.apiKey, body: { code: 'rest', name: 'Dup', charges: [charge(c)] } });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['code']);
  });

  it('describes every input field of the plan tools, nested ones included', async () => {
    const { tools } = await c.mcp.listTools();
    for (const name of ['create_plan', 'list_plans', 'get_plan', 'update_plan']) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.outputSchema, name).toBeDefined();
      for (const [field, schema] of ownFields(tool?.inputSchema)) {
        expect((schema as { description?: string }).description, `${name}.${field}`).toBeTruthy();
      }
    }
    const create = tools.find((t) => t.name === 'create_plan')!;
    const items = (create.inputSchema.properties!.charges as { items: { properties: Record<string, { description?: string }> } }).items;
    for (const [field, schema] of Object.entries(items.properties)) expect(schema.description, `charges[].${field}`).toBeTruthy();
  });
});

describe('plans that subscriptions use', () => {
  it('keep their currency while a subscription that is not cancelled or terminated uses them (409 naming it)', async () => {
    const x = await catalogue();
    const plan = await ok(x.mcp, 'create_plan', { code: 'eur', name: 'EUR', charges: [charge(x)], addons: [addon(x)] });
    const customer = await ok(x.mcp, 'create_customer', { lastName: 'Euro', currencyCode: 'EUR' });
    const s = await ok(x.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    const moved = await fails(x.mcp, 'update_plan', { id: plan.id, charges: [{ product: x.product.id, pricePlan: x.usd.id }], addons: [] }, 409);
    expect(moved.detail).toMatch(/plan eur cannot move from EUR to USD: subscriptions SUB-\d+/);
    expect(moved.detail).toContain(s.number);
    expect((await ok(x.mcp, 'get_plan', { id: plan.id })).charges[0].pricePlan.currencyCode).toBe('EUR');
    expect((await ok(x.mcp, 'update_plan', { id: plan.id, charges: [charge(x, 2)], addons: [] })).charges[0].quantity).toBe(2);
    await ok(x.mcp, 'terminate_subscription', { id: s.id });
    const usd = await ok(x.mcp, 'update_plan', { id: plan.id, charges: [{ product: x.product.id, pricePlan: x.usd.id }] });
    expect(usd.charges[0].pricePlan.currencyCode).toBe('USD');
  });

  it('refuse a charge quantity for a product with a usage metric, on create and update (usage_metric_quantity)', async () => {
    const x = await catalogue();
    const metered = await ok(x.mcp, 'create_product', { name: 'Calls', usageMetric: { eventName: 'calls', aggregation: 'count' } });
    const price = await ok(x.mcp, 'create_price_plan', { id: metered.id, ...flatFee, type: 'per_unit', price: { amount: 0.01 } });
    const usage = { product: metered.id, pricePlan: price.id };
    const refused = await fails(x.mcp, 'create_plan', { code: 'calls', name: 'Calls', charges: [charge(x), { ...usage, quantity: 7 }] }, 422);
    expect(refused.violations).toEqual([expect.objectContaining({ propertyPath: 'charges[1].quantity', code: 'usage_metric_quantity' })]);
    const plan = await ok(x.mcp, 'create_plan', { code: 'calls', name: 'Calls', charges: [charge(x, 3), usage] });
    expect(plan.charges.map((ch: any) => ch.quantity)).toEqual([3, 1]);
    const update = await fails(x.mcp, 'update_plan', { id: plan.id, charges: [{ ...usage, quantity: 1 }] }, 422);
    expect(paths(update)).toEqual(['charges[0].quantity']);
  });

  it('say that allowCheckout is only stored, as this service has no checkout', async () => {
    const { tools } = await c.mcp.listTools();
    for (const name of ['create_plan', 'update_plan']) {
      const allowCheckout = tools.find((t) => t.name === name)!.inputSchema.properties!.allowCheckout as { description: string };
      expect(allowCheckout.description).toMatch(/^Stored only.*no checkout/);
    }
  });
});

describe('isolation and permissions', () => {
  it("answers 404 for unknown ids and another organisation's plan", async () => {
    const plan = await ok(c.mcp, 'create_plan', { code: 'mine', name: 'Mine', charges: [charge(c)] });
    await fails(c.mcp, 'get_plan', { id: 'nope' }, 404);
    await fails(c.mcp, 'update_plan', { id: 'nope', name: 'X' }, 404);
    const other = await catalogue();
    await fails(other.mcp, 'get_plan', { id: plan.id }, 404);
    await fails(other.mcp, 'update_plan', { id: plan.id, name: 'Theirs' }, 404);
    expect((await env.http('GET', `/catalogue/plans/${plan.id}`, { token: other.org.apiKey })).status).toBe(404);
    expect((await ok(other.mcp, 'list_plans', {})).data).toEqual([]);
  });

  it('answers 403 without plan permissions; plan:read reads but cannot write', async () => {
    const plan = await ok(c.mcp, 'create_plan', { code: 'guarded', name: 'G', charges: [charge(c)] });
    const none = await env.mcpFor(await env.newKey(c.org, ['product:write']));
    await fails(none, 'create_plan', { code: 'x', name: 'X', charges: [charge(c)] }, 403);
    await fails(none, 'list_plans', {}, 403);
    await fails(none, 'get_plan', { id: plan.id }, 403);
    await fails(none, 'update_plan', { id: plan.id, name: 'X' }, 403);
    const readerKey = await env.newKey(c.org, ['plan:read']);
    const reader = await env.mcpFor(readerKey);
    expect((await ok(reader, 'get_plan', { id: plan.id })).id).toBe(plan.id);
    await fails(reader, 'update_plan', { id: plan.id, name: 'X' }, 403);
    expect((await env.http('PUT', `/catalogue/plans/${plan.id}`, { token: readerKey, body: { name: 'X' } })).status).toBe(403);
  });
});
