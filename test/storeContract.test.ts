/**
 * The store contract both engines keep (src/store/store.ts), run against each: a unit of work
 * commits as a whole or not at all; an error that says so keeps its writes; a dry run keeps nothing;
 * concurrent units that read a row and write it back never lose an update; a read sees committed data
 * only; a database of a newer schema is refused. Then PostgreSQL's statement translation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { AppError } from '../src/errors.js';
import { openStore } from '../src/server.js';
import { newId } from '../src/ids.js';
import { translate } from '../src/store/pg/sql.js';
import { migrateUrl, PgStore } from '../src/store/pg/store.js';
import { SCHEMA_VERSION, SqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { createDatabase, dropDatabase, postgresUrl } from './pg.js';
import { newPgDatabase, newPgStore } from './pgStore.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-contract-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const engines: Array<[string, () => Promise<Store>]> = [
  ['SQLite', async () => SqliteStore.open(path.join(dir, `${newId()}.sqlite`))],
  ['PostgreSQL', () => newPgStore()],
];

async function newOrganisation(store: Store, name = 'Contract'): Promise<string> {
  const id = newId();
  await store.transaction((tx) => tx.system.createOrganisation({ id, name, createdAt: new Date().toISOString() }));
  return id;
}

describe.each(engines)('%s store', (_engine, open) => {
  it('commits a unit as a whole or not at all', async () => {
    const store = await open();
    const id = newId();
    await expect(
      store.transaction(async (tx) => {
        await tx.system.createOrganisation({ id, name: 'Half', createdAt: new Date().toISOString() });
        throw new AppError('conflict', 'stop');
      }),
    ).rejects.toThrow('stop');
    expect(await store.read((tx) => tx.system.getOrganisation(id))).toBeUndefined();
    await store.close();
  });

  it('keeps the writes of a unit whose error says so, and none of a dry run', async () => {
    const store = await open();
    const kept = newId();
    const error = new AppError('unauthorized', 'kept');
    error.keepChanges = true;
    await expect(store.transaction((tx) => tx.system.createOrganisation({ id: kept, name: 'Kept', createdAt: new Date().toISOString() }).then(() => Promise.reject(error)))).rejects.toBe(error);
    expect((await store.read((tx) => tx.system.getOrganisation(kept)))?.name).toBe('Kept');
    const dry = newId();
    const answer = await store.transaction(
      async (tx) => {
        await tx.system.createOrganisation({ id: dry, name: 'Dry', createdAt: new Date().toISOString() });
        return (await tx.system.getOrganisation(dry))?.name;
      },
      { rollback: true },
    );
    expect(answer).toBe('Dry');
    expect(await store.read((tx) => tx.system.getOrganisation(dry))).toBeUndefined();
    await store.close();
  });

  it('never loses an update when 20 units read one row and write it back at once', async () => {
    const store = await open();
    const org = await newOrganisation(store, '');
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.transaction(async (tx) => {
          const o = (await tx.organisations.get(org))!;
          await new Promise((r) => setTimeout(r, 1));
          await tx.organisations.update({ ...o, name: `${o.name}x` });
        }),
      ),
    );
    expect((await store.read((tx) => tx.organisations.get(org)))?.name).toBe('x'.repeat(20));
    const numbers = await Promise.all(Array.from({ length: 20 }, () => store.transaction((tx) => tx.system.nextCounter(org, 'invoice'))));
    expect(numbers.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    await store.close();
  });

  it('shows a read only what was committed', async () => {
    const store = await open();
    const id = newId();
    let release!: () => void;
    const written = new Promise<void>((resolve) => (release = resolve));
    let seen: unknown = 'not read';
    const unit = store.transaction(async (tx) => {
      await tx.system.createOrganisation({ id, name: 'Pending', createdAt: new Date().toISOString() });
      seen = await store.read((r) => r.system.getOrganisation(id)).catch(() => 'read failed');
      release();
    });
    await written;
    await unit;
    expect(seen).toBeUndefined();
    expect((await store.read((tx) => tx.system.getOrganisation(id)))?.name).toBe('Pending');
    await store.close();
  });
});

describe('PostgreSQL read units', () => {
  it('read one snapshot: BEGIN goes out before the first statement, even when it is not awaited first', async () => {
    const store = await newPgStore();
    const org = await newOrganisation(store, 'Before');
    const o = (await store.read((tx) => tx.organisations.get(org)))!;
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const names = await store.read(async (tx) => {
      const first = (await tx.organisations.get(org))!.name;
      await store.transaction((w) => w.organisations.update({ ...o, name: 'After' }));
      wrote();
      return [first, (await tx.organisations.get(org))!.name];
    });
    await written;
    expect(names).toEqual(['Before', 'Before']);
    expect((await store.read((tx) => tx.organisations.get(org)))?.name).toBe('After');
    await store.close();
  });

  it('give their connection back to the pool idle, committed or rolled back: 30 reads on a pool of one, a third of them failing', async () => {
    const store = await newPgStore(undefined, { poolSize: 1 });
    const org = await newOrganisation(store);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        store.read(async (tx) => {
          const [a, b] = await Promise.all([tx.organisations.get(org), tx.organisations.get(org)]);
          if (i % 3 === 0) throw new AppError('conflict', `read ${i} failed`);
          return a!.id === b!.id;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? 'rejected' : 'fulfilled')));
    const client = await store.pool.connect();
    expect(client.getTransactionStatus()).toBe('I');
    client.release();
    expect([store.pool.totalCount, store.pool.idleCount]).toEqual([1, 1]);
    await store.close();
  });
});

describe('PostgreSQL list pages', () => {
  it('plan a first page once: its statement has no LIMIT or OFFSET parameter, so the connection keeps a generic plan', async () => {
    const store = await newPgStore(undefined, { poolSize: 1 });
    const org = await newOrganisation(store);
    const at = new Date().toISOString();
    await store.transaction(async (tx) => {
      for (let i = 0; i < 5; i++) await tx.catalogue.insertUnit(org, { id: newId(), name: `unit ${i}`, createdAt: at, updatedAt: at });
    });
    const pages = [];
    for (let i = 0; i < 12; i++) pages.push(await store.read((tx) => tx.catalogue.listUnits(org, { page: 1, limit: 2, descending: false })));
    expect(pages.every((p) => p.total === 5 && p.rows.length === 2)).toBe(true);
    expect((await store.read((tx) => tx.catalogue.listUnits(org, { page: 3, limit: 2, descending: false }))).rows.map((u) => u.name)).toEqual(['unit 4']);
    const client = await store.pool.connect();
    const { rows } = await client.query<{ generic: number; custom: number }>(
      "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE statement LIKE '%FROM units WHERE organisation_id = $1 ORDER BY created_at ASC, id ASC LIMIT 2'",
    );
    client.release();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.custom)).toBeLessThanOrEqual(5);
    expect(Number(rows[0]!.generic)).toBeGreaterThanOrEqual(7);
    await store.close();
  });
});

describe('PostgreSQL latest measurement values', () => {
  it('are read with one statement text whatever the number of items, so it is planned once per connection', async () => {
    const store = await newPgStore(undefined, { poolSize: 1 });
    const org = await newOrganisation(store);
    for (const n of [1, 2, 3, 30]) {
      const scopes = Array.from({ length: n }, () => ({ itemId: newId(), measurementId: newId() }));
      expect(await store.read((tx) => tx.usage.latest(org, scopes, 5))).toEqual([]);
    }
    const client = await store.pool.connect();
    const { rows } = await client.query("SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%FROM measurement_values v%'");
    client.release();
    expect(rows).toHaveLength(1);
    await store.close();
  });
});

describe('PostgreSQL API key lookups', () => {
  it('that run at once share one statement, and each gets its own key; a revoked key is seen revoked by the next lookup', async () => {
    const store = await newPgStore();
    const org = await newOrganisation(store);
    const at = new Date().toISOString();
    const keys = Array.from({ length: 5 }, (_, i) => ({
      id: newId(),
      organisationId: org,
      name: `key ${i}`,
      prefix: `bk_${i}`,
      permissions: ['*'],
      expiresAt: null,
      revokedAt: null,
      createdAt: at,
    }));
    await store.transaction(async (tx) => {
      for (const [i, key] of keys.entries()) await tx.system.createApiKey(key, `hash-${i}`);
    });
    const hashes = Array.from({ length: 30 }, (_, i) => (i % 6 === 5 ? `unknown-${i}` : `hash-${i % 6}`));
    const query = vi.spyOn(store.pool, 'query');
    const found = await Promise.all(hashes.map((h) => store.findApiKey(h)));
    expect(query.mock.calls.length).toBe(1);
    query.mockRestore();
    expect(found.map((k) => k?.name)).toEqual(hashes.map((h) => (h.startsWith('hash-') ? `key ${h.slice(5)}` : undefined)));

    await store.transaction((tx) => tx.system.revokeApiKey(keys[0]!.id, at));
    expect((await store.findApiKey('hash-0'))?.revokedAt).toBe(at);
    await store.close();
  });
});

describe('PostgreSQL units serialized on a key', () => {
  it('wait for one another across two instances instead of aborting: each runs once; without the key they abort and run again', async () => {
    const db = await newPgDatabase();
    const stores = [await PgStore.open(db.url), await PgStore.open(db.url)];
    try {
      const org = await newOrganisation(stores[0]!);
      let runs = 0;
      /** Six units on each instance, each taking 10 sequence numbers of the organisation and holding its row a moment. */
      const race = (options: { serializeOn?: string }) =>
        Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            stores[i % 2]!.transaction(async (tx) => {
              runs += 1;
              const { first } = await tx.usageEvents.reserveSeq(org, 10);
              await new Promise((resolve) => setTimeout(resolve, 5));
              return first;
            }, options),
          ),
        );
      const serialized = await race({ serializeOn: `usage-event-sequence:${org}` });
      expect(runs).toBe(12);
      expect(serialized.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => 10 * i + 1));
      runs = 0;
      await race({});
      expect(runs).toBeGreaterThan(12);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await db.drop();
    }
  });
});

describe('PostgreSQL schema versions', () => {
  it('migrate reports the versions, applies nothing twice, and a newer database is refused', async () => {
    const admin = postgresUrl();
    const name = `billing_empty_${newId().replace(/-/g, '')}`;
    const db = { url: await createDatabase(admin, name), drop: () => dropDatabase(admin, name) };
    expect(await migrateUrl(db.url)).toEqual({ from: 0, to: SCHEMA_VERSION });
    expect(await migrateUrl(db.url)).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', '2030-01-01T00:00:00.000Z')", [SCHEMA_VERSION + 1]);
    await client.end();
    await expect(PgStore.open(db.url)).rejects.toThrow(`schema version ${SCHEMA_VERSION + 1}, newer than the ${SCHEMA_VERSION}`);
    await db.drop();
  });
});

describe('PostgreSQL configuration', () => {
  it('BILLING_DATABASE_URL selects PostgreSQL with a pool of BILLING_DB_POOL_SIZE connections; bad values name the variable', async () => {
    const db = await newPgStore();
    const url = (db.pool.options as { connectionString: string }).connectionString;
    const store = await openStore(loadConfig({ BILLING_DATABASE_URL: url, BILLING_DB_POOL_SIZE: '3' }));
    expect(store).toBeInstanceOf(PgStore);
    expect((store as PgStore).pool.options.max).toBe(3);
    await store.close();
    await db.close();
    expect(() => loadConfig({ BILLING_DB_POOL_SIZE: '0' })).toThrow(/BILLING_DB_POOL_SIZE/);
    expect(() => loadConfig({ BILLING_DATABASE_URL: 'sqlite:///tmp/x' })).toThrow(/BILLING_DATABASE_URL/);
  });
});

describe('PostgreSQL statements from the shared SQL', () => {
  it('numbers ? and @name placeholders, quotes camelCase aliases, drops planner hints, leaves strings alone', () => {
    expect(translate("SELECT a AS customerNumber, '?' AS q FROM t WHERE +organisation_id = ? AND b = ?").text).toBe(
      `SELECT a AS "customerNumber", '?' AS q FROM t WHERE organisation_id = $1 AND b = $2`,
    );
    const named = translate('SELECT 1 FROM t WHERE a = @org AND b = @item AND c = @org');
    expect([named.text, named.names]).toEqual(['SELECT 1 FROM t WHERE a = $1 AND b = $2 AND c = $1', ['org', 'item']]);
    expect(translate('SELECT value FROM json_each(?)').text).toBe('SELECT value FROM json_array_elements_text($1::json)');
  });

  it('reads a list bound as JSON through the index: IN becomes = ANY(ARRAY(…)), NOT IN stays', () => {
    expect(translate('SELECT * FROM t WHERE a = ? AND id IN (SELECT value FROM json_each(?))').text).toBe(
      'SELECT * FROM t WHERE a = $1 AND id = ANY(ARRAY(SELECT json_array_elements_text($2::json)))',
    );
    expect(translate('SELECT * FROM t WHERE id NOT IN (SELECT value FROM json_each(?))').text).toBe(
      'SELECT * FROM t WHERE id NOT IN (SELECT value FROM json_array_elements_text($1::json))',
    );
  });
});
