import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { SqlProductRepo } from '../src/store/repos/products.js';
import { SqliteSql } from '../src/store/sqliteSql.js';
import { migrate } from '../src/store/sqlite.js';
import { buildFixture, type Fixture } from './fixtures.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

/** Price plan types graduated, volume and package, and unit prices of up to 10 fractional digits (issue 11), through MCP and REST. */
let env: TestEnv;
let f: Fixture;
let product: { id: string };
let metered: { id: string };

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-20T12:00:00Z');
  f = await buildFixture(env.mcp);
  product = await ok(env.mcp, 'create_product', { name: 'Seats' });
  metered = f.meteredProduct;
});
afterAll(() => env.close());

const base = { currencyCode: 'EUR', billingInterval: '1M' };
const tiers = [
  { upTo: 10, unitAmount: 1, flatAmount: 5 },
  { upTo: 100, unitAmount: 0.0025 },
  { upTo: null, unitAmount: 0.0000000001, flatAmount: 2.5 },
];

describe('create_price_plan with each type', () => {
  it('graduated and volume: tiers kept exactly, price null, packageSize null; the same over REST and get_price_plan', async () => {
    for (const type of ['graduated', 'volume']) {
      const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...base, type, tiers });
      expect(pp).toMatchObject({
        type,
        price: null,
        packageSize: null,
        freeUnits: 0,
        tiers: [
          { upTo: 10, unitAmount: 1, flatAmount: 5 },
          { upTo: 100, unitAmount: 0.0025, flatAmount: null },
          { upTo: null, unitAmount: 0.0000000001, flatAmount: 2.5 },
        ],
      });
      expect(await ok(env.mcp, 'get_price_plan', { id: pp.id })).toEqual({ ...pp, priceHistory: [] });
      expect((await env.http('GET', `/catalogue/price-plans/${pp.id}`)).body).toEqual({ ...pp, priceHistory: [] });
      const row = (await ok(env.mcp, 'list_price_plans', { id: product.id })).data.find((r: any) => r.id === pp.id);
      expect(row).toMatchObject({ type, price: null });
    }
  });

  it('package: price and packageSize, with free units', async () => {
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...base, type: 'package', price: { amount: 5 }, packageSize: 100, freeUnits: 50 });
    expect(pp).toMatchObject({ type: 'package', price: { amount: 5 }, packageSize: 100, freeUnits: 50, tiers: null });
    expect(await ok(env.mcp, 'get_price_plan', { id: pp.id })).toEqual({ ...pp, priceHistory: [{ amount: 5, validFrom: pp.createdAt }] });
  });

  it('per_unit at 0.002 EUR, 0.00015 USD and 10 fractional digits; flat_fee in JPY and KWD; over REST too', async () => {
    for (const [currencyCode, amount] of [
      ['EUR', 0.002],
      ['USD', 0.00015],
      ['EUR', 0.0123456789],
      ['EUR', 0.0000001],
      ['JPY', 0.5],
      ['KWD', 0.0125],
    ] as const) {
      const pp = await ok(env.mcp, 'create_price_plan', { id: metered.id, ...base, currencyCode, type: 'per_unit', price: { amount } });
      expect((await ok(env.mcp, 'get_price_plan', { id: pp.id })).price.amount).toBe(amount);
    }
    const jpy = await env.http('POST', `/catalogue/products/${product.id}/price-plans`, {
      body: { ...base, currencyCode: 'JPY', type: 'flat_fee', price: { amount: 4900 } },
    });
    expect(jpy.status).toBe(201);
    expect(jpy.body).toMatchObject({ price: { amount: 4900 }, tiers: null, packageSize: null });
    const kwd = await env.http('POST', `/catalogue/products/${product.id}/price-plans`, {
      body: { ...base, currencyCode: 'KWD', type: 'flat_fee', price: { amount: 1.234 } },
    });
    expect(kwd.body.price.amount).toBe(1.234);
  });

  it('graduated over REST', async () => {
    const r = await env.http('POST', `/catalogue/products/${product.id}/price-plans`, { body: { ...base, type: 'graduated', tiers } });
    expect(r.status).toBe(201);
    expect(r.body.tiers).toHaveLength(3);
  });
});

describe('invalid price plans: 422 naming the field, nothing written', () => {
  const cases: Array<[string, Record<string, unknown>, string[], RegExp]> = [
    ['upTo not increasing', { type: 'graduated', tiers: [{ upTo: 10, unitAmount: 1 }, { upTo: 10, unitAmount: 1 }, { upTo: null, unitAmount: 1 }] }, ['tiers[1].upTo'], /greater than tiers\[0\]\.upTo \(10\)/],
    ['upTo decreasing', { type: 'volume', tiers: [{ upTo: 100, unitAmount: 1 }, { upTo: 50, unitAmount: 1 }, { upTo: null, unitAmount: 1 }] }, ['tiers[1].upTo'], /strictly increasing/],
    ['null upTo not last', { type: 'graduated', tiers: [{ upTo: null, unitAmount: 1 }, { upTo: 10, unitAmount: 1 }] }, ['tiers[0].upTo', 'tiers[1].upTo'], /last tier only/],
    ['no null on the last tier', { type: 'volume', tiers: [{ upTo: 10, unitAmount: 1 }, { upTo: 20, unitAmount: 1 }] }, ['tiers[1].upTo'], /must be null on the last tier/],
    ['tiers with a price', { type: 'graduated', price: { amount: 1 }, tiers: [{ upTo: null, unitAmount: 1 }] }, ['price'], /not taken by graduated/],
    ['graduated with freeUnits', { type: 'graduated', freeUnits: 10, tiers: [{ upTo: null, unitAmount: 1 }] }, ['freeUnits'], /must be 0 for graduated.*unitAmount 0/],
    ['flat_fee with freeUnits', { type: 'flat_fee', price: { amount: 10 }, freeUnits: 3 }, ['freeUnits'], /must be 0 for flat_fee.*only per_unit and package plans take free units/],
    ['graduated without tiers', { type: 'graduated' }, ['tiers'], /required for graduated/],
    ['empty tiers', { type: 'volume', tiers: [] }, ['tiers'], /at least 1 tier/],
    ['tiers on flat_fee', { type: 'flat_fee', price: { amount: 1 }, tiers: [{ upTo: null, unitAmount: 1 }] }, ['tiers'], /graduated and volume plans only/],
    ['flat_fee without price', { type: 'flat_fee' }, ['price'], /required for flat_fee/],
    ['package without packageSize', { type: 'package', price: { amount: 5 } }, ['packageSize'], /required for package/],
    ['package without price', { type: 'package', packageSize: 10 }, ['price'], /required for package/],
    ['packageSize on flat_fee', { type: 'flat_fee', price: { amount: 5 }, packageSize: 10 }, ['packageSize'], /package plans only/],
    ['packageSize 0', { type: 'package', price: { amount: 5 }, packageSize: 0 }, ['packageSize'], /1 or more/],
    ['11 fractional digits on a tier unitAmount', { type: 'volume', tiers: [{ upTo: null, unitAmount: 0.01234567891 }] }, ['tiers[0].unitAmount'], /at most 10 fractional digits/],
    ['3 fractional digits on a EUR flat fee', { type: 'flat_fee', price: { amount: 12.345 } }, ['price.amount'], /at most 2 fractional digits for EUR/],
    ['3 fractional digits on a EUR package price', { type: 'package', price: { amount: 0.005 }, packageSize: 10 }, ['price.amount'], /at most 2 fractional digits for EUR/],
    ['3 fractional digits on a tier flatAmount', { type: 'graduated', tiers: [{ upTo: null, unitAmount: 1, flatAmount: 0.001 }] }, ['tiers[0].flatAmount'], /at most 2 fractional digits for EUR/],
    ['a negative unitAmount', { type: 'graduated', tiers: [{ upTo: null, unitAmount: -1 }] }, ['tiers[0].unitAmount'], /0 or more/],
    ['upTo 0', { type: 'graduated', tiers: [{ upTo: 0, unitAmount: 1 }, { upTo: null, unitAmount: 1 }] }, ['tiers[0].upTo'], /1 or more/],
    ['a fractional upTo', { type: 'graduated', tiers: [{ upTo: 1.5, unitAmount: 1 }, { upTo: null, unitAmount: 1 }] }, ['tiers[0].upTo'], /./],
  ];

  it.each(cases)('%s', async (_name, input, fields, message) => {
    const before = (await ok(env.mcp, 'list_price_plans', { id: product.id, limit: 100 })).meta;
    const p = await fails(env.mcp, 'create_price_plan', { id: product.id, ...base, ...input }, 422);
    expect(paths(p)).toEqual(fields);
    expect(JSON.stringify(p.violations)).toMatch(message);
    const rest = await env.http('POST', `/catalogue/products/${product.id}/price-plans`, { body: { ...base, ...input } });
    expect(rest.status).toBe(422);
    expect(paths(rest.body)).toEqual(fields);
    expect((await ok(env.mcp, 'list_price_plans', { id: product.id, limit: 100 })).meta).toEqual(before);
  });

  it('11 fractional digits on a per_unit price names price.amount and the 10 allowed', async () => {
    const p = await fails(env.mcp, 'create_price_plan', { id: metered.id, ...base, type: 'per_unit', price: { amount: 0.01234567891 } }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'price.amount', message: expect.stringMatching(/at most 10 fractional digits \(got 11/) })]);
  });
});

describe('price plans billing usage: in arrears, never prorated', () => {
  const perUnit = { ...base, type: 'per_unit', price: { amount: 0.01 } };

  it('store and show payInAdvance false for a plan billing usage, true by default for one billing a quantity', async () => {
    const usage = await ok(env.mcp, 'create_price_plan', { id: metered.id, ...perUnit });
    expect(usage).toMatchObject({ payInAdvance: false, proRata: false });
    expect(await ok(env.mcp, 'get_price_plan', { id: usage.id })).toMatchObject({ payInAdvance: false, proRata: false });
    const meteredPackage = await ok(env.mcp, 'create_price_plan', { id: metered.id, ...base, type: 'package', price: { amount: 5 }, packageSize: 100 });
    expect(meteredPackage.payInAdvance).toBe(false);
    const seatsPackage = await ok(env.mcp, 'create_price_plan', { id: product.id, ...base, type: 'package', price: { amount: 5 }, packageSize: 100 });
    expect(seatsPackage.payInAdvance).toBe(true);
    const flat = await ok(env.mcp, 'create_price_plan', { id: metered.id, ...base, type: 'flat_fee', price: { amount: 5 }, proRata: true });
    expect(flat).toMatchObject({ payInAdvance: true, proRata: true });
  });

  it('refuse payInAdvance or proRata true on a plan billing usage, at their fields, on create and in an order', async () => {
    const p = await fails(env.mcp, 'create_price_plan', { id: metered.id, ...perUnit, payInAdvance: true, proRata: true }, 422);
    expect(p.violations).toEqual([
      expect.objectContaining({ propertyPath: 'payInAdvance', code: 'usage_in_arrears', message: expect.stringMatching(/billed at the end of each interval/) }),
      expect.objectContaining({ propertyPath: 'proRata', code: 'usage_not_prorated' }),
    ]);
    const graduated = await fails(env.mcp, 'create_price_plan', { id: metered.id, ...base, type: 'graduated', tiers, payInAdvance: true }, 422);
    expect(paths(graduated)).toEqual(['payInAdvance']);
    const s = await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }], activate: true });
    const order = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: metered.id, customPricePlan: { ...perUnit, proRata: true } }] }, 422);
    expect(paths(order)).toEqual(['products[0].customPricePlan.proRata']);
    const custom = await ok(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: metered.id, customPricePlan: perUnit }] });
    const item = custom.items.find((i: any) => i.pricePlan.price?.amount === 0.01 && i.pricePlan.type === 'per_unit' && i.pricePlan.id !== f.meteredPricePlan.id);
    expect((await ok(env.mcp, 'get_price_plan', { id: item.pricePlan.id })).payInAdvance).toBe(false);
  });

  it('refuse a measurement or usage metric on a product whose package, graduated or volume plans say payInAdvance or proRata', async () => {
    const p = await ok(env.mcp, 'create_product', { name: 'Packs' });
    const pack = await ok(env.mcp, 'create_price_plan', { id: p.id, ...base, type: 'package', price: { amount: 5 }, packageSize: 10 });
    const refused = await fails(env.mcp, 'update_product', { id: p.id, usageMetric: { eventName: 'packs', aggregation: 'count' } }, 422);
    expect(refused.violations).toEqual([expect.objectContaining({ propertyPath: 'usageMetric', code: 'price_plans_in_advance', message: expect.stringContaining(pack.id) })]);
    expect((await ok(env.mcp, 'get_product', { id: p.id })).usageMetric).toBeNull();
    const q = await ok(env.mcp, 'create_product', { name: 'Packs in arrears' });
    await ok(env.mcp, 'create_price_plan', { id: q.id, ...base, type: 'package', price: { amount: 5 }, packageSize: 10, payInAdvance: false });
    expect((await ok(env.mcp, 'update_product', { id: q.id, usageMetric: { eventName: 'packs', aggregation: 'count' } })).usageMetric.eventName).toBe('packs');
  });
});

describe('price history', () => {
  it('get_price_plan shows each price with the instant it applies from, newest first; price.updatedAt is the last price change', async () => {
    env.setNow('2026-01-01T00:00:00Z');
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...base, type: 'flat_fee', price: { amount: 10 } });
    env.setNow('2026-02-01T00:00:00Z');
    await ok(env.mcp, 'update_price_plan', { id: pp.id, price: { amount: 12 } });
    env.setNow('2026-03-01T00:00:00Z');
    await ok(env.mcp, 'update_price_plan', { id: pp.id, price: { amount: 15 } });
    env.setNow('2026-03-10T00:00:00Z');
    const renamed = await ok(env.mcp, 'update_price_plan', { id: pp.id, internalName: 'renamed', status: 'inactive' });
    expect(renamed.updatedAt).toBe('2026-03-10T00:00:00.000Z');
    const got = await ok(env.mcp, 'get_price_plan', { id: pp.id });
    expect(got.price).toMatchObject({ amount: 15, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-03-01T00:00:00.000Z' });
    expect(got.priceHistory).toEqual([
      { amount: 15, validFrom: '2026-03-01T00:00:00.000Z' },
      { amount: 12, validFrom: '2026-02-01T00:00:00.000Z' },
      { amount: 10, validFrom: '2026-01-01T00:00:00.000Z' },
    ]);
    expect((await env.http('GET', `/catalogue/price-plans/${pp.id}`)).body.priceHistory).toEqual(got.priceHistory);
    const row = (await ok(env.mcp, 'list_price_plans', { id: product.id, limit: 100 })).data.find((r: any) => r.id === pp.id);
    expect(row).not.toHaveProperty('priceHistory');
    env.setNow('2026-03-20T12:00:00Z');
  });

  it('keeps the history bounded to the 20 newest prices', async () => {
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...base, type: 'flat_fee', price: { amount: 1 } });
    for (let i = 2; i <= 25; i++) {
      env.setNow(new Date(Date.parse('2026-04-01T00:00:00Z') + i * 60_000));
      await ok(env.mcp, 'update_price_plan', { id: pp.id, price: { amount: i } });
    }
    const { priceHistory } = await ok(env.mcp, 'get_price_plan', { id: pp.id });
    expect(priceHistory).toHaveLength(20);
    expect(priceHistory.map((h: any) => h.amount)).toEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    env.setNow('2026-03-20T12:00:00Z');
  });
});

describe("order_subscription_products' customPricePlan", () => {
  const subscribe = () =>
    ok(env.mcp, 'create_subscription', {
      customer: f.customer.id,
      plan: f.plan.id,
      periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }],
      startDate: '2026-03-01T00:00:00Z',
      activate: true,
    });

  it('takes graduated, volume and package plans and a 0.002 EUR unit price', async () => {
    const s = await subscribe();
    const ordered = await ok(env.mcp, 'order_subscription_products', {
      id: s.id,
      products: [
        { product: product.id, customPricePlan: { ...base, type: 'graduated', tiers } },
        { product: product.id, customPricePlan: { ...base, type: 'volume', tiers } },
        { product: product.id, quantity: 250, customPricePlan: { ...base, type: 'package', price: { amount: 5 }, packageSize: 100 } },
        { product: metered.id, customPricePlan: { ...base, type: 'per_unit', price: { amount: 0.002 }, freeUnits: 1000 } },
      ],
    });
    const items = ordered.items.filter((i: any) => i.pricePlan.type !== 'flat_fee' && i.pricePlan.price?.amount !== 0.01);
    expect(items.map((i: any) => [i.pricePlan.type, i.pricePlan.price])).toEqual(
      expect.arrayContaining([
        ['graduated', null],
        ['volume', null],
        ['package', { amount: 5 }],
        ['per_unit', { amount: 0.002 }],
      ]),
    );
    const graduated = items.find((i: any) => i.pricePlan.type === 'graduated');
    expect((await ok(env.mcp, 'get_price_plan', { id: graduated.pricePlan.id })).tiers).toHaveLength(3);
  });

  it('rejects each bad customPricePlan at its path and writes nothing', async () => {
    const s = await subscribe();
    const before = (await ok(env.mcp, 'get_subscription', { id: s.id })).items.length;
    const p = await fails(
      env.mcp,
      'order_subscription_products',
      {
        id: s.id,
        products: [
          { product: product.id, customPricePlan: { ...base, type: 'graduated', tiers: [{ upTo: 10, unitAmount: 1 }, { upTo: 5, unitAmount: 1 }, { upTo: null, unitAmount: 1 }] } },
          { product: product.id, customPricePlan: { ...base, type: 'flat_fee', price: { amount: 1.005 } } },
          { product: product.id, customPricePlan: { ...base, type: 'package', price: { amount: 1 } } },
          { product: metered.id, customPricePlan: { ...base, type: 'per_unit', price: { amount: 0.01234567891 } } },
          { product: product.id, customPricePlan: { ...base, type: 'volume', freeUnits: 3, tiers: [{ upTo: null, unitAmount: 1 }] } },
        ],
      },
      422,
    );
    expect(paths(p)).toEqual([
      'products[0].customPricePlan.tiers[1].upTo',
      'products[1].customPricePlan.price.amount',
      'products[2].customPricePlan.packageSize',
      'products[3].customPricePlan.price.amount',
      'products[4].customPricePlan.freeUnits',
    ]);
    expect(JSON.stringify(p.violations)).toMatch(/products\[3\]\.customPricePlan\.price\.amount is a unit price and may have at most 10 fractional digits/);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items.length).toBe(before);
  });
});

describe('migration 11', () => {
  it('keeps every stored price plan and what refers to it: prices become exact decimal texts of major units, same meaning', async () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
    for (const m of MIGRATIONS.filter((m) => m.version <= 10)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '2026-01-01T00:00:00Z');
    }
    const at = '2026-01-01T00:00:00Z';
    db.prepare('INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)').run('o', 'Org', at);
    db.prepare(
      `INSERT INTO products (id, organisation_id, type, name, invoice_visibility, custom_fields, created_at, updated_at)
       VALUES ('p', 'o', 'product', 'P', 'always', '{}', ?, ?)`,
    ).run(at, at);
    // As stored at version 10: integers of each currency's minor unit.
    const plans: Array<[string, string, string, number]> = [
      ['eur', 'flat_fee', 'EUR', 4990],
      ['eur-round', 'flat_fee', 'EUR', 5000],
      ['eur-zero', 'flat_fee', 'EUR', 0],
      ['cent', 'per_unit', 'EUR', 1],
      ['jpy', 'flat_fee', 'JPY', 4900],
      ['kwd', 'flat_fee', 'KWD', 12340],
      ['kwd-fils', 'per_unit', 'KWD', 5],
      ['clf', 'flat_fee', 'CLF', 12345],
    ];
    for (const [id, type, currency, minor] of plans) {
      db.prepare(
        `INSERT INTO price_plans (id, organisation_id, product_id, type, currency_code, price_cents, status, apply_trial, pay_in_advance,
           pro_rata, free_units, billing_interval, show_price_per_interval, custom, created_at, updated_at)
         VALUES (?, 'o', 'p', ?, ?, ?, 'active', 0, 1, 0, 7, '1M', '1M', 0, ?, ?)`,
      ).run(id, type, currency, minor, at, at);
    }
    db.prepare('INSERT INTO plan_families (id, organisation_id, created_at, updated_at) VALUES (?, ?, ?, ?)').run('fam', 'o', at, at);
    db.prepare(
      `INSERT INTO plans (id, organisation_id, family_id, code, name, status, allow_checkout, change_behaviour, change_apply_behaviour, created_at, updated_at)
       VALUES ('plan', 'o', 'fam', 'pro', 'Pro', 'active', 0, 'not_changeable', 'end_of_period', ?, ?)`,
    ).run(at, at);
    db.prepare(
      `INSERT INTO plan_items (id, organisation_id, plan_id, kind, position, product_id, price_plan_id, quantity_e6) VALUES ('i', 'o', 'plan', 'charge', 0, 'p', 'eur', 1000000)`,
    ).run();

    migrate(db);

    expect(db.pragma('foreign_key_check')).toEqual([]);
    const stored = db.prepare('SELECT id, type, price, tiers, package_size AS packageSize, free_units AS freeUnits FROM price_plans ORDER BY rowid').all();
    expect(stored).toEqual([
      { id: 'eur', type: 'flat_fee', price: '49.9', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'eur-round', type: 'flat_fee', price: '50', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'eur-zero', type: 'flat_fee', price: '0', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'cent', type: 'per_unit', price: '0.01', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'jpy', type: 'flat_fee', price: '4900', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'kwd', type: 'flat_fee', price: '12.34', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'kwd-fils', type: 'per_unit', price: '0.005', tiers: null, packageSize: null, freeUnits: 7 },
      { id: 'clf', type: 'flat_fee', price: '1.2345', tiers: null, packageSize: null, freeUnits: 7 },
    ]);
    const repo = new SqlProductRepo(new SqliteSql(db));
    expect((await repo.getPricePlan('o', 'eur'))).toMatchObject({ price: { amount: 49.9 }, tiers: null, packageSize: null, inUse: true });
    expect((await repo.getPricePlan('o', 'jpy'))?.price?.amount).toBe(4900);
    expect(() => db.prepare("UPDATE price_plans SET type = 'tiered' WHERE id = 'eur'").run()).toThrow(/CHECK/);
    db.prepare("UPDATE price_plans SET type = 'volume', price = NULL WHERE id = 'eur-zero'").run();
    expect(() => db.prepare("UPDATE price_plans SET package_size = 0 WHERE id = 'eur'").run()).toThrow(/CHECK/);
    db.close();
  });
});
