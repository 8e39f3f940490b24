import type DataLoader from 'dataloader';
import pg from 'pg';
import { naturalBatches } from '../../batching.js';
import { Turn } from '../../turn.js';
import { AppError } from '../../errors.js';
import type { CustomerTokenLookup } from '../ports/customerTokens.js';
import type { ApiKeyRecord } from '../ports/system.js';
import { type ClaimSizes, ClaimFilterCache } from '../claimFilter.js';
import { repositories } from '../repositories.js';
import { pendingMigrations, SCHEMA_VERSION } from '../migrations/index.js';
import type { Store, Tx, UnitOptions } from '../store.js';
import { PG_MIGRATIONS } from './schema.js';
import { PgSql } from './sql.js';

export interface PgStoreOptions {
  /** Connections in the pool: how many units of work run at once in this process (default 10). */
  poolSize?: number;
  /** Passed to node-postgres as it is (`true`, or `{ ca, rejectUnauthorized, … }`); `sslmode` in the URL works too. */
  ssl?: pg.PoolConfig['ssl'];
  /** The sizes of usage event claim buckets and segments (tests make them small). */
  claimSizes?: ClaimSizes;
}

/** Attempts of a unit that PostgreSQL aborted for a concurrent one (serialization failure, deadlock) before it fails with 503. */
const MAX_ATTEMPTS = 10;
const FIRST_RETRY_MS = 2;
const MAX_RETRY_MS = 100;
const RETRY_AFTER_SECONDS = 1;

/** 40001 serialization_failure, 40P01 deadlock_detected: the unit did nothing and may run again. */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** The session advisory lock of a `UnitOptions.serializeOn` key, and its release. */
const LOCK = 'SELECT pg_advisory_lock(hashtextextended($1, 0))';
const UNLOCK = 'SELECT pg_advisory_unlock(hashtextextended($1, 0))';

/** At most this many API key lookups share one statement. */
const MAX_KEY_LOOKUPS = 500;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Serialises schema changes of every instance that starts at the same time (a session-level advisory lock). */
const MIGRATION_LOCK = 7_321_004_114;

/**
 * Applies the PostgreSQL migrations the database lacks, each in its own transaction, under an
 * advisory lock; refuses a database of a newer schema. Both engines share version numbers.
 */
export async function migratePg(pool: pg.Pool): Promise<{ from: number; to: number }> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
      const current = Number((await client.query<{ v: string }>('SELECT coalesce(max(version), 0) AS v FROM schema_migrations')).rows[0]!.v);
      for (const m of pendingMigrations(PG_MIGRATIONS, current)) {
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
      return { from: current, to: SCHEMA_VERSION };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** Applies the migrations the database at `url` lacks (`billing-mcp migrate`); the schema versions before and after. */
export async function migrateUrl(url: string): Promise<{ from: number; to: number }> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    return await migratePg(pool);
  } finally {
    await pool.end();
  }
}

/**
 * The store on PostgreSQL: a pool of connections, each unit of work a transaction of its own on one
 * of them. Write units run SERIALIZABLE: whatever several units or instances do at once, the outcome
 * is that of some order of them one after the other, exactly as SQLite's single writer gives, so the
 * domain's read-then-write rules need no locks of their own. A unit PostgreSQL aborts for a
 * concurrent one (40001, 40P01) is run again from the start, up to MAX_ATTEMPTS times with a jittered
 * back-off; it is answered only after its COMMIT. Read units run REPEATABLE READ READ ONLY: one
 * snapshot of committed data. `lingerMs` does not apply: every unit commits alone. Claim units
 * (`claim: true`: the leases of webhook deliveries and of the jobs loop) run READ COMMITTED and take
 * their rows with `FOR UPDATE SKIP LOCKED`, so that instances claiming at once take disjoint rows.
 * Units with `serializeOn` (all of which update one row) queue in the process, then take a session
 * advisory lock on their key before BEGIN, so that they wait for one another instead of aborting.
 */
export class PgStore implements Store {
  readonly groupCommit = false;
  private readonly txs = new WeakMap<pg.PoolClient, Tx>();
  private readonly lookups: Tx;
  /** Per `UnitOptions.serializeOn` key in use: the turn its units of this process take one after another. */
  private readonly turns = new Map<string, Turn>();
  /** The closed claim buckets' filters, shared by every connection's repositories (each unit commits alone, so what one reads is committed). */
  private readonly claimFilters: ClaimFilterCache;

  /**
   * API key lookups, batched: every request authenticates with a read of its key, which on its own
   * would be a round trip per request (docs/performance.md, "PostgreSQL").
   */
  private readonly apiKeys: DataLoader<string, ApiKeyRecord | null>;

  private constructor(
    readonly pool: pg.Pool,
    claimSizes?: ClaimSizes,
  ) {
    this.claimFilters = new ClaimFilterCache(claimSizes);
    this.lookups = repositories(new PgSql(pool), this.claimFilters);
    this.apiKeys = naturalBatches(async (hashes) => {
      const found = await this.lookups.system.findApiKeysByHash(hashes);
      return hashes.map((hash) => found.get(hash) ?? null);
    }, MAX_KEY_LOOKUPS);
  }

  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    // Pipeline mode: a unit's statements issued together (its BEGIN and first read, reads awaited as one)
    // go out at once instead of each waiting for the answer to the one before.
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, ssl: options.ssl, pipeline: true });
    // An idle connection the server dropped must not take the process down; the next checkout reconnects.
    pool.on('error', () => undefined);
    try {
      await migratePg(pool);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PgStore(pool, options.claimSizes);
  }

  private txOf(client: pg.PoolClient): Tx {
    let tx = this.txs.get(client);
    if (!tx) {
      tx = repositories(new PgSql(client), this.claimFilters);
      this.txs.set(client, tx);
    }
    return tx;
  }

  /**
   * A read unit: its BEGIN goes out without waiting for an answer (the pool's connections pipeline
   * their statements), and the result does not wait for the COMMIT of the read-only snapshot; the
   * connection goes back to the pool once that COMMIT is answered.
   */
  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const done = (err?: Error) => client.release(err);
    let value: T;
    try {
      [, value] = await Promise.all([client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'), fn(this.txOf(client))]);
    } catch (err) {
      await client.query('ROLLBACK').then(() => done(), done);
      throw err;
    }
    void client.query('COMMIT').then(() => done(), done);
    return value;
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>, options: UnitOptions = {}): Promise<T> {
    const key = options.serializeOn;
    if (key === undefined) return this.attempts(fn, options);
    let turn = this.turns.get(key);
    if (!turn) this.turns.set(key, (turn = new Turn()));
    const wait = turn.take();
    if (wait) await wait;
    try {
      return await this.attempts(fn, options);
    } finally {
      turn.give();
      if (turn.free) this.turns.delete(key);
    }
  }

  /** A unit, run again from the start while PostgreSQL aborts it for a concurrent one. */
  private async attempts<T>(fn: (tx: Tx) => Promise<T>, options: UnitOptions): Promise<T> {
    let delay = FIRST_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(fn, options);
      } catch (err) {
        if (!isRetryable(err)) throw err;
        if (attempt >= MAX_ATTEMPTS) {
          const busy = new AppError(
            'unavailable',
            `PostgreSQL aborted this unit of work ${attempt} times for concurrent ones on the same data; nothing was changed, retry`,
          );
          busy.retryAfterSeconds = RETRY_AFTER_SECONDS;
          throw busy;
        }
        await sleep(delay * (0.5 + Math.random()));
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
  }

  /** One try of a unit; an error that keeps its changes (AppError.keepChanges) commits them, then is thrown. */
  private async attempt<T>(fn: (tx: Tx) => Promise<T>, options: UnitOptions): Promise<T> {
    const client = await this.pool.connect();
    const key = options.serializeOn;
    let begun = false;
    let broken = false;
    try {
      // With a key, its lock goes out first and BEGIN with it (pipeline mode): the server runs BEGIN once
      // the lock is granted, so the unit's snapshot follows the COMMIT of the unit that held it.
      const locked = key === undefined ? undefined : client.query(LOCK, [key]);
      // A claim (UnitOptions.claim) runs READ COMMITTED and locks what it takes FOR UPDATE SKIP LOCKED; every other write unit SERIALIZABLE.
      await Promise.all([locked, client.query(options.claim ? 'BEGIN ISOLATION LEVEL READ COMMITTED' : 'BEGIN ISOLATION LEVEL SERIALIZABLE')]);
      begun = true;
      let value: T;
      try {
        value = await fn(this.txOf(client));
      } catch (err) {
        // Before the ROLLBACK lets another unit on: what this one noted of its claims is undone.
        this.claimFilters.forgetPending();
        if (err instanceof AppError && err.keepChanges) await client.query('COMMIT');
        else await client.query('ROLLBACK');
        throw err;
      }
      if (options.rollback) this.claimFilters.forgetPending();
      await client.query(options.rollback ? 'ROLLBACK' : 'COMMIT');
      return value;
    } catch (err) {
      // A COMMIT that failed undid the unit too.
      this.claimFilters.forgetPending();
      // A unit that did not begin, or an error that is not PostgreSQL's answer (a lost connection),
      // leaves the connection in doubt: it is discarded (closing it ends its transaction and its lock).
      const code = (err as { code?: unknown } | null)?.code;
      broken = !begun || (!(err instanceof AppError) && !(typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)));
      throw err;
    } finally {
      // The unit is answered without waiting for its key's lock to be given back; the connection
      // returns to the pool once it is.
      if (key !== undefined && !broken) void client.query(UNLOCK, [key]).then(() => client.release(), () => client.release(true));
      else client.release(broken);
    }
  }

  /** Concurrent lookups go out together, one statement for all of them (`naturalBatches`); none is cached. */
  async findApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return (await this.apiKeys.load(keyHash)) ?? undefined;
  }

  findCustomerToken(tokenHash: string): Promise<CustomerTokenLookup | undefined> {
    return this.lookups.customerTokens.findByHash(tokenHash);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
