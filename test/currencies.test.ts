import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney, minorDigits } from '../src/values/money.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { migrate } from '../src/store/sqlite.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

/** Money per currency (CONTRACT section 8): every amount counts in the currency's ISO 4217 minor unit. */

let env: TestEnv;
let taxGroup: any;
const periods = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-15T10:00:00Z');
  taxGroup = await ok(env.mcp, 'create_tax_group', {
    internalDescription: 'Standard',
    taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }],
  });
});
afterAll(() => env.close());

/** A customer billed in `currencyCode` with a German invoice address (19 % tax). */
async function customerIn(currencyCode: string) {
  const customer = await ok(env.mcp, 'create_customer', { companyName: `${currencyCode} Ltd`, currencyCode });
  await ok(env.mcp, 'create_invoice_address', { id: customer.id, street: 'Hauptstraße', houseNumber: '1', zip: '10117', city: 'Berlin', countryCode: 'DE' });
  return customer;
}

describe('the minor unit of each currency comes from ISO 4217', () => {
  it.each([
    ['JPY', 0],
    ['KWD', 3],
    ['EUR', 2],
    ['USD', 2],
    ['CLF', 4],
    // CLDR (Intl) shows IQD and IDR without decimals; ISO 4217 has 3 and 2
    ['IQD', 3],
    ['IDR', 2],
  ])('%s has %i digits', (code, digits) => {
    expect(minorDigits(code)).toBe(digits);
  });
});

describe('ISO 4217 codes that are not money', () => {
  const product = () => ok(env.mcp, 'create_product', { name: 'Gold bar' });

  it.each(['XXX', 'XAU', 'XAG', 'XPT', 'XPD', 'XTS', 'XDR', 'XBA', 'XBB', 'XBC', 'XBD', 'XSU', 'XUA'])(
    '%s is refused wherever a currency is taken, naming what it is',
    async (code) => {
      const plan = await fails(env.mcp, 'create_price_plan', { id: (await product()).id, type: 'flat_fee', currencyCode: code, price: { amount: 1 }, billingInterval: '1M' }, 422);
      expect(plan.violations).toEqual([expect.objectContaining({ propertyPath: 'currencyCode', message: expect.stringMatching(new RegExp(`^currencyCode must be a currency one can bill in: ${code} is .+, not money$`)) })]);
      expect(paths(await fails(env.mcp, 'create_customer', { lastName: 'Metals', currencyCode: code }, 422))).toEqual(['currencyCode']);
      const coupon = { code: `OFF-${code}`, name: 'Off', type: 'fixed_amount', frequency: 'once', fixedAmount: { amount: 1, currency: code } };
      expect(paths(await fails(env.mcp, 'create_coupon', coupon, 422))).toEqual(['fixedAmount.currency']);
    },
  );

  it('XAU names gold; the CFA and CFP francs and the East Caribbean dollar stay currencies', async () => {
    const gold = await fails(env.mcp, 'create_customer', { lastName: 'Gold', currencyCode: 'XAU' }, 422);
    expect(gold.violations[0].message).toBe('currencyCode must be a currency one can bill in: XAU is gold, not money');
    for (const code of ['XOF', 'XAF', 'XPF', 'XCD']) expect((await ok(env.mcp, 'create_customer', { lastName: code, currencyCode: code })).currencyCode).toBe(code);
  });
});

describe('price plans: price.amount has at most the currency minor-unit digits', () => {
  let product: any;
  beforeAll(async () => {
    product = await ok(env.mcp, 'create_product', { name: 'Priced per currency' });
  });

  it.each([
    ['JPY', 4900, 49.5, 0],
    ['KWD', 1.234, 1.2345, 3],
    ['EUR', 12.99, 12.999, 2],
    ['USD', 0.01, 0.001, 2],
  ])('%s: %s is taken, %s is refused naming price.amount and %i digits', async (currencyCode, good, bad, digits) => {
    const base = { id: product.id, type: 'flat_fee', currencyCode, billingInterval: '1M' };
    const created = await ok(env.mcp, 'create_price_plan', { ...base, price: { amount: good } });
    expect(created.price.amount).toBe(good);
    expect((await ok(env.mcp, 'get_price_plan', { id: created.id })).price.amount).toBe(good);

    const refused = await fails(env.mcp, 'create_price_plan', { ...base, price: { amount: bad } }, 422);
    expect(paths(refused)).toEqual(['price.amount']);
    expect(refused.violations[0].message).toContain(`price.amount may have at most ${digits} fractional digits for ${currencyCode}`);
  });

  it('refuses an amount beyond 15 digits of minor units, per currency', async () => {
    const base = { id: product.id, type: 'flat_fee', billingInterval: '1M' };
    await ok(env.mcp, 'create_price_plan', { ...base, currencyCode: 'JPY', price: { amount: 999_999_999_999_999 } });
    expect(paths(await fails(env.mcp, 'create_price_plan', { ...base, currencyCode: 'KWD', price: { amount: 1_000_000_000_000 } }, 422))).toEqual([
      'price.amount',
    ]);
    await ok(env.mcp, 'create_price_plan', { ...base, currencyCode: 'KWD', price: { amount: 999_999_999_999.999 } });
  });

  it('checks a custom price plan of order_subscription_products in the subscription currency', async () => {
    const customer = await customerIn('JPY');
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'JPY', price: { amount: 1000 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'jpy-custom', name: 'JPY custom', charges: [{ product: product.id, pricePlan: pp.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods });
    const customPricePlan = { type: 'flat_fee', currencyCode: 'JPY', price: { amount: 10.5 }, billingInterval: '1M' };
    const refused = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: product.id, customPricePlan }] }, 422);
    expect(paths(refused)).toEqual(['products[0].customPricePlan.price.amount']);
    expect(refused.violations[0].message).toContain('may have at most 0 fractional digits for JPY');
  });
});

describe('fixed discounts: fixedAmount.amount has at most the currency minor-unit digits', () => {
  it.each([
    ['JPY', 500, 0.5, 0],
    ['KWD', 0.125, 0.1255, 3],
    ['EUR', 1.5, 1.005, 2],
  ])('%s: coupon of %s taken, %s refused', async (currency, good, bad, digits) => {
    const base = { name: 'Off', type: 'fixed_amount', frequency: 'once' };
    const coupon = await ok(env.mcp, 'create_coupon', { ...base, code: `OFF-${currency}`, fixedAmount: { amount: good, currency } });
    expect(coupon.fixedAmount).toEqual({ amount: good, currency });
    const refused = await fails(env.mcp, 'create_coupon', { ...base, code: `BAD-${currency}`, fixedAmount: { amount: bad, currency } }, 422);
    expect(paths(refused)).toEqual(['fixedAmount.amount']);
    expect(refused.violations[0].message).toContain(`fixedAmount.amount may have at most ${digits} fractional digits for ${currency}`);
  });

  it('an inline discount of an order in JPY is checked against yen', async () => {
    const customer = await customerIn('JPY');
    const product = await ok(env.mcp, 'create_product', { name: 'Inline discount' });
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'JPY', price: { amount: 1000 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'jpy-inline', name: 'JPY inline', charges: [{ product: product.id, pricePlan: pp.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods });
    const discount = { type: 'fixed_amount', fixedAmount: { amount: 99.9, currency: 'JPY' } };
    const refused = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: product.id, pricePlan: pp.id, discount }] }, 422);
    expect(paths(refused)).toEqual(['products[0].discount.fixedAmount.amount']);
  });
});

describe('a JPY customer: estimate, invoice and payment plan in yen', () => {
  it('the estimated invoice counts and prints yen: ¥4,900 net, 19 % tax rounded half-up to the yen', async () => {
    const customer = await customerIn('JPY');
    const product = await ok(env.mcp, 'create_product', { name: 'Yen plan', taxGroup: taxGroup.id });
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'JPY', price: { amount: 4900 }, billingInterval: '1M' });
    const coupon = await ok(env.mcp, 'create_coupon', { code: 'YEN-OFF', name: 'Yen off', type: 'fixed_amount', frequency: 'once', fixedAmount: { amount: 400, currency: 'JPY' } });
    const plan = await ok(env.mcp, 'create_plan', { code: 'yen', name: 'Yen', charges: [{ product: product.id, pricePlan: pp.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    await ok(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: product.id, pricePlan: pp.id, customName: 'Second', discount: { coupon: coupon.id } }] });

    const e = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    expect(e.currencyCode).toBe('JPY');
    expect(e.lines.map((l: any) => [l.description, l.unitAmountDecimal, l.netAmount, l.taxRate])).toEqual([
      ['Yen plan (2026-01-15 to 2026-02-14)', '4900', 4900, 19],
      ['Second (2026-01-15 to 2026-02-14)', '4900', 4900, 19],
      ['Discount coupon YEN-OFF', '-400', -400, 19],
    ]);
    // 19 % of ¥9,400 = ¥1,786
    expect(e).toMatchObject({ netAmount: 9400, taxAmount: 1786, grossAmount: 11186, taxes: [{ rate: 19, netAmount: 9400, taxAmount: 1786 }] });
    expect(e.estimate).toMatch(/Yen plan .* 1 × ¥4,900 +¥4,900\n/);
    expect(e.estimate).toMatch(/Discount coupon YEN-OFF +-¥400\n/);
    expect(e.estimate).toMatch(/Tax 19% on ¥9,400 +¥1,786\n/);
    expect(e.estimate).toMatch(/Gross \(JPY\) +¥11,186$/);
    expect(e.estimate).not.toMatch(/\d\.\d\d/);
  });

  it('an invoice of yen is split into installments of whole yen, the remainder one yen each on the last ones', async () => {
    const customer = await customerIn('JPY');
    // 3 x ¥3,333 = ¥9,999 net; 7.7 % tax = ¥769.923 → ¥770; gross ¥10,769
    const invoice = await ok(env.mcp, 'create_invoice', {
      customer: customer.id,
      lines: [{ description: 'Consulting', quantity: 3, unitAmount: 3333, taxRate: 7.7 }],
    });
    expect(invoice).toMatchObject({ currencyCode: 'JPY', netAmount: 9999, taxAmount: 770, grossAmount: 10769, amountDue: 10769 });
    expect(invoice.lines[0]).toMatchObject({ unitAmount: 3333, netAmount: 9999, taxRate: 7.7 });
    expect(invoice.taxes).toEqual([{ rate: 7.7, netAmount: 9999, taxAmount: 770 }]);

    const uneven = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2026-02-01', amount: 10000 }] }, 422);
    expect(uneven.detail).toContain('must sum to exactly 10769 (¥10,769)');
    expect((await fails(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 20000 }, 422)).detail).toContain('10769 minor units (¥10,769) still due');
    expect((await fails(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 20000 }, 422)).detail).toContain('(¥10,769)');
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 4, firstDueAt: '2026-02-01', interval: '1M' });
    // ¥10,769 / 4 = ¥2,692 remainder ¥1 ... 10769 = 4 x 2692 + 1
    expect(plan.installments.map((i: any) => i.amount)).toEqual([2692, 2692, 2692, 2693]);
    expect(plan.totalAmount).toBe(10769);

    const other = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: [{ description: 'Small', quantity: 1, unitAmount: 11 }] });
    const split = await ok(env.mcp, 'create_payment_plan', { invoice: other.id, installmentCount: 4, firstDueAt: '2026-02-01', interval: '1W' });
    // ¥11 in 4: 2, 3, 3, 3 (never 2, 2, 2, 5)
    expect(split.installments.map((i: any) => i.amount)).toEqual([2, 3, 3, 3]);
  });
});

describe('a KWD customer: fils throughout', () => {
  it('an estimated line of a 1.234 KWD price is 1234 fils, the same line as on a manual invoice, printed with 3 digits', async () => {
    const customer = await customerIn('KWD');
    const product = await ok(env.mcp, 'create_product', { name: 'Dinar plan', taxGroup: taxGroup.id });
    const pp = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'KWD', price: { amount: 1.234 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'kwd', name: 'KWD', charges: [{ product: product.id, pricePlan: pp.id, quantity: 2 }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    // 2 x 1.234 = 2.468 KWD; 19 % = 0.46892 → 0.469
    expect(e.lines).toEqual([expect.objectContaining({ quantity: '2', unitAmountDecimal: '1234', netAmount: 2468, taxRate: 19 })]);
    expect(e).toMatchObject({ currencyCode: 'KWD', netAmount: 2468, taxAmount: 469, grossAmount: 2937 });
    expect(e.estimate).toMatch(/2 × KWD 1\.234 +KWD 2\.468\n/);
    expect(e.estimate).toMatch(/Gross \(KWD\) +KWD 2\.937$/);

    const invoice = await ok(env.mcp, 'create_invoice', {
      customer: customer.id,
      lines: [{ description: 'Dinar plan', quantity: 2, unitAmount: Number(e.lines[0].unitAmountDecimal), taxRate: 19 }],
    });
    expect(invoice).toMatchObject({ currencyCode: 'KWD', netAmount: e.netAmount, taxAmount: e.taxAmount, grossAmount: e.grossAmount });
  });
});

describe('formatMoney', () => {
  it.each([
    [4900, 'JPY', '¥4,900'],
    [-400, 'JPY', '-¥400'],
    [490000, 'EUR', '€4,900.00'],
    [5, 'EUR', '€0.05'],
    [123456789, 'USD', '$1,234,567.89'],
    [1234, 'KWD', 'KWD 1.234'],
    [5, 'KWD', 'KWD 0.005'],
    [12345, 'CLF', 'CLF 1.2345'],
  ])('%i %s is %s', (minor, currency, text) => {
    expect(formatMoney(minor, currency)).toBe(text);
  });
});

describe('migration 9: stored decimal amounts move to the minor unit of their currency', () => {
  it('rescales JPY and KWD price plans and coupons, and leaves EUR alone', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
    for (const m of MIGRATIONS.filter((m) => m.version < 9)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '2026-01-01T00:00:00Z');
    }
    const at = '2026-01-01T00:00:00Z';
    db.prepare('INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)').run('o', 'Org', at);
    db.prepare(
      `INSERT INTO products (id, organisation_id, type, name, invoice_visibility, custom_fields, created_at, updated_at)
       VALUES ('p', 'o', 'product', 'P', 'always', '{}', ?, ?)`,
    ).run(at, at);
    // As stored before: hundredths of the major unit, whatever the currency.
    const plans: Array<[string, string, number]> = [
      ['eur', 'EUR', 4990],
      ['jpy', 'JPY', 490000],
      ['jpy-half', 'JPY', 4950],
      ['kwd', 'KWD', 1234],
    ];
    for (const [id, currency, cents] of plans) {
      db.prepare(
        `INSERT INTO price_plans (id, organisation_id, product_id, type, currency_code, price_cents, status, apply_trial, pay_in_advance,
           pro_rata, free_units, billing_interval, show_price_per_interval, custom, created_at, updated_at)
         VALUES (?, 'o', 'p', 'flat_fee', ?, ?, 'active', 0, 1, 0, 0, '1M', '1M', 0, ?, ?)`,
      ).run(id, currency, cents, at, at);
    }
    const coupons: Array<[string, string, number]> = [
      ['c-eur', 'EUR', 1000],
      ['c-jpy', 'JPY', 50000],
      ['c-jpy-tiny', 'JPY', 40],
      ['c-kwd', 'KWD', 125],
    ];
    for (const [id, currency, cents] of coupons) {
      db.prepare(
        `INSERT INTO coupons (id, organisation_id, code, name, type, frequency, fixed_amount_cents, fixed_amount_currency, is_enabled, created_at, updated_at)
         VALUES (?, 'o', ?, 'C', 'fixed_amount', 'once', ?, ?, 1, ?, ?)`,
      ).run(id, id, cents, currency, at, at);
    }

    migrate(db);

    // Migration 11 then keeps prices as exact decimal texts of major units: 4990 cents and 490000 JPY hundredths read back as 49.9 and 4900.
    const price = (id: string) => (db.prepare('SELECT price AS v FROM price_plans WHERE id = ?').get(id) as { v: string }).v;
    const off = (id: string) => (db.prepare('SELECT fixed_amount_cents AS v, fixed_amount_currency AS c FROM coupons WHERE id = ?').get(id) as { v: number; c: string });
    expect(['eur', 'jpy', 'jpy-half', 'kwd'].map(price)).toEqual(['49.9', '4900', '50', '12.34']);
    expect(['c-eur', 'c-jpy', 'c-jpy-tiny', 'c-kwd'].map((id) => off(id).v)).toEqual([1000, 500, 1, 1250]);
    db.close();
  });
});
