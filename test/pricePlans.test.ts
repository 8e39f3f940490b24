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
      expect(await ok(env.mcp, 'get_price_plan', { id: pp.id })).toEqual(pp);
      expect((await env.http('GET', `/catalogue/price-plans/${pp.id}`)).body).toEqual(pp);
      const row = (await ok(env.mcp, 'list_price_plans', { id: product.id })).data.find((r: any) => r.id === pp.id);
      expect(row).toMatchObject({ type, price: null });
    }
  });

  it('package: price and packageSize, with free units', async () => {
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, ...base, type: 'package', price: { amount: 5 }, packageSize: 100, freeUnits: 50 });
    expect(pp).toMatchObject({ type: 'package', price: { amount: 5 }, packageSize: 100, freeUnits: 50, tiers: null });
    expect(await ok(env.mcp, 'get_price_plan', { id: pp.id })).toEqual(pp);
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
