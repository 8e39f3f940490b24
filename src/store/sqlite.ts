import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../errors.js';
import { Turn } from '../turn.js';
import { MIGRATIONS, pendingMigrations, SCHEMA_VERSION } from './migrations/index.js';
import type { CustomerTokenLookup } from './ports/customerTokens.js';
import type { ApiKeyRecord } from './ports/system.js';
import { repositories } from './repositories.js';
import { SqliteSql } from './sqliteSql.js';
import type { Store, Tx, UnitOptions } from './store.js';
import { WalSync } from './walSync.js';
import { Checkpointer, WAL_SIZE_LIMIT_BYTES } from './checkpointer.js';
import { type ClaimSizes, ClaimFilterCache } from './claimFilter.js';

export { SCHEMA_VERSION };

/** Applies the migrations the database lacks, each in its own transaction; refuses a newer database. */
export function migrate(db: Database.Database): { from: number; to: number } {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  const current = (db.prepare('SELECT coalesce(max(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
  for (const m of pendingMigrations(MIGRATIONS, current)) {
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    })();
  }
  return { from: current, to: SCHEMA_VERSION };
}

/**
 * `full` (the default) syncs every commit to disk: an acknowledged write survives a power loss.
 * `normal` syncs at checkpoints only: it survives a crash of the process, not of the machine.
 */
export type Synchronous = 'full' | 'normal';

/** WAL pages after which a COMMIT checkpoints on the event loop, when no worker does. */
const LOOP_CHECKPOINT_PAGES = 256;
/**
 * With checkpoints in a worker: the WAL pages after which a COMMIT checkpoints all the same, a bound
 * in case the worker falls far behind (it lets the WAL start over at 4,096 pages: `Checkpointer`).
 */
const WORKER_FALLBACK_CHECKPOINT_PAGES = 65_536;

/** `create` false: a database file that does not exist is an error naming it, instead of a new empty database. */
export function openDatabase(file: string, synchronous: Synchronous = 'full', create = true): Database.Database {
  const db = connect(file, synchronous, create);
  migrate(db);
  return db;
}

/** Applies the migrations the file lacks (`billing-mcp migrate`); the schema versions before and after. */
export function migrateFile(file: string, synchronous: Synchronous = 'full', create = true): { from: number; to: number } {
  const db = connect(file, synchronous, create);
  try {
    return migrate(db);
  } finally {
    db.close();
  }
}

/** Opens the file, creating it and its directory when `create`; otherwise it must exist already. */
function connect(file: string, synchronous: Synchronous, create: boolean): Database.Database {
  if (file !== ':memory:') {
    const resolved = path.resolve(file);
    if (create) fs.mkdirSync(path.dirname(resolved), { recursive: true });
    else if (!fs.existsSync(resolved)) {
      throw new AppError('not_found', `The database ${resolved} does not exist; billing-mcp init creates it (check --db or BILLING_DB)`);
    }
  }
  const db = new Database(file, { fileMustExist: !create });
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  // Savepoint journals (every unit of a group commit has one) and temporary tables in memory: by
  // default a savepoint journal past 64 KiB spills to a temporary file, which cost a billing run
  // about 12 % of its time (bench/billing.mjs).
  db.pragma('temp_store = MEMORY');
  // Start-up (migrations) may wait for another process's write; SqliteStore then sets 0 for its writes.
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // The COMMIT that passes this many WAL pages copies them into the database file and syncs it, on
  // the event loop: 256 pages (1 MB) keep that copy short (SQLite's default 1000 took 40-60 ms on this
  // kind of disk during a billing run, beyond the 50 ms the loop may be held). A store whose
  // checkpoints run in a worker (`Checkpointer`) raises it to WORKER_FALLBACK_CHECKPOINT_PAGES.
  db.pragma(`wal_autocheckpoint = ${LOOP_CHECKPOINT_PAGES}`);
  return db;
}

/** How long a write unit waits, without blocking the event loop, for another process's write lock. */
export const DEFAULT_LOCK_TIMEOUT_MS = 5000;

export interface StoreOptions {
  /** Where reads run: a second, read-only connection to the same file (WAL: it sees committed data only). */
  reader?: Database.Database;
  /** How long a write unit waits for the write lock before it fails with `unavailable` (503). */
  lockTimeoutMs?: number;
  /**
   * Syncs the WAL after each COMMIT, off the event loop (`WalSync`): the write connection is set to
   * synchronous=NORMAL and units are answered once their COMMIT is on disk. Without it the
   * connection's own `synchronous` setting decides.
   */
  walSync?: WalSync;
  /** Runs the WAL checkpoints of the database file in a worker thread instead of inside COMMITs. */
  checkpointer?: Checkpointer;
  /** The sizes of usage event claim buckets and segments (tests make them small). */
  claimSizes?: ClaimSizes;
}

/** Back-off between attempts at the write lock: 1 ms doubling to at most 50 ms, each with ±50 % jitter. */
const FIRST_RETRY_MS = 1;
const MAX_RETRY_MS = 50;
/** The `Retry-After` of a unit that could not have the write lock in time. */
const RETRY_AFTER_SECONDS = 1;

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The open group transaction: its units wait for `committed`, settled by the one COMMIT. */
interface Group {
  committed: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
  /** When (performance.now()) the group opened. */
  openedAt: number;
  /** Not committed before this instant: a unit asked the group to linger (see `transaction`). */
  lingerUntil: number;
}

export class SqliteStore implements Store {
  readonly groupCommit = true;
  private readonly tx: Tx;
  /** The write connection's turn: write units and the group's COMMIT; with no reader connection, read units too. */
  private readonly writeTurn = new Turn();
  /** The reader connection's units and lookups (undefined: reads share the write connection). */
  private readonly reader: { db: Database.Database; tx: Tx; turn: Turn } | undefined;
  private readonly lockTimeoutMs: number;
  private readonly walSync: WalSync | undefined;
  private readonly checkpointer: Checkpointer | undefined;
  /** The sync of the last COMMIT while it is under way: reads wait for it, so that none sees what a power loss could undo. */
  private unsynced: Promise<void> | undefined;
  /** Set when a sync of the WAL failed: what was committed may not be on disk, and writes are refused until a restart. */
  private syncFailure: Error | undefined;
  /** The open group transaction; undefined while none is open. */
  private group: Group | undefined;
  private closed = false;
  /** The closed claim buckets' filters (`ClaimFilterCache`): forgotten when a COMMIT fails, the noted claims when a unit rolls back. */
  private readonly claimFilters: ClaimFilterCache;
  /** A unit's savepoint statements, prepared once (`exec` would parse them for every unit). */
  private readonly unit: { open: Database.Statement; release: Database.Statement; rollback: Database.Statement };

  constructor(
    readonly db: Database.Database,
    options: StoreOptions = {},
  ) {
    this.claimFilters = new ClaimFilterCache(options.claimSizes);
    this.tx = repositories(new SqliteSql(db), this.claimFilters);
    this.unit = { open: db.prepare('SAVEPOINT unit'), release: db.prepare('RELEASE unit'), rollback: db.prepare('ROLLBACK TO unit') };
    this.lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    // A busy write lock answers at once; `enterGroup` waits for it asynchronously instead.
    db.pragma('busy_timeout = 0');
    this.walSync = options.walSync;
    if (this.walSync) db.pragma('synchronous = NORMAL');
    this.checkpointer = options.checkpointer;
    if (this.checkpointer) {
      db.pragma(`wal_autocheckpoint = ${WORKER_FALLBACK_CHECKPOINT_PAGES}`);
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      void this.checkpointer.failed.then(() => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${LOOP_CHECKPOINT_PAGES}`);
      });
    }
    if (options.reader) this.reader = { db: options.reader, tx: repositories(new SqliteSql(options.reader)), turn: new Turn() };
  }

  /**
   * The store of a database file: the write connection and, for a file, a read-only connection that
   * reads run on (`:memory:` has none: reads then share the write connection). With `synchronous`
   * full (the default) a file's WAL is synced after each COMMIT off the event loop (`WalSync`).
   * `create` false: a file that does not exist is an error naming it (default: created).
   */
  static open(
    file: string,
    options: { synchronous?: Synchronous; lockTimeoutMs?: number; claimSizes?: ClaimSizes; create?: boolean } = {},
  ): SqliteStore {
    const synchronous = options.synchronous ?? 'full';
    const db = openDatabase(file, synchronous, options.create);
    if (file === ':memory:') return new SqliteStore(db, { lockTimeoutMs: options.lockTimeoutMs, claimSizes: options.claimSizes });
    const reader = new Database(file, { readonly: true });
    // A WAL reader waits only in rare moments (recovery after a crash); never for a writer.
    reader.pragma('busy_timeout = 100');
    const walSync = synchronous === 'full' ? WalSync.ofFile(file) : undefined;
    return new SqliteStore(db, { reader, lockTimeoutMs: options.lockTimeoutMs, walSync, checkpointer: new Checkpointer(file), claimSizes: options.claimSizes });
  }

  /**
   * A read unit sees committed data only. With a reader connection it runs there in a read
   * transaction of its own (one snapshot for all its statements; WAL readers never wait for a
   * writer, ours or another process's). Without one, it takes the write connection's turn and first
   * commits the open group, whose units have all finished while the turn is free.
   */
  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.unsynced) await this.unsynced.catch(() => undefined);
    const reader = this.reader;
    if (!reader) {
      const wait = this.writeTurn.take();
      if (wait) await wait;
      try {
        if (this.group) this.commit();
        return await fn(this.tx);
      } finally {
        this.writeTurn.give();
      }
    }
    const wait = reader.turn.take();
    if (wait) await wait;
    try {
      reader.db.exec('BEGIN');
      try {
        return await fn(reader.tx);
      } finally {
        if (reader.db.inTransaction) reader.db.exec('COMMIT');
      }
    } finally {
      reader.turn.give();
    }
  }

  /**
   * Group commit: the first unit opens a transaction, each unit runs in a savepoint of it (rolled
   * back alone when it fails), and one COMMIT after the event loop's poll phase (setImmediate) makes
   * every unit that arrived meanwhile durable with a single disk sync. A unit is answered only after
   * that COMMIT; if the COMMIT fails, every unit of the group fails and nothing of it stays. A unit
   * with `lingerMs` keeps its group open that long after it opened, so that the units following it
   * over several event-loop turns share the COMMIT (a billing run: one disk sync per linger, not per
   * turn); other units joining the group wait for the same COMMIT.
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>, options: UnitOptions = {}): Promise<T> {
    const group = await this.enterGroup();
    if (options.lingerMs) group.lingerUntil = Math.max(group.lingerUntil, group.openedAt + options.lingerMs);
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      this.unit.open.run();
      try {
        outcome = { ok: true, value: await fn(this.tx) };
        if (options.rollback) this.rollBackUnit();
        this.unit.release.run();
      } catch (err) {
        if (!(err instanceof AppError && err.keepChanges)) this.rollBackUnit();
        this.unit.release.run();
        outcome = { ok: false, error: err };
      }
    } finally {
      this.writeTurn.give();
    }
    await group.committed;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Undoes the running unit; what it noted of the claims it made is forgotten with it. */
  private rollBackUnit(): void {
    this.unit.rollback.run();
    this.claimFilters.forgetPending();
  }

  /**
   * Takes the write turn inside an open group, opening one if needed. `BEGIN IMMEDIATE` fails at
   * once while another connection holds the write lock (busy_timeout 0); the turn is then given
   * back (reads and the event loop go on) and the attempt repeated after a growing, jittered delay
   * until `lockTimeoutMs` has passed: then the unit fails with `unavailable` having written nothing.
   */
  private async enterGroup(): Promise<Group> {
    const deadline = Date.now() + this.lockTimeoutMs;
    let delay = FIRST_RETRY_MS;
    for (;;) {
      const wait = this.writeTurn.take();
      if (wait) await wait;
      if (this.group) return this.group;
      try {
        if (this.closed) throw new AppError('unavailable', 'The store is closing');
        if (this.syncFailure) throw this.refusal(this.syncFailure);
        // A long WAL starts over only if every frame is copied when a write transaction begins.
        if (this.checkpointer?.restartDue) await this.checkpointer.drain();
        this.db.exec('BEGIN IMMEDIATE');
        return this.openGroup();
      } catch (err) {
        this.writeTurn.give();
        if (!isBusy(err)) throw err;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        const err = new AppError(
          'unavailable',
          `Another connection to the database (billing-mcp jobs run, keys, or another server on the same file) held its write lock for ${this.lockTimeoutMs} ms; nothing was changed, retry`,
        );
        // The retry waits up to lockTimeoutMs again on the server side: a short hint suffices.
        err.retryAfterSeconds = RETRY_AFTER_SECONDS;
        throw err;
      }
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }

  /** Called with the write turn held, right after `BEGIN IMMEDIATE`; the COMMIT follows at setImmediate. */
  private openGroup(): Group {
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Every unit of the group awaits `committed`; this only keeps a failure at close from counting as unhandled.
    committed.catch(() => undefined);
    const group: Group = { committed, resolve, reject, openedAt: performance.now(), lingerUntil: 0 };
    this.group = group;
    const commitSoon = () => {
      const lingering = group.lingerUntil - performance.now();
      if (lingering > 0 && this.group === group && !this.closed) {
        setTimeout(commitSoon, lingering);
        return;
      }
      void (async () => {
        const wait = this.writeTurn.take();
        if (wait) await wait;
        try {
          if (this.group === group) this.commit();
        } finally {
          this.writeTurn.give();
        }
      })();
    };
    setImmediate(commitSoon);
    return group;
  }

  /**
   * Commits the open group (with the write turn held, or at close); a failed COMMIT fails all its
   * units. With a `WalSync` the units are answered when the COMMIT is on disk; the write turn is free
   * meanwhile, so the next group runs while the disk syncs.
   */
  private commit(): void {
    const group = this.group;
    if (!group) return;
    this.group = undefined;
    if (!this.db.open) return group.resolve();
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.claimFilters.clear();
      return group.reject(err);
    }
    this.checkpointer?.request();
    if (!this.walSync) return group.resolve();
    const synced = this.walSync.sync();
    this.unsynced = synced;
    synced.then(
      () => {
        if (this.unsynced === synced) this.unsynced = undefined;
        group.resolve();
      },
      (err: unknown) => {
        if (this.unsynced === synced) this.unsynced = undefined;
        this.syncFailure = err instanceof Error ? err : new Error(String(err));
        group.reject(this.refusal(this.syncFailure));
      },
    );
  }

  /** The answer to a unit after a failed sync of the WAL. */
  private refusal(cause: Error): AppError {
    return new AppError(
      'unavailable',
      `The database's write-ahead log could not be synced to disk (${cause.message}): changes committed since the last sync may not survive a power loss, and writes are refused until the server is restarted`,
    );
  }

  /**
   * An authentication lookup (one statement) never waits for a write unit. On the reader it takes
   * the reader's turn (never inside another read's snapshot); with one connection (`:memory:`, tests)
   * it runs beside the queue, as a unit that holds the turn across event-loop turns must not stop
   * authentication, and may then see that group's writes.
   */
  private async lookup<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const reader = this.reader;
    if (!reader) return fn(this.tx);
    const wait = reader.turn.take();
    if (wait) await wait;
    try {
      return await fn(reader.tx);
    } finally {
      reader.turn.give();
    }
  }

  findApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.lookup((tx) => tx.system.findApiKeyByHash(keyHash));
  }

  findCustomerToken(tokenHash: string): Promise<CustomerTokenLookup | undefined> {
    return this.lookup((tx) => tx.customerTokens.findByHash(tokenHash));
  }

  /** Fails (and with it /readyz) once a sync of the WAL has failed: writes are refused until a restart. */
  async ping(): Promise<void> {
    if (this.syncFailure) throw this.refusal(this.syncFailure);
    this.db.prepare('SELECT 1').get();
  }

  /** Commits an open group first, so that closing never drops an acknowledged unit. */
  async close(): Promise<void> {
    this.closed = true;
    this.commit();
    await this.walSync?.close();
    await this.checkpointer?.close();
    this.reader?.db.close();
    this.db.close();
  }
}
