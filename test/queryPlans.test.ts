/**
 * Reads that must search an index rather than scan a table that grows with the organisation: the
 * statements a repository read runs are captured and SQLite's EXPLAIN QUERY PLAN of each may not scan
 * subscription_items or plan_items, and pages of open invoices search their own index. (PostgreSQL's
 * plans for the same statements: performance.md.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SqliteSql } from '../src/store/sqliteSql.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Tx } from '../src/store/store.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-plans-'));
/** One migrated, empty database for every read: plans depend on the schema, not on rows. */
const store = SqliteStore.open(path.join(dir, 'plans.sqlite'));
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** SQLite's EXPLAIN QUERY PLAN lines of every statement `read` runs, in order. */
async function planLines(read: (tx: Tx) => Promise<unknown>): Promise<string[]> {
  const statements: Array<[string, unknown[]]> = [];
  for (const method of ['get', 'all', 'allExact'] as const) {
    const original = SqliteSql.prototype[method];
    vi.spyOn(SqliteSql.prototype, method).mockImplementation(function (this: SqliteSql, sql: string, ...params: unknown[]) {
      statements.push([sql, params]);
      return original.call(this, sql, ...params);
    } as never);
  }
  try {
    await store.read(read);
  } finally {
    vi.restoreAllMocks();
  }
  return statements.flatMap(([sql, params]) => (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail));
}

/** Every scan of a table or index SQLite plans for the statements `read` runs (a bound JSON list's own scan aside). */
async function scansOf(read: (tx: Tx) => Promise<unknown>): Promise<string[]> {
  return (await planLines(read)).filter((d) => /^SCAN /.test(d) && !/^SCAN json_each/.test(d));
}

const page = { page: 1, limit: 30, descending: false };

describe('query plans', () => {
  it('a price plan and whether it is in use: searched by organisation and price plan, never a scan of the items', async () => {
    expect(await scansOf((tx) => tx.products.getPricePlan('org', 'plan'))).toEqual([]);
    expect(await scansOf((tx) => tx.products.listPricePlans('org', 'product', {}, page))).toEqual([]);
  });

  it('the reads of lists, pages and billing runs search indexes', async () => {
    const reads: Array<(tx: Tx) => Promise<unknown>> = [
      (tx) => tx.subscriptions.list('org', {}, page),
      (tx) => tx.subscriptions.list('org', { customer: 'customer', status: 'active' }, page),
      (tx) => tx.subscriptions.items('org', ['subscription']),
      (tx) => tx.subscriptions.quantityChanges('org', ['item']),
      (tx) => tx.subscriptions.discounts('org', ['item']),
      (tx) => tx.customers.getMany('org', ['customer']),
      (tx) => tx.customers.list('org', {}, page),
      (tx) => tx.invoices.list('org', { customer: 'customer' }, page),
      (tx) => tx.invoices.list('org', { subscription: 'subscription', status: 'open' }, page),
      (tx) => tx.usage.latest('org', [{ itemId: 'item', measurementId: 'measurement' }], 3),
      (tx) => tx.billing.dueItems('2026-01-01T00:00:00.000Z', undefined, null, 100),
      (tx) => tx.subscriptions.dueCancellations('2026-01-01T00:00:00.000Z'),
    ];
    for (const read of reads) expect(await scansOf(read)).toEqual([]);
  });
});

describe('overdue and due-before pages of list_invoices', () => {
  it('count and page through the open invoices of the organisation only (migration 037), not every invoice it issued', async () => {
    const now = '2026-11-20T10:00:00.000Z';
    for (const filter of [{ overdueAt: now }, { dueBefore: now }, { dueBefore: now, overdueAt: now }]) {
      const reads = (await planLines((tx) => tx.invoices.list('org', filter, page))).filter((d) => /^(SCAN|SEARCH) i\b/.test(d));
      expect(reads).toEqual(['SEARCH i USING INDEX invoices_open (organisation_id=?)', 'SEARCH i USING INDEX invoices_open (organisation_id=?)']);
    }
  });
});
