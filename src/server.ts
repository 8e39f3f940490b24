import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiKey } from './auth/keys.js';
import { PageTokens } from './auth/pageTokens.js';
import type { Config } from './config.js';
import { AppError } from './errors.js';
import { EmailSender } from './email/sender.js';
import { createHttpApp } from './http/app.js';
import { newId } from './ids.js';
import { nonOverlapping, runDueJobs } from './jobs/runner.js';
import { createPages } from './pages/app.js';
import { currentLinks } from './pages/links.js';
import { PAGE_ROUTES } from './pages/routes.js';
import type { Links } from './domain/links.js';
import { createLogger, type Logger } from './logger.js';
import { Catalog } from './registry/catalog.js';
import { Executor } from './registry/executor.js';
import { migrateUrl, PgStore } from './store/pg/store.js';
import { migrateFile, SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import { OPERATIONS } from './tools/index.js';
import { DeliveryWorker, type Resolve } from './webhooks/delivery.js';

export interface App {
  config: Config;
  store: Store;
  catalog: Catalog;
  executor: Executor;
  logger: Logger;
  clock: () => Date;
  /** Sends webhook deliveries; kicked after commits, stopped by the HTTP server's close. */
  deliveries: DeliveryWorker;
  /** Sends the e-mail outbox during jobs runs; closed by the HTTP server's close. */
  emails: EmailSender;
  /** Base of the URLs results link to; `startHttp` tells it where the server listens. */
  publicUrl: PublicUrl;
  /** Signs and checks the tokens of page links; its secret is read (or created) on first use. */
  pageTokens: () => Promise<PageTokens>;
  /** The links of results and pages under the current base URL. */
  links: () => Promise<Links>;
}

/** `http://host:port`, with an IPv6 host in brackets and an unspecified one (0.0.0.0, ::) as localhost. */
export function httpUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/**
 * Where links in results (an invoice PDF) point: BILLING_PUBLIC_URL when set (a server behind a proxy
 * must set it), else the HTTP server's own address once it listens, else (stdio, no server in this
 * process) `http://BILLING_HOST:BILLING_PORT`, where `billing-mcp serve` with the same configuration
 * answers.
 */
export class PublicUrl {
  private listening: string | undefined;

  constructor(private readonly config: Pick<Config, 'publicUrl' | 'host' | 'port'>) {}

  /** The HTTP server answers at `url` (its port resolved when it was 0). */
  listen(url: string): void {
    this.listening = url;
  }

  get value(): string {
    return this.config.publicUrl ?? this.listening ?? httpUrl(this.config.host, this.config.port);
  }
}

/**
 * The store the configuration names: PostgreSQL at `databaseUrl`, else the SQLite file `db`; migrated.
 * `create` false: a SQLite file that does not exist is an error naming it (only `init` and `serve`
 * create one).
 */
export async function openStore(config: Config, options: { create?: boolean } = {}): Promise<Store> {
  if (config.databaseUrl) return PgStore.open(config.databaseUrl, { poolSize: config.databasePoolSize });
  return SqliteStore.open(config.db, { synchronous: config.dbSynchronous, lockTimeoutMs: config.dbLockTimeoutMs, create: options.create });
}

/**
 * Applies the migrations the configured database lacks (`billing-mcp migrate`); the schema versions
 * before and after. A SQLite file that does not exist is an error naming it, not a new database.
 */
export async function migrateDatabase(config: Config): Promise<{ engine: 'postgres' | 'sqlite'; from: number; to: number }> {
  if (config.databaseUrl) return { engine: 'postgres', ...(await migrateUrl(config.databaseUrl)) };
  return { engine: 'sqlite', ...migrateFile(config.db, config.dbSynchronous, false) };
}

/** Composition root: config → store → registry → surfaces. No rules live here. */
export function createApp(
  config: Config,
  options: { store?: Store; clock?: () => Date; logger?: Logger; resolve?: Resolve; deliveryPollMs?: number } = {},
): App {
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = options.store ?? SqliteStore.open(config.db, { synchronous: config.dbSynchronous, lockTimeoutMs: config.dbLockTimeoutMs });
  const clock = options.clock ?? (() => new Date());
  const catalog = new Catalog(OPERATIONS, { readOnly: config.readOnly });
  const deliveries = new DeliveryWorker({ store, config, logger, clock, resolve: options.resolve, pollMs: options.deliveryPollMs });
  const emails = new EmailSender({ store, config, logger });
  const publicUrl = new PublicUrl(config);
  let tokens: Promise<PageTokens> | undefined;
  // A failed load (the database unreachable) is tried again by the next caller.
  const pageTokens = () =>
    (tokens ??= PageTokens.load(store, clock()).catch((err: unknown) => {
      tokens = undefined;
      throw err;
    }));
  const baseUrl = () => publicUrl.value;
  const links = currentLinks(pageTokens, baseUrl);
  const executor = new Executor({ store, config, logger, clock, deliveries, baseUrl, links });
  return { config, store, catalog, executor, logger, clock, deliveries, emails, publicUrl, pageTokens, links };
}

/** How often Node looks for requests past their headers or request timeout: a tenth of the shorter, 10 ms to 1 s. */
function checkingInterval(config: Config): number {
  return Math.max(10, Math.min(1000, Math.floor(Math.min(config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs) / 10)));
}

/** A failure to listen, naming the setting to check: the port when it is taken or privileged, else the host (one that does not resolve). */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): AppError {
  const setting = err.code === 'EADDRINUSE' || err.code === 'EACCES' ? `BILLING_PORT (--port) ${port}` : `BILLING_HOST (--host) ${host}`;
  return new AppError('bad_request', `Cannot listen on ${httpUrl(host, port)}: ${err.message}; check ${setting}`);
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** The HTTP server (REST, /mcp, OpenAPI, health), the jobs loop and the webhook deliveries (resumed at start). */
export async function startHttp(app: App, host = app.config.host, port = app.config.port): Promise<RunningServer> {
  const { config } = app;
  // Every operation signs its links with the page-token secret: read (or created, a write) before
  // the first request, so that no read ever waits for the write lock on its account.
  await app.pageTokens();
  const bodyRate = { minBytesPerSecond: config.httpMinBodyBytesPerSecond, windowMs: config.httpBodyRateWindowMs };
  const server = http.createServer(
    {
      // Node's defaults (300 s for a request, checked every 30 s) let slow clients hold connections for minutes.
      requestTimeout: config.httpRequestTimeoutMs,
      headersTimeout: config.httpHeadersTimeoutMs,
      connectionsCheckingInterval: checkingInterval(config),
    },
    createHttpApp({
      catalog: app.catalog,
      executor: app.executor,
      store: app.store,
      logger: app.logger,
      clock: app.clock,
      mcpAllowedOrigins: config.mcpAllowedOrigins,
      bodyRate,
      maxConcurrentPerKey: config.maxConcurrentPerKey,
      pages: createPages(PAGE_ROUTES, {
        store: app.store,
        config,
        logger: app.logger,
        clock: app.clock,
        pageTokens: app.pageTokens,
        links: app.links,
        deliveries: app.deliveries,
        bodyRate,
      }),
    }),
  );
  server.keepAliveTimeout = 65_000;
  // Connections beyond the cap are closed as they arrive (Node's 'drop').
  server.maxConnections = config.httpMaxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, host, port)));
    server.listen(port, host, () => resolve());
  });
  let timer: NodeJS.Timeout | undefined;
  if (app.config.jobsIntervalMs > 0) {
    const tick = nonOverlapping(() => runDueJobs(app, app.clock()));
    timer = setInterval(() => {
      tick().catch((err: unknown) => app.logger.error({ err }, 'jobs run failed'));
    }, app.config.jobsIntervalMs);
    timer.unref();
  }
  app.deliveries.kick();
  const { port: actual } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  app.publicUrl.listen(httpUrl(host, actual));
  return {
    url: `http://${shownHost}:${actual}`,
    close: async () => {
      if (timer) clearInterval(timer);
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await app.deliveries.stop();
      app.emails.close();
    },
  };
}

/** Creates an organisation and a key with every permission. */
export async function createOrganisation(store: Store, name: string, now = new Date()) {
  return store.transaction(async (tx) => {
    const organisationId = newId();
    await tx.system.createOrganisation({ id: organisationId, name, createdAt: now.toISOString() });
    const key = await createApiKey(tx, { organisationId, name: `${name} admin key` }, now);
    return { organisationId, apiKey: key.apiKey, keyId: key.id };
  });
}

export const DEMO_ORGANISATION = 'Demo organisation';

/**
 * `serve --demo`: an empty database gets a demo organisation; a database that already has it gets a
 * fresh key for it (only hashes are stored, so an earlier key cannot be shown again).
 */
export async function ensureDemo(store: Store, now = new Date()) {
  const existing = await store.read(async (tx) => (await tx.system.listOrganisations()).find((o) => o.name === DEMO_ORGANISATION));
  if (!existing) return { ...(await createOrganisation(store, DEMO_ORGANISATION, now)), created: true };
  const key = await store.transaction((tx) =>
    createApiKey(tx, { organisationId: existing.id, name: `demo key ${now.toISOString()}` }, now),
  );
  return { organisationId: existing.id, apiKey: key.apiKey, keyId: key.id, created: false };
}
