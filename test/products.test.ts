import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomPricePlan, getPricePlan } from '../src/domain/products.js';
import { fails, ok, paths, setup, type Org, type TestEnv } from './helpers.js';
import { ownFields } from './schemaWalk.js';

let env: TestEnv;
let measurementId: string;
let taxGroupId: string;
beforeAll(async () => {
  env = await setup();
  await ok(env.mcp, 'create_unit', { name: 'call' });
  measurementId = (await ok(env.mcp, 'create_measurement', { unit: 'call', code: 'calls', aggregationType: 'sum', type: 'metered' })).id;
  taxGroupId = (
    await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Standard',
      reverseChargeType: 'REVERSE_CHARGE_DEACTIVATED',
      type: 'standard',
      taxes: [{ code: 'DE19', rate: 19, countryCode: 'DE', validFrom: '2020-01-01' }],
    })
  ).id;
});
afterAll(() => env.close());

async function freshOrg(): Promise<{ org: Org; mcp: Client }> {
  const org = await env.newOrg();
  return { org, mcp: await env.mcpFor(org.apiKey) };
}

const flatFee = { type: 'flat_fee' as const, currencyCode: 'EUR', price: { amount: 9.99 }, billingInterval: '1M' };

describe('products', () => {
  it('creates with defaults, and get returns the same', async () => {
    const p = await ok(env.mcp, 'create_product', { name: 'Basic' });
    expect(p).toEqual({
      id: expect.any(String),
      type: 'product',
      measurement: null,
      usageMetric: null,
      unit: null,
      taxGroup: null,
      name: 'Basic',
      description: null,
      internalName: null,
      invoiceVisibility: 'always',
      costCentre: null,
      costCentre2: null,
      customFields: {},
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await ok(env.mcp, 'get_product', { id: p.id })).toEqual(p);
  });

  it('shows the measurement and tax group as references over MCP, and over REST as the objects their own tools return', async () => {
    const p = await ok(env.mcp, 'create_product', {
      name: 'Metered',
      type: 'service',
      measurement: measurementId,
      taxGroup: taxGroupId,
      description: 'd'.repeat(1000),
      internalName: 'int',
      invoiceVisibility: 'if_not_zero',
      costCentre: 'CC1',
      costCentre2: 'CC2',
    });
    const measurement = await ok(env.mcp, 'get_measurement', { id: measurementId });
    const taxGroup = await ok(env.mcp, 'get_tax_group', { id: taxGroupId });
    expect(p.measurement).toEqual({ id: measurementId, code: measurement.code });
    expect(p.taxGroup).toEqual({ id: taxGroupId, internalDescription: taxGroup.internalDescription });
    const full = (await env.http('GET', `/catalogue/products/${p.id}`)).body;
    expect(full.measurement).toEqual(measurement);
    expect(full.taxGroup).toEqual(taxGroup);
    expect(full).toEqual({ ...p, measurement, taxGroup });
    expect(p).toMatchObject({ type: 'service', internalName: 'int', invoiceVisibility: 'if_not_zero', costCentre: 'CC1', costCentre2: 'CC2' });
    expect(await ok(env.mcp, 'get_product', { id: p.id })).toEqual(p);
    expect((await ok(env.mcp, 'create_product', { name: 'Never', invoiceVisibility: 'never' })).invoiceVisibility).toBe('never');
  });

  it('rejects unknown measurement and tax group ids, naming each field, also those of another organisation', async () => {
    const p = await fails(env.mcp, 'create_product', { name: 'X', measurement: 'nope', taxGroup: 'nope' }, 422);
    expect(paths(p)).toEqual(['measurement', 'taxGroup']);
    expect(p.violations[0].message).toContain('list_measurements');
    const { mcp } = await freshOrg();
    expect(paths(await fails(mcp, 'create_product', { name: 'X', measurement: measurementId, taxGroup: taxGroupId }, 422))).toEqual([
      'measurement',
      'taxGroup',
    ]);
    const q = await ok(env.mcp, 'create_product', { name: 'Y' });
    expect(paths(await fails(env.mcp, 'update_product', { id: q.id, taxGroup: 'nope' }, 422))).toEqual(['taxGroup']);
    expect(paths(await fails(env.mcp, 'update_product', { id: q.id, measurement: 'nope' }, 422))).toEqual(['measurement']);
  });

  it.each([
    ['type', 'good'],
    ['invoiceVisibility', 'sometimes'],
    ['name', ''],
    ['name', 'n'.repeat(256)],
    ['description', 'd'.repeat(1001)],
    ['internalName', 'i'.repeat(256)],
    ['costCentre', 'c'.repeat(256)],
    ['costCentre2', 'c'.repeat(256)],
  ])('rejects %s %#, on create and update', async (field, value) => {
    expect(paths(await fails(env.mcp, 'create_product', { name: 'Ok', [field]: value }, 422))).toEqual([field]);
    const p = await ok(env.mcp, 'create_product', { name: 'Ok' });
    expect(paths(await fails(env.mcp, 'update_product', { id: p.id, [field]: value }, 422))).toEqual([field]);
  });

  it('requires a name and accepts 255 characters', async () => {
    expect(paths(await fails(env.mcp, 'create_product', {}, 422))).toEqual(['name']);
    expect((await ok(env.mcp, 'create_product', { name: 'n'.repeat(255), costCentre: 'c'.repeat(255) })).name).toHaveLength(255);
  });

  it('update keeps omitted fields and null clears nullable ones', async () => {
    const p = await ok(env.mcp, 'create_product', {
      name: 'Full',
      measurement: measurementId,
      taxGroup: taxGroupId,
      description: 'desc',
      internalName: 'int',
      costCentre: 'a',
      costCentre2: 'b',
    });
    env.setNow('2030-01-01T00:00:00Z');
    const u = await ok(env.mcp, 'update_product', { id: p.id, taxGroup: null, description: null, costCentre2: null, name: 'Renamed' });
    expect(u).toEqual({ ...p, taxGroup: null, description: null, costCentre2: null, name: 'Renamed', updatedAt: '2030-01-01T00:00:00.000Z' });
    const v = await ok(env.mcp, 'update_product', { id: p.id, measurement: null, internalName: null, costCentre: null, type: 'service' });
    expect(v).toMatchObject({ measurement: null, internalName: null, costCentre: null, type: 'service', name: 'Renamed' });
    const w = await ok(env.mcp, 'update_product', { id: p.id, measurement: measurementId, taxGroup: taxGroupId });
    expect(w.measurement.id).toBe(measurementId);
    expect(w.taxGroup.id).toBe(taxGroupId);
    expect(await ok(env.mcp, 'get_product', { id: p.id })).toEqual(w);
  });

  it('describes measurement as deprecated and every input field of the product tools', async () => {
    const { tools } = await env.mcp.listTools();
    for (const name of ['create_product', 'update_product']) {
      const tool = tools.find((t) => t.name === name)!;
      const measurement = tool.inputSchema.properties!.measurement as { description: string };
      expect(measurement.description).toMatch(/^Deprecated/);
    }
    for (const name of ['create_product', 'list_products', 'get_product', 'update_product', 'create_price_plan', 'list_price_plans']) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.outputSchema, name).toBeDefined();
      for (const [field, schema] of ownFields(tool?.inputSchema)) {
        expect((schema as { description?: string }).description, `${name}.${field}`).toBeTruthy();
      }
    }
  });

  it('pages the list, over MCP and HTTP', async () => {
    const { org, mcp } = await freshOrg();
    const ids: string[] = [];
    for (const name of ['A', 'B', 'C']) ids.push((await ok(mcp, 'create_product', { name })).id);
    const page2 = await ok(mcp, 'list_products', { limit: 2, page: 2 });
    expect(page2.data.map((p: { id: string }) => p.id)).toEqual([ids[2]]);
    expect(page2.meta.pagination).toEqual({ totalItems: 3, itemsPerPage: 2, currentPage: 2, lastPage: 2, pageTotalItems: 1 });
    const res = await env.http('GET', '/catalogue/products?limit=2&order[createdAt]=desc', { token: org.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect((await env.http('GET', '/catalogue/products?limit=101', { token: org.apiKey })).status).toBe(400);
  });

  it('serves products over HTTP: 201 with Location, GET, PUT', async () => {
    const res = await env.http('POST', '/catalogue/products', { body: { name: 'Rest', taxGroup: taxGroupId } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/catalogue/products/${res.body.id}`);
    const got = await env.http('GET', res.headers.get('location')!);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const put = await env.http('PUT', `/catalogue/products/${res.body.id}`, { body: { taxGroup: null } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'Rest', taxGroup: null });
    const bad = await env.http('POST', '/catalogue/products', { body: { name: 'X', measurement: 'nope' } });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['measurement']);
  });
});

describe('what meters a product while subscriptions bill its usage', () => {
  const calls = { eventName: 'calls', aggregation: 'count' };

  it('refuses a new usage metric or measurement with 409 naming the subscriptions until their items have nothing left to bill', async () => {
    env.setNow('2032-01-10T00:00:00Z');
    const p = await ok(env.mcp, 'create_product', { name: 'Calls', usageMetric: calls });
    const price = await ok(env.mcp, 'create_price_plan', { id: p.id, type: 'per_unit', currencyCode: 'EUR', price: { amount: 0.01 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'calls', name: 'Calls', charges: [{ product: p.id, pricePlan: price.id }] });
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Caller' });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    await ok(env.mcp, 'ingest_usage_events', { events: [{ id: 'call-1', eventName: 'calls', subscription: s.id }] });

    const changed = await fails(env.mcp, 'update_product', { id: p.id, usageMetric: { eventName: 'requests', aggregation: 'count' } }, 409);
    expect(changed.detail).toContain(s.number);
    expect(changed.detail).toMatch(/usageMetric of product Calls cannot change.*Create a new product/);
    const measured = await fails(env.mcp, 'update_product', { id: p.id, usageMetric: null, measurement: measurementId }, 409);
    expect(measured.detail).toMatch(/^measurement of product Calls/);
    expect((await ok(env.mcp, 'update_product', { id: p.id, usageMetric: calls, name: 'Calls v2' })).usageMetric.eventName).toBe('calls');

    env.setNow('2032-01-20T00:00:00Z');
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    await fails(env.mcp, 'update_product', { id: p.id, usageMetric: { eventName: 'requests', aggregation: 'count' } }, 409);
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(run.invoicesCreated).toBe(1);
    const updated = await ok(env.mcp, 'update_product', { id: p.id, usageMetric: { eventName: 'requests', aggregation: 'count' } });
    expect(updated.usageMetric.eventName).toBe('requests');
  });

  it('list_products rows name the event a metered product bills', async () => {
    const { mcp } = await freshOrg();
    const metered = await ok(mcp, 'create_product', { name: 'Metered row', usageMetric: calls });
    const plain = await ok(mcp, 'create_product', { name: 'Plain row' });
    const rows = (await ok(mcp, 'list_products', {})).data;
    expect(rows.find((r: any) => r.id === metered.id).usageMetric).toEqual({ eventName: 'calls' });
    expect(rows.find((r: any) => r.id === plain.id).usageMetric).toBeNull();
  });
});

describe('product custom fields', () => {
  let mcp: Client;
  beforeAll(async () => {
    ({ mcp } = await freshOrg());
    await ok(mcp, 'create_custom_field', { key: 'sku', entity: 'product', type: 'string', required: true });
    await ok(mcp, 'create_custom_field', { key: 'weight', entity: 'product', type: 'number' });
    await ok(mcp, 'create_custom_field', { key: 'digital', entity: 'product', type: 'boolean' });
    await ok(mcp, 'create_custom_field', { key: 'launch', entity: 'product', type: 'date' });
    await ok(mcp, 'create_custom_field', { key: 'size', entity: 'product', type: 'select', options: ['S', 'M', 'L'] });
    await ok(mcp, 'create_custom_field', { key: 'region', entity: 'customer', type: 'string' });
  });

  it('accepts values of the configured types and shows them', async () => {
    const values = { sku: 'A-1', weight: 1.5, digital: false, launch: '2024-02-29', size: 'M' };
    const p = await ok(mcp, 'create_product', { name: 'P', customFields: values });
    expect(p.customFields).toEqual(values);
    expect((await ok(mcp, 'get_product', { id: p.id })).customFields).toEqual(values);
  });

  it('rejects a key that is not configured for products, listing the configured keys', async () => {
    const p = await fails(mcp, 'create_product', { name: 'P', customFields: { sku: 'A', region: 'EU' } }, 422);
    expect(paths(p)).toEqual(['customFields.region']);
    expect(p.violations[0].message).toContain('sku, weight, digital, launch, size');
  });

  it('says so when no product custom fields are configured', async () => {
    const other = await freshOrg();
    const p = await fails(other.mcp, 'create_product', { name: 'P', customFields: { sku: 'A' } }, 422);
    expect(paths(p)).toEqual(['customFields.sku']);
    expect(p.violations[0].message).toContain('no product custom fields are configured');
  });

  it.each([
    ['sku', 12],
    ['sku', 's'.repeat(256)],
    ['weight', '1.5'],
    ['digital', 'yes'],
    ['launch', '2026-02-30'],
    ['launch', '2026-1-5'],
    ['launch', '2026-01-05T00:00:00Z'],
    ['size', 'XL'],
    ['size', null],
  ])('rejects %s = %j as the wrong type', async (key, value) => {
    const p = await fails(mcp, 'create_product', { name: 'P', customFields: { sku: 'A', [key]: value } }, 422);
    expect(paths(p)).toEqual([`customFields.${key}`]);
    if (key === 'size') expect(p.violations[0].message).toContain("'S', 'M', 'L'");
    if (key === 'launch') expect(p.violations[0].message).toContain('YYYY-MM-DD');
  });

  it('requires a required key on create and when customFields is replaced, not on other updates', async () => {
    const missing = await fails(mcp, 'create_product', { name: 'P' }, 422);
    expect(paths(missing)).toEqual(['customFields.sku']);
    expect(missing.violations[0].message).toContain('required');
    const p = await ok(mcp, 'create_product', { name: 'P', customFields: { sku: 'A', size: 'S' } });
    expect(paths(await fails(mcp, 'update_product', { id: p.id, customFields: { size: 'L' } }, 422))).toEqual(['customFields.sku']);
    const replaced = await ok(mcp, 'update_product', { id: p.id, customFields: { sku: 'B' } });
    expect(replaced.customFields).toEqual({ sku: 'B' });
    await ok(mcp, 'create_custom_field', { key: 'later', entity: 'product', type: 'string', required: true });
    expect((await ok(mcp, 'update_product', { id: p.id, name: 'Renamed' })).customFields).toEqual({ sku: 'B' });
    expect(paths(await fails(mcp, 'update_product', { id: p.id, customFields: { sku: 'B' } }, 422))).toEqual([
      'customFields.later',
    ]);
  });
});

describe('price plans', () => {
  let product: { id: string };
  let metered: { id: string };
  beforeAll(async () => {
    product = await ok(env.mcp, 'create_product', { name: 'Priced' });
    metered = await ok(env.mcp, 'create_product', { name: 'Metered', measurement: measurementId });
  });

  it('creates with defaults; price in major units with its own timestamps and the tenant', async () => {
    env.setNow('2031-05-01T10:00:00Z');
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...flatFee });
    expect(pp).toEqual({
      id: expect.any(String),
      product: product.id,
      type: 'flat_fee',
      currencyCode: 'EUR',
      price: {
        amount: 9.99,
        createdAt: '2031-05-01T10:00:00.000Z',
        updatedAt: '2031-05-01T10:00:00.000Z',
        tenantId: env.org.organisationId,
      },
      tiers: null,
      packageSize: null,
      internalName: null,
      status: 'active',
      applyTrial: false,
      payInAdvance: true,
      proRata: false,
      freeUnits: 0,
      billingInterval: '1M',
      showPricePerInterval: '1M',
      custom: false,
      charge: null,
      productSetOption: null,
      inUse: false,
      createdAt: '2031-05-01T10:00:00.000Z',
      updatedAt: '2031-05-01T10:00:00.000Z',
    });
    const list = await ok(env.mcp, 'list_price_plans', { id: product.id });
    expect(list.data).toContainEqual({
      id: pp.id,
      type: 'flat_fee',
      currencyCode: 'EUR',
      billingInterval: '1M',
      payInAdvance: true,
      price: { amount: 9.99 },
      product: product.id,
      status: 'active',
      custom: false,
      inUse: false,
      createdAt: '2031-05-01T10:00:00.000Z',
    });
    expect(await ok(env.mcp, 'get_price_plan', { id: pp.id })).toEqual({ ...pp, priceHistory: [{ amount: 9.99, validFrom: '2031-05-01T10:00:00.000Z' }] });
    expect((await env.http('GET', `/catalogue/products/${product.id}/price-plans`)).body.data).toContainEqual(pp);
  });

  it('keeps every given field', async () => {
    const pp = await ok(env.mcp, 'create_price_plan', {
      id: metered.id,
      type: 'per_unit',
      currencyCode: 'USD',
      price: { amount: 0 },
      internalName: 'usage',
      status: 'inactive',
      applyTrial: true,
      payInAdvance: false,
      proRata: false,
      freeUnits: 100,
      billingInterval: '12M',
      showPricePerInterval: '1M',
      charge: 'ch_1',
      productSetOption: 'pso_1',
    });
    expect(pp).toMatchObject({
      type: 'per_unit',
      currencyCode: 'USD',
      price: { amount: 0 },
      internalName: 'usage',
      status: 'inactive',
      applyTrial: true,
      payInAdvance: false,
      proRata: false,
      freeUnits: 100,
      billingInterval: '12M',
      showPricePerInterval: '1M',
      charge: 'ch_1',
      productSetOption: 'pso_1',
      custom: false,
    });
  });

  it('refuses per_unit for a product without a measurement, at type', async () => {
    const p = await fails(env.mcp, 'create_price_plan', { id: product.id, ...flatFee, type: 'per_unit' }, 422);
    expect(paths(p)).toEqual(['type']);
    expect(p.detail).toContain('measurement');
  });

  it('keeps the measurement of a product that has per_unit price plans', async () => {
    const m = await ok(env.mcp, 'create_product', { name: 'Keeps', measurement: measurementId });
    await ok(env.mcp, 'update_product', { id: m.id, measurement: null });
    await ok(env.mcp, 'update_product', { id: m.id, measurement: measurementId });
    await ok(env.mcp, 'create_price_plan', { id: m.id, ...flatFee, type: 'per_unit' });
    expect(paths(await fails(env.mcp, 'update_product', { id: m.id, measurement: null }, 422))).toEqual(['measurement']);
    expect((await ok(env.mcp, 'update_product', { id: m.id, name: 'Still' })).measurement.id).toBe(measurementId);
  });

  it.each([
    ['currencyCode', 'eur'],
    ['currencyCode', 'XYZ'],
    ['price.amount', -1],
    ['price.amount', 12.999],
    ['price.amount', 10_000_000_000_000],
    ['billingInterval', '0M'],
    ['billingInterval', '1000M'],
    ['billingInterval', '1m'],
    ['billingInterval', 'M'],
    ['billingInterval', '1H'],
    ['showPricePerInterval', '01M'],
    ['freeUnits', -1],
    ['freeUnits', 1.5],
    ['status', 'deleted'],
    ['type', 'tiered'],
    ['internalName', 'i'.repeat(256)],
  ])('rejects %s %j', async (field, value) => {
    const input: Record<string, unknown> = { id: product.id, ...flatFee };
    if (field === 'price.amount') input.price = { amount: value };
    else input[field] = value;
    expect(paths(await fails(env.mcp, 'create_price_plan', input, 422))).toEqual([field]);
  });

  it('takes amounts exactly: 0, 12.5, 0.1, the largest', async () => {
    for (const amount of [0, 12.5, 0.1, 1.1, 9999999999999.99]) {
      const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...flatFee, price: { amount } });
      expect((await env.app.store.read((tx) => getPricePlan(tx, env.org.organisationId, pp.id))).price?.amount).toBe(amount);
    }
    for (const billingInterval of ['1D', '2W', '1Y', '999M']) {
      expect((await ok(env.mcp, 'create_price_plan', { id: product.id, ...flatFee, billingInterval })).showPricePerInterval).toBe(
        billingInterval,
      );
    }
  });

  it('lists catalogue price plans only, filtered by status; custom ones are fetched by id', async () => {
    const p = await ok(env.mcp, 'create_product', { name: 'Listed' });
    const active = await ok(env.mcp, 'create_price_plan', { id: p.id, ...flatFee });
    const archived = await ok(env.mcp, 'create_price_plan', { id: p.id, ...flatFee, status: 'archived' });
    const custom = await env.app.store.transaction((tx) =>
      createCustomPricePlan(
        tx,
        env.org.organisationId,
        p.id,
        { ...flatFee, price: { amount: 5 }, applyTrial: false, payInAdvance: true, proRata: false, freeUnits: 0 },
        new Date('2031-06-01T00:00:00Z'),
      ),
    );
    expect(custom).toMatchObject({ custom: true, status: 'active', product: p.id, price: { amount: 5 } });
    expect(await env.app.store.read((tx) => getPricePlan(tx, env.org.organisationId, custom.id))).toEqual(custom);
    const all = await ok(env.mcp, 'list_price_plans', { id: p.id });
    expect(all.data.map((x: { id: string }) => x.id)).toEqual([active.id, archived.id]);
    const only = await ok(env.mcp, 'list_price_plans', { id: p.id, status: 'archived' });
    expect(only.data.map((x: { id: string }) => x.id)).toEqual([archived.id]);
    const res = await env.http('GET', `/catalogue/products/${p.id}/price-plans?status=active&limit=1`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([active.id]);
    expect(res.body.meta.pagination.totalItems).toBe(1);
  });

  it('reports a custom price plan violation under the given path', async () => {
    const p = await ok(env.mcp, 'create_product', { name: 'Custom' });
    const err = await env.app.store
      .transaction((tx) =>
        createCustomPricePlan(
          tx,
          env.org.organisationId,
          p.id,
          { ...flatFee, type: 'per_unit', applyTrial: false, payInAdvance: true, proRata: false, freeUnits: 0 },
          new Date(),
          'products[0].customPricePlan.',
        ),
      )
      .catch((e: unknown) => e);
    expect(paths((err as { violations: Array<{ propertyPath: string }> }))).toEqual(['products[0].customPricePlan.type']);
  });

  it('serves price plans over HTTP with 201', async () => {
    const res = await env.http('POST', `/catalogue/products/${product.id}/price-plans`, { body: flatFee });
    expect(res.status).toBe(201);
    expect(res.body.product).toBe(product.id);
    expect((await env.http('POST', '/catalogue/products/nope/price-plans', { body: flatFee })).status).toBe(404);
    const bad = await env.http('POST', `/catalogue/products/${product.id}/price-plans`, { body: { ...flatFee, price: { amount: 1.234 } } });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['price.amount']);
  });
});

describe('isolation and permissions', () => {
  it("answers 404 for unknown ids and another organisation's product", async () => {
    const p = await ok(env.mcp, 'create_product', { name: 'Mine' });
    await ok(env.mcp, 'create_price_plan', { id: p.id, ...flatFee });
    await fails(env.mcp, 'get_product', { id: 'nope' }, 404);
    const { org, mcp } = await freshOrg();
    await fails(mcp, 'get_product', { id: p.id }, 404);
    await fails(mcp, 'update_product', { id: p.id, name: 'Theirs' }, 404);
    await fails(mcp, 'create_price_plan', { id: p.id, ...flatFee }, 404);
    await fails(mcp, 'list_price_plans', { id: p.id }, 404);
    expect((await env.http('GET', `/catalogue/products/${p.id}`, { token: org.apiKey })).status).toBe(404);
    expect((await ok(mcp, 'list_products', {})).data).toEqual([]);
    expect((await ok(env.mcp, 'get_product', { id: p.id })).name).toBe('Mine');
  });

  it('answers 403 without product permissions; product:read reads but cannot write', async () => {
    const p = await ok(env.mcp, 'create_product', { name: 'Guarded' });
    const none = await env.mcpFor(await env.newKey(env.org, ['measurement:read']));
    await fails(none, 'create_product', { name: 'X' }, 403);
    await fails(none, 'list_products', {}, 403);
    await fails(none, 'get_product', { id: p.id }, 403);
    await fails(none, 'update_product', { id: p.id, name: 'X' }, 403);
    await fails(none, 'create_price_plan', { id: p.id, ...flatFee }, 403);
    await fails(none, 'list_price_plans', { id: p.id }, 403);
    const reader = await env.newKey(env.org, ['product:read']);
    const readerMcp = await env.mcpFor(reader);
    expect((await ok(readerMcp, 'get_product', { id: p.id })).id).toBe(p.id);
    await ok(readerMcp, 'list_price_plans', { id: p.id });
    await fails(readerMcp, 'update_product', { id: p.id, name: 'X' }, 403);
    await fails(readerMcp, 'create_price_plan', { id: p.id, ...flatFee }, 403);
    expect((await env.http('POST', '/catalogue/products', { token: reader, body: { name: 'X' } })).status).toBe(403);
  });
});
