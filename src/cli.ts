#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { authenticate, createApiKey, listApiKeys } from './auth/keys.js';
import { loadConfig } from './config.js';
import { AppError } from './errors.js';
import { runDueJobs } from './jobs/runner.js';
import { createMcpServer, stdioToolsets } from './mcp/server.js';
import { EndingStdioTransport } from './mcp/stdio.js';
import { dateTimeInput } from './schemas/common.js';
import { createApp, createOrganisation, ensureDemo, migrateDatabase, openStore, startHttp } from './server.js';
import { ALL_PERMISSIONS } from './tools/index.js';

const USAGE = `billing-mcp <command>

  init --org <name>                         create or migrate the database, an organisation and an admin key
  migrate                                   apply the migrations the database lacks and print the versions
  keys create --org <id> --name <n> [--expires <date-time>] [--permissions a:read,b:write]
  keys list --org <id>
  keys revoke <keyId>
  serve [--host <h>] [--port <p>] [--demo]  HTTP facade, /mcp and the jobs loop
  stdio [--read-only] [--toolsets a,b]      MCP on stdin/stdout (key in BILLING_API_KEY)
  jobs run [--now <date-time>]              run every due job once and print a summary

Every command takes --db <file> (default BILLING_DB or ./data/billing.sqlite), or
--database-url postgres://… (default BILLING_DATABASE_URL) to run on PostgreSQL instead.`;

const OPTIONS = {
  db: { type: 'string' },
  'database-url': { type: 'string' },
  org: { type: 'string' },
  name: { type: 'string' },
  expires: { type: 'string' },
  permissions: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  demo: { type: 'boolean' },
  'read-only': { type: 'boolean' },
  toolsets: { type: 'string' },
  now: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new AppError('bad_request', `--${flag} is required\n\n${USAGE}`);
  return value;
}

function dateTimeFlag(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const parsed = dateTimeInput.safeParse(value);
  if (!parsed.success) throw new AppError('bad_request', `--${flag} must be an ISO 8601 date-time with an offset (got ${value})`);
  return new Date(parsed.data).toISOString();
}

/**
 * `--permissions a:read, b:write`: permissions a key may hold. Absent: undefined (the key gets every
 * permission); present, it must name at least one.
 */
function permissionsFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const permissions = value.split(',').map((p) => p.trim()).filter(Boolean);
  if (permissions.length === 0) {
    throw new AppError(
      'bad_request',
      `--permissions must name at least one permission, comma-separated: --permissions invoice:read,customer:write (leave the flag out for a key with every permission; got '${value}')`,
    );
  }
  const unknown = permissions.filter((p) => !ALL_PERMISSIONS.includes(p));
  if (unknown.length) throw new AppError('bad_request', `Unknown permission(s) ${unknown.join(', ')}; allowed: ${ALL_PERMISSIONS.join(', ')}`);
  return permissions;
}

/** The commands of USAGE; `init` and `serve` create the SQLite database file, the others need it to exist. */
const COMMANDS = ['init', 'migrate', 'keys create', 'keys list', 'keys revoke', 'serve', 'stdio', 'jobs run'] as const;
type Command = (typeof COMMANDS)[number];
const CREATING: readonly Command[] = ['init', 'serve'];

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, sub, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const overrides: Record<string, string> = {};
  if (values.db) overrides.BILLING_DB = values.db;
  if (values['database-url']) overrides.BILLING_DATABASE_URL = values['database-url'];
  if (values.host) overrides.BILLING_HOST = values.host;
  if (values.port) overrides.BILLING_PORT = values.port;
  if (values['read-only']) overrides.BILLING_READ_ONLY = 'true';
  if (values.toolsets) overrides.BILLING_TOOLSETS = values.toolsets;
  const name = `${command}${sub && ['keys', 'jobs'].includes(command) ? ` ${sub}` : ''}`;
  if (!(COMMANDS as readonly string[]).includes(name)) throw new AppError('bad_request', `Unknown command '${positionals.join(' ')}'\n\n${USAGE}`);
  const config = loadConfig(process.env, overrides);
  if (name === 'migrate') {
    print(await migrateDatabase(config));
    return;
  }
  const app = createApp(config, { store: await openStore(config, { create: CREATING.includes(name as Command) }) });

  switch (name as Exclude<Command, 'migrate'>) {
    case 'init': {
      print(await createOrganisation(app.store, required(values.org, 'org')).then(({ organisationId, apiKey }) => ({ organisationId, apiKey })));
      return app.store.close();
    }
    case 'keys create': {
      const permissions = permissionsFlag(values.permissions);
      const now = new Date();
      const expiresAt = dateTimeFlag(values.expires, 'expires');
      if (expiresAt !== undefined && Date.parse(expiresAt) <= now.getTime()) {
        throw new AppError('bad_request', `--expires must lie in the future (got ${values.expires}); a key that has expired cannot be used`);
      }
      const created = await app.store.transaction((tx) =>
        createApiKey(tx, { organisationId: required(values.org, 'org'), name: required(values.name, 'name'), permissions, expiresAt }, now),
      );
      print({ id: created.id, apiKey: created.apiKey });
      return app.store.close();
    }
    case 'keys list': {
      const org = required(values.org, 'org');
      print(await app.store.read((tx) => listApiKeys(tx, org)));
      return app.store.close();
    }
    case 'keys revoke': {
      const keyId = z.string().min(1).safeParse(arg);
      if (!keyId.success) throw new AppError('bad_request', `keys revoke needs the key id\n\n${USAGE}`);
      const at = new Date().toISOString();
      const key = await app.store.transaction(async (tx) => {
        const found = await tx.system.getApiKey(keyId.data);
        if (!found) throw new AppError('not_found', `API key ${keyId.data} was not found`);
        await tx.system.revokeApiKey(found.id, at);
        return tx.system.getApiKey(found.id);
      });
      print({ id: key?.id, revokedAt: key?.revokedAt });
      return app.store.close();
    }
    case 'serve': {
      if (values.demo) {
        const demo = await ensureDemo(app.store);
        process.stderr.write(
          `\nDemo organisation ${demo.organisationId}${demo.created ? ' created' : ''}.\nDemo API key (shown once): ${demo.apiKey}\n\n`,
        );
        print({ organisationId: demo.organisationId, apiKey: demo.apiKey });
      }
      const server = await startHttp(app);
      app.logger.info({ url: server.url }, 'billing-mcp listening (REST, POST /mcp, GET /openapi.json)');
      process.stderr.write(`billing-mcp listening on ${server.url}  (MCP: ${server.url}/mcp, OpenAPI: ${server.url}/openapi.json)\n`);
      const stop = () => {
        void server
          .close()
          .then(() => app.store.close())
          .then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return;
    }
    case 'stdio': {
      const token = config.apiKey;
      if (!token) throw new AppError('unauthorized', 'Set BILLING_API_KEY to an API key (billing-mcp init or keys create prints one)');
      await authenticate(app.store, token, app.clock());
      const server = createMcpServer({
        catalog: app.catalog,
        executor: app.executor,
        logger: app.logger,
        principal: () => authenticate(app.store, token, app.clock()),
        toolsets: stdioToolsets(config.toolsets),
      });
      // The client ends the session by closing stdin (or reading it fails): the process then ends by
      // itself once the webhook deliveries, the e-mail sender and the store have let go.
      server.onclose = () => {
        void app.deliveries
          .stop()
          .then(() => {
            app.emails.close();
            return app.store.close();
          })
          .then(
            () => app.logger.info('billing-mcp MCP server on stdio closed'),
            (err: unknown) => {
              app.logger.error({ err }, 'closing the store failed');
              process.exitCode = 1;
            },
          );
      };
      await server.connect(new EndingStdioTransport());
      app.deliveries.kick();
      app.logger.info('billing-mcp MCP server on stdio');
      return;
    }
    case 'jobs run': {
      print(await runDueJobs(app, new Date(dateTimeFlag(values.now, 'now') ?? Date.now()), 'cli'));
      app.emails.close();
      return app.store.close();
    }
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof AppError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`billing-mcp: ${message}\n`);
  process.exit(1);
});
