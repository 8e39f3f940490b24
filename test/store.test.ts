import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp, startHttp } from '../src/server.js';
import { AppError } from '../src/errors.js';
import { openDatabase, SCHEMA_VERSION, SqliteStore } from '../src/store/sqlite.js';
import { Checkpointer } from '../src/store/checkpointer.js';
import { WalSync } from '../src/store/walSync.js';
import { SqliteSql } from '../src/store/sqliteSql.js';

describe('SQLite store', () => {
  it('reads rows as better-sqlite3 makes them, from its raw values: every column by name, exact integers as bigints, the later of two of a name, a __proto__ column as an own key, the columns the schema has now', async () => {
    const db = new Database(':memory:');
    const sql = new SqliteSql(db);
    db.exec("CREATE TABLE t (a INTEGER, b TEXT, c BLOB); INSERT INTO t VALUES (1, 'one', x'01'), (2, NULL, NULL)");
    expect(await sql.all('SELECT * FROM t ORDER BY a')).toEqual(db.prepare('SELECT * FROM t ORDER BY a').all());
    expect(await sql.get('SELECT * FROM t WHERE a = ?', 2)).toEqual({ a: 2, b: null, c: null });
    expect(await sql.get('SELECT * FROM t WHERE a = ?', 3)).toBeUndefined();
    expect(await sql.allExact('SELECT a, b FROM t ORDER BY a')).toEqual([{ a: 1n, b: 'one' }, { a: 2n, b: null }]);
    expect(await sql.get("SELECT a AS x, b AS x FROM t WHERE a = 1")).toEqual({ x: 'one' });
    const odd = (await sql.get<Record<string, unknown>>('SELECT a AS "__proto__", b AS "a b" FROM t WHERE a = 1'))!;
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(JSON.stringify(odd)).toBe('{"__proto__":1,"a b":"one"}');
    db.exec("ALTER TABLE t ADD COLUMN d TEXT DEFAULT 'new'");
    expect(await sql.get('SELECT * FROM t WHERE a = ?', 2)).toEqual({ a: 2, b: null, c: null, d: 'new' });
    db.close();
  });

  const file = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'billing-store-')), 'db.sqlite');

  it('opens in WAL mode with foreign keys on, every migration applied, and full sync by default', () => {
    const db = openDatabase(file());
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect((db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('syncs at checkpoints only with BILLING_DB_SYNCHRONOUS=normal', () => {
    expect(loadConfig({ BILLING_DB_SYNCHRONOUS: 'normal' }).dbSynchronous).toBe('normal');
    expect(() => loadConfig({ BILLING_DB_SYNCHRONOUS: 'sometimes' })).toThrow(/BILLING_DB_SYNCHRONOUS must be full or normal/);
    const db = openDatabase(file(), 'normal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    db.close();
  });

  it('every table is STRICT and every table but organisations and the installation-wide ones carries its organisation', () => {
    const db = openDatabase(':memory:');
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string; sql: string }>;
    for (const t of tables) {
      expect(t.sql, t.name).toMatch(/\)\s*STRICT(, WITHOUT ROWID)?$/);
      // secrets belong to the installation (the page-token key every organisation's links share);
      // job_leases too (one jobs loop serves every organisation).
      if (!['organisations', 'schema_migrations', 'secrets', 'job_leases'].includes(t.name)) expect(t.sql, t.name).toContain('organisation_id TEXT NOT NULL');
    }
    db.close();
  });
});

describe('group commit', () => {
  const org = (id: string) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' });

  it('commits concurrent units together, rolls back only the unit that failed, and answers after the commit', async () => {
    const store = new SqliteStore(openDatabase(':memory:'));
    const results = await Promise.allSettled([
      store.transaction((tx) => tx.system.createOrganisation(org('a'))),
      store.transaction(async (tx) => {
        await tx.system.createOrganisation(org('b'));
        throw new AppError('validation', 'no');
      }),
      store.transaction((tx) => tx.system.createOrganisation(org('c'))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(store.db.inTransaction).toBe(false);
    const names = (await store.read((tx) => tx.system.listOrganisations())).map((o) => o.id);
    expect(names.sort()).toEqual(['a', 'c']);
    store.close();
  });

  it('keeps the writes of a unit whose error says so', async () => {
    const store = new SqliteStore(openDatabase(':memory:'));
    const kept = new AppError('unauthorized', 'revoked, and that must stand');
    kept.keepChanges = true;
    await expect(
      store.transaction(async (tx) => {
        await tx.system.createOrganisation(org('kept'));
        throw kept;
      }),
    ).rejects.toBe(kept);
    expect((await store.read((tx) => tx.system.getOrganisation('kept')))?.id).toBe('kept');
    store.close();
  });

  it('a unit that runs after the group committed opens a new group', async () => {
    const store = new SqliteStore(openDatabase(':memory:'));
    await store.transaction((tx) => tx.system.createOrganisation(org('first')));
    expect(store.db.inTransaction).toBe(false);
    await store.transaction((tx) => tx.system.createOrganisation(org('second')));
    expect(store.db.inTransaction).toBe(false);
    expect((await store.read((tx) => tx.system.listOrganisations())).length).toBe(2);
    store.close();
  });
});

describe('reads see committed data only', () => {
  const file = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'billing-store-')), 'db.sqlite');
  const org = (id: string) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' });
  const key = (id: string, organisationId: string) => ({
    id,
    organisationId,
    name: id,
    prefix: 'bmk_test',
    permissions: ['*'],
    expiresAt: null,
    revokedAt: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  });

  it('on a database file, a read issued while a write unit\'s group is not yet committed does not see the write', async () => {
    const store = SqliteStore.open(file());
    let seen: { org: unknown; groupOpen: boolean } | undefined;
    let read: Promise<void> | undefined;
    const write = store.transaction(async (tx) => {
      await tx.system.createOrganisation(org('pending'));
      read = store.read(async (r) => {
        seen = { org: await r.system.getOrganisation('pending'), groupOpen: store.db.inTransaction };
      });
    });
    await write;
    await read;
    expect(seen).toEqual({ org: undefined, groupOpen: true });
    expect((await store.read((tx) => tx.system.getOrganisation('pending')))?.id).toBe('pending');
    store.close();
  });

  it('with one connection (:memory:), a read waits until the open group has committed', async () => {
    const store = new SqliteStore(openDatabase(':memory:'));
    const order: string[] = [];
    let read: Promise<void> | undefined;
    const write = store.transaction(async (tx) => {
      await tx.system.createOrganisation(org('pending'));
      read = store.read(async (r) => {
        order.push(store.db.inTransaction ? 'read inside the open group' : 'read after the commit');
        expect((await r.system.getOrganisation('pending'))?.id).toBe('pending');
      });
    });
    void write.then(() => order.push('write answered'));
    await Promise.all([write, read]);
    expect(order).toEqual(['read after the commit', 'write answered']);
    store.close();
  });

  for (const layout of ['database file', ':memory:'] as const) {
    it(`a failed COMMIT fails every unit of its group, leaves nothing written, and no read saw its rows (${layout})`, async () => {
      const store = layout === ':memory:' ? new SqliteStore(openDatabase(':memory:')) : SqliteStore.open(file());
      const reads: unknown[] = [];
      let read: Promise<void> | undefined;
      const units = await Promise.allSettled([
        store.transaction((tx) => tx.system.createOrganisation(org('a'))),
        store.transaction(async (tx) => {
          await tx.system.createOrganisation(org('b'));
          // A real SQLite failure at COMMIT: a foreign-key violation checked only then.
          store.db.pragma('defer_foreign_keys = ON');
          await tx.system.createApiKey(key('orphan', 'no-such-organisation'), 'hash-of-orphan');
        }),
        store.transaction(async (tx) => {
          await tx.system.createOrganisation(org('c'));
          read = store.read(async (r) => {
            reads.push(await r.system.getOrganisation('a'), await r.system.getOrganisation('c'));
          });
        }),
      ]);
      await read;
      expect(units.map((u) => u.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(String((units[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
      expect(reads).toEqual([undefined, undefined]);
      expect(store.db.inTransaction).toBe(false);
      expect(await store.read((tx) => tx.system.listOrganisations())).toEqual([]);
      expect(await store.findApiKey('hash-of-orphan')).toBeUndefined();
      // The store goes on: the next unit commits.
      await store.transaction((tx) => tx.system.createOrganisation(org('after')));
      expect((await store.read((tx) => tx.system.listOrganisations())).map((o) => o.id)).toEqual(['after']);
      await store.close();
    });
  }
});

describe('the WAL synced off the event loop', () => {
  const file = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'billing-store-')), 'db.sqlite');
  const org = (id: string) => ({ id, name: id, createdAt: '2026-01-01T00:00:00.000Z' });
  /** A sync that finishes when the test says so; `calls` counts the syncs started. */
  function heldSync() {
    const held: Array<{ resolve(): void; reject(err: Error): void }> = [];
    let calls = 0;
    const sync = new WalSync(
      () =>
        new Promise<void>((resolve, reject) => {
          calls += 1;
          held.push({ resolve, reject });
        }),
    );
    return { sync, held, calls: () => calls };
  }
  const storeWith = (f: string, sync: WalSync) => new SqliteStore(openDatabase(f), { walSync: sync, reader: new Database(f, { readonly: true }) });
  const settledSoon = async (p: Promise<unknown>) => {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, 20));
    return settled;
  };

  it('a file store syncs the WAL itself (synchronous NORMAL on its write connection); BILLING_DB_SYNCHRONOUS=normal leaves it to SQLite', async () => {
    const full = SqliteStore.open(file());
    expect(full.db.pragma('synchronous', { simple: true })).toBe(1);
    await full.transaction((tx) => tx.system.createOrganisation(org('a')));
    expect((await full.read((tx) => tx.system.getOrganisation('a')))?.id).toBe('a');
    await full.close();
    const normal = SqliteStore.open(file(), { synchronous: 'normal' });
    expect(normal.db.pragma('synchronous', { simple: true })).toBe(1);
    await normal.close();
  });

  it('answers a unit only once its COMMIT is synced, lets the next group run meanwhile, and holds reads until then', async () => {
    const f = file();
    const { sync, held } = heldSync();
    const store = storeWith(f, sync);
    const first = store.transaction((tx) => tx.system.createOrganisation(org('first')));
    expect(await settledSoon(first)).toBe(false);
    // Committed (another connection sees it), not yet answered.
    const other = new Database(f, { readonly: true });
    expect(other.prepare("SELECT id FROM organisations WHERE id = 'first'").get()).toEqual({ id: 'first' });
    const read = store.read((tx) => tx.system.getOrganisation('first'));
    expect(await settledSoon(read)).toBe(false);
    // The next unit runs and commits while the first sync is under way.
    const second = store.transaction((tx) => tx.system.createOrganisation(org('second')));
    await new Promise((r) => setTimeout(r, 20));
    expect(other.prepare("SELECT id FROM organisations WHERE id = 'second'").get()).toEqual({ id: 'second' });
    expect(held.length).toBe(1);
    held[0]!.resolve();
    await first;
    expect((await read)?.id).toBe('first');
    expect(await settledSoon(second)).toBe(false);
    await new Promise((r) => setTimeout(r, 0));
    expect(held.length).toBe(2);
    held[1]!.resolve();
    await second;
    other.close();
    await store.close();
  });

  it('the COMMITs made while a sync is in flight share the next one', async () => {
    const { sync, held, calls } = heldSync();
    const first = sync.sync();
    // Asked for before it started: the same sync.
    expect(sync.sync()).toBe(first);
    await new Promise((r) => setTimeout(r, 0));
    expect(calls()).toBe(1);
    const joined = [sync.sync(), sync.sync(), sync.sync()];
    expect(new Set(joined).size).toBe(1);
    expect(joined[0]).not.toBe(first);
    await new Promise((r) => setTimeout(r, 0));
    expect(calls()).toBe(1);
    held[0]!.resolve();
    await first;
    await new Promise((r) => setTimeout(r, 0));
    expect(calls()).toBe(2);
    held[1]!.resolve();
    await Promise.all(joined);
    expect(calls()).toBe(2);
  });

  it('a failed sync fails the units of its COMMIT with 503 and refuses writes until a restart', async () => {
    const f = file();
    const { sync, held } = heldSync();
    const store = storeWith(f, sync);
    const unit = store.transaction((tx) => tx.system.createOrganisation(org('unsure')));
    await new Promise((r) => setTimeout(r, 20));
    held[0]!.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(unit).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/could not be synced to disk \(EIO.*refused until the server is restarted/) });
    await expect(store.transaction((tx) => tx.system.createOrganisation(org('next')))).rejects.toMatchObject({ kind: 'unavailable' });
    // /readyz asks the store: a load balancer stops sending requests to this server, told why.
    await expect(store.ping()).rejects.toMatchObject({ kind: 'unavailable' });
    const app = createApp(loadConfig({ BILLING_DB: f, LOG_LEVEL: 'silent', BILLING_JOBS_INTERVAL_MS: '0' }), { store });
    const server = await startHttp(app, '127.0.0.1', 0);
    try {
      const ready = await fetch(`${server.url}/readyz`);
      expect([ready.status, ready.headers.get('retry-after')]).toEqual([503, '5']);
      expect(((await ready.json()) as { detail: string }).detail).toMatch(/write-ahead log could not be synced to disk \(EIO/);
    } finally {
      await server.close();
    }
    expect(await store.read((tx) => tx.system.getOrganisation('next'))).toBeUndefined();
    await store.close();
  });

  it('WalSync.ofFile syncs the WAL file of a database and lets it go at close', async () => {
    const f = file();
    const db = openDatabase(f);
    db.prepare('INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)').run('x', 'x', '2026-01-01T00:00:00.000Z');
    const sync = WalSync.ofFile(f);
    await sync.sync();
    await sync.sync();
    await sync.close();
    db.close();
    await expect(WalSync.ofFile(path.join(path.dirname(f), 'missing.sqlite')).sync()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('WAL checkpoints in a worker thread', () => {
  const file = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'billing-store-')), 'db.sqlite');

  it('copies committed pages into the database file without a COMMIT checkpointing them', async () => {
    const f = file();
    const store = SqliteStore.open(f);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(65_536);
    const before = fs.statSync(f).size;
    // About 2 MB of rows in 40 units: far below the 65,536 pages at which a COMMIT would checkpoint.
    const name = 'x'.repeat(50_000);
    for (let i = 0; i < 40; i++) {
      await store.transaction((tx) => tx.system.createOrganisation({ id: `org-${i}`, name: `${name}${i}`, createdAt: '2026-01-01T00:00:00.000Z' }));
    }
    const deadline = Date.now() + 5000;
    while (fs.statSync(f).size < before + 2_000_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(fs.statSync(f).size).toBeGreaterThanOrEqual(before + 2_000_000);
    await store.close();
  });

  it('under steady writes the WAL starts over once it passes 4,096 pages (16 MB), in the same file, which is not cut back', async () => {
    const f = file();
    const store = SqliteStore.open(f);
    const name = 'y'.repeat(500_000);
    const sizes: number[] = [];
    // 48 MB in units of 0.5 MB, each begun right after the one before was answered.
    for (let i = 0; i < 96; i++) {
      await store.transaction((tx) => tx.system.createOrganisation({ id: `org-${i}`, name: `${name}${i}`, createdAt: '2026-01-01T00:00:00.000Z' }));
      sizes.push(fs.statSync(`${f}-wal`).size);
    }
    // Past 16 MB the next unit waits for the worker's checkpoint, so the WAL never holds much more;
    // it then starts over from the file's beginning: 48 MB went through a file that stays under 20 MB.
    expect(Math.max(...sizes)).toBeGreaterThan(16_000_000);
    expect(Math.max(...sizes)).toBeLessThan(20_000_000);
    // The COMMIT that starts the WAL over leaves the file as it is (cutting it back held the event loop).
    expect(sizes.every((size, i) => i === 0 || size >= sizes[i - 1]!)).toBe(true);
    expect((await store.read((tx) => tx.system.listOrganisations())).length).toBe(96);
    await store.close();
  });

  it('a write waiting for its checkpoint keeps the process alive: a script with nothing else to do commits and ends', async () => {
    const f = file();
    openDatabase(f).close();
    // Another connection leaves more WAL than RESTART_BYTES uncheckpointed, so the store's next write
    // waits for the worker's checkpoint (drain) before it begins: the built store, in a process of its own.
    const script = path.join(path.dirname(f), 'write.mjs');
    fs.writeFileSync(
      script,
      `
      import Database from ${JSON.stringify(path.resolve('node_modules/better-sqlite3/lib/index.js'))};
      import { SqliteStore } from ${JSON.stringify(path.resolve('dist/store/sqlite.js'))};
      import { createOrganisation } from ${JSON.stringify(path.resolve('dist/server.js'))};
      const file = ${JSON.stringify(f)};
      const store = SqliteStore.open(file, { synchronous: 'full' });
      const raw = new Database(file);
      raw.pragma('wal_autocheckpoint = 0');
      raw.exec('CREATE TABLE ballast (b BLOB)');
      raw.transaction(() => { for (let i = 0; i < 20; i++) raw.prepare('INSERT INTO ballast VALUES (zeroblob(1048576))').run(); })();
      await createOrganisation(store, 'After the checkpoint');
      console.log('committed');
      await store.close();
      raw.close();
    `,
    );
    // A file, not --eval: an evaluated module keeps the process alive by itself.
    const child = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect({ status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }).toEqual({ status: 0, stdout: 'committed', stderr: '' });
    const db = new Database(f, { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM organisations WHERE name = 'After the checkpoint'").get()).toEqual({ n: 1 });
    db.close();
  });

  it('spaces its checkpoints to copy about 256 pages each: a trickle of small commits is not synced twice per commit', async () => {
    const f = file();
    openDatabase(f).close();
    const db = new Database(f);
    const checkpointer = new Checkpointer(f);
    const insert = db.prepare('INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)');
    // 100 one-row commits over about 600 ms, a checkpoint asked for after each.
    for (let i = 0; i < 100; i++) {
      insert.run(`org-${i}`, 'x', '2026-01-01T00:00:00.000Z');
      checkpointer.request();
      await new Promise((r) => setTimeout(r, 6));
    }
    await checkpointer.drain();
    // At most every 20 ms would be about 30; the pace of ~1 page per 6 ms asks for one per 1 s at most.
    expect(checkpointer.checkpoints).toBeGreaterThanOrEqual(2);
    expect(checkpointer.checkpoints).toBeLessThanOrEqual(6);
    await checkpointer.close();
    db.close();
  });

  it('a worker that cannot checkpoint hands checkpoints back to the COMMITs', async () => {
    const checkpointer = new Checkpointer(path.join(os.tmpdir(), 'no-such-dir', 'db.sqlite'));
    const store = new SqliteStore(openDatabase(file()), { checkpointer });
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(65_536);
    expect(await checkpointer.failed).toMatch(/directory does not exist|unable to open/);
    await new Promise((r) => setTimeout(r, 0));
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(256);
    await store.close();
  });
});
