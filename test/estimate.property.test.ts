/**
 * The estimate is a dry run of the billing run (CONTRACT section 8): for random subscriptions
 * (prices, quantities, intervals, in advance or in arrears, pro rata, billing groups, usage, start
 * dates, discounts), the estimate taken before the billing date equals, line for line and cent for
 * cent, the invoice the run creates on that date when nothing changed in between. Through the real
 * server; seeded, so a failure reproduces.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, setup, type TestEnv } from './helpers.js';

const SEED = 20261123;

let env: TestEnv;
let customer: any;
let tax: any;
let meter: any;
let n = 0;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-01T00:00:00Z');
  tax = await ok(env.mcp, 'create_tax_group', {
    internalDescription: 'Standard',
    taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }],
  });
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Property', companyName: 'Random GmbH' });
  await ok(env.mcp, 'create_invoice_address', { id: customer.id, street: 'Weg', houseNumber: '1', zip: '10117', city: 'Berlin', countryCode: 'DE' });
  await ok(env.mcp, 'create_unit', { name: 'event' });
  meter = await ok(env.mcp, 'create_measurement', { unit: 'event', code: 'events', aggregationType: 'sum', type: 'metered' });
}, 60_000);
afterAll(() => env.close());

const chargeArb = fc.record({
  cents: fc.integer({ min: 0, max: 500_000 }),
  metered: fc.boolean(),
  payInAdvance: fc.boolean(),
  proRata: fc.boolean(),
  interval: fc.constantFrom('1M', '3M', '2W', '1Y', '10D'),
  quantity: fc.integer({ min: 1, max: 5 }),
  freeUnits: fc.integer({ min: 0, max: 50 }),
  percentOff: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
});

const scenarioArb = fc.record({
  charges: fc.array(chargeArb, { minLength: 1, maxLength: 3 }),
  group: fc.constantFrom('anniversary', 'end_of_month', 'custom_day'),
  customDay: fc.integer({ min: 1, max: 28 }),
  startOffsetMinutes: fc.integer({ min: 0, max: 60 * 24 * 400 }),
  usage: fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1_000_000 })), { maxLength: 6 }),
});

describe('the estimate is the next invoice', () => {
  it('equals the invoice the billing run creates on the billing date, line for line and cent for cent', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (sc) => {
        n += 1;
        const start = new Date(Date.parse('2026-01-01T00:00:00Z') + sc.startOffsetMinutes * 60_000);
        env.setNow(start);
        const charges = [];
        for (const c of sc.charges) {
          const product = await ok(env.mcp, 'create_product', { name: `P${n}-${charges.length}`, taxGroup: tax.id, ...(c.metered ? { measurement: meter.id } : {}) });
          const pricePlan = await ok(env.mcp, 'create_price_plan', {
            id: product.id,
            type: c.metered ? 'per_unit' : 'flat_fee',
            currencyCode: 'EUR',
            price: { amount: c.cents / 100 },
            billingInterval: c.interval,
            ...(c.metered ? {} : { payInAdvance: c.payInAdvance, proRata: c.proRata }),
            freeUnits: c.metered ? c.freeUnits : 0,
          });
          charges.push({ product: product.id, pricePlan: pricePlan.id, ...(c.metered ? {} : { quantity: c.quantity }) });
        }
        const group =
          sc.group === 'anniversary'
            ? undefined
            : await ok(env.mcp, 'create_billing_group', { name: `G${n}`, type: sc.group, ...(sc.group === 'custom_day' ? { customDay: sc.customDay } : {}) });
        const plan = await ok(env.mcp, 'create_plan', { code: `prop-${n}`, name: `Prop ${n}`, charges });
        const s = await ok(env.mcp, 'create_subscription', {
          customer: customer.id,
          plan: plan.id,
          periods: [{ contractPeriod: '1Y', cancellationPeriod: '1M' }],
          activate: true,
          ...(group ? { billingGroup: group.id } : {}),
        });
        for (const [k, c] of sc.charges.entries()) {
          if (c.percentOff === undefined) continue;
          await ok(env.mcp, 'order_subscription_products', {
            id: s.id,
            products: [{ product: charges[k]!.product, pricePlan: charges[k]!.pricePlan, discount: { type: 'percentage', percentage: c.percentOff } }],
          });
        }

        const first = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
        const billingDate = Date.parse(first.billingDate);
        // Usage measured before the estimate, within the current period (before the billing date).
        const metered = (await env.http('GET', `/subscriptions/${s.id}`)).body.items.filter((i: any) => i.product.measurement);
        const now = new Date(Math.max(start.getTime(), Math.min(billingDate - 1, start.getTime() + 1000 * 60 * 60 * 24 * 5)));
        env.setNow(now);
        for (const item of metered) {
          for (const [minutes, micros] of sc.usage) {
            const at = Math.min(now.getTime(), start.getTime() + minutes * 60_000);
            await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item.id, quantity: (micros / 1_000_000).toFixed(6), measuredAt: new Date(at).toISOString() });
          }
        }
        const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });

        env.setNow(new Date(Math.max(billingDate, now.getTime())));
        const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
        const invoice = (await env.http('GET', `/invoices/${run.invoices[0]}`)).body;
        expect(invoice.issuedAt).toBe(estimate.billingDate);
        expect(
          invoice.lines.map((l: any) => ({
            description: l.description,
            periodStart: l.periodStart,
            periodEnd: l.periodEnd,
            quantity: l.quantity,
            netAmount: l.netAmount,
            taxRate: l.taxRate,
          })),
        ).toEqual(estimate.lines.map(({ unitAmountDecimal: _u, ...l }: any) => l));
        expect([invoice.netAmount, invoice.taxAmount, invoice.grossAmount]).toEqual([estimate.netAmount, estimate.taxAmount, estimate.grossAmount]);
        expect(invoice.taxes).toEqual(estimate.taxes);
      }),
      { seed: SEED, numRuns: 40 },
    );
  }, 240_000);
});
