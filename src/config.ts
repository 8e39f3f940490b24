import { isIP } from 'node:net';
import { z } from 'zod';
import { AppError } from './errors.js';

export const TOOLSETS = [
  'catalogue',
  'customers',
  'subscriptions',
  'usage',
  'invoices',
  'payments',
  'offers',
  'dunning',
  'entitlements',
  'webhooks',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

const toolsetsSchema = z.union(
  [
    z.literal('all'),
    z
      .string()
      .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
      .pipe(z.array(z.enum(TOOLSETS)).min(1)),
  ],
  { message: `must be all or a comma-separated list of ${TOOLSETS.join(', ')}` },
);

/** `all` or a comma-separated list of toolsets (BILLING_TOOLSETS, `?toolsets=` on /mcp); undefined when invalid. */
export function parseToolsets(value: string): Toolset[] | 'all' | undefined {
  const parsed = toolsetsSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

const bool = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: 'must be a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(min, { message: `must be at least ${min}` }).max(max, { message: `must be at most ${max}` }));

/** The URL `value` spells, or undefined. */
const parseUrl = (value: string): URL | undefined => (URL.canParse(value) ? new URL(value) : undefined);

/** `https://app.example.com` → itself; anything that is not a bare http(s) origin → undefined. */
function toOrigin(value: string): string | undefined {
  const url = parseUrl(value);
  if (!url) return undefined;
  const bare = (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return bare && !value.includes('?') && !value.includes('#') ? url.origin : undefined;
}

const origins = z.string().transform((list, ctx) => {
  const result: string[] = [];
  for (const item of list.split(',').map((o) => o.trim()).filter(Boolean)) {
    const origin = toOrigin(item);
    if (!origin) {
      ctx.addIssue({ code: 'custom', message: `must be comma-separated origins such as https://app.example.com (scheme, host and optional port; ${JSON.stringify(item)} is not one)` });
      return z.NEVER;
    }
    result.push(origin);
  }
  return result;
});

/** `https://billing.example.com/api/` → `https://billing.example.com/api`; anything but an http(s) URL without query or fragment → an issue. */
const publicUrl = z.string().transform((value, ctx) => {
  const url = parseUrl(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || value.includes('?') || value.includes('#') || url.username || url.password) {
    ctx.addIssue({ code: 'custom', message: 'must be the http(s) URL clients reach the REST facade at, such as https://billing.example.com (no query or fragment)' });
    return z.NEVER;
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
});

/** `postgres://user:password@host:5432/billing?sslmode=verify-full` (or `postgresql://`): anything else → an issue. */
const databaseUrl = z.string().transform((value, ctx) => {
  const url = parseUrl(value);
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    ctx.addIssue({ code: 'custom', message: 'must be a postgres:// or postgresql:// URL, such as postgres://billing:secret@db.example.com:5432/billing?sslmode=verify-full' });
    return z.NEVER;
  }
  return value;
});

/** `smtp://user:pass@host:port` or `smtps://…` (TLS from the start): anything else → an issue. */
const smtpUrl = z.string().transform((value, ctx) => {
  const url = parseUrl(value);
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
    ctx.addIssue({ code: 'custom', message: 'must be an smtp:// or smtps:// URL with a host, such as smtps://user:password@mail.example.com:465' });
    return z.NEVER;
  }
  return value;
});

/** A host name: dot-separated labels of letters, digits and inner hyphens, the last not all digits (`999.1.1.1` is no name). */
function isHostName(value: string): boolean {
  const labels = value.split('.');
  return value.length <= 253 && labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l)) && !/^\d+$/.test(labels.at(-1) as string);
}

/** What the HTTP server listens on: an IP address or a host name, checked here so that a typo names the variable. */
const host = z.string().refine((value) => isIP(value) !== 0 || isHostName(value), {
  message: 'must be an IP address (127.0.0.1, 0.0.0.0, ::1) or a host name (localhost)',
});

/** pino's levels, as LOG_LEVEL takes them. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** `billing@example.com` or `Example Billing <billing@example.com>`. */
const emailFrom = z
  .string()
  .regex(/^(?:[^<>@\r\n]+<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/, {
    message: 'must be an e-mail address, optionally with a name: Example Billing <billing@example.com>',
  });

const envSchema = z.object({
  BILLING_DB: z.string().min(1).default('./data/billing.sqlite'),
  BILLING_DB_SYNCHRONOUS: z.enum(['full', 'normal'], { message: 'must be full or normal' }).default('full'),
  BILLING_DB_LOCK_TIMEOUT_MS: int(0, 600_000).default(5000),
  BILLING_DATABASE_URL: databaseUrl.optional(),
  BILLING_DB_POOL_SIZE: int(1, 1000).default(10),
  BILLING_API_KEY: z.string().min(1).optional(),
  BILLING_HOST: host.default('127.0.0.1'),
  BILLING_PORT: int(0, 65535).default(8080),
  BILLING_PUBLIC_URL: publicUrl.optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')} (lower case)` }).default('info'),
  BILLING_READ_ONLY: bool.default(false),
  BILLING_TOOLSETS: toolsetsSchema.optional(),
  BILLING_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  BILLING_WEBHOOK_TIMEOUT_MS: int(1, 600_000).default(10_000),
  BILLING_WEBHOOK_CONCURRENCY: int(1, 10_000).default(32),
  BILLING_WEBHOOK_CONCURRENCY_PER_TARGET: int(1, 10_000).default(4),
  BILLING_WEBHOOK_RETRY_DELAYS: z
    .string()
    .regex(/^\d+(,\d+)*$/, { message: 'must be comma-separated whole seconds, e.g. 10,300,1800' })
    .transform((s) => s.split(',').map(Number))
    .default([10, 300, 1800]),
  BILLING_SMTP_URL: smtpUrl.optional(),
  BILLING_EMAIL_FROM: emailFrom.optional(),
  BILLING_EMAIL_RETRY_DELAYS: z
    .string()
    .regex(/^\d+(,\d+)*$/, { message: 'must be comma-separated whole seconds, e.g. 60,600,3600,21600' })
    .transform((s) => s.split(',').map(Number))
    .default([60, 600, 3600, 21_600]),
  BILLING_JOBS_INTERVAL_MS: int(0, 86_400_000).default(10_000),
  BILLING_PAYMENT_PLAN_GRACE_DAYS: int(0, 365).default(7),
  BILLING_PAYMENT_TERM_DAYS: int(0, 365).default(14),
  BILLING_CUSTOMER_ACCESS_TOKEN_TTL_SECONDS: int(1, 86_400).default(900),
  BILLING_CUSTOMER_REFRESH_TOKEN_TTL_SECONDS: int(60, 31_536_000).default(2_592_000),
  BILLING_MCP_ALLOWED_ORIGINS: origins.default([]),
  BILLING_HTTP_REQUEST_TIMEOUT_MS: int(1, 3_600_000).default(30_000),
  BILLING_HTTP_HEADERS_TIMEOUT_MS: int(1, 3_600_000).default(10_000),
  BILLING_HTTP_MIN_BODY_BYTES_PER_SECOND: int(0, 1_073_741_824).default(1024),
  BILLING_HTTP_BODY_RATE_WINDOW_MS: int(1, 3_600_000).default(5_000),
  BILLING_HTTP_MAX_CONNECTIONS: int(1, 1_000_000).default(1_000),
  BILLING_MAX_CONCURRENT_PER_KEY: int(1, 1_000_000).default(20),
  BILLING_PAGES_RATE_LIMIT_PER_MINUTE: int(1, 1_000_000).default(120),
});

export interface Config {
  db: string;
  /** full: every commit reaches the disk before it is acknowledged; normal: faster, may lose the last commits on power loss. */
  dbSynchronous: 'full' | 'normal';
  /** How long a write waits for another process's write lock on the file before it answers 503. */
  dbLockTimeoutMs: number;
  /**
   * PostgreSQL instead of the SQLite file `db`: a postgres:// URL; TLS as its `sslmode`, `sslrootcert`,
   * `sslcert` and `sslkey` parameters say (node-postgres reads them). Undefined: SQLite.
   */
  databaseUrl: string | undefined;
  /** Connections to PostgreSQL per process: the units of work that run at once. */
  databasePoolSize: number;
  apiKey: string | undefined;
  host: string;
  port: number;
  /**
   * Base URL that links in results (an invoice PDF) point at: where clients reach the REST facade.
   * Unset: the HTTP server's own address, or over stdio `http://BILLING_HOST:BILLING_PORT`.
   */
  publicUrl: string | undefined;
  logLevel: string;
  readOnly: boolean;
  /** MCP tools shown: all, the named toolsets, or (undefined) a default set that grows on demand over stdio. */
  toolsets: Toolset[] | 'all' | undefined;
  webhookAllowPrivate: boolean;
  webhookTimeoutMs: number;
  /** Webhook delivery attempts in flight at once, across every target. */
  webhookConcurrency: number;
  /** Webhook delivery attempts in flight at once to one target (URL origin: scheme, host, port). */
  webhookConcurrencyPerTarget: number;
  webhookRetryDelaysSeconds: number[];
  /** SMTP server e-mails are sent through; undefined: e-mails stay in the outbox as not_sent. */
  smtpUrl: string | undefined;
  /** From header of every e-mail (required with smtpUrl). */
  emailFrom: string | undefined;
  /** Seconds before each retry of an e-mail that could not be sent; after the last, it is failed. */
  emailRetryDelaysSeconds: number[];
  jobsIntervalMs: number;
  paymentPlanGraceDays: number;
  /** Days from issue to due date of an invoice whose customer has no paymentTermDays of its own. */
  paymentTermDays: number;
  customerAccessTokenTtlSeconds: number;
  customerRefreshTokenTtlSeconds: number;
  /** Browser origins besides the server's own that may call `/mcp` (DNS-rebinding protection); normalized by URL. */
  mcpAllowedOrigins: string[];
  /** The whole request (headers and body) must arrive within this time: 408 and the connection closed. */
  httpRequestTimeoutMs: number;
  /** The headers must arrive within this time (at most httpRequestTimeoutMs). */
  httpHeadersTimeoutMs: number;
  /** A body arriving slower than this over any httpBodyRateWindowMs is cut with a 408; 0 turns the check off. */
  httpMinBodyBytesPerSecond: number;
  httpBodyRateWindowMs: number;
  /** Open connections at most; more are closed as they arrive. */
  httpMaxConnections: number;
  /** Requests of one API key (or one customer's tokens) in flight at once over HTTP; more answer 429. */
  maxConcurrentPerKey: number;
  /** Requests to the link pages (/pages/…) per client address and minute; more answer 429. */
  pagesRateLimitPerMinute: number;
}

/** Settings that may carry a password: an error names them without echoing the value. */
const SECRET = new Set(['BILLING_API_KEY', 'BILLING_SMTP_URL']);

/**
 * Reads the configuration from the environment, then applies command-line overrides (already in env
 * variable form). A bad value throws an error naming the variable, which stops start-up.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, string> = {}): Config {
  const source: Record<string, string | undefined> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = overrides[key] ?? env[key];
    if (value !== undefined && value !== '') source[key] = value;
  }
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = String(i.path[0]);
      return `${key} ${i.message}${SECRET.has(key) ? '' : ` (got ${JSON.stringify(source[key])})`}`;
    });
    throw new AppError('bad_request', `Invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  if (e.BILLING_HTTP_HEADERS_TIMEOUT_MS > e.BILLING_HTTP_REQUEST_TIMEOUT_MS) {
    throw new AppError(
      'bad_request',
      `Invalid configuration: BILLING_HTTP_HEADERS_TIMEOUT_MS must be at most BILLING_HTTP_REQUEST_TIMEOUT_MS (${e.BILLING_HTTP_REQUEST_TIMEOUT_MS}) (got ${JSON.stringify(String(e.BILLING_HTTP_HEADERS_TIMEOUT_MS))})`,
    );
  }
  if (e.BILLING_SMTP_URL !== undefined && e.BILLING_EMAIL_FROM === undefined) {
    throw new AppError('bad_request', 'Invalid configuration: BILLING_EMAIL_FROM must be set when BILLING_SMTP_URL is (the From address of e-mails)');
  }
  return {
    db: e.BILLING_DB,
    dbSynchronous: e.BILLING_DB_SYNCHRONOUS,
    dbLockTimeoutMs: e.BILLING_DB_LOCK_TIMEOUT_MS,
    databaseUrl: e.BILLING_DATABASE_URL,
    databasePoolSize: e.BILLING_DB_POOL_SIZE,
    apiKey: e.BILLING_API_KEY,
    host: e.BILLING_HOST,
    port: e.BILLING_PORT,
    publicUrl: e.BILLING_PUBLIC_URL,
    logLevel: e.LOG_LEVEL,
    readOnly: e.BILLING_READ_ONLY,
    toolsets: e.BILLING_TOOLSETS,
    webhookAllowPrivate: e.BILLING_WEBHOOK_ALLOW_PRIVATE,
    webhookTimeoutMs: e.BILLING_WEBHOOK_TIMEOUT_MS,
    webhookConcurrency: e.BILLING_WEBHOOK_CONCURRENCY,
    webhookConcurrencyPerTarget: e.BILLING_WEBHOOK_CONCURRENCY_PER_TARGET,
    webhookRetryDelaysSeconds: e.BILLING_WEBHOOK_RETRY_DELAYS,
    smtpUrl: e.BILLING_SMTP_URL,
    emailFrom: e.BILLING_EMAIL_FROM,
    emailRetryDelaysSeconds: e.BILLING_EMAIL_RETRY_DELAYS,
    jobsIntervalMs: e.BILLING_JOBS_INTERVAL_MS,
    paymentPlanGraceDays: e.BILLING_PAYMENT_PLAN_GRACE_DAYS,
    paymentTermDays: e.BILLING_PAYMENT_TERM_DAYS,
    customerAccessTokenTtlSeconds: e.BILLING_CUSTOMER_ACCESS_TOKEN_TTL_SECONDS,
    customerRefreshTokenTtlSeconds: e.BILLING_CUSTOMER_REFRESH_TOKEN_TTL_SECONDS,
    mcpAllowedOrigins: e.BILLING_MCP_ALLOWED_ORIGINS,
    httpRequestTimeoutMs: e.BILLING_HTTP_REQUEST_TIMEOUT_MS,
    httpHeadersTimeoutMs: e.BILLING_HTTP_HEADERS_TIMEOUT_MS,
    httpMinBodyBytesPerSecond: e.BILLING_HTTP_MIN_BODY_BYTES_PER_SECOND,
    httpBodyRateWindowMs: e.BILLING_HTTP_BODY_RATE_WINDOW_MS,
    httpMaxConnections: e.BILLING_HTTP_MAX_CONNECTIONS,
    maxConcurrentPerKey: e.BILLING_MAX_CONCURRENT_PER_KEY,
    pagesRateLimitPerMinute: e.BILLING_PAGES_RATE_LIMIT_PER_MINUTE,
  };
}
