/**
 * The billing engine through the real server (MCP client, a real SQLite store): what is billed when,
 * and what each line costs, against hand-computed figures. Customers are in Europe/Berlin; the tax
 * group charges 19 % in DE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBilling } from '../src/domain/billing/run.js';
import { runDueJobs } from '../src/jobs/runner.js';
import { setupBilling } from './billingFixtures.js';
import { countingStore, fails, ok, paths, type TestEnv } from './helpers.js';

let env: TestEnv;
let customer: any;
let tax: any;
let n = 0;

beforeAll(async () => {
  ({ env, tax, customer } = await setupBilling({ lastName: 'Billing', companyName: 'Billed GmbH' }, 'Friedrichstraße'));
});
afterAll(() => env.close());

interface Charge {
  price?: Record<string, unknown>;
  measurement?: Record<string, unknown>;
  quantity?: number;
}

/** A product with one price plan (and a measurement when asked for). */
async function charge(c: Charge): Promise<{ product: string; pricePlan: string }> {
  n += 1;
  let measurement: string | undefined;
  if (c.measurement) {
    await ok(env.mcp, 'create_unit', { name: `unit ${n}` });
    measurement = (await ok(env.mcp, 'create_measurement', { unit: `unit ${n}`, code: `m${n}`, ...c.measurement })).id;
  }
  const product = await ok(env.mcp, 'create_product', { name: `Product ${n}`, taxGroup: tax.id, ...(measurement ? { measurement } : {}) });
  const pricePlan = await ok(env.mcp, 'create_price_plan', {
    id: product.id,
    type: 'flat_fee',
    currencyCode: 'EUR',
    price: { amount: 49.9 },
    billingInterval: '1M',
    ...c.price,
  });
  return { product: product.id, pricePlan: pricePlan.id };
}

/** An active subscription of one plan made of the charges, started now. */
async function subscribe(charges: Charge[], extra: Record<string, unknown> = {}): Promise<any> {
  const made = [];
  for (const c of charges) made.push({ ...(await charge(c)), quantity: c.quantity ?? 1 });
  const plan = await ok(env.mcp, 'create_plan', { code: `plan-${n}`, name: `Plan ${n}`, charges: made });
  return ok(env.mcp, 'create_subscription', {
    customer: customer.id,
    plan: plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
    activate: true,
    ...extra,
  });
}

async function bill(subscription: string): Promise<any[]> {
  const run = await ok(env.mcp, 'run_billing', { subscription });
  const invoices = [];
  for (const id of run.invoices) invoices.push((await env.http('GET', `/invoices/${id}`)).body);
  return invoices;
}

const lines = (invoice: any) => invoice.lines.map((l: any) => [l.description, l.quantity, l.netAmount, l.periodStart, l.periodEnd]);

describe('billing dates', () => {
  it('bills a flat fee in advance at its period start, once; a run after downtime bills every missed period, oldest first', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}]);
    const [first, ...rest] = await bill(s.id);
    expect(rest).toEqual([]);
    expect(first).toMatchObject({
      status: 'open',
      subscription: s.id,
      issuedAt: '2026-01-15T10:00:00.000Z',
      dueAt: '2026-01-29T10:00:00.000Z',
      netAmount: 4990,
      taxAmount: 948,
      grossAmount: 5938,
      amountDue: 5938,
    });
    expect(first.number).toMatch(/^INV-2026-\d{6}$/);
    expect(lines(first)).toEqual([[`Product ${n} (2026-01-15 to 2026-02-14)`, '1', 4990, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z']]);

    const after = (await env.http('GET', `/subscriptions/${s.id}`)).body;
    expect(after.lastBillingAt).toBe('2026-01-15T10:00:00.000Z');
    expect(after.nextBillingDate).toBe('2026-02-15T10:00:00.000Z');
    expect(after.items[0].billing).toMatchObject({
      lastBilledAt: '2026-01-15T10:00:00.000Z',
      lastBilledFrom: '2026-01-15T10:00:00.000Z',
      lastBilledTo: '2026-02-15T10:00:00.000Z',
      nextBillingAt: '2026-02-15T10:00:00.000Z',
    });

    const again = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(again).toMatchObject({ subscriptionsBilled: 0, invoicesCreated: 0, subscriptionsSkipped: 1 });
    expect(again.skipped[0].reason).toMatch(/nothing due .* next billing date 2026-02-15T10:00:00.000Z/);

    env.setNow('2026-04-20T00:00:00Z');
    const missed = await bill(s.id);
    // 11:00 in Berlin on the 15th of each month: 10:00 UTC in winter, 09:00 UTC in summer time.
    expect(missed.map((i) => [i.issuedAt, i.lines[0].periodStart, i.lines[0].periodEnd])).toEqual([
      ['2026-02-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z'],
      ['2026-03-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z', '2026-04-15T09:00:00.000Z'],
      ['2026-04-15T09:00:00.000Z', '2026-04-15T09:00:00.000Z', '2026-05-15T09:00:00.000Z'],
    ]);
  });

  it('bills a fee in arrears at its period end, and usage always in arrears, summarised by the measurement description', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([
      { price: { price: { amount: 10 }, payInAdvance: false } },
      { measurement: { aggregationType: 'sum', type: 'metered', description: 'API calls' }, price: { type: 'per_unit', price: { amount: 0.01 }, freeUnits: 100 } },
    ]);
    expect((await ok(env.mcp, 'run_billing', { subscription: s.id })).invoicesCreated).toBe(0);
    const usage = s.items[1].id;
    env.setNow('2026-01-20T00:00:00Z');
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: usage, quantity: '1000' });
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: usage, quantity: 234 });
    env.setNow('2026-02-15T10:00:00Z');
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: usage, quantity: 7 });
    const [invoice] = await bill(s.id);
    expect(invoice.issuedAt).toBe('2026-02-15T10:00:00.000Z');
    expect(lines(invoice)).toEqual([
      [`Product ${n - 1} (2026-01-15 to 2026-02-14)`, '1', 1000, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z'],
      [`Product ${n} (API calls: 1234, 100 free, 2026-01-15 to 2026-02-14)`, '1134', 1134, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z'],
    ]);
    expect(invoice).toMatchObject({ netAmount: 2134, taxAmount: 405, grossAmount: 2539 });
    env.setNow('2026-03-15T10:00:00Z');
    const [next] = await bill(s.id);
    expect(next.lines[1]).toMatchObject({ quantity: '0', netAmount: 0 });
  });
});

describe('alignment and pro rata', () => {
  it('end_of_month: the first period runs to the month end in the customer time zone, 17/31 days pro rata', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Month ends', type: 'end_of_month' });
    const s = await subscribe([{ price: { proRata: true } }, { price: { price: { amount: 10 }, payInAdvance: false } }], { billingGroup: group.id });
    const [first] = await bill(s.id);
    // 49.90 x 17 / 31 = 27.3645… → 27.36; 1 February 00:00 in Berlin is 31 January 23:00 UTC.
    expect(lines(first)).toEqual([[`Product ${n - 1} (pro rata 17/31 days, 2026-01-15 to 2026-01-31)`, '1', 2736, '2026-01-15T10:00:00.000Z', '2026-01-31T23:00:00.000Z']]);
    // The estimate reads in the customer's dates: February in Berlin, not 31 January to 28 February in UTC.
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    expect(estimate.estimate).toContain(`Product ${n - 1} (2026-02-01 to 2026-02-28) 1 × €49.90`);
    env.setNow('2026-02-01T00:00:00Z');
    const [second] = await bill(s.id);
    expect(second.issuedAt).toBe('2026-01-31T23:00:00.000Z');
    // The arrears fee has no pro rata: its short first period costs the full 10.00.
    expect(lines(second)).toEqual([
      [`Product ${n - 1} (2026-02-01 to 2026-02-28)`, '1', 4990, '2026-01-31T23:00:00.000Z', '2026-02-28T23:00:00.000Z'],
      [`Product ${n} (2026-01-15 to 2026-01-31)`, '1', 1000, '2026-01-15T10:00:00.000Z', '2026-01-31T23:00:00.000Z'],
    ]);
    // A line names its period in the customer's dates: February in Berlin (from 1 February 00:00, 31 January 23:00 UTC,
    // to its last day, 28 February), not the UTC dates of its instants (2026-01-31 to 2026-02-27).
    expect(second.lines[0].description).toBe(`Product ${n - 1} (2026-02-01 to 2026-02-28)`);
  });

  it('custom_day: periods start on the day; the first short period is 26/31 days of 10 January to 10 February', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Tenth', type: 'custom_day', customDay: 10 });
    const s = await subscribe([{ price: { proRata: true } }], { billingGroup: group.id });
    const [first] = await bill(s.id);
    // 49.90 x 26 / 31 = 41.8516… → 41.85
    expect(lines(first)).toEqual([[`Product ${n} (pro rata 26/31 days, 2026-01-15 to 2026-02-09)`, '1', 4185, '2026-01-15T10:00:00.000Z', '2026-02-09T23:00:00.000Z']]);
  });

  it('custom_day with customMonth: a yearly period starts on that day of that month', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const group = await ok(env.mcp, 'create_billing_group', { name: 'March 1st', type: 'custom_day', customDay: 1, customMonth: 3 });
    const s = await subscribe([{ price: { price: { amount: 365 }, billingInterval: '1Y', proRata: true } }], { billingGroup: group.id });
    const [first] = await bill(s.id);
    // 15 January to 1 March is 45 days of the 365 from 1 March 2025: 365.00 x 45 / 365 = 45.00
    expect(lines(first)).toEqual([[`Product ${n} (pro rata 45/365 days, 2026-01-15 to 2026-02-28)`, '1', 4500, '2026-01-15T10:00:00.000Z', '2026-02-28T23:00:00.000Z']]);
  });

  it('an item ordered onto a running subscription bills from the order, not from the subscription start', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}]);
    env.setNow('2026-03-03T12:00:00Z');
    expect(await bill(s.id)).toHaveLength(2);
    const { product, pricePlan } = await charge({ price: { price: { amount: 20 } } });
    const ordered = await ok(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product, pricePlan }] });
    expect(ordered.items[1].billing.nextBillingAt).toBe('2026-03-03T12:00:00.000Z');
    const [invoice] = await bill(s.id);
    // 3 March 13:00 in Berlin plus a month is 3 April 13:00 in summer time: 11:00 UTC.
    expect(lines(invoice)).toEqual([[`Product ${n} (2026-03-03 to 2026-04-02)`, '1', 2000, '2026-03-03T12:00:00.000Z', '2026-04-03T11:00:00.000Z']]);
  });

  it('a quantity change within an arrears period bills each quantity for its days (20/31 at 2, 11/31 at 3); without pro rata the last quantity', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([
      { quantity: 2, price: { price: { amount: 10 }, payInAdvance: false, proRata: true } },
      { quantity: 2, price: { price: { amount: 10 }, payInAdvance: false } },
    ]);
    env.setNow('2026-02-04T10:00:00Z');
    for (const item of s.items) await ok(env.mcp, 'update_subscription_item', { id: item.id, quantity: 3 });
    env.setNow('2026-02-15T10:00:00Z');
    const [invoice] = await bill(s.id);
    // 2 x 10.00 x 20/31 = 12.9032 → 12.90; 3 x 10.00 x 11/31 = 10.645 → 10.65 (half up); the other item: 3 x 10.00.
    expect(lines(invoice)).toEqual([
      [`Product ${n - 1} (pro rata 20/31 days, quantity 2 from 2026-01-15, 2026-01-15 to 2026-02-14)`, '2', 1290, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z'],
      [`Product ${n - 1} (pro rata 11/31 days, quantity 3 from 2026-02-04, 2026-01-15 to 2026-02-14)`, '3', 1065, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z'],
      [`Product ${n} (2026-01-15 to 2026-02-14)`, '3', 3000, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z'],
    ]);
  });

  it('a quantity change within a period paid in advance is settled pro rata on the next invoice (1 → 3 for 11/31 days)', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ price: { proRata: true } }]);
    await bill(s.id);
    env.setNow('2026-02-04T10:00:00Z');
    await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 3 });
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    env.setNow('2026-02-15T10:00:00Z');
    const [invoice] = await bill(s.id);
    // 3 x 49.90 x 11/31 = 53.119 → 53.12, less 1 x 49.90 x 11/31 = 17.706 → 17.71: 35.41; then February at 3: 149.70.
    expect(lines(invoice)).toEqual([
      [`Product ${n} (quantity 1 → 3 from 2026-02-04 to 2026-02-14, pro rata 11/31 days)`, '1', 3541, '2026-02-04T10:00:00.000Z', '2026-02-15T10:00:00.000Z'],
      [`Product ${n} (2026-02-15 to 2026-03-14)`, '3', 14970, '2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z'],
    ]);
    expect(estimate.lines.map((l: any) => l.netAmount)).toEqual([3541, 14970]);
    expect((await ok(env.mcp, 'run_billing', { subscription: s.id })).invoicesCreated).toBe(0);
  });

  it('a billing group set on a running subscription aligns from where billing stands, and moves the next billing date', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ price: { proRata: true } }, { price: { price: { amount: 10 }, payInAdvance: false, proRata: true } }]);
    await bill(s.id);
    env.setNow('2026-01-20T10:00:00Z');
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Month ends', type: 'end_of_month' });
    const updated = await ok(env.mcp, 'update_subscription', { id: s.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], billingGroup: group.id });
    // The arrears item's period now ends with January (1 February 00:00 in Berlin), not on 15 February.
    expect(updated.nextBillingDate).toBe('2026-01-31T23:00:00.000Z');
    env.setNow('2026-03-01T00:00:00Z');
    const invoices = await bill(s.id);
    expect(invoices.map((i) => lines(i))).toEqual([
      // 10.00 x 17/31 = 5.48: 15 January to the month's end.
      [[`Product ${n} (pro rata 17/31 days, 2026-01-15 to 2026-01-31)`, '1', 548, '2026-01-15T10:00:00.000Z', '2026-01-31T23:00:00.000Z']],
      // The in-advance fee goes on from 15 February (14 of February's 28 days: 24.95); February in arrears.
      [
        [`Product ${n - 1} (pro rata 14/28 days, 2026-02-15 to 2026-02-28)`, '1', 2495, '2026-02-15T10:00:00.000Z', '2026-02-28T23:00:00.000Z'],
      ],
      [
        [`Product ${n - 1} (2026-03-01 to 2026-03-31)`, '1', 4990, '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z'],
        [`Product ${n} (2026-02-01 to 2026-02-28)`, '1', 1000, '2026-01-31T23:00:00.000Z', '2026-02-28T23:00:00.000Z'],
      ],
    ]);
  });

  it('quantity multiplies a flat fee', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ quantity: 3 }]);
    const [first] = await bill(s.id);
    expect(first.lines[0]).toMatchObject({ quantity: '3', netAmount: 14970 });
  });
});

describe('quantity changes in the last period paid in advance, and the credit balance', () => {
  /** A customer of its own (credit balances must not leak into other tests), with a DE invoice address. */
  async function buyer(): Promise<any> {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Credit', companyName: `Credited ${++n} GmbH` });
    await ok(env.mcp, 'create_invoice_address', { id: c.id, street: 'Unter den Linden', houseNumber: '2', zip: '10117', city: 'Berlin', countryCode: 'DE' });
    return c;
  }
  const balance = async (id: string) => (await ok(env.mcp, 'get_customer', { id })).creditBalance;
  /** An active subscription of one flat fee in advance, pro rata, cancellable each month without notice. */
  async function monthly(who: string, quantity: number, amount: number): Promise<any> {
    const made = await charge({ price: { price: { amount }, proRata: true } });
    const plan = await ok(env.mcp, 'create_plan', { code: `seats-${n}`, name: 'Seats', charges: [{ ...made, quantity }] });
    return ok(env.mcp, 'create_subscription', { customer: who, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
  }

  it('a change made before the cancellation is settled at the end of the last period, where no period follows to carry it', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const c = await buyer();
    const s = await monthly(c.id, 1, 49.9);
    await bill(s.id);
    env.setNow('2026-02-04T10:00:00Z');
    await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 3 });
    env.setNow('2026-02-05T10:00:00Z');
    await ok(env.mcp, 'cancel_subscription', { id: s.id });
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing.nextBillingAt).toBe('2026-02-15T10:00:00.000Z');
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    env.setNow('2026-02-16T10:00:00Z');
    const [invoice] = await bill(s.id);
    // As while the subscription goes on: 3 x 49.90 x 11/31 = 53.12 less 1 x 49.90 x 11/31 = 17.71.
    expect(lines(invoice)).toEqual([[`Product ${n} (quantity 1 → 3 from 2026-02-04 to 2026-02-14, pro rata 11/31 days)`, '1', 3541, '2026-02-04T10:00:00.000Z', '2026-02-15T10:00:00.000Z']]);
    expect(invoice).toMatchObject({ issuedAt: '2026-02-15T10:00:00.000Z', grossAmount: 4214, status: 'open' });
    expect(estimate.lines.map((l: any) => l.netAmount)).toEqual([3541]);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing).toMatchObject({ nextBillingAt: null, lastBilledTo: '2026-02-15T10:00:00.000Z' });
    const again = await ok(env.mcp, 'run_billing', {});
    expect([...again.invoices, ...again.skipped.map((x: any) => x.subscription)]).not.toContain(s.id);
  });

  it('a change made after the cancellation schedules the settlement itself (the item had nothing left to bill)', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const c = await buyer();
    const s = await monthly(c.id, 1, 49.9);
    await bill(s.id);
    env.setNow('2026-01-20T10:00:00Z');
    await ok(env.mcp, 'cancel_subscription', { id: s.id });
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing.nextBillingAt).toBeNull();
    env.setNow('2026-02-04T10:00:00Z');
    await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 2 });
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing.nextBillingAt).toBe('2026-02-15T10:00:00.000Z');
    env.setNow('2026-02-16T10:00:00Z');
    const [invoice] = await bill(s.id);
    // 2 x 49.90 x 11/31 = 35.41 less 1 x 49.90 x 11/31 = 17.71: 17.70; tax 19 % 3.363 → 3.36.
    expect(lines(invoice)).toEqual([[`Product ${n} (quantity 1 → 2 from 2026-02-04 to 2026-02-14, pro rata 11/31 days)`, '1', 1770, '2026-02-04T10:00:00.000Z', '2026-02-15T10:00:00.000Z']]);
    expect(invoice).toMatchObject({ grossAmount: 2106, issuedAt: '2026-02-15T10:00:00.000Z' });
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing.nextBillingAt).toBeNull();
  });

  it('a decrease in the last period is credited on the open invoice that billed it: a credit note, no invoice below 0', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const c = await buyer();
    const s = await monthly(c.id, 3, 49.9);
    const [first] = await bill(s.id);
    // 3 x 49.90 = 149.70, tax 28.443 → 28.44: 178.14.
    expect(first).toMatchObject({ grossAmount: 17814, amountDue: 17814, status: 'open' });
    env.setNow('2026-01-20T10:00:00Z');
    await ok(env.mcp, 'cancel_subscription', { id: s.id });
    env.setNow('2026-02-04T10:00:00Z');
    await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 1 });
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    env.setNow('2026-02-16T10:00:00Z');
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(run).toMatchObject({ subscriptionsBilled: 1, subscriptionsFailed: 0, invoicesCreated: 0 });
    // 1 x 49.90 x 11/31 = 17.71 less 3 x 49.90 x 11/31 = 53.12: -35.41; tax -6.7279 → -6.73; 41.14 credited.
    const notes = (await ok(env.mcp, 'list_credit_notes', { invoice: first.id })).data;
    expect(notes.map((x: any) => x.amount)).toEqual([4214]);
    expect((await ok(env.mcp, 'get_credit_note', { id: notes[0].id })).reason).toBe(`Product ${n} (quantity 3 → 1 from 2026-02-04 to 2026-02-14, pro rata 11/31 days)`);
    expect(estimate).toMatchObject({ lines: [], grossAmount: 0, creditNoteAmount: 4214 });
    expect(await ok(env.mcp, 'get_invoice', { id: first.id })).toMatchObject({ amountCredited: 4214, amountDue: 13600, status: 'open' });
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing.nextBillingAt).toBeNull();
    expect((await ok(env.mcp, 'run_billing', { subscription: s.id })).subscriptionsSkipped).toBe(1);
  });

  it('a decrease that outweighs the next period (10 → 1 seats) no longer fails the run: the next period is invoiced, the decrease credited', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const c = await buyer();
    const made = await charge({ price: { price: { amount: 10 }, proRata: true } });
    const plan = await ok(env.mcp, 'create_plan', { code: `ten-${n}`, name: 'Ten', charges: [{ ...made, quantity: 10 }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    const [january] = await bill(s.id);
    // 10 x 10.00 + 19 %: 119.00, paid.
    await ok(env.mcp, 'record_invoice_payment', { id: january.id, amount: 11900 });
    env.setNow('2026-02-04T10:00:00Z');
    await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 1 });
    env.setNow('2026-02-15T10:00:00Z');
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    const [february] = await bill(s.id);
    // February at 1 seat: 10.00 + 1.90. The decrease, 3.55 - 35.48 = -31.93 (tax -6.0667 → -6.07), is 38.00 credited
    // on January's paid invoice, so to the customer's balance.
    expect(lines(february)).toEqual([[`Product ${n} (2026-02-15 to 2026-03-14)`, '1', 1000, '2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z']]);
    expect(february).toMatchObject({ grossAmount: 1190, creditApplied: 0, amountDue: 1190 });
    expect(estimate).toMatchObject({ grossAmount: 1190, creditNoteAmount: 3800 });
    expect(estimate.lines.map((l: any) => l.netAmount)).toEqual([1000]);
    expect((await ok(env.mcp, 'list_credit_notes', { invoice: january.id })).data.map((x: any) => x.amount)).toEqual([3800]);
    expect(await balance(c.id)).toBe(3800);
    env.setNow('2026-03-15T10:00:00Z');
    const [march] = await bill(s.id);
    expect(march).toMatchObject({ grossAmount: 1190, creditApplied: 1190, amountDue: 0, status: 'paid' });
    expect(await balance(c.id)).toBe(2610);
  });

  it('a decrease to credit on an invoice under a payment plan fails the billing of that subscription, naming cancel_payment_plan, until the plan is cancelled', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const c = await buyer();
    const s = await monthly(c.id, 3, 49.9);
    const [first] = await bill(s.id);
    await ok(env.mcp, 'create_payment_plan', { invoice: first.id, installmentCount: 2, firstDueAt: '2026-02-01', interval: '1M' });
    env.setNow('2026-01-20T10:00:00Z');
    await ok(env.mcp, 'cancel_subscription', { id: s.id });
    env.setNow('2026-02-04T10:00:00Z');
    await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 1 });
    env.setNow('2026-02-16T10:00:00Z');
    const failed = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(failed).toMatchObject({ subscriptionsFailed: 1, invoicesCreated: 0 });
    expect(failed.failed[0].error).toContain('cancel_payment_plan');
    expect((await ok(env.mcp, 'list_credit_notes', { invoice: first.id })).data).toEqual([]);
    const plan = (await ok(env.mcp, 'list_payment_plans', { invoice: first.id })).data[0];
    await ok(env.mcp, 'cancel_payment_plan', { id: plan.id });
    expect(await ok(env.mcp, 'run_billing', { subscription: s.id })).toMatchObject({ subscriptionsBilled: 1, subscriptionsFailed: 0 });
    expect((await ok(env.mcp, 'list_credit_notes', { invoice: first.id })).data.map((x: any) => x.amount)).toEqual([4214]);
  });

  it('the invoices of one unit each see the credit balance the earlier ones left (three missed months, 70.00 of credit)', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const c = await buyer();
    await env.sql.run('UPDATE customers SET credit_balance = 7000 WHERE id = ?', c.id);
    const s = await monthly(c.id, 1, 49.9);
    env.setNow('2026-03-20T10:00:00Z');
    const invoices = await bill(s.id);
    // 49.90 + 19 % = 59.38 each: the first takes 59.38 of the 70.00, the second the 10.62 left, the third nothing.
    expect(invoices.map((i) => [i.issuedAt.slice(0, 10), i.creditApplied, i.amountDue])).toEqual([
      ['2026-01-15', 5938, 0],
      ['2026-02-15', 1062, 4876],
      ['2026-03-15', 0, 5938],
    ]);
    expect(await balance(c.id)).toBe(0);
  });
});

describe('usage lines', () => {
  // Values measured within the period: 3 (id a), 5 (id b), 5 (id a), 2 (id c).
  it.each([
    ['sum', '15', 1500],
    ['count', '4', 400],
    ['count_unique', '3', 300],
    ['max', '5', 500],
    ['average', '3.75', 375],
    ['last_value', '2', 200],
  ])('%s of the period at 1.00 EUR a unit is %s units, %i cents', async (aggregationType, quantity, net) => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ measurement: { aggregationType, type: 'metered' }, price: { type: 'per_unit', price: { amount: 1 } } }]);
    const item = s.items[0].id;
    env.setNow('2026-01-25T00:00:00Z');
    for (const [q, id] of [[3, 'a'], [5, 'b'], [5, 'a'], [2, 'c']] as const) {
      await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item, quantity: q, id, measuredAt: `2026-01-2${id === 'c' ? 2 : 1}T00:00:00Z` });
    }
    env.setNow('2026-02-15T10:00:00Z');
    const [invoice] = await bill(s.id);
    expect(invoice.lines[0]).toMatchObject({ quantity, netAmount: net });
  });

  it('recurring with fairBilling: time-weighted over the period (743 hours across the DST change), only while active', async () => {
    env.setNow('2026-02-28T23:00:00Z');
    const fair = { measurement: { aggregationType: 'last_value', type: 'recurring', fairBilling: true }, price: { type: 'per_unit', price: { amount: 1 } } };
    const unfair = { measurement: { aggregationType: 'last_value', type: 'recurring', fairBilling: false }, price: { type: 'per_unit', price: { amount: 1 } } };
    const s = await subscribe([fair, unfair]);
    for (const item of s.items) {
      await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item.id, quantity: 10, measuredAt: '2026-02-28T23:00:00Z' });
    }
    env.setNow('2026-03-15T23:00:00Z');
    for (const item of s.items) await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: item.id, quantity: 20 });
    env.setNow('2026-03-31T22:00:00Z');
    const [invoice] = await bill(s.id);
    // 10 for 360 h, then 20 for 383 h, of 743 h: 11,260 / 743 = 15.154778 units → 15.15 EUR; unfair: the last value, 20.
    expect(invoice.lines.map((l: any) => [l.quantity, l.netAmount])).toEqual([
      ['15.154778', 1515],
      ['20', 2000],
    ]);
  });

  it('instant_metered: each value is billed at once on an invoice of its own', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ measurement: { aggregationType: 'last_value', type: 'instant_metered' }, price: { type: 'per_unit', price: { amount: 0.5 } } }]);
    expect(s.items[0].billing.nextBillingAt).toBeNull();
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: 3 });
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: '1.5' });
    const invoices = (await ok(env.mcp, 'list_invoices', { subscription: s.id })).data;
    expect(invoices.map((i: any) => i.grossAmount)).toEqual([179, 89]);
    expect((await ok(env.mcp, 'run_billing', { subscription: s.id })).invoicesCreated).toBe(0);
  });
});

describe('discounts', () => {
  it('a once coupon takes 10 % off the first invoice only; a limited fixed discount 5.00 off two invoices; appliedIntervals counts them', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const code = `ONCE${n}`;
    const coupon = await ok(env.mcp, 'create_coupon', { code, name: 'Once', type: 'percentage', frequency: 'once', percentage: 10 });
    const s = await subscribe([{}]);
    const { product, pricePlan } = await charge({ price: { price: { amount: 20 } } });
    const ordered = await ok(env.mcp, 'order_subscription_products', {
      id: s.id,
      products: [
        { product, pricePlan, discount: { type: 'fixed_amount', frequency: 'limited', frequencyInterval: 2, fixedAmount: { amount: 5, currency: 'EUR' } } },
        { product, pricePlan, customName: 'Couponed', discount: { coupon: coupon.id } },
      ],
    });
    env.setNow('2026-03-16T00:00:00Z');
    const invoices = await bill(s.id);
    const periods = ['2026-01-15 to 2026-02-14', '2026-02-15 to 2026-03-14', '2026-03-15 to 2026-04-14'];
    expect(invoices.map((i) => i.lines.map((l: any) => [l.description, l.netAmount]))).toEqual(
      [0, 1, 2].map((k) => [
        [`Product ${n - 1} (${periods[k]})`, 4990],
        [`Product ${n} (${periods[k]})`, 2000],
        ...(k < 2 ? [['Discount discount', -500]] : []),
        [`Couponed (${periods[k]})`, 2000],
        ...(k === 0 ? [[`Discount coupon ${code} (10%)`, -200]] : []),
      ]),
    );
    const got = await ok(env.mcp, 'get_subscription', { id: ordered.id });
    expect(got.items.flatMap((i: any) => i.appliedDiscounts.map((d: any) => [d.status, d.appliedIntervals]))).toEqual([
      ['expired', 2],
      ['expired', 1],
    ]);
  });
});

describe('prices', () => {
  it('a per-unit price of 0.002 EUR: 2,150.5 units with 1,000 free cost 1,150.5 x 0.2 cents = 230.1 → 2.30 EUR', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ measurement: { aggregationType: 'sum', type: 'metered' }, price: { type: 'per_unit', price: { amount: 0.002 }, freeUnits: 1000 } }]);
    env.setNow('2026-01-20T00:00:00Z');
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: '2150.5' });
    env.setNow('2026-02-15T10:00:00Z');
    const [invoice] = await bill(s.id);
    expect(invoice.lines[0]).toMatchObject({ quantity: '1150.5', unitAmountDecimal: '0.2', unitAmount: null, netAmount: 230 });
    expect(invoice).toMatchObject({ netAmount: 230, taxAmount: 44, grossAmount: 274 });
  });

  it('graduated tiers in a run: 150 units are 10 x 1.00 + 90 x 0.50 + 50 x 0.25, plus the first tier flat fee of 5.00', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const tiers = [
      { upTo: 10, unitAmount: 1, flatAmount: 5 },
      { upTo: 100, unitAmount: 0.5 },
      { upTo: null, unitAmount: 0.25 },
    ];
    const s = await subscribe([{ measurement: { aggregationType: 'sum', type: 'metered' }, price: { type: 'graduated', price: undefined, tiers } }]);
    env.setNow('2026-01-20T00:00:00Z');
    await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: 150 });
    env.setNow('2026-02-15T10:00:00Z');
    const [invoice] = await bill(s.id);
    expect(invoice.lines.map((l: any) => [l.quantity, l.unitAmountDecimal, l.netAmount])).toEqual([
      ['10', '100', 1000],
      ['1', '500', 500],
      ['90', '50', 4500],
      ['50', '25', 1250],
    ]);
    expect(invoice.netAmount).toBe(7250);
  });

  it('a forever coupon discounts every invoice; a 100 % discount makes an invoice of 0, paid at once', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const code = `FOREVER${n}`;
    await ok(env.mcp, 'create_coupon', { code, name: 'Forever', type: 'percentage', frequency: 'forever', percentage: 100 });
    const s = await subscribe([{ price: { price: { amount: 0 } } }]);
    const { product, pricePlan } = await charge({});
    await ok(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product, pricePlan, discount: { coupon: code } }] });
    env.setNow('2026-03-16T00:00:00Z');
    const invoices = await bill(s.id);
    expect(invoices.map((i) => [i.status, i.grossAmount, i.lines.length])).toEqual([
      ['paid', 0, 3],
      ['paid', 0, 3],
      ['paid', 0, 3],
    ]);
    const item = (await env.http('GET', `/subscriptions/${s.id}`)).body.items[1];
    expect(item.appliedDiscounts.map((d: any) => [d.status, d.appliedIntervals])).toEqual([['active', 3]]);
  });
});

describe('ends, pauses and resumes', () => {
  it('termination bills the final partial arrears period pro rata (10/31 days) and stops billing', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{ price: { price: { amount: 10 }, payInAdvance: false, proRata: true } }]);
    env.setNow('2026-01-25T10:00:00Z');
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    const [last] = await bill(s.id);
    expect(lines(last)).toEqual([[`Product ${n} (pro rata 10/31 days, 2026-01-15 to 2026-01-24)`, '1', 323, '2026-01-15T10:00:00.000Z', '2026-01-25T10:00:00.000Z']]);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items[0].billing.nextBillingAt).toBeNull();
  });

  it('a pending cancellation cuts an in-advance period short: billed up to the cancellation date (31/365 days)', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const made = await charge({ price: { price: { amount: 120 }, billingInterval: '1Y', proRata: true } });
    const plan = await ok(env.mcp, 'create_plan', { code: `yearly-${n}`, name: 'Yearly', charges: [made] });
    const s = await ok(env.mcp, 'create_subscription', {
      customer: customer.id,
      plan: plan.id,
      periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }],
    });
    await ok(env.mcp, 'activate_subscription', { id: s.id });
    await ok(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2026-02-15T10:00:00Z' });
    const [invoice] = await bill(s.id);
    // 120.00 x 31 / 365 = 10.1917… → 10.19
    expect(lines(invoice)).toEqual([[`Product ${n} (pro rata 31/365 days, 2026-01-15 to 2026-02-14)`, '1', 1019, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z']]);
  });

  it('a cancellation revoked after it cut an in-advance period short: without proRata the rest costs nothing (one full price per period), with proRata the parts add up', async () => {
    env.setNow('2026-11-30T23:00:00Z');
    const s = await subscribe(
      [{ price: { price: { amount: 31 }, proRata: false } }, { price: { price: { amount: 31 }, proRata: true } }],
      { periods: [{ contractPeriod: '14D', cancellationPeriod: '0D' }] },
    );
    const [fixed, prorated] = [n - 1, n];
    expect((await ok(env.mcp, 'cancel_subscription', { id: s.id })).cancellationDate).toBe('2026-12-14T23:00:00.000Z');
    const [cut] = await bill(s.id);
    expect(lines(cut)).toEqual([
      [`Product ${fixed} (2026-12-01 to 2026-12-14)`, '1', 3100, '2026-11-30T23:00:00.000Z', '2026-12-14T23:00:00.000Z'],
      [`Product ${prorated} (pro rata 14/31 days, 2026-12-01 to 2026-12-14)`, '1', 1400, '2026-11-30T23:00:00.000Z', '2026-12-14T23:00:00.000Z'],
    ]);
    env.setNow('2026-12-05T10:00:00Z');
    expect((await ok(env.mcp, 'revoke_subscription_cancellation', { id: s.id })).nextBillingDate).toBe('2026-12-14T23:00:00.000Z');
    env.setNow('2026-12-14T23:00:00Z');
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    const [rest] = await bill(s.id);
    expect(lines(rest)).toEqual([
      [`Product ${fixed} (paid in full from 2026-12-01, 2026-12-15 to 2026-12-31)`, '1', 0, '2026-12-14T23:00:00.000Z', '2026-12-31T23:00:00.000Z'],
      [`Product ${prorated} (pro rata 17/31 days, 2026-12-15 to 2026-12-31)`, '1', 1700, '2026-12-14T23:00:00.000Z', '2026-12-31T23:00:00.000Z'],
    ]);
    expect(estimate.lines.map((l: any) => [l.description, l.netAmount])).toEqual(rest.lines.map((l: any) => [l.description, l.netAmount]));
    env.setNow('2026-12-31T23:00:00Z');
    const [january] = await bill(s.id);
    expect(january.lines.map((l: any) => l.netAmount)).toEqual([3100, 3100]);
  });

  it('a paused subscription is skipped with the reason; resumed without a date, every missed period is billed', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}]);
    await bill(s.id);
    env.setNow('2026-02-01T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2026-03-20T00:00:00Z');
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(run.skipped[0].reason).toMatch(/^paused since 2026-02-01T00:00:00.000Z/);
    // A run over everything due does not even look at it (it would only skip it, every time).
    const all = await ok(env.mcp, 'run_billing', {});
    expect([...all.invoices, ...all.skipped.map((x: any) => x.subscription)]).not.toContain(s.id);
    await ok(env.mcp, 'resume_subscription', { id: s.id });
    expect((await bill(s.id)).map((i) => i.issuedAt)).toEqual(['2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z']);
  });

  it('resumed with nextBillingDate, nothing before it is billed and billing restarts from it', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}]);
    await bill(s.id);
    env.setNow('2026-02-01T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2026-03-20T00:00:00Z');
    await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2026-03-20T00:00:00Z' });
    const invoices = await bill(s.id);
    // 20 March 01:00 in Berlin plus a month is 20 April 01:00 in summer time: 19 April 23:00 UTC.
    expect(invoices.map((i) => [i.issuedAt, i.lines[0].periodEnd])).toEqual([['2026-03-20T00:00:00.000Z', '2026-04-19T23:00:00.000Z']]);
  });
});

describe('tax', () => {
  it('taxes each line by its product tax group, and tax is computed per rate on the summed net', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const reduced = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Reduced',
      type: 'reduced',
      taxes: [{ code: 'DE7', rate: 7, countryCode: 'DE', validFrom: '2021-01-01' }],
    });
    const s = await subscribe([{ price: { price: { amount: 0.05 } } }, { price: { price: { amount: 0.05 } } }, {}]);
    await ok(env.mcp, 'update_product', { id: s.items[2].product.id, name: s.items[2].product.name, taxGroup: reduced.id });
    const [invoice] = await bill(s.id);
    expect(invoice.lines.map((l: any) => l.taxRate)).toEqual([19, 19, 7]);
    // 19 % of 10 cents is 1.9 → 2 cents: per rate on the sum, not 1 + 1 per line. 7 % of 49.90 is 3.493 → 3.49.
    expect(invoice.taxes).toEqual([
      { rate: 19, netAmount: 10, taxAmount: 2 },
      { rate: 7, netAmount: 4990, taxAmount: 349 },
    ]);
  });
});

describe('runs', () => {
  it('refuses asOf in the future naming the field, needs invoice:write, and answers 201 over REST', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const p = await fails(env.mcp, 'run_billing', { asOf: '2026-01-16T00:00:00Z' }, 422);
    expect(paths(p)).toEqual(['asOf']);
    const reader = await env.newKey(env.org, ['invoice:read']);
    expect((await env.http('POST', '/billing-runs', { token: reader, body: {} })).status).toBe(403);
    const created = await env.http('POST', '/billing-runs', { body: {} });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ trigger: 'api', status: 'completed', subscription: null });
    expect((await env.http('GET', `/billing-runs/${created.body.id}`)).body).toEqual(created.body);
  });

  it('the job loop bills what is due and records its run as schedule', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}]);
    const summary = await runDueJobs(env.app, new Date('2026-01-15T10:00:00Z'));
    expect(summary.jobs.billing!.invoicesCreated).toBeGreaterThanOrEqual(1);
    const runs = (await ok(env.mcp, 'list_billing_runs', { trigger: 'schedule' })).data;
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect((await ok(env.mcp, 'list_invoices', { subscription: s.id })).data).toHaveLength(1);
  });

  it('a run as of a later time than the clock (jobs run --now) keeps idempotency keys and portal sessions that are still valid', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const headers = { 'idempotency-key': 'purge-check' };
    const created = await env.http('POST', '/customers', { body: { lastName: 'Hopper' }, headers });
    expect(created.status).toBe(201);
    const portal = await ok(env.mcp, 'create_portal_session', { id: created.body.id });

    const later = await runDueJobs(env.app, new Date('2026-03-01T00:00:00Z'));
    expect(later.jobs).toMatchObject({ idempotencyKeys: { purged: 0 }, portalSessions: { purged: 0 } });
    const replay = await env.http('POST', '/customers', { body: { lastName: 'Hopper' }, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(created.body.id);

    env.setNow('2026-01-16T11:00:00Z');
    const due = await runDueJobs(env.app, new Date('2026-03-01T00:00:00Z'));
    expect(due.jobs.idempotencyKeys!.purged).toBeGreaterThanOrEqual(1);
    expect(due.jobs.portalSessions!.purged).toBeGreaterThanOrEqual(1);
    expect((await fetch(portal.url)).status).toBe(404);
  });

  it('overlapping runs never bill a period twice', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const subs = [];
    for (let i = 0; i < 8; i++) subs.push(await subscribe([{}, { price: { payInAdvance: false } }]));
    const asOf = new Date('2026-03-01T00:00:00Z');
    const deps = { store: env.app.store, settings: { paymentTermDays: 14 } };
    const runs = await Promise.all(
      [0, 1, 2, 3].map(() => runBilling(deps, { trigger: 'cli', asOf, now: asOf, recordEmpty: true })),
    );
    const invoices = new Set(runs.flat().flatMap((r) => r.invoices));
    for (const s of subs) {
      const billed = (await ok(env.mcp, 'list_invoices', { subscription: s.id, limit: 50 })).data;
      // 15 January (in advance), 15 February (in advance + arrears January): 2 invoices, never more.
      expect(billed).toHaveLength(2);
      for (const i of billed) expect(invoices.has(i.id)).toBe(true);
    }
  });

  it('one run bills 30 subscriptions without a failure; where units commit alone (PostgreSQL) the next starts only after the previous is answered', async () => {
    env.setNow('2026-02-20T08:00:00Z');
    const fee = await charge({});
    const plan = await ok(env.mcp, 'create_plan', { code: `plan-${n}`, name: `Plan ${n}`, charges: [{ ...fee, quantity: 1 }] });
    const subs = [];
    for (let i = 0; i < 30; i++) {
      subs.push(await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true }));
    }
    const store = env.app.store;
    const { store: counting, units } = countingStore(store);
    const asOf = new Date('2026-02-20T08:00:00Z');
    const [run] = await runBilling({ store: counting, settings: { paymentTermDays: 14 } }, { trigger: 'cli', asOf, now: asOf, recordEmpty: true });
    expect(run!.subscriptionsFailed).toBe(0);
    for (const s of subs) expect((await ok(env.mcp, 'list_invoices', { subscription: s.id })).data).toHaveLength(1);
    // SQLite's units share a group commit, so a run keeps several in flight; PostgreSQL's would abort one another.
    if (store.groupCommit) expect(units.most).toBeGreaterThan(1);
    else expect(units.most).toBe(1);
  });
});

describe('the organisation as seller', () => {
  it('get_organisation / update_organisation: omitted fields stay, null clears, bad input names the field', async () => {
    const before = await ok(env.mcp, 'get_organisation', {});
    expect(before).toMatchObject({ id: env.org.organisationId, name: 'Test organisation', address: null, paymentTermDays: null });
    const bad = await fails(env.mcp, 'update_organisation', { address: { street: 'A', zip: '1', city: 'B', countryCode: 'UK' }, brandColor: 'blue', paymentTermDays: 400 }, 422);
    expect(paths(bad).sort()).toEqual(['address.countryCode', 'brandColor', 'paymentTermDays']);
    const set = await ok(env.mcp, 'update_organisation', { legalName: 'Test GmbH', vatId: 'DE136695976', address: { street: 'Allee', houseNumber: '2', zip: '10115', city: 'Berlin', countryCode: 'DE' } });
    expect(set).toMatchObject({ name: 'Test organisation', legalName: 'Test GmbH', address: { countryCode: 'DE', houseNumber: '2' } });
    expect((await ok(env.mcp, 'update_organisation', { vatId: null })).vatId).toBeNull();
    expect((await env.http('GET', '/organisation')).body.legalName).toBe('Test GmbH');
    const reader = await env.newKey(env.org, ['invoice:read']);
    expect((await env.http('PUT', '/organisation', { token: reader, body: { name: 'X' } })).status).toBe(403);
  });

  it('intra-EU reverse charge: 0 % for a buyer with a VAT id in another EU country, the rate otherwise; the organisation payment terms set the due date', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    await ok(env.mcp, 'update_organisation', { paymentTermDays: 30, address: { street: 'Allee', zip: '10115', city: 'Berlin', countryCode: 'DE' } });
    const group = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Intra-EU',
      reverseChargeType: 'REVERSE_CHARGE_INTRA_EU_SUPPLY',
      taxes: [
        { code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' },
        { code: 'AT', rate: 20, countryCode: 'AT', validFrom: '2021-01-01' },
      ],
    });
    const product = await ok(env.mcp, 'create_product', { name: 'Intra', taxGroup: group.id });
    const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 100 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'intra', name: 'Intra', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
    const rateFor = async (countryCode: string, vatId: string | null) => {
      const buyer = await ok(env.mcp, 'create_customer', { companyName: `Buyer ${countryCode} ${vatId}` });
      await ok(env.mcp, 'create_invoice_address', { id: buyer.id, street: 'S', zip: '1010', city: 'C', countryCode, vatId });
      const s = await ok(env.mcp, 'create_subscription', { customer: buyer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
      const [invoice] = await bill(s.id);
      return [invoice.lines[0].taxRate, invoice.dueAt];
    };
    expect(await rateFor('AT', 'ATU13585627')).toEqual([0, '2026-02-14T10:00:00.000Z']);
    expect(await rateFor('AT', null)).toEqual([20, '2026-02-14T10:00:00.000Z']);
    expect(await rateFor('DE', 'DE136695976')).toEqual([19, '2026-02-14T10:00:00.000Z']);
    await ok(env.mcp, 'update_organisation', { paymentTermDays: null, address: null });
  });
});

describe('what an invoice shows and in which currency', () => {
  it('invoiceVisibility never or if_not_zero leaves out lines of 0 (the period is still billed); a charged line always shows', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}, { price: { price: { amount: 0 } } }, { price: { price: { amount: 0 } } }, { price: { price: { amount: 5 } } }]);
    await ok(env.mcp, 'update_product', { id: s.items[1].product.id, name: s.items[1].product.name, invoiceVisibility: 'never' });
    await ok(env.mcp, 'update_product', { id: s.items[2].product.id, name: s.items[2].product.name, invoiceVisibility: 'if_not_zero' });
    await ok(env.mcp, 'update_product', { id: s.items[3].product.id, name: s.items[3].product.name, invoiceVisibility: 'never' });
    const [invoice] = await bill(s.id);
    expect(invoice.lines.map((l: any) => [l.description, l.netAmount])).toEqual([
      [`Product ${n - 3} (2026-01-15 to 2026-02-14)`, 4990],
      [`Product ${n} (2026-01-15 to 2026-02-14)`, 500],
    ]);
    const after = (await env.http('GET', `/subscriptions/${s.id}`)).body;
    expect(after.items.map((i: any) => i.billing.nextBillingAt)).toEqual(after.items.map(() => '2026-02-15T10:00:00.000Z'));
  });

  it("a customer's currency is fixed once it has a subscription or an invoice (409 naming the rule); before, it may change", async () => {
    const fresh = await ok(env.mcp, 'create_customer', { companyName: 'Currency GmbH' });
    expect((await ok(env.mcp, 'update_customer', { id: fresh.id, currencyCode: 'USD' })).currencyCode).toBe('USD');
    await ok(env.mcp, 'update_customer', { id: fresh.id, currencyCode: 'EUR' });
    await ok(env.mcp, 'create_invoice', { customer: fresh.id, lines: [{ description: 'One-off', quantity: 1, unitAmount: 100 }] });
    const refused = await fails(env.mcp, 'update_customer', { id: fresh.id, currencyCode: 'USD' }, 409);
    expect(refused.detail).toMatch(/currency of customer .* is fixed at EUR: it has 1 invoice\(s\)/);
    expect((await ok(env.mcp, 'get_customer', { id: fresh.id })).currencyCode).toBe('EUR');
    expect((await ok(env.mcp, 'update_customer', { id: fresh.id, companyName: 'Renamed GmbH' })).companyName).toBe('Renamed GmbH');
  });
});

describe('item description and furtherInformation (issue 17)', () => {
  it('are set when ordering and by update_subscription_item, shown on the item, and printed after each line that bills the item', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const s = await subscribe([{}]);
    const { product, pricePlan } = await charge({ price: { price: { amount: 20 } } });
    const ordered = await ok(env.mcp, 'order_subscription_products', {
      id: s.id,
      products: [{ product, pricePlan, furtherInformation: 'Licence LIC-42', customDescription: 'Berlin office' }],
    });
    const addon = ordered.items[1];
    expect((await ok(env.mcp, 'get_subscription_item', { id: addon.id })).furtherInformation).toBe('Licence LIC-42');
    const [first] = await bill(s.id);
    expect(first.lines.map((l: any) => l.description)).toEqual([`Product ${n - 1} (2026-01-15 to 2026-02-14)`, `Product ${n} (2026-01-15 to 2026-02-14) – Berlin office – Licence LIC-42`]);
    const patched = await env.http('PATCH', `/subscription-items/${s.items[0].id}`, {
      body: { furtherInformation: 'Site Berlin' },
      contentType: 'application/merge-patch+json',
    });
    expect([patched.status, patched.body.furtherInformation]).toEqual([200, 'Site Berlin']);
    expect((await ok(env.mcp, 'update_subscription_item', { id: addon.id, furtherInformation: null })).furtherInformation).toBeNull();
    expect(paths(await fails(env.mcp, 'update_subscription_item', { id: addon.id, furtherInformation: 'x'.repeat(256) }, 422))).toEqual(['furtherInformation']);
    env.setNow('2026-02-15T10:00:00Z');
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    expect(estimate.lines.map((l: any) => l.description)).toEqual([`Product ${n - 1} (2026-02-15 to 2026-03-14) – Site Berlin`, `Product ${n} (2026-02-15 to 2026-03-14) – Berlin office`]);
    const [second] = await bill(s.id);
    expect(second.lines.map((l: any) => l.description)).toEqual([`Product ${n - 1} (2026-02-15 to 2026-03-14) – Site Berlin`, `Product ${n} (2026-02-15 to 2026-03-14) – Berlin office`]);
  });
});
