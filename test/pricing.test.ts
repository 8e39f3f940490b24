import { describe, expect, it } from 'vitest';
import { chargeCapProblem, decimalOfPrice, priceCharge, unitPriceProblem, type PricedLine } from '../src/domain/pricing.js';
import type { PricePlan } from '../src/schemas/catalogue.js';

/**
 * Pricing models (CONTRACT section 8, issue 11), every figure computed by hand: amounts of a plan in
 * major units, a line's unit price in minor units, its net quantity x unit x fraction rounded once,
 * half-up.
 */
const at = '2026-01-01T00:00:00.000Z';
type Tier = { upTo: number | null; unitAmount: number; flatAmount?: number | null };
function plan(type: PricePlan['type'], currencyCode: string, extra: { amount?: number; tiers?: Tier[]; packageSize?: number; freeUnits?: number }): PricePlan {
  return {
    id: 'pp',
    product: 'p',
    type,
    currencyCode,
    price: extra.amount === undefined ? null : { amount: extra.amount, createdAt: at, updatedAt: at, tenantId: 'o' },
    tiers: extra.tiers ? extra.tiers.map((t) => ({ upTo: t.upTo, unitAmount: t.unitAmount, flatAmount: t.flatAmount ?? null })) : null,
    packageSize: extra.packageSize ?? null,
    internalName: null,
    status: 'active',
    applyTrial: false,
    payInAdvance: true,
    proRata: false,
    freeUnits: extra.freeUnits ?? 0,
    billingInterval: '1M',
    showPricePerInterval: '1M',
    custom: false,
    charge: null,
    productSetOption: null,
    inUse: false,
    createdAt: at,
    updatedAt: at,
  };
}

/** q in micro-units from a decimal text ("2150.5" → 2150500000). */
const q = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
};
const l = (quantity: string, unitAmountDecimal: string, netAmount: number, label: string | null = null): PricedLine => ({
  quantity,
  unitAmountDecimal,
  netAmount,
  label,
});
const total = (lines: PricedLine[]) => lines.reduce((s, x) => s + x.netAmount, 0);

describe('flat_fee and per_unit', () => {
  it.each([
    // plan, q, line
    ['per_unit 0.002 EUR, 1,000 free, 2,150.5 units: 1150.5 x 0.2 ct = 230.1 → 230', plan('per_unit', 'EUR', { amount: 0.002, freeUnits: 1000 }), '2150.5', l('1150.5', '0.2', 230)],
    ['per_unit 0.002 EUR below the free units', plan('per_unit', 'EUR', { amount: 0.002, freeUnits: 1000 }), '999.999999', l('0', '0.2', 0)],
    ['per_unit 0.00015 USD, 1,000,000 units = $150', plan('per_unit', 'USD', { amount: 0.00015 }), '1000000', l('1000000', '0.015', 15000)],
    ['per_unit 0.00015 USD, 100 units: 1.5 ct → 2 (half up)', plan('per_unit', 'USD', { amount: 0.00015 }), '100', l('100', '0.015', 2)],
    ['per_unit 0.00015 USD, 3,333 units: 49.995 ct → 50', plan('per_unit', 'USD', { amount: 0.00015 }), '3333', l('3333', '0.015', 50)],
    ['per_unit 0.00015 USD, 33 units: 0.495 ct → 0', plan('per_unit', 'USD', { amount: 0.00015 }), '33', l('33', '0.015', 0)],
    ['per_unit 0.5 JPY, 3 units: 1.5 yen → 2', plan('per_unit', 'JPY', { amount: 0.5 }), '3', l('3', '0.5', 2)],
    ['flat_fee 4900 JPY', plan('flat_fee', 'JPY', { amount: 4900 }), '1', l('1', '4900', 4900)],
    ['per_unit 0.0125 KWD, 3 units: 37.5 fils → 38', plan('per_unit', 'KWD', { amount: 0.0125 }), '3', l('3', '12.5', 38)],
    ['flat_fee 1.234 KWD x 2', plan('flat_fee', 'KWD', { amount: 1.234 }), '2', l('2', '1234', 2468)],
    ['flat_fee 49.90 EUR x 2.5', plan('flat_fee', 'EUR', { amount: 49.9 }), '2.5', l('2.5', '4990', 12475)],
    ['flat_fee with quantity 0 still answers its line', plan('flat_fee', 'EUR', { amount: 49.9 }), '0', l('0', '4990', 0)],
    ['per_unit 0.005 EUR, 1 unit: 0.5 ct → 1 (half up)', plan('per_unit', 'EUR', { amount: 0.005 }), '1', l('1', '0.5', 1)],
    ['per_unit 0.005 EUR, 3 units: 1.5 ct → 2 (half up)', plan('per_unit', 'EUR', { amount: 0.005 }), '3', l('3', '0.5', 2)],
    ['per_unit 2e-7 EUR (exponent text), 10,000,000 units = 2 EUR', plan('per_unit', 'EUR', { amount: 0.0000002 }), '10000000', l('10000000', '0.00002', 200)],
    [
      'per_unit 0.0000000001 EUR x 999,999,999,999.999999 units: 9999.99999999999999 ct → 10000, exactly',
      plan('per_unit', 'EUR', { amount: 0.0000000001 }),
      '999999999999.999999',
      l('999999999999.999999', '0.00000001', 10000),
    ],
  ])('%s', (_name, p, quantity, expected) => {
    expect(priceCharge(p, q(quantity))).toEqual([expected]);
  });
});

describe('package', () => {
  const p = plan('package', 'EUR', { amount: 5, packageSize: 100, freeUnits: 50 });
  it.each([
    ['0', l('0', '500', 0, '0 packages of 100')],
    ['50', l('0', '500', 0, '0 packages of 100')],
    ['50.000001', l('1', '500', 500, '1 package of 100')],
    ['150', l('1', '500', 500, '1 package of 100')],
    ['151', l('2', '500', 1000, '2 packages of 100')],
    ['350', l('3', '500', 1500, '3 packages of 100')],
    ['350.5', l('4', '500', 2000, '4 packages of 100')],
  ])('q %s, 50 free, packages of 100 at 5 EUR', (quantity, expected) => {
    expect(priceCharge(p, q(quantity))).toEqual([expected]);
  });

  it('exact multiples without free units: 300 units are 3 packages, 301 are 4', () => {
    const exact = plan('package', 'EUR', { amount: 5, packageSize: 100 });
    expect(priceCharge(exact, q('300'))).toEqual([l('3', '500', 1500, '3 packages of 100')]);
    expect(priceCharge(exact, q('301'))).toEqual([l('4', '500', 2000, '4 packages of 100')]);
    expect(priceCharge(plan('package', 'EUR', { amount: 5, packageSize: 1 }), q('2'))).toEqual([l('2', '500', 1000, '2 packages of 1')]);
  });
});

/** 1–10 at 1.00 EUR + 5.00 flat; 11–100 at 0.50 + 10.00 flat; 101+ at 0.10 + 2.50 flat. */
const tiers: Tier[] = [
  { upTo: 10, unitAmount: 1, flatAmount: 5 },
  { upTo: 100, unitAmount: 0.5, flatAmount: 10 },
  { upTo: null, unitAmount: 0.1, flatAmount: 2.5 },
];

describe('graduated', () => {
  const p = plan('graduated', 'EUR', { tiers });

  it('150 units across three tiers, each with its flat amount: 1000 + 500 + 4500 + 1000 + 500 + 250 = 7750', () => {
    const lines = priceCharge(p, q('150'));
    expect(lines).toEqual([
      l('10', '100', 1000, 'units 1–10'),
      l('1', '500', 500, 'tier 1 flat fee'),
      l('90', '50', 4500, 'units 11–100'),
      l('1', '1000', 1000, 'tier 2 flat fee'),
      l('50', '10', 500, 'units 101+'),
      l('1', '250', 250, 'tier 3 flat fee'),
    ]);
    expect(total(lines)).toBe(7750);
  });

  it('upTo is inclusive: 10 units stay in tier 1, 10.5 reach tier 2 with half a unit', () => {
    expect(priceCharge(p, q('10'))).toEqual([l('10', '100', 1000, 'units 1–10'), l('1', '500', 500, 'tier 1 flat fee')]);
    expect(priceCharge(p, q('10.5'))).toEqual([
      l('10', '100', 1000, 'units 1–10'),
      l('1', '500', 500, 'tier 1 flat fee'),
      l('0.5', '50', 25, 'units 11–100'),
      l('1', '1000', 1000, 'tier 2 flat fee'),
    ]);
    expect(total(priceCharge(p, q('100')))).toBe(1000 + 500 + 4500 + 1000);
  });

  it('q = 0 reaches no tier: one line of quantity 0 and net 0, no flat amount (as Stripe)', () => {
    expect(priceCharge(p, 0n)).toEqual([l('0', '100', 0, 'units 1–10')]);
  });

  it('a first tier at unitAmount 0 gives free units; a tier without flatAmount (or 0) has no flat line', () => {
    const free = plan('graduated', 'EUR', { tiers: [{ upTo: 1000, unitAmount: 0 }, { upTo: null, unitAmount: 0.002, flatAmount: 0 }] });
    expect(priceCharge(free, q('2150.5'))).toEqual([l('1000', '0', 0, 'units 1–1000'), l('1150.5', '0.2', 230, 'units 1001+')]);
  });

  it('a single unbounded tier', () => {
    expect(priceCharge(plan('graduated', 'JPY', { tiers: [{ upTo: null, unitAmount: 3 }] }), q('7'))).toEqual([l('7', '3', 21, 'units 1+')]);
  });

  it('a pro-rata fraction scales every line, each rounded once: 10/31 of 150 units', () => {
    const lines = priceCharge(p, q('150'), { num: 10n, den: 31n });
    // 1000x10/31 = 322.58 → 323; 500x10/31 = 161.29 → 161; 4500x10/31 = 1451.61 → 1452; 1000x10/31 = 322.58 → 323; 500 → 161; 250x10/31 = 80.6 → 81
    expect(lines.map((x) => x.netAmount)).toEqual([323, 161, 1452, 323, 161, 81]);
    expect(lines.map((x) => x.quantity)).toEqual(['10', '1', '90', '1', '50', '1']);
  });
});

describe('volume', () => {
  const p = plan('volume', 'EUR', { tiers });
  it.each([
    ['1', [l('1', '100', 100, 'tier 1 (1–10)'), l('1', '500', 500, 'tier 1 flat fee')]],
    ['10', [l('10', '100', 1000, 'tier 1 (1–10)'), l('1', '500', 500, 'tier 1 flat fee')]],
    ['10.5', [l('10.5', '50', 525, 'tier 2 (11–100)'), l('1', '1000', 1000, 'tier 2 flat fee')]],
    ['11', [l('11', '50', 550, 'tier 2 (11–100)'), l('1', '1000', 1000, 'tier 2 flat fee')]],
    ['100', [l('100', '50', 5000, 'tier 2 (11–100)'), l('1', '1000', 1000, 'tier 2 flat fee')]],
    ['101', [l('101', '10', 1010, 'tier 3 (101+)'), l('1', '250', 250, 'tier 3 flat fee')]],
    ['0', [l('0', '100', 0, 'tier 1 (1–10)')]],
  ])('q %s falls in the tier whose inclusive upTo holds it', (quantity, expected) => {
    expect(priceCharge(p, q(quantity))).toEqual(expected);
  });

  it('without flat amounts, one line', () => {
    const bare = plan('volume', 'USD', { tiers: [{ upTo: 1000, unitAmount: 0.001 }, { upTo: null, unitAmount: 0.00015 }] });
    expect(priceCharge(bare, q('1000'))).toEqual([l('1000', '0.1', 100, 'tier 1 (1–1000)')]);
    expect(priceCharge(bare, q('1001'))).toEqual([l('1001', '0.015', 15, 'tier 2 (1001+)')]);
  });
});

describe('pro rata and rounding', () => {
  it('10/31 of a 49.90 EUR flat fee: 4990 x 10/31 = 1609.677… → 1610', () => {
    expect(priceCharge(plan('flat_fee', 'EUR', { amount: 49.9 }), q('1'), { num: 10n, den: 31n })).toEqual([l('1', '4990', 1610)]);
  });

  it('0.002 EUR x 1150.5 units x 1/2 = 115.05 ct → 115', () => {
    expect(priceCharge(plan('per_unit', 'EUR', { amount: 0.002 }), q('1150.5'), { num: 1n, den: 2n })).toEqual([l('1150.5', '0.2', 115)]);
  });

  it('rounds once, not twice: 0.005 EUR x 1 unit x 1/1 = 0.5 → 1, but x 3/4 = 0.375 → 0 (twice would give 1 x 3/4 → 1)', () => {
    const p = plan('per_unit', 'EUR', { amount: 0.005 });
    expect(priceCharge(p, q('1'))[0]!.netAmount).toBe(1);
    expect(priceCharge(p, q('1'), { num: 3n, den: 4n })[0]!.netAmount).toBe(0);
  });

  it('halves round up: 0.05 EUR x 1/2 = 2.5 ct → 3; 1 JPY x 1/2 → 1', () => {
    expect(priceCharge(plan('flat_fee', 'EUR', { amount: 0.05 }), q('1'), { num: 1n, den: 2n })[0]!.netAmount).toBe(3);
    expect(priceCharge(plan('flat_fee', 'JPY', { amount: 1 }), q('1'), { num: 1n, den: 2n })[0]!.netAmount).toBe(1);
  });

  it('refuses a negative quantity and a fraction over 0', () => {
    const p = plan('flat_fee', 'EUR', { amount: 1 });
    expect(() => priceCharge(p, -1n)).toThrow(RangeError);
    expect(() => priceCharge(p, 1n, { num: 1n, den: 0n })).toThrow(RangeError);
  });
});

describe('unit prices', () => {
  it.each([
    [plan('per_unit', 'EUR', { amount: 0.002 }), '0.2'],
    [plan('per_unit', 'USD', { amount: 0.00015 }), '0.015'],
    [plan('flat_fee', 'JPY', { amount: 4900 }), '4900'],
    [plan('per_unit', 'KWD', { amount: 0.0125 }), '12.5'],
    [plan('package', 'EUR', { amount: 5, packageSize: 100 }), '500'],
    [plan('graduated', 'EUR', { tiers }), '100'],
    [plan('volume', 'EUR', { tiers: [{ upTo: null, unitAmount: 0.0000000001 }] }), '0.00000001'],
  ])('the unit price of one unit, in minor units: %#', (p, expected) => {
    expect(priceCharge(p, 1_000_000n)[0]!.unitAmountDecimal).toBe(expected);
  });

  it('reads exponent texts exactly and allows 10 fractional digits, not 11', () => {
    expect(decimalOfPrice(0.0000002)).toEqual({ ok: true, value: { units: 2n, scale: 7 } });
    expect(decimalOfPrice(1.5e-9)).toEqual({ ok: true, value: { units: 15n, scale: 10 } });
    expect(unitPriceProblem('price.amount', 0.0123456789, 'EUR')).toBeUndefined();
    expect(unitPriceProblem('price.amount', 1e-10, 'EUR')).toBeUndefined();
    expect(unitPriceProblem('price.amount', 0.01234567891, 'EUR')).toMatch(/^price\.amount .*at most 10 fractional digits \(got 11/);
    expect(unitPriceProblem('tiers[0].unitAmount', 1e-11, 'USD')).toMatch(/at most 10 fractional digits/);
    expect(unitPriceProblem('price.amount', 12345678901234.5, 'EUR')).toMatch(/at most 9999999999999.99 EUR/);
    // Too many digits to be exact: the message says the range, not only the digits.
    expect(unitPriceProblem('price.amount', 1e20, 'EUR')).toBe('price.amount must be a unit price from 0 to 9999999999999.99 EUR, of at most 15 significant digits (got 100000000000000000000)');
    expect(unitPriceProblem('tiers[0].unitAmount', 1e20, 'JPY')).toMatch(/from 0 to 999999999999999 JPY/);
  });
});

describe('what an invoice may total', () => {
  it.each([
    [plan('flat_fee', 'EUR', { amount: 9999999999.99 }), 1, undefined],
    [plan('flat_fee', 'EUR', { amount: 9999999999.99 }), 2, 'at quantity 2 it costs 19999999999.98 EUR a period, more than the 9999999999.99 EUR an invoice may total; lower the quantity or the price'],
    [plan('flat_fee', 'EUR', { amount: 9999999999999.99 }), 1000.5, /^at quantity 1000.5 it costs 10004999999999990 EUR a period/],
    [plan('per_unit', 'EUR', { amount: 5000000000, freeUnits: 1 }), 2, undefined],
    [plan('graduated', 'JPY', { tiers: [{ upTo: 10, unitAmount: 1, flatAmount: 999999999999 }, { upTo: null, unitAmount: 1 }] }), 1, /costs 1000000000000 JPY a period, more than the 999999999999 JPY/],
    [plan('flat_fee', 'EUR', { amount: 1 }), '1000000000000', /^the quantity must be below 10\^12/],
  ])('a period of %#: %s x quantity %s', (p, quantity, expected) => {
    const problem = chargeCapProblem(p, quantity);
    if (expected instanceof RegExp) expect(problem).toMatch(expected);
    else expect(problem).toBe(expected);
  });
});
