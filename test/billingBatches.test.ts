/**
 * A run over many subscriptions bills a few at a time in one unit of work (src/domain/billing/batch.ts:
 * their rows read ahead, their invoices, events, e-mails, charge keys and progress written together).
 * Through the real server on each engine (SQLite, PostgreSQL): each subscription is billed exactly as its estimate
 * said, the invoices are numbered without a gap, and a subscription that fails fails alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBilling } from '../src/domain/billing/run.js';
import type { Store } from '../src/store/store.js';
import { setupBilling } from './billingFixtures.js';
import { countingStore, ok, type TestEnv } from './helpers.js';

let env: TestEnv;
let customer: any;
let tax: any;
let n = 0;

beforeAll(async () => {
  ({ env, tax, customer } = await setupBilling({ lastName: 'Batch', companyName: 'Batched GmbH' }, 'Weg'));
  await ok(env.mcp, 'create_unit', { name: 'call' });
});
afterAll(() => env.close());

/** A plan of these charges (price plan fields each), every product taxed at 19 %; `metered` charges measure calls. */
async function plan(charges: Array<Record<string, unknown> & { metered?: boolean }>): Promise<{ id: string; charges: Array<{ product: string; pricePlan: string }> }> {
  const made = [];
  for (const { metered, ...price } of charges) {
    n += 1;
    const measurement = metered ? (await ok(env.mcp, 'create_measurement', { unit: 'call', code: `calls-${n}`, aggregationType: 'sum', type: 'metered' })).id : undefined;
    const product = await ok(env.mcp, 'create_product', { name: `Product ${n}`, taxGroup: tax.id, ...(measurement ? { measurement } : {}) });
    const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, currencyCode: 'EUR', billingInterval: '1M', type: 'flat_fee', ...price });
    made.push({ product: product.id, pricePlan: pricePlan.id, ...(metered ? {} : { quantity: 1 }) });
  }
  return { id: (await ok(env.mcp, 'create_plan', { code: `batch-${n}`, name: `Batch ${n}`, charges: made })).id, charges: made };
}

const subscribe = (p: { id: string }) =>
  ok(env.mcp, 'create_subscription', { customer: customer.id, plan: p.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });

const run = (store: Store, at: string) => {
  const asOf = new Date(at);
  return runBilling({ store, settings: { paymentTermDays: 14 } }, { trigger: 'cli', asOf, now: asOf, org: env.org.organisationId, recordEmpty: true });
};

/** The invoice numbers' counts, which must follow one another: INV-2026-000007 → 7. */
const numbersOf = async (ids: string[]) => {
  const numbers = [];
  for (const id of ids) numbers.push(Number((await ok(env.mcp, 'get_invoice', { id })).number.slice(-6)));
  return numbers.sort((a, b) => a - b);
};
const consecutive = (numbers: number[]) => numbers.map((k, i) => k - i);

describe('billing in batches', () => {
  it('bills each of many subscriptions as its estimate says (quantity changes, discounts, usage), in fewer units than subscriptions, numbering the invoices without a gap', async () => {
    env.setNow('2026-01-15T10:00:00Z');
    const fees = await plan([{ price: { amount: 49.9 }, payInAdvance: true }, { price: { amount: 9.9 }, payInAdvance: false, proRata: true }]);
    const usage = await plan([{ type: 'per_unit', price: { amount: 0.02 }, freeUnits: 100, payInAdvance: false, metered: true }, { price: { amount: 10 }, payInAdvance: true }]);
    const seats = await plan([{ price: { amount: 20 }, payInAdvance: true, proRata: true }]);
    const subs: any[] = [];
    for (let i = 0; i < 12; i++) subs.push(await subscribe([fees, usage, seats][i % 3]!));
    for (const s of subs.filter((_, i) => i % 3 === 2 && i % 2 === 0)) {
      const { product, pricePlan } = seats.charges[0]!;
      await ok(env.mcp, 'order_subscription_products', {
        id: s.id,
        products: [{ product, pricePlan, discount: { type: 'percentage', frequency: 'limited', frequencyInterval: 2, percentage: 10 } }],
      });
    }

    const first = countingStore(env.app.store);
    const [january] = await run(first.store, '2026-01-15T10:00:00Z');
    expect(january).toMatchObject({ subscriptionsBilled: 12, subscriptionsFailed: 0, invoicesCreated: 12 });
    expect(first.units.begun).toBeLessThan(12);
    expect(consecutive(await numbersOf(january!.invoices))).toEqual(Array(12).fill(consecutive(await numbersOf(january!.invoices))[0]));

    env.setNow('2026-02-01T00:00:00Z');
    for (const [i, s] of subs.entries()) {
      if (i % 3 === 2) await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 3 + (i % 4) });
      if (i % 3 === 1) await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: `${1000 * i}.5`, measuredAt: '2026-01-20T08:00:00Z' });
    }
    env.setNow('2026-02-10T00:00:00Z');
    const estimates: any[] = [];
    for (const s of subs) estimates.push(await ok(env.mcp, 'get_estimated_invoice', { id: s.id }));

    const second = countingStore(env.app.store);
    const [february] = await run(second.store, '2026-02-15T10:00:00Z');
    expect(february).toMatchObject({ subscriptionsBilled: 12, subscriptionsFailed: 0, invoicesCreated: 12 });
    expect(second.units.begun).toBeLessThan(12);
    const numbers = await numbersOf(february!.invoices);
    expect(numbers[0]).toBe((await numbersOf(january!.invoices))[11]! + 1);
    expect(consecutive(numbers)).toEqual(Array(12).fill(numbers[0]));
    for (const [i, s] of subs.entries()) {
      const billed = (await ok(env.mcp, 'list_invoices', { subscription: s.id, limit: 10 })).data.map((row: any) => row.id);
      const invoices = [];
      for (const id of billed) invoices.push((await env.http('GET', `/invoices/${id}`)).body);
      const invoice = invoices.find((inv) => inv.issuedAt === estimates[i].billingDate);
      expect(invoice, `subscription ${i}`).toBeDefined();
      expect(invoice.lines.map((l: any) => [l.description, l.quantity, l.netAmount, l.taxRate, l.periodStart, l.periodEnd])).toEqual(
        estimates[i].lines.map((l: any) => [l.description, l.quantity, l.netAmount, l.taxRate, l.periodStart, l.periodEnd]),
      );
      expect([invoice.netAmount, invoice.taxAmount, invoice.grossAmount]).toEqual([estimates[i].netAmount, estimates[i].taxAmount, estimates[i].grossAmount]);
    }
    // The discounts were consumed by both invoices, and the items moved on to March.
    const discounted = await ok(env.mcp, 'get_subscription', { id: subs[2].id });
    expect(discounted.items.flatMap((i: any) => i.appliedDiscounts.map((d: any) => [d.status, d.appliedIntervals]))).toEqual([['expired', 2]]);
    for (const s of subs) expect((await ok(env.mcp, 'get_subscription', { id: s.id })).nextBillingDate).toBe('2026-03-15T10:00:00.000Z');
    // Every invoice was announced and queued for e-mail once.
    const events = await env.sql.all<{ n: number }>("SELECT count(*) AS n FROM events WHERE type = 'invoice.created' AND organisation_id = ?", env.org.organisationId);
    expect(Number(events[0]!.n)).toBe(24);
  });

  it('a subscription that fails in a batch fails alone: the others of its batch are billed, the invoices numbered without a gap', async () => {
    env.setNow('2026-03-20T10:00:00Z');
    const cheap = await plan([{ type: 'per_unit', price: { amount: 0.01 }, payInAdvance: false, metered: true }]);
    const dear = await plan([{ type: 'per_unit', price: { amount: 9999999999999.99 }, payInAdvance: false, metered: true }]);
    const subs: any[] = [];
    for (let i = 0; i < 6; i++) subs.push(await subscribe(i === 2 ? dear : cheap));
    env.setNow('2026-03-25T10:00:00Z');
    for (const s of subs) await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: '1000.5', measuredAt: '2026-03-21T10:00:00Z' });

    const [april] = await run(env.app.store, '2026-04-20T10:00:00Z');
    expect(april).toMatchObject({ status: 'failed', subscriptionsFailed: 1, failed: [{ subscription: subs[2].id }] });
    // 09:00Z: 11:00 in Berlin (summer time), a month after the start at 11:00 in winter.
    expect(april!.failed[0]!.error).toMatch(/^Subscription SUB-\d+ cannot be billed on 2026-04-20T09:00:00.000Z: its line .* comes to more than the €9,999,999,999.99 an invoice may total/);
    // 1,000.5 calls at 0.01: 10.01 net, 1.90 tax.
    for (const [i, s] of subs.entries()) {
      const billed = (await ok(env.mcp, 'list_invoices', { subscription: s.id })).data;
      expect(billed.map((row: any) => row.grossAmount), `subscription ${i}`).toEqual(i === 2 ? [] : [1191]);
    }
    // With the earlier test's subscriptions (March and April each): 29 invoices, one after another.
    expect(april!.invoicesCreated).toBe(29);
    const numbers = await numbersOf(april!.invoices);
    expect(consecutive(numbers)).toEqual(Array(29).fill(numbers[0]));
  });
  it("shares a customer read ahead between its subscriptions' units until one moves the credit balance: the credit is applied once, in one unit", async () => {
    env.setNow('2026-05-01T10:00:00Z');
    // An organisation of its own: the run bills only its three subscriptions.
    const org = await env.newOrg('Credit GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    const holder = await ok(mcp, 'create_customer', { lastName: 'Credit', companyName: 'Credited GmbH' });
    // 100.00 of credit: a paid invoice credited.
    const paid = await ok(mcp, 'create_invoice', { customer: holder.id, lines: [{ description: 'Advance', quantity: 1, unitAmount: 10_000, taxRate: 0 }] });
    await ok(mcp, 'record_invoice_payment', { id: paid.id, amount: 10_000 });
    await ok(mcp, 'create_credit_note', { id: paid.id, amount: 10_000, reason: 'Advance returned as credit' });
    expect((await ok(mcp, 'get_customer', { id: holder.id })).creditBalance).toBe(10_000);
    // Three subscriptions of 49.90 (no tax group: no tax), billed in advance at their start.
    const product = await ok(mcp, 'create_product', { name: 'Seat' });
    const pricePlan = await ok(mcp, 'create_price_plan', { id: product.id, currencyCode: 'EUR', billingInterval: '1M', type: 'flat_fee', price: { amount: 49.9 }, payInAdvance: true });
    const seat = await ok(mcp, 'create_plan', { code: 'seat', name: 'Seat', charges: [{ product: product.id, pricePlan: pricePlan.id, quantity: 1 }] });
    const subs: any[] = [];
    for (let i = 0; i < 3; i++) {
      subs.push(await ok(mcp, 'create_subscription', { customer: holder.id, plan: seat.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true }));
    }

    const counted = countingStore(env.app.store);
    const asOf = new Date('2026-05-01T10:00:00Z');
    const [may] = await runBilling({ store: counted.store, settings: { paymentTermDays: 14 } }, { trigger: 'cli', asOf, now: asOf, org: org.organisationId, recordEmpty: true });
    expect(may).toMatchObject({ subscriptionsBilled: 3, subscriptionsFailed: 0, invoicesCreated: 3 });
    // One batch and the run's record: a customer row gone stale would have failed the batch (the
    // balance below 0) and billed the three again one unit each.
    expect(counted.units.begun).toBe(2);
    const credits = [];
    for (const s of subs) {
      const [row] = (await ok(mcp, 'list_invoices', { subscription: s.id })).data;
      credits.push((await ok(mcp, 'get_invoice', { id: row.id })).creditApplied);
    }
    expect(credits.sort((a, b) => b - a)).toEqual([4990, 4990, 20]);
    expect((await ok(mcp, 'get_customer', { id: holder.id })).creditBalance).toBe(0);
  });
});
