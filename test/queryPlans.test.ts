/**
 * Reads that must search an index rather than scan a table that grows with the organisation: the
 * statements a repository read runs are captured and SQLite's EXPLAIN QUERY PLAN of each may not scan
 * subscription_items or plan_items, and pages of open invoices search their own index, on SQLite and
 * in PostgreSQL's generic plans, as pages of a customer's SEPA payments do on SQLite. (PostgreSQL's
 * plans for the other statements: performance.md.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { PgSql, translate } from '../src/store/pg/sql.js';
import { PgStore } from '../src/store/pg/store.js';
import { SqliteSql } from '../src/store/sqliteSql.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Store, Tx } from '../src/store/store.js';
import { newPgDatabase } from './pgStore.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-plans-'));
/** One migrated, empty database for every read: plans depend on the schema, not on rows. */
const store = SqliteStore.open(path.join(dir, 'plans.sqlite'));
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every statement `read` runs on `on` (its engine's Sql class), with its parameters, in order. */
async function statementsOf(on: Store, engine: typeof SqliteSql | typeof PgSql, read: (tx: Tx) => Promise<unknown>): Promise<Array<[string, unknown[]]>> {
  const statements: Array<[string, unknown[]]> = [];
  for (const method of ['get', 'all', 'allExact'] as const) {
    const original = engine.prototype[method];
    vi.spyOn(engine.prototype, method).mockImplementation(function (this: SqliteSql | PgSql, sql: string, ...params: unknown[]) {
      statements.push([sql, params]);
      return original.call(this, sql, ...params);
    } as never);
  }
  try {
    await on.read(read);
  } finally {
    vi.restoreAllMocks();
  }
  return statements;
}

/** SQLite's EXPLAIN QUERY PLAN lines of every statement `read` runs, in order. */
async function planLines(read: (tx: Tx) => Promise<unknown>): Promise<string[]> {
  const statements = await statementsOf(store, SqliteSql, read);
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

describe('open invoices of list_invoices (status=open)', () => {
  it('count and page through the open invoices only, in both orders, planned once; a customer\'s keep the customer\'s index', async () => {
    for (const descending of [false, true]) {
      const reads = (await planLines((tx) => tx.invoices.list('org', { status: 'open' }, { ...page, descending }))).filter((d) => /^(SCAN|SEARCH) i\b/.test(d));
      expect(reads).toEqual(['SEARCH i USING COVERING INDEX invoices_open (organisation_id=?)', 'SEARCH i USING INDEX invoices_open (organisation_id=?)']);
    }
    // SQLite matches a bound 'open' against the index too, but by preparing the statement again on
    // every call (its plan depends on the value); the status is written into the statement instead.
    const statements = await statementsOf(store, SqliteSql, (tx) => tx.invoices.list('org', { status: 'open' }, page));
    expect(statements.filter(([sql]) => sql.includes('FROM invoices i')).map(([, params]) => params)).toEqual([['org'], ['org']]);
    const subscription = (await planLines((tx) => tx.invoices.list('org', { subscription: 'subscription' }, page))).filter((d) => /^(SCAN|SEARCH) i\b/.test(d));
    expect(subscription).toEqual([
      'SEARCH i USING COVERING INDEX invoices_subscription (organisation_id=? AND subscription_id=?)',
      'SEARCH i USING INDEX invoices_subscription (organisation_id=? AND subscription_id=?)',
    ]);
    const customer = (await planLines((tx) => tx.invoices.list('org', { customer: 'customer', status: 'open' }, page))).filter((d) => /^(SCAN|SEARCH) i\b/.test(d));
    expect(customer).toEqual([
      'SEARCH i USING INDEX invoices_customer (organisation_id=? AND customer_id=?)',
      'SEARCH i USING INDEX invoices_customer (organisation_id=? AND customer_id=?)',
    ]);
  });

  it('on PostgreSQL, an organisation with 20,000 paid invoices and 10 open ones: the generic plan of each statement searches the open invoices\' index', async () => {
    const db = await newPgDatabase();
    const pgStore = await PgStore.open(db.url, { poolSize: 1 });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // The invoices alone (no foreign keys checked: no organisation or customer rows), then their statistics.
      await client.query('SET session_replication_role = replica');
      await client.query(`INSERT INTO invoices (id, organisation_id, number, customer_id, status, currency_code, net_amount, tax_amount,
          gross_amount, amount_settled, taxes, issued_at, due_at, paid_at, created_at, updated_at)
        SELECT 'inv' || lpad(g::text, 6, '0'), 'org', 'N' || g, 'customer', CASE WHEN g % 2000 = 7 THEN 'open' ELSE 'paid' END, 'EUR', 100, 0, 100,
          CASE WHEN g % 2000 = 7 THEN 0 ELSE 100 END, '[]', t, t, CASE WHEN g % 2000 = 7 THEN NULL ELSE t END, t, t
        FROM (SELECT g, to_char(timestamp '2026-01-01' + g * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"') AS t FROM generate_series(0, 19999) g) s`);
      await client.query('ANALYZE invoices');
      // A prepared statement runs on its generic plan once PostgreSQL finds it no costlier than the
      // custom ones (after five calls): the plan every later call gets.
      await client.query('SET plan_cache_mode = force_generic_plan');
      for (const descending of [false, true]) {
        const statements = await statementsOf(pgStore, PgSql, (tx) => tx.invoices.list('org', { status: 'open' }, { ...page, descending }));
        const plans: string[] = [];
        for (const [i, [sql, params]] of statements.filter(([text]) => text.includes('FROM invoices i')).entries()) {
          const name = `open_${Number(descending)}_${i}`;
          await client.query(`PREPARE ${name} AS ${translate(sql).text}`);
          const args = params.map((v) => client.escapeLiteral(String(v))).join(', ');
          const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}(${args})`);
          plans.push(...plan.rows.map((r) => r['QUERY PLAN'].trim().replace(/\s+\(cost=.*$/, '')).filter((line) => /on invoices i$|status = \$\d/.test(line)));
        }
        const scan = descending ? 'Index Scan Backward' : 'Index Scan';
        expect(plans).toEqual(['->  Index Only Scan using invoices_open on invoices i', `->  ${scan} using invoices_open on invoices i`]);
      }
    } finally {
      await client.end();
      await pgStore.close();
      await db.drop();
    }
  });
});

describe('a customer\'s SEPA payments (list_sepa_xml_payments by customer)', () => {
  it('count and page through the customer\'s payments only (migration 040), not every collection of the organisation', async () => {
    for (const descending of [false, true]) {
      const reads = (await planLines((tx) => tx.sepa.listPayments('org', { customer: 'customer' }, { ...page, descending }))).filter((d) => /sepa_xml_payments\b/.test(d));
      expect(reads).toEqual([
        'SEARCH sepa_xml_payments USING COVERING INDEX sepa_xml_payments_customer (organisation_id=? AND customer_id=?)',
        'SEARCH sepa_xml_payments USING INDEX sepa_xml_payments_customer (organisation_id=? AND customer_id=?)',
      ]);
    }
  });
});
