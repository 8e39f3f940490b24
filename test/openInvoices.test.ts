/**
 * `list_invoices` with `overdue` or `dueBefore` reads the open invoices only (migration 037): SQLite's
 * plan of every statement of such a page searches `invoices_open`, not the index of all invoices.
 * The index's PostgreSQL twin is held to it by test/pgSchema.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SqliteSql } from '../src/store/sqliteSql.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { InvoiceFilter } from '../src/store/ports/invoices.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-open-invoices-'));
const store = SqliteStore.open(path.join(dir, 'plans.sqlite'));
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** How SQLite reads the invoices table in each statement of a list page with `filter`. */
async function invoiceReads(filter: InvoiceFilter): Promise<string[]> {
  const statements: Array<[string, unknown[]]> = [];
  for (const method of ['get', 'all'] as const) {
    const original = SqliteSql.prototype[method];
    vi.spyOn(SqliteSql.prototype, method).mockImplementation(function (this: SqliteSql, sql: string, ...params: unknown[]) {
      statements.push([sql, params]);
      return original.call(this, sql, ...params);
    } as never);
  }
  try {
    await store.read((tx) => tx.invoices.list('org', filter, { page: 1, limit: 30, descending: false }));
  } finally {
    vi.restoreAllMocks();
  }
  return statements.flatMap(([sql, params]) =>
    (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).filter((d) => /^(SCAN|SEARCH) i\b/.test(d)),
  );
}

describe('overdue and due-before pages', () => {
  it('count and page through the open invoices of the organisation only', async () => {
    const now = '2026-11-20T10:00:00.000Z';
    for (const filter of [{ overdueAt: now }, { dueBefore: now }, { dueBefore: now, overdueAt: now }]) {
      expect(await invoiceReads(filter)).toEqual([
        'SEARCH i USING INDEX invoices_open (organisation_id=?)',
        'SEARCH i USING INDEX invoices_open (organisation_id=?)',
      ]);
    }
  });
});
