import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../errors.js';
import { MIGRATIONS } from './migrations/index.js';
import { SqliteBillingSetupRepo } from './repos/billing.js';
import { SqliteBillingDetailsRepo } from './repos/billingDetails.js';
import { SqliteSubscriptionRepo } from './repos/subscriptions.js';
import { SqliteCatalogueRepo } from './repos/catalogue.js';
import { SqliteCustomerRepo } from './repos/customers.js';
import { SqliteCustomerTokenRepo, type CustomerTokenLookup } from './repos/customerTokens.js';
import { SqliteEventRepo } from './repos/events.js';
import { SqliteFeatureRepo } from './repos/features.js';
import { SqliteInvoiceRepo } from './repos/invoices.js';
import { SqliteOfferRepo } from './repos/offers.js';
import { SqlitePaymentPlanRepo } from './repos/paymentPlans.js';
import { SqlitePlanRepo } from './repos/plans.js';
import { SqliteProductRepo } from './repos/products.js';
import { SqliteSystemRepo, type ApiKeyRecord } from './repos/system.js';
import { SqliteUsageRepo } from './repos/usage.js';
import { SqliteWebhookRepo } from './repos/webhooks.js';
import { Sql } from './sql.js';
import type { Store, Tx } from './store.js';

export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Applies the migrations the database lacks, each in its own transaction; refuses a newer database. */
export function migrate(db: Database.Database): { from: number; to: number } {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  const current = (db.prepare('SELECT coalesce(max(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
  if (current > SCHEMA_VERSION) {
    throw new AppError(
      'internal',
      `The database has schema version ${current}, newer than the ${SCHEMA_VERSION} this billing-mcp knows. ` +
        'Upgrade billing-mcp; it will not open a database written by a newer version.',
    );
  }
  for (const m of MIGRATIONS.filter((m) => m.version > current).sort((a, b) => a.version - b.version)) {
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

export function openDatabase(file: string, synchronous: Synchronous = 'full'): Database.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  migrate(db);
  return db;
}

export class SqliteStore implements Store {
  private readonly tx: Tx;
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly db: Database.Database) {
    const sql = new Sql(db);
    this.tx = {
      system: new SqliteSystemRepo(sql),
      catalogue: new SqliteCatalogueRepo(sql),
      products: new SqliteProductRepo(sql),
      plans: new SqlitePlanRepo(sql),
      billingSetup: new SqliteBillingSetupRepo(sql),
      customers: new SqliteCustomerRepo(sql),
      customerTokens: new SqliteCustomerTokenRepo(sql),
      billingDetails: new SqliteBillingDetailsRepo(sql),
      subscriptions: new SqliteSubscriptionRepo(sql),
      usage: new SqliteUsageRepo(sql),
      webhooks: new SqliteWebhookRepo(sql),
      invoices: new SqliteInvoiceRepo(sql),
      paymentPlans: new SqlitePaymentPlanRepo(sql),
      events: new SqliteEventRepo(sql),
      offers: new SqliteOfferRepo(sql),
      features: new SqliteFeatureRepo(sql),
    };
  }

  static open(file: string, synchronous: Synchronous = 'full'): SqliteStore {
    return new SqliteStore(openDatabase(file, synchronous));
  }

  private acquire(): Promise<void> | undefined {
    if (!this.busy) {
      this.busy = true;
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }

  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const wait = this.acquire();
    if (wait) await wait;
    try {
      return await fn(this.tx);
    } finally {
      this.release();
    }
  }

  /** The commit every unit of the open group waits for; undefined while no group is open. */
  private group: Promise<void> | undefined;

  /**
   * Group commit: the first unit opens a transaction, each unit runs in a savepoint of it (rolled
   * back alone when it fails), and one COMMIT after the event loop's poll phase (setImmediate) makes
   * every unit that arrived meanwhile durable with a single disk sync. A unit is answered only after
   * that COMMIT; if the COMMIT fails, every unit of the group fails and nothing of it stays.
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const wait = this.acquire();
    if (wait) await wait;
    let committed: Promise<void>;
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      committed = this.group ?? this.openGroup();
      this.db.exec('SAVEPOINT unit');
      try {
        outcome = { ok: true, value: await fn(this.tx) };
        this.db.exec('RELEASE unit');
      } catch (err) {
        if (!(err instanceof AppError && err.keepChanges)) this.db.exec('ROLLBACK TO unit');
        this.db.exec('RELEASE unit');
        outcome = { ok: false, error: err };
      }
    } finally {
      this.release();
    }
    await committed;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  private openGroup(): Promise<void> {
    this.db.exec('BEGIN IMMEDIATE');
    const committed = new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        const wait = this.acquire();
        const commit = () => {
          this.group = undefined;
          if (!this.db.open) return resolve();
          try {
            this.db.exec('COMMIT');
            resolve();
          } catch (err) {
            if (this.db.inTransaction) this.db.exec('ROLLBACK');
            reject(err);
          } finally {
            this.release();
          }
        };
        if (wait) void wait.then(commit);
        else commit();
      });
    });
    this.group = committed;
    return committed;
  }

  findApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.tx.system.findApiKeyByHash(keyHash);
  }

  findCustomerToken(tokenHash: string): Promise<CustomerTokenLookup | undefined> {
    return this.tx.customerTokens.findByHash(tokenHash);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  /** Commits an open group first, so that closing never drops an acknowledged unit. */
  close(): void {
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.db.close();
  }
}
