/**
 * Exactly once across instances: two stores on one database file (as two server processes would
 * open it) run billing at the same time, twice each; every period is billed once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBilling } from '../src/domain/billing/run.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-instances-'));
  env = await setup({ db: path.join(dir, 'billing.sqlite') });
  env.setNow('2026-01-15T10:00:00Z');
});
afterAll(async () => {
  await env.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('billing on two instances', () => {
  it('bills each due period once when two stores on one file run at the same time', async () => {
    const customer = await ok(env.mcp, 'create_customer', { companyName: 'Twice GmbH' });
    const product = await ok(env.mcp, 'create_product', { name: 'Seat' });
    const monthly = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
    const arrears = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 5 }, billingInterval: '1M', payInAdvance: false });
    const plan = await ok(env.mcp, 'create_plan', { code: 'twice', name: 'Twice', charges: [{ product: product.id, pricePlan: monthly.id }, { product: product.id, pricePlan: arrears.id }] });
    const subscriptions = [];
    for (let i = 0; i < 12; i++) {
      subscriptions.push(await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true }));
    }
    const other = SqliteStore.open(path.join(dir, 'billing.sqlite'), { synchronous: 'full', lockTimeoutMs: 10_000 });
    try {
      const asOf = new Date('2026-04-01T00:00:00Z');
      const settings = { paymentTermDays: 14 };
      const runs = await Promise.all(
        [env.app.store, other, env.app.store, other].map((store) => runBilling({ store, settings }, { trigger: 'cli', asOf, now: asOf, recordEmpty: true })),
      );
      // 15 Jan, Feb, Mar: the in-advance fee of each month and, from February, the arrears fee of the month before.
      const billed = runs.flat().reduce((n, r) => n + r.invoicesCreated, 0);
      expect(billed).toBe(12 * 3);
      for (const s of subscriptions) {
        const invoices = (await ok(env.mcp, 'list_invoices', { subscription: s.id, limit: 50 })).data;
        expect(invoices.map((i: any) => i.issuedAt).sort()).toEqual(['2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z']);
      }
    } finally {
      await other.close();
    }
  });

  it('a run that read an item before another billed it finds the charge key taken, rolls back and reports it skipped', async () => {
    env.setNow('2026-05-01T00:00:00Z');
    const customer = await ok(env.mcp, 'create_customer', { companyName: 'Stale GmbH' });
    const product = await ok(env.mcp, 'create_product', { name: 'Stale' });
    const price = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'stale', name: 'Stale', charges: [{ product: product.id, pricePlan: price.id }] });
    const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
    const store = env.app.store;
    const before = await store.read((tx) => tx.subscriptions.items(env.org.organisationId, [s.id]));
    expect((await ok(env.mcp, 'run_billing', { subscription: s.id })).invoicesCreated).toBe(1);
    // The item as a stale instance still sees it: nothing billed yet.
    await store.transaction(async (tx) => {
      for (const item of before) await tx.subscriptions.updateItem(env.org.organisationId, item);
    });
    const again = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect(again).toMatchObject({ invoicesCreated: 0, subscriptionsSkipped: 1, skipped: [{ subscription: s.id, reason: 'billed by a concurrent run' }] });
    expect((await ok(env.mcp, 'list_invoices', { subscription: s.id })).data).toHaveLength(1);
  });
});

describe('the job loop', () => {
  it('skips a tick while the previous run is still going, and runs again after it', async () => {
    const { nonOverlapping } = await import('../src/jobs/runner.js');
    let release!: () => void;
    let calls = 0;
    const tick = nonOverlapping(async () => {
      calls += 1;
      await new Promise<void>((resolve) => (release = resolve));
    });
    const first = tick();
    expect(await tick()).toBe(false);
    expect(calls).toBe(1);
    release();
    expect(await first).toBe(true);
    const third = tick();
    expect(calls).toBe(2);
    release();
    expect(await third).toBe(true);
  });
});
