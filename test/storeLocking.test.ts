import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/server.js';
import { call, setup, type TestEnv } from './helpers.js';

/**
 * Another connection to the same database file (here in the test process, as `billing-mcp jobs run`,
 * `keys` or a stdio server would be in theirs) holds the write lock with BEGIN IMMEDIATE.
 */
describe('a second writer on the same database file', () => {
  let dir: string;
  let file: string;
  let env: TestEnv | undefined;
  let holder: Database.Database;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-lock-'));
    file = path.join(dir, 'billing.sqlite');
  });
  afterEach(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK');
    holder?.close();
    await env?.close();
    env = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Opens the second connection and takes the write lock as soon as the server's own group has committed. */
  async function holdWriteLock(): Promise<void> {
    holder = new Database(file, { timeout: 0 });
    for (;;) {
      try {
        holder.exec('BEGIN IMMEDIATE');
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  }

  const customers = async (e: TestEnv) => (await e.http('GET', '/customers')).body.meta.pagination.totalItems as number;

  it('while it holds the write lock, timers, /healthz and reads go on; a waiting write succeeds once the lock is released', async () => {
    env = await setup({ db: file });
    const e = env;
    await holdWriteLock();

    let settled = false;
    const write = e.http('POST', '/customers', { body: { companyName: 'Waits GmbH' } });
    void write.finally(() => {
      settled = true;
    });
    // The event loop is free: a timer fires, /healthz and a read answer, all while the write waits.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await e.http('GET', '/healthz', { token: null })).status).toBe(200);
    expect(await customers(e)).toBe(0);
    const mcpRead = await call(e.mcp, 'list_customers', {});
    expect(mcpRead.isError, mcpRead.text).toBe(false);
    expect(settled).toBe(false);
    expect(holder.inTransaction).toBe(true);

    holder.exec('COMMIT');
    const created = await write;
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await customers(e)).toBe(1);
  });

  it('past BILLING_DB_LOCK_TIMEOUT_MS a write answers 503 with Retry-After and changes nothing (over MCP an isError result)', async () => {
    env = await setup({ db: file, dbLockTimeoutMs: 150 });
    const e = env;
    await holdWriteLock();

    const res = await e.http('POST', '/customers', { body: { companyName: 'Too late GmbH' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ type: '/problems/unavailable', status: 503 });

    const viaMcp = await call(e.mcp, 'create_customer', { companyName: 'Too late either GmbH' });
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.body).toMatchObject({ type: '/problems/unavailable', status: 503 });

    holder.exec('COMMIT');
    expect(await customers(e)).toBe(0);
    // Nothing is left half-open: the next write goes through.
    expect((await e.http('POST', '/customers', { body: { companyName: 'In time GmbH' } })).status).toBe(201);
    expect(await customers(e)).toBe(1);
  });

  it('BILLING_DB_LOCK_TIMEOUT_MS defaults to 5000, reaches the store of createApp, and a bad value stops start-up naming it', async () => {
    expect(loadConfig({}).dbLockTimeoutMs).toBe(5000);
    expect(() => loadConfig({ BILLING_DB_LOCK_TIMEOUT_MS: 'soon' })).toThrow(/BILLING_DB_LOCK_TIMEOUT_MS must be a whole number/);
    const app = createApp(loadConfig({ BILLING_DB: file, BILLING_DB_LOCK_TIMEOUT_MS: '100', LOG_LEVEL: 'silent' }));
    try {
      await holdWriteLock();
      // Released after 2 s: only a 100 ms timeout makes the write fail rather than wait for it.
      const release = setTimeout(() => holder.exec('COMMIT'), 2000);
      await expect(app.store.transaction((tx) => tx.system.createOrganisation({ id: 'o', name: 'o', createdAt: '2026-01-01T00:00:00.000Z' }))).rejects.toMatchObject({
        kind: 'unavailable',
        status: 503,
      });
      clearTimeout(release);
    } finally {
      await app.store.close();
    }
  });
});
