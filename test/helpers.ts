import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { authenticate, createApiKey } from '../src/auth/keys.js';
import { loadConfig, type Config } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createMcpServer, stdioToolsets } from '../src/mcp/server.js';
import { createApp, createOrganisation, startHttp, type App, type RunningServer } from '../src/server.js';
import { PgSql } from '../src/store/pg/sql.js';
import { PgStore } from '../src/store/pg/store.js';
import type { Sql } from '../src/store/sql.js';
import type { Store } from '../src/store/store.js';
import type { ClaimSizes } from '../src/store/claimFilter.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteSql } from '../src/store/sqliteSql.js';
import type { Resolve } from '../src/webhooks/delivery.js';
import { newPgStore, onPostgres } from './pgStore.js';

export interface Org {
  organisationId: string;
  apiKey: string;
  keyId: string;
}

export interface TestEnv {
  app: App;
  /** The first organisation, with an all-permission key. */
  org: Org;
  /** The MCP client of `org`, over an in-memory transport. */
  mcp: Client;
  /** Base URL of the real HTTP server on 127.0.0.1. */
  url: string;
  server: RunningServer;
  /** Sets the clock every operation sees from now on. */
  setNow(date: Date | string): void;
  newOrg(name?: string): Promise<Org>;
  /** Raw SQL on the store's database, either engine (SQLite's `?` placeholders): for tests that reach past the API. */
  sql: Sql;
  newKey(org: Org, permissions: string[], expiresAt?: string): Promise<string>;
  mcpFor(apiKey: string): Promise<Client>;
  http(method: string, path: string, options?: HttpOptions): Promise<HttpResult>;
  close(): Promise<void>;
}

export interface HttpOptions {
  body?: unknown;
  token?: string | null;
  headers?: Record<string, string>;
  contentType?: string;
}

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
}

/** `resolve`: how webhook deliveries resolve names (the system resolver by default). */
export async function setup(overrides: Partial<Config> = {}, options: { resolve?: Resolve; claimSizes?: ClaimSizes } = {}): Promise<TestEnv> {
  const config: Config = { ...loadConfig({ LOG_LEVEL: 'silent', BILLING_JOBS_INTERVAL_MS: '0' }), toolsets: 'all', ...overrides };
  let now: Date | undefined;
  // A database file given in overrides gets the production layout (a reader connection beside the writer).
  const file = config.db === './data/billing.sqlite' ? undefined : config.db;
  const store = onPostgres()
    ? await newPgStore(file, { claimSizes: options.claimSizes })
    : SqliteStore.open(file ?? ':memory:', {
        synchronous: config.dbSynchronous,
        lockTimeoutMs: config.dbLockTimeoutMs,
        claimSizes: options.claimSizes,
      });
  const app = createApp(config, { store, clock: () => now ?? new Date(), logger: createLogger(process.env.BILLING_TEST_LOG ?? 'silent'), resolve: options.resolve });
  const org = await createOrganisation(store, 'Test organisation');
  const server = await startHttp(app, '127.0.0.1', 0);
  const clients: Client[] = [];

  async function mcpFor(apiKey: string): Promise<Client> {
    const mcpServer = createMcpServer({
      catalog: app.catalog,
      executor: app.executor,
      logger: app.logger,
      principal: () => authenticate(app.store, apiKey, app.clock()),
      toolsets: stdioToolsets(config.toolsets),
    });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await mcpServer.connect(serverTransport);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientTransport);
    clients.push(client);
    return client;
  }

  const env: TestEnv = {
    app,
    org,
    mcp: await mcpFor(org.apiKey),
    url: server.url,
    server,
    setNow(date) {
      now = new Date(date);
    },
    newOrg: (name = 'Other organisation') => createOrganisation(store, name),
    sql: store instanceof PgStore ? new PgSql(store.pool) : new SqliteSql((store as SqliteStore).db),
    async newKey(o, permissions, expiresAt) {
      const created = await store.transaction((tx) =>
        createApiKey(tx, { organisationId: o.organisationId, name: 'test key', permissions, expiresAt }, new Date()),
      );
      return created.apiKey;
    },
    mcpFor,
    async http(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const token = options.token === undefined ? org.apiKey : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] = options.contentType ?? 'application/json';
      }
      const res = await fetch(`${server.url}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async close() {
      for (const c of clients) await c.close();
      await server.close();
      await store.close();
    },
  };
  return env;
}

export interface ToolResult {
  isError: boolean;
  /** structuredContent on success; on error the whole problem, as REST answers it (`problemOf`). */
  body: any;
  text: string;
}

/**
 * The whole problem of an MCP error's text: its summary line (`Title: detail`) and the problem JSON
 * without what that line says (no title or detail, a lone violation without its message when that
 * is the detail; docs/decisions.md).
 */
export function problemOf(text: string): any {
  const newline = text.indexOf('\n');
  const summary = text.slice(0, newline);
  const { type, status, violations } = JSON.parse(text.slice(newline + 1)) as { type: string; status: number; violations?: Array<Record<string, unknown>> };
  const detail = summary.slice(summary.indexOf(': ') + 2);
  const problem: Record<string, unknown> = { type, title: summary.slice(0, summary.indexOf(': ')), status, detail };
  if (violations) problem.violations = violations.map(({ propertyPath, message = detail, code }) => ({ propertyPath, message, code }));
  return problem;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  if (result.isError) return { isError: true, body: problemOf(text), text };
  return { isError: false, body: result.structuredContent, text };
}

/** Calls a tool that must succeed and returns its structured content. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await call(client, name, args);
  if (r.isError) throw new Error(`${name} failed: ${r.text}`);
  return r.body;
}

/** Calls a tool that must fail with the given status; returns the problem. */
export async function fails(client: Client, name: string, args: Record<string, unknown>, status: number): Promise<any> {
  const r = await call(client, name, args);
  expect(r.isError, `${name} should fail with ${status} but returned ${r.text}`).toBe(true);
  expect(r.body.status, r.text).toBe(status);
  return r.body;
}

/** Bills the subscription as of `at` (the clock moves there) with run_billing; each invoice's lines as [description, net, from, to]. */
export async function billAt(env: TestEnv, at: string, subscription: string): Promise<Array<Array<[string, number, string, string]>>> {
  env.setNow(at);
  const run = await ok(env.mcp, 'run_billing', { subscription });
  const out = [];
  for (const id of run.invoices) {
    const invoice = (await env.http('GET', `/invoices/${id}`)).body;
    out.push(invoice.lines.map((l: any) => [l.description, l.netAmount, l.periodStart, l.periodEnd]));
  }
  return out;
}

/** The violation paths of a problem. */
export function paths(problem: { violations?: Array<{ propertyPath: string }> }): string[] {
  return (problem.violations ?? []).map((v) => v.propertyPath);
}

/** An invoice as its events carry it: the answer of get_invoice without the hostedUrl answers add (docs/decisions.md, issue 18). */
export function storedInvoice({ hostedUrl: _, ...invoice }: Record<string, unknown>): Record<string, unknown> {
  return invoice;
}

/** A product made of `product` (create_product's input) and its price plan of 0.01 EUR a unit, monthly in arrears. */
export async function meteredCharge(mcp: Client, product: Record<string, unknown>): Promise<{ product: string; pricePlan: string }> {
  const { id } = await ok(mcp, 'create_product', product);
  const pricePlan = await ok(mcp, 'create_price_plan', {
    id,
    type: 'per_unit',
    currencyCode: 'EUR',
    price: { amount: 0.01 },
    billingInterval: '1M',
    payInAdvance: false,
  });
  return { product: id, pricePlan: pricePlan.id };
}

/** An active subscription of a new customer to a plan of one product with `usageMetric` (`meteredCharge`); its id. */
export async function meteredSubscription(mcp: Client, usageMetric: Record<string, unknown>, name: string): Promise<string> {
  const customer = await ok(mcp, 'create_customer', { lastName: name });
  const charge = await meteredCharge(mcp, { name, usageMetric });
  const plan = await ok(mcp, 'create_plan', { code: name.toLowerCase(), name, charges: [charge] });
  return (await ok(mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true })).id;
}

/** The store, counting the units of work begun on it (`begun`) and the most in flight at once (`most`). */
export function countingStore(store: Store): { store: Store; units: { begun: number; inFlight: number; most: number } } {
  const units = { begun: 0, inFlight: 0, most: 0 };
  return {
    units,
    store: {
      groupCommit: store.groupCommit,
      read: (fn) => store.read(fn),
      transaction: async (fn, options) => {
        units.begun += 1;
        units.most = Math.max(units.most, ++units.inFlight);
        try {
          return await store.transaction(fn, options);
        } finally {
          units.inFlight -= 1;
        }
      },
      findApiKey: (hash) => store.findApiKey(hash),
      findCustomerToken: (hash) => store.findCustomerToken(hash),
      ping: () => store.ping(),
      close: () => store.close(),
    },
  };
}
