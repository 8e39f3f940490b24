import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../src/values/money.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let customer: any;
let base: any;
let basePrice: any;
let support: any;
let supportPrice: any;
let api: any;
let apiPrice: any;
const periods = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-15T10:00:00Z');
  const tax = await ok(env.mcp, 'create_tax_group', {
    internalDescription: 'Standard',
    taxes: [
      { code: 'DE-OLD', rate: 16, countryCode: 'DE', validFrom: '2020-07-01' },
      { code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' },
    ],
  });
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Estimate', companyName: 'ACME GmbH' });
  await ok(env.mcp, 'create_invoice_address', { id: customer.id, street: 'Friedrichstraße', houseNumber: '1', zip: '10117', city: 'Berlin', countryCode: 'DE' });
  base = await ok(env.mcp, 'create_product', { name: 'Base', taxGroup: tax.id });
  basePrice = await ok(env.mcp, 'create_price_plan', { id: base.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 49.9 }, billingInterval: '1M', proRata: true });
  support = await ok(env.mcp, 'create_product', { name: 'Support', taxGroup: tax.id });
  supportPrice = await ok(env.mcp, 'create_price_plan', { id: support.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M', payInAdvance: false });
  await ok(env.mcp, 'create_unit', { name: 'call' });
  const m = await ok(env.mcp, 'create_measurement', { unit: 'call', code: 'calls', aggregationType: 'sum', type: 'metered' });
  api = await ok(env.mcp, 'create_product', { name: 'API', measurement: m.id });
  apiPrice = await ok(env.mcp, 'create_price_plan', { id: api.id, type: 'per_unit', currencyCode: 'EUR', price: { amount: 0.01 }, billingInterval: '1M', payInAdvance: false, freeUnits: 100 });
});
afterAll(() => env.close());

describe('formatMoney', () => {
  it.each([
    [4990, '€49.90'],
    [-499, '-€4.99'],
    [5, '€0.05'],
    [0, '€0.00'],
  ])('%i EUR → %s', (cents, text) => expect(formatMoney(cents, 'EUR')).toBe(text));
});

describe('get_estimated_invoice', () => {
  it('bills a flat fee in advance for its period, taxed at the rate valid on the billing date', async () => {
    const plan = await ok(env.mcp, 'create_plan', { code: 'flat', name: 'Flat', charges: [{ product: base.id, pricePlan: basePrice.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    expect(e).toMatchObject({
      billingDate: '2026-01-15T10:00:00.000Z',
      currencyCode: 'EUR',
      netAmount: 4990,
      taxAmount: 948,
      grossAmount: 5938,
      taxes: [{ rate: 19, netAmount: 4990, taxAmount: 948 }],
    });
    expect(e.lines).toEqual([
      {
        description: 'Base (2026-01-15 to 2026-02-14)',
        periodStart: '2026-01-15T10:00:00.000Z',
        periodEnd: '2026-02-15T10:00:00.000Z',
        quantity: '1',
        unitAmountDecimal: '4990',
        netAmount: 4990,
        taxRate: 19,
      },
    ]);
    expect(e.estimate).toContain('Estimated invoice for subscription');
    expect(e.estimate).toMatch(/Tax 19% on €49\.90 +€9\.48/);
    expect(e.estimate).toMatch(/Gross \(EUR\) +€59\.38/);

    const rest = await env.http('GET', `/subscriptions/${s.id}/estimated-invoice`);
    expect(rest.status).toBe(200);
    expect(rest.body).toBe(e.estimate);
    const text = await env.mcp.callTool({ name: 'get_estimated_invoice', arguments: { id: s.id } });
    expect((text.content as Array<{ text: string }>)[0]!.text).toBe(e.estimate);
  });

  it('prorates a short period aligned to the month end by days', async () => {
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Month end', type: 'end_of_month' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'prorata', name: 'Pro rata', charges: [{ product: base.id, pricePlan: basePrice.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, billingGroup: group.id, activate: true });
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    // 15 January to 1 February in Berlin: 17 of the 31 days of a month from the 15th; 49.90 × 17 / 31 = 27.3645…
    expect(e.lines[0]).toMatchObject({ periodEnd: '2026-01-31T23:00:00.000Z', netAmount: 2736, description: 'Base (pro rata 17/31 days, 2026-01-15 to 2026-01-31)' });
  });

  it('bills usage so far minus free units and arrears fees at the period end, with discounts before tax', async () => {
    const coupon = await ok(env.mcp, 'create_coupon', { code: 'TENOFF', name: 'Ten off', type: 'percentage', frequency: 'once', percentage: 10 });
    const plan = await ok(env.mcp, 'create_plan', {
      code: 'usage',
      name: 'Usage',
      charges: [
        { product: api.id, pricePlan: apiPrice.id },
        { product: support.id, pricePlan: supportPrice.id },
      ],
    });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    const ordered = await ok(env.mcp, 'order_subscription_products', {
      id: s.id,
      products: [{ product: support.id, pricePlan: supportPrice.id, customName: 'Extra support', discount: { coupon: coupon.id } }],
    });
    const apiItem = ordered.items.find((i: any) => i.product.id === api.id);
    env.setNow('2026-01-20T00:00:00Z');
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: apiItem.id, quantity: '1000' });
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: apiItem.id, quantity: 234 });
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    expect(e.billingDate).toBe('2026-02-15T10:00:00.000Z');
    expect(e.lines.map((l: any) => [l.description, l.quantity, l.netAmount, l.taxRate])).toEqual([
      ['API (calls: 1234, 100 free, 2026-01-15 to 2026-02-14)', '1134', 1134, 0],
      ['Support (2026-01-15 to 2026-02-14)', '1', 1000, 19],
      ['Extra support (2026-01-15 to 2026-02-14)', '1', 1000, 19],
      ['Discount coupon TENOFF (10%)', '1', -100, 19],
    ]);
    // 19 % on 19.00 = 3.61; 0 % on 11.34
    expect(e).toMatchObject({ netAmount: 3034, taxAmount: 361, grossAmount: 3395 });
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('shows a draft subscription its first invoice as if activated now, and writes nothing', async () => {
    const plan = await ok(env.mcp, 'create_plan', {
      code: 'first',
      name: 'First',
      charges: [
        { product: base.id, pricePlan: basePrice.id },
        { product: support.id, pricePlan: supportPrice.id },
      ],
    });
    const draft = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods });
    const before = await env.http('GET', `/subscriptions/${draft.id}`);
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: draft.id });
    // Activated at 15 January 10:00: Base in advance for a month, 49.90 + 19 % (9.481 → 9.48); Support is
    // billed in arrears, on 15 February, so not on the first invoice.
    expect(e).toMatchObject({ billingDate: '2026-01-15T10:00:00.000Z', netAmount: 4990, taxAmount: 948, grossAmount: 5938 });
    expect(e.lines.map((l: any) => [l.description, l.periodStart, l.periodEnd, l.netAmount])).toEqual([
      ['Base (2026-01-15 to 2026-02-14)', '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z', 4990],
    ]);
    expect(e.estimate).toContain(`Estimated first invoice for subscription ${draft.number} (First), as if activated now (it is draft)`);
    expect((await env.http('GET', `/subscriptions/${draft.id}`)).body).toEqual(before.body);
    expect(before.body).toMatchObject({ status: 'draft', activatedAt: null });

    // A later start date is the first billing date: 1 February 00:00 in Berlin (31 January 23:00 UTC).
    const later = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, startDate: '2026-02-01T00:00:00+01:00' });
    const first = await ok(env.mcp, 'get_estimated_invoice', { id: later.id });
    expect(first).toMatchObject({ billingDate: '2026-01-31T23:00:00.000Z', netAmount: 4990, grossAmount: 5938 });
    expect(first.lines[0]).toMatchObject({ periodStart: '2026-01-31T23:00:00.000Z', periodEnd: '2026-02-28T23:00:00.000Z' });
  });

  it("shows an offer's subscription the invoice its signing would start, and that invoice is then the next one", async () => {
    const plan = await ok(env.mcp, 'create_plan', { code: 'offered', name: 'Offered', charges: [{ product: base.id, pricePlan: basePrice.id, quantity: 3 }] });
    const offer = await ok(env.mcp, 'create_offer', {
      customer: customer.id,
      acceptanceMode: 'click',
      name: 'Three seats',
      recipients: [{ email: 'buyer@example.com', firstName: 'Bea', lastName: 'Buyer' }],
      validUntil: '2026-02-15T00:00:00Z',
      subscription: { plan: plan.id, periods },
    });
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: offer.subscription.id });
    // 3 × 49.90 = 149.70 net, 19 % = 28.443 → 28.44, gross 178.14.
    expect(e).toMatchObject({ billingDate: '2026-01-15T10:00:00.000Z', netAmount: 14970, taxAmount: 2844, grossAmount: 17814 });
    expect(e.lines.map((l: any) => [l.description, l.quantity, l.unitAmountDecimal, l.netAmount, l.taxRate])).toEqual([['Base (2026-01-15 to 2026-02-14)', '3', '4990', 14970, 19]]);
    expect(e.estimate).toContain('as if activated now (it is offer)');
    await ok(env.mcp, 'accept_offer', { id: offer.id, recipient: offer.recipients[0].id });
    const next = await ok(env.mcp, 'get_estimated_invoice', { id: offer.subscription.id });
    expect({ ...next, estimate: undefined }).toEqual({ ...e, estimate: undefined });
    const run = await ok(env.mcp, 'run_billing', { subscription: offer.subscription.id });
    const invoice = await ok(env.mcp, 'get_invoice', { id: run.invoices[0] });
    expect([invoice.netAmount, invoice.taxAmount, invoice.grossAmount]).toEqual([14970, 2844, 17814]);
  });

  it("shows a terminated subscription's final invoice until a run issues it, which nextBillingDate names", async () => {
    const seat = await ok(env.mcp, 'create_product', { name: 'Seat' });
    const seatPrice = await ok(env.mcp, 'create_price_plan', { id: seat.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 31 }, billingInterval: '1M', payInAdvance: false, proRata: true });
    const plan = await ok(env.mcp, 'create_plan', { code: 'final', name: 'Final', charges: [{ product: seat.id, pricePlan: seatPrice.id }] });
    env.setNow('2026-03-01T00:00:00Z');
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    env.setNow('2026-03-11T00:00:00Z');
    const terminated = await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect(terminated.nextBillingDate).toBe('2026-03-11T00:00:00.000Z');
    const e = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    // 10 of March's 31 days at 31.00 a month.
    expect([e.billingDate, e.netAmount, e.lines[0].periodEnd]).toEqual(['2026-03-11T00:00:00.000Z', 1000, '2026-03-11T00:00:00.000Z']);
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    const invoice = await ok(env.mcp, 'get_invoice', { id: run.invoices[0] });
    expect(invoice.lines.map((l: any) => [l.description, l.netAmount])).toEqual(e.lines.map((l: any) => [l.description, l.netAmount]));
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).nextBillingDate).toBeNull();
    expect((await fails(env.mcp, 'get_estimated_invoice', { id: s.id }, 409)).detail).toMatch(/has nothing left to bill \(it is terminated and its last period is invoiced\)/);
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('is a 409 naming the line, not a 500, when usage takes an invoice past what it may total; the run fails that subscription for the same reason', async () => {
    const dear = await ok(env.mcp, 'create_price_plan', { id: api.id, type: 'per_unit', currencyCode: 'EUR', price: { amount: 9999999999999.99 }, billingInterval: '1M', payInAdvance: false });
    const plan = await ok(env.mcp, 'create_plan', { code: 'overflow', name: 'Overflow', charges: [{ product: api.id, pricePlan: dear.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: '1000.5', measuredAt: '2026-01-15T10:00:00Z' });
    const problem = await fails(env.mcp, 'get_estimated_invoice', { id: s.id }, 409);
    expect(problem.detail).toMatch(/^Subscription SUB-\d+ cannot be billed on 2026-02-15T10:00:00.000Z: its line "API \(calls: 1000.5, .*\)" comes to more than the €9,999,999,999.99 an invoice may total/);
    env.setNow('2026-02-15T10:00:00Z');
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(run).toMatchObject({ status: 'failed', invoicesCreated: 0, failed: [{ subscription: s.id, error: problem.detail }] });
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('is a 409 for a paused or ended subscription, and reaches a customer token only for its own subscriptions', async () => {
    const plan = await ok(env.mcp, 'create_plan', { code: 'draft', name: 'Draft', charges: [{ product: base.id, pricePlan: basePrice.id }] });
    const paused = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    await ok(env.mcp, 'pause_subscription', { id: paused.id });
    expect((await fails(env.mcp, 'get_estimated_invoice', { id: paused.id }, 409)).detail).toMatch(/is paused: nothing is billed while paused/);
    await fails(env.mcp, 'get_estimated_invoice', { id: 'nope' }, 404);

    const active = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate: true });
    const other = await ok(env.mcp, 'create_customer', { lastName: 'Other' });
    const theirs = await ok(env.mcp, 'create_subscription', { customer: other.id, plan: plan.id, periods, activate: true });
    const token = (await ok(env.mcp, 'authenticate_customer', { id: customer.id })).data.accessToken;
    expect((await env.http('GET', `/subscriptions/${active.id}/estimated-invoice`, { token })).status).toBe(200);
    expect((await env.http('GET', `/subscriptions/${theirs.id}/estimated-invoice`, { token })).status).toBe(404);
  });
});
