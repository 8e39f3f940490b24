/**
 * Billing groups and intervals of days or weeks: such items follow their own start (anniversary)
 * whatever the group says, and the billing group tool says so (docs/billing.md, "Periods").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-28T10:00:00Z');
});
afterAll(() => env.close());

describe('billing groups and daily or weekly intervals', () => {
  it('create_billing_group says that items billed in days or weeks ignore the group', async () => {
    const { tools } = await env.mcp.listTools();
    expect(tools.find((t) => t.name === 'create_billing_group')?.description).toMatch(/days or weeks \(D, W\) ignore it \(anniversary\)/);
  });

  it.each([
    ['end_of_month', {}],
    ['custom_day', { customDay: 15 }],
  ])('a weekly item in an %s group is billed a week after its start, across the month end', async (type, day) => {
    const group = await ok(env.mcp, 'create_billing_group', { name: `Weekly ${type}`, type, ...day });
    const product = await ok(env.mcp, 'create_product', { name: `Weekly ${type}` });
    const price = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 7 }, billingInterval: '1W', payInAdvance: false });
    const plan = await ok(env.mcp, 'create_plan', { code: `weekly-${type}`, name: 'Weekly', charges: [{ product: product.id, pricePlan: price.id }] });
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Weekly', timeZone: 'Europe/Berlin' });
    const s = await ok(env.mcp, 'create_subscription', {
      customer: customer.id,
      plan: plan.id,
      billingGroup: group.id,
      periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
      startDate: '2026-01-28T00:00:00+01:00',
      activate: true,
    });
    expect(s.items[0].billing.nextBillingAt).toBe('2026-02-03T23:00:00.000Z');
  });
});
