/**
 * What a pause costs (CONTRACT section 8: paused subscriptions are not billed while paused), through
 * the real server: a subscription that ends while paused bills nothing of the pause, the time before
 * it as usual; one resumed with a nextBillingDate bills on that date what each item owes from before
 * the pause, and nothing of the pause. The estimate shows the same. The customer is in UTC, so the
 * dates read as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { billAt, fails, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let customer: any;
let n = 0;

beforeAll(async () => {
  env = await setup();
  env.setNow('2027-05-01T00:00:00Z');
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Pauser', timeZone: 'UTC' });
});
afterAll(() => env.close());

/** An active subscription started now of one monthly fee of 31.00 EUR (1.00 a day in a 31-day month); monthly terms, no notice. */
async function subscribe(price: Record<string, unknown>): Promise<any> {
  n += 1;
  const product = await ok(env.mcp, 'create_product', { name: `Fee ${n}` });
  const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 31 }, billingInterval: '1M', ...price });
  const plan = await ok(env.mcp, 'create_plan', { code: `pause-${n}`, name: `Pause ${n}`, charges: [{ product: product.id, pricePlan: pricePlan.id }] });
  return ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
}

describe('a subscription that ends while paused', () => {
  it('in arrears, paused the day it started and cancelled while paused: nothing is billed, before or after the cancellation takes effect', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-07-02T00:00:00Z');
    expect((await ok(env.mcp, 'cancel_subscription', { id: s.id })).cancellationDate).toBe('2027-08-01T00:00:00.000Z');
    await runDueJobs(env.app, new Date('2027-08-02T00:00:00Z'));
    const cancelled = await ok(env.mcp, 'get_subscription', { id: s.id });
    expect(cancelled).toMatchObject({ status: 'cancelled', nextBillingDate: null });
    expect(cancelled.items[0].billing.nextBillingAt).toBeNull();
    expect(await billAt(env, '2027-08-02T00:00:00Z', s.id)).toEqual([]);
    expect((await fails(env.mcp, 'get_estimated_invoice', { id: s.id }, 409)).detail).toMatch(/nothing left to bill/);
    expect((await ok(env.mcp, 'list_invoices', { subscription: s.id })).data).toEqual([]);
  });

  it('in arrears, terminated two months into a pause: the day before the pause is billed (1/31 of August), the pause not at all; the estimate said so', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    expect((await billAt(env, '2027-08-02T00:00:00Z', s.id)).map((i) => i[0]![2])).toEqual(['2027-05-01T00:00:00.000Z', '2027-06-01T00:00:00.000Z', '2027-07-01T00:00:00.000Z']);
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-10-05T00:00:00Z');
    const terminated = await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect(terminated.nextBillingDate).toBe('2027-08-02T00:00:00.000Z');
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    const billed = await billAt(env, '2027-10-05T00:00:00Z', s.id);
    expect(billed).toEqual([[[`Fee ${n} (pro rata 1/31 days, 2027-08-01 to 2027-08-01)`, 100, '2027-08-01T00:00:00.000Z', '2027-08-02T00:00:00.000Z']]]);
    expect(estimate.lines.map((l: any) => [l.description, l.netAmount, l.periodStart, l.periodEnd])).toEqual(billed[0]);
    expect(estimate.billingDate).toBe('2027-08-02T00:00:00.000Z');
    expect(await billAt(env, '2027-12-01T00:00:00Z', s.id)).toEqual([]);
  });

  it('without proRata, the period the pause cut short costs its full price, once; the pause nothing', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: false });
    await billAt(env, '2027-06-01T00:00:00Z', s.id);
    env.setNow('2027-06-10T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-09-20T00:00:00Z');
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect(await billAt(env, '2027-09-20T00:00:00Z', s.id)).toEqual([[[`Fee ${n} (2027-06-01 to 2027-06-09)`, 3100, '2027-06-01T00:00:00.000Z', '2027-06-10T00:00:00.000Z']]]);
  });

  it('in advance, paused the day it started after its first period was billed, cancelled while paused: the first period stays, nothing follows', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: true, proRata: true });
    expect(await billAt(env, '2027-05-01T00:00:00Z', s.id)).toEqual([[[`Fee ${n} (2027-05-01 to 2027-05-31)`, 3100, '2027-05-01T00:00:00.000Z', '2027-06-01T00:00:00.000Z']]]);
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-07-02T00:00:00Z');
    await ok(env.mcp, 'cancel_subscription', { id: s.id });
    await runDueJobs(env.app, new Date('2027-08-02T00:00:00Z'));
    expect(await billAt(env, '2027-08-02T00:00:00Z', s.id)).toEqual([]);
    expect((await env.http('GET', `/invoices?subscription=${s.id}`)).body.data.map((i: any) => i.lines[0].periodStart)).toEqual(['2027-05-01T00:00:00.000Z']);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).nextBillingDate).toBeNull();
  });

  it('in advance, a period that came due before the pause and was not billed yet is billed up to the pause start (9/31 days)', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: true, proRata: true });
    env.setNow('2027-05-10T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-06-15T00:00:00Z');
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect(await billAt(env, '2027-06-15T00:00:00Z', s.id)).toEqual([[[`Fee ${n} (pro rata 9/31 days, 2027-05-01 to 2027-05-09)`, 900, '2027-05-01T00:00:00.000Z', '2027-05-10T00:00:00.000Z']]]);
  });

  it('resumed before it ends, the pause is billed as the contract says (every missed period), up to the cancellation', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    env.setNow('2027-05-10T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    await ok(env.mcp, 'cancel_subscription', { id: s.id });
    env.setNow('2027-05-20T00:00:00Z');
    await ok(env.mcp, 'resume_subscription', { id: s.id });
    await runDueJobs(env.app, new Date('2027-06-01T00:00:00Z'));
    expect(await billAt(env, '2027-06-01T00:00:00Z', s.id)).toEqual([]);
    const invoices = (await env.http('GET', `/invoices?subscription=${s.id}`)).body;
    expect(invoices.data.map((i: any) => i.lines.map((l: any) => [l.netAmount, l.periodStart, l.periodEnd]))).toEqual([[[3100, '2027-05-01T00:00:00.000Z', '2027-06-01T00:00:00.000Z']]]);
  });
});

describe('a subscription resumed with a nextBillingDate', () => {
  it('in arrears: the date is its next billing date, on which the day before the pause is billed; the pause never; periods count from the date', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    await billAt(env, '2027-08-02T00:00:00Z', s.id);
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-09-10T00:00:00Z');
    const resumed = await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2027-10-20T00:00:00Z' });
    expect(resumed).toMatchObject({ status: 'active', nextBillingDate: '2027-10-20T00:00:00.000Z', pausedAt: null });
    expect(resumed.items[0].billing.nextBillingAt).toBe('2027-10-20T00:00:00.000Z');
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    const stub: [string, number, string, string] = [`Fee ${n} (pro rata 1/31 days, 2027-08-01 to 2027-08-01)`, 100, '2027-08-01T00:00:00.000Z', '2027-08-02T00:00:00.000Z'];
    expect([estimate.billingDate, estimate.lines.map((l: any) => [l.description, l.netAmount, l.periodStart, l.periodEnd])]).toEqual(['2027-10-20T00:00:00.000Z', [stub]]);
    expect(await billAt(env, '2027-10-19T23:59:59Z', s.id)).toEqual([]);
    expect(await billAt(env, '2027-10-20T00:00:00Z', s.id)).toEqual([[stub]]);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).nextBillingDate).toBe('2027-11-20T00:00:00.000Z');
    expect(await billAt(env, '2027-11-20T00:00:00Z', s.id)).toEqual([[[`Fee ${n} (2027-10-20 to 2027-11-19)`, 3100, '2027-10-20T00:00:00.000Z', '2027-11-20T00:00:00.000Z']]]);
  });

  it('in advance and in arrears on one invoice on the date: what the arrears item owes from before the pause, the first new period paid in advance', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    n += 1;
    const product = await ok(env.mcp, 'create_product', { name: `Fee ${n}` });
    const price = (payInAdvance: boolean) => ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 31 }, billingInterval: '1M', payInAdvance, proRata: true });
    const [advance, arrears] = [await price(true), await price(false)];
    const plan = await ok(env.mcp, 'create_plan', { code: `mixed-${n}`, name: 'Mixed', charges: [{ product: product.id, pricePlan: advance.id }, { product: product.id, pricePlan: arrears.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    await billAt(env, '2027-05-01T00:00:00Z', s.id);
    env.setNow('2027-05-16T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-07-01T00:00:00Z');
    const resumed = await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2027-07-10T00:00:00Z' });
    expect(resumed.items.map((i: any) => i.billing.nextBillingAt)).toEqual(['2027-07-10T00:00:00.000Z', '2027-07-10T00:00:00.000Z']);
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    const [invoice] = await billAt(env, '2027-07-10T00:00:00Z', s.id);
    expect(invoice).toEqual([
      [`Fee ${n} (2027-07-10 to 2027-08-09)`, 3100, '2027-07-10T00:00:00.000Z', '2027-08-10T00:00:00.000Z'],
      [`Fee ${n} (pro rata 15/31 days, 2027-05-01 to 2027-05-15)`, 1500, '2027-05-01T00:00:00.000Z', '2027-05-16T00:00:00.000Z'],
    ]);
    expect(estimate.lines.map((l: any) => [l.description, l.netAmount, l.periodStart, l.periodEnd])).toEqual(invoice);
  });

  it('an item in arrears paused at the end of a billed period owes nothing from before the pause: it is next billed at the end of its first new period', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    await billAt(env, '2027-06-01T00:00:00Z', s.id);
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-07-01T00:00:00Z');
    const resumed = await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2027-07-10T00:00:00Z' });
    expect(resumed.nextBillingDate).toBe('2027-08-10T00:00:00.000Z');
  });

  it('paused again before the date, the first pause goes on; resumed then without a date, every missed period is billed after all', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    await billAt(env, '2027-06-01T00:00:00Z', s.id);
    env.setNow('2027-06-10T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-06-20T00:00:00Z');
    await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2027-07-10T00:00:00Z' });
    env.setNow('2027-07-01T00:00:00Z');
    expect((await ok(env.mcp, 'pause_subscription', { id: s.id })).pausedAt).toBe('2027-06-10T00:00:00.000Z');
    env.setNow('2027-07-05T00:00:00Z');
    expect((await ok(env.mcp, 'resume_subscription', { id: s.id })).nextBillingDate).toBe('2027-07-01T00:00:00.000Z');
    expect(await billAt(env, '2027-07-05T00:00:00Z', s.id)).toEqual([[[`Fee ${n} (2027-06-01 to 2027-06-30)`, 3100, '2027-06-01T00:00:00.000Z', '2027-07-01T00:00:00.000Z']]]);
  });

  it('terminated before the date: billing never restarted, so it ends as paused (the days before the pause billed, nothing after)', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe({ payInAdvance: false, proRata: true });
    await billAt(env, '2027-06-01T00:00:00Z', s.id);
    env.setNow('2027-06-10T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2027-06-20T00:00:00Z');
    await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2027-07-10T00:00:00Z' });
    env.setNow('2027-06-25T00:00:00Z');
    expect((await ok(env.mcp, 'terminate_subscription', { id: s.id })).nextBillingDate).toBe('2027-06-10T00:00:00.000Z');
    expect(await billAt(env, '2027-06-25T00:00:00Z', s.id)).toEqual([[[`Fee ${n} (pro rata 9/30 days, 2027-06-01 to 2027-06-09)`, 930, '2027-06-01T00:00:00.000Z', '2027-06-10T00:00:00.000Z']]]);
    expect(await billAt(env, '2027-08-01T00:00:00Z', s.id)).toEqual([]);
  });
});
