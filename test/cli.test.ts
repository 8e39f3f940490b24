import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { SCHEMA_VERSION } from '../src/store/sqlite.js';
import { call, ok } from './helpers.js';
import { createDatabase, dropDatabase, postgresUrl } from './pg.js';

const run = promisify(execFile);
const CLI = path.resolve('dist/cli.js');
let dir: string;
let db: string;

function cli(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [CLI, ...args], { env: { ...process.env, BILLING_DB: db, LOG_LEVEL: 'silent', ...env } });
}

async function cliFails(args: string[], env: Record<string, string> = {}): Promise<string> {
  try {
    await cli(args, env);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    expect(e.code).toBe(1);
    return e.stderr;
  }
  throw new Error(`billing-mcp ${args.join(' ')} should have failed`);
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-cli-'));
  db = path.join(dir, 'billing.sqlite');
  if (!fs.existsSync(CLI)) throw new Error('dist/cli.js is missing: npm test builds it first (npm run build)');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// Each test starts the CLI up to ten times, a second or two each on a loaded 2-core machine (the full
// suite runs beside it): the suite's 20 s is too short for the longest of them there.
describe('CLI', { timeout: 60_000 }, () => {
  it('init creates the database, an organisation and a key; keys create, list and revoke manage keys', async () => {
    const { stdout } = await cli(['init', '--org', 'Acme']);
    const init = JSON.parse(stdout);
    expect(init).toEqual({ organisationId: expect.any(String), apiKey: expect.stringMatching(/^bmk_/) });

    const created = JSON.parse(
      (await cli(['keys', 'create', '--org', init.organisationId, '--name', 'reader', '--permissions', 'measurement:read', '--expires', '2999-01-01T00:00:00Z']))
        .stdout,
    );
    expect(created).toEqual({ id: expect.any(String), apiKey: expect.stringMatching(/^bmk_/) });

    const keys = JSON.parse((await cli(['keys', 'list', '--org', init.organisationId])).stdout);
    expect(keys).toHaveLength(2);
    expect(JSON.stringify(keys)).not.toContain(created.apiKey);
    expect(keys[1]).toMatchObject({ name: 'reader', permissions: ['measurement:read'], expiresAt: '2999-01-01T00:00:00.000Z', revokedAt: null });

    const revoked = JSON.parse((await cli(['keys', 'revoke', created.id])).stdout);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect(await cliFails(['keys', 'revoke', 'no-such-key'])).toMatch(/not found/);
  });

  it('refuses unknown permissions, bad flags and bad configuration, naming them', async () => {
    const { stdout } = await cli(['init', '--org', 'Flags']);
    const { organisationId } = JSON.parse(stdout);
    expect(await cliFails(['keys', 'create', '--org', organisationId, '--name', 'x', '--permissions', 'everything:write'])).toMatch(
      /Unknown permission\(s\) everything:write; allowed: .*measurement:read/,
    );
    expect(await cliFails(['keys', 'create', '--org', organisationId, '--name', 'x', '--expires', 'tomorrow'])).toMatch(/--expires/);
    expect(await cliFails(['jobs', 'run'], { BILLING_PORT: 'eighty' })).toMatch(/BILLING_PORT/);
    expect(await cliFails(['jobs', 'run'], { BILLING_WEBHOOK_RETRY_DELAYS: '10,x' })).toMatch(/BILLING_WEBHOOK_RETRY_DELAYS/);
    expect(await cliFails(['frobnicate'])).toMatch(/Unknown command/);
  });

  it('keys create refuses empty permissions and a past expiry; names a permission given twice once; keys list refuses an unknown organisation', async () => {
    const { organisationId } = JSON.parse((await cli(['init', '--org', 'Key flags'])).stdout);
    const create = (...flags: string[]) => ['keys', 'create', '--org', organisationId, '--name', 'x', ...flags];
    for (const empty of ['', ',', ' , ']) {
      expect(await cliFails(create('--permissions', empty))).toMatch(/--permissions must name at least one permission, comma-separated: --permissions invoice:read,customer:write/);
    }
    expect(await cliFails(create('--expires', '2020-01-01T00:00:00Z'))).toMatch(/--expires must lie in the future \(got 2020-01-01T00:00:00Z\)/);
    const keys = JSON.parse((await cli(['keys', 'list', '--org', organisationId])).stdout);
    expect(keys.map((k: { permissions: string[] }) => k.permissions)).toEqual([['*']]);

    await cli(create('--permissions', 'invoice:read, invoice:read,customer:write'));
    const after = JSON.parse((await cli(['keys', 'list', '--org', organisationId])).stdout);
    expect(after[1].permissions).toEqual(['invoice:read', 'customer:write']);
    expect(await cliFails(['keys', 'list', '--org', 'no-such-org'])).toMatch(/Organisation no-such-org was not found/);
  });

  it('only init and serve create a database: the other commands name a --db that does not exist and leave it so', async () => {
    const missing = path.join(dir, 'typo', 'billing.sqlite');
    for (const args of [['migrate'], ['keys', 'list', '--org', 'x'], ['keys', 'create', '--org', 'x', '--name', 'y'], ['keys', 'revoke', 'x'], ['jobs', 'run'], ['stdio']]) {
      expect(await cliFails([...args, '--db', missing], { BILLING_API_KEY: 'bmk_x' }), args.join(' ')).toContain(`The database ${missing} does not exist`);
    }
    expect(fs.existsSync(path.dirname(missing))).toBe(false);
    JSON.parse((await cli(['init', '--org', 'Created', '--db', missing])).stdout);
    expect(JSON.parse((await cli(['migrate', '--db', missing])).stdout)).toEqual({ engine: 'sqlite', from: SCHEMA_VERSION, to: SCHEMA_VERSION });
  });

  it('names BILLING_HOST, LOG_LEVEL and a port in use with what they allow', async () => {
    expect(await cliFails(['jobs', 'run'], { BILLING_HOST: '999.1.1.1' })).toMatch(
      /BILLING_HOST must be an IP address \(127\.0\.0\.1, 0\.0\.0\.0, ::1\) or a host name \(localhost\) \(got "999\.1\.1\.1"\)/,
    );
    expect(await cliFails(['jobs', 'run'], { BILLING_HOST: 'bad host' })).toMatch(/BILLING_HOST must be/);
    expect(await cliFails(['jobs', 'run'], { LOG_LEVEL: 'INFO' })).toMatch(/LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(lower case\) \(got "INFO"\)/);
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as net.AddressInfo;
      expect(await cliFails(['serve', '--port', String(port)], { BILLING_JOBS_INTERVAL_MS: '0' })).toMatch(
        new RegExp(`Cannot listen on http://127\\.0\\.0\\.1:${port}: .*EADDRINUSE.*; check BILLING_PORT \\(--port\\) ${port}`),
      );
    } finally {
      taken.close();
    }
  });

  it('jobs run prints a JSON summary as of --now', async () => {
    const { stdout } = await cli(['jobs', 'run', '--now', '2026-12-01T00:00:00+01:00']);
    expect(JSON.parse(stdout)).toMatchObject({ now: '2026-11-30T23:00:00.000Z', jobs: expect.any(Object) });
  });

  it('refuses a database written by a newer version', async () => {
    const newer = path.join(dir, 'newer.sqlite');
    await cli(['init', '--org', 'Future'], { BILLING_DB: newer });
    const raw = new Database(newer);
    raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', '2030-01-01T00:00:00Z')").run();
    raw.close();
    expect(await cliFails(['jobs', 'run'], { BILLING_DB: newer })).toMatch(/schema version 9999, newer than/);
  });

  it('runs every command on PostgreSQL with --database-url or BILLING_DATABASE_URL; migrate prints the versions; /readyz fails without the database', async () => {
    const admin = postgresUrl();
    const name = `billing_cli_${Date.now()}`;
    const url = await createDatabase(admin, name);
    expect(JSON.parse((await cli(['migrate', '--database-url', url])).stdout)).toEqual({ engine: 'postgres', from: 0, to: SCHEMA_VERSION });
    expect(JSON.parse((await cli(['migrate'], { BILLING_DATABASE_URL: url })).stdout)).toEqual({ engine: 'postgres', from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    const init = JSON.parse((await cli(['init', '--org', 'On Postgres', '--database-url', url])).stdout);
    const keys = JSON.parse((await cli(['keys', 'list', '--org', init.organisationId], { BILLING_DATABASE_URL: url })).stdout);
    expect(keys).toEqual([expect.objectContaining({ name: 'On Postgres admin key', revokedAt: null })]);
    expect(JSON.parse((await cli(['jobs', 'run', '--database-url', url])).stdout)).toMatchObject({ jobs: expect.any(Object) });
    expect(await cliFails(['jobs', 'run'], { BILLING_DATABASE_URL: 'mysql://localhost/billing' })).toMatch(/BILLING_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);

    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--database-url', url], {
      env: { ...process.env, LOG_LEVEL: 'silent', BILLING_JOBS_INTERVAL_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    try {
      const base = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          err += chunk.toString();
          const m = /listening on (http:\/\/[^\s]+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        child.on('exit', () => reject(new Error(`serve exited: ${err}`)));
      });
      const customers = await fetch(`${base}/customers`, { headers: { authorization: `Bearer ${init.apiKey}` } });
      expect(customers.status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      await dropDatabase(admin, name);
      const down = await fetch(`${base}/readyz`).catch((e: Error) => {
        throw new Error(`serve did not answer once its database was dropped (${e.message}): ${err}`);
      });
      expect([down.status, down.headers.get('retry-after')]).toEqual([503, '5']);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      child.kill();
      await dropDatabase(admin, name);
    }
  });

  it('serve --demo prints a working demo key and serves on the given host and port', async () => {
    const demoDb = path.join(dir, 'demo.sqlite');
    const child = spawn(process.execPath, [CLI, 'serve', '--demo', '--port', '0'], {
      env: { ...process.env, BILLING_DB: demoDb, LOG_LEVEL: 'silent' },
    });
    try {
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr}`)), 10_000);
        child.stderr.on('data', () => {
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const { apiKey } = JSON.parse(stdout);
      expect(stderr).toContain(apiKey);
      const res = await fetch(`${url}/catalogue/units`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(res.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('MCP over stdio against dist/', { timeout: 60_000 }, () => {
  it('starts with the default toolsets, adds one on demand with a list_changed notification, and stops at once when the key is revoked by another process', async () => {
    const stdioDb = path.join(dir, 'stdio.sqlite');
    const init = JSON.parse((await cli(['init', '--org', 'Stdio'], { BILLING_DB: stdioDb })).stdout);
    const key = JSON.parse(
      (await cli(['keys', 'create', '--org', init.organisationId, '--name', 'desktop'], { BILLING_DB: stdioDb })).stdout,
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'stdio'],
      env: { ...(process.env as Record<string, string>), BILLING_DB: stdioDb, BILLING_API_KEY: key.apiKey, LOG_LEVEL: 'info' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    let listChanged = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged++;
    });
    await client.connect(transport);
    try {
      const before = (await client.listTools()).tools.map((t) => t.name);
      expect(before).toEqual(expect.arrayContaining(['list_toolsets', 'enable_toolsets', 'create_customer', 'get_subscription']));
      expect(before).not.toContain('create_unit');
      const hidden = await call(client, 'create_unit', { name: 'over stdio' });
      expect(hidden.text).toMatch(/toolset 'catalogue'.*enable_toolsets/);
      const enabled = await ok(client, 'enable_toolsets', { toolsets: ['catalogue'] });
      expect(enabled.added).toContain('create_unit');
      await expect.poll(() => listChanged).toBe(1);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('create_unit');
      const unit = await ok(client, 'create_unit', { name: 'over stdio' });
      expect(unit.name).toBe('over stdio');
      await cli(['keys', 'revoke', key.id], { BILLING_DB: stdioDb });
      const after = await call(client, 'list_units');
      expect(after.isError).toBe(true);
      expect(after.body.status).toBe(401);
    } finally {
      await client.close();
    }
  });

  it('--toolsets all lists every tool at once, without the discovery tools', async () => {
    const stdioDb = path.join(dir, 'stdio-all.sqlite');
    const init = JSON.parse((await cli(['init', '--org', 'Stdio all'], { BILLING_DB: stdioDb })).stdout);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'stdio', '--toolsets', 'all'],
      env: { ...(process.env as Record<string, string>), BILLING_DB: stdioDb, BILLING_API_KEY: init.apiKey, LOG_LEVEL: 'silent' },
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names.sort()).toEqual(OPERATIONS.map((op) => op.name).sort());
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('ends with exit code 0 when the client closes stdin, after answering what it received, and lets go of the database', async () => {
    const stdioDb = path.join(dir, 'stdio-end.sqlite');
    const init = JSON.parse((await cli(['init', '--org', 'Stdio end'], { BILLING_DB: stdioDb })).stdout);
    const child = spawn(process.execPath, [CLI, 'stdio', '--toolsets', 'all'], {
      env: { ...process.env, BILLING_DB: stdioDb, BILLING_API_KEY: init.apiKey, LOG_LEVEL: 'info' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_customer', arguments: { lastName: 'Last words' } } };
    child.stdin.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n${JSON.stringify(call)}\n`);
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 5000).unref());
    try {
      expect(await Promise.race([exited, timeout])).toBe(0);
    } finally {
      child.kill();
    }
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1].result.structuredContent.lastName).toBe('Last words');
    // Shut down, not merely left to exit: the deliveries stopped and the store closed before the end.
    expect(stderr).toContain('"msg":"billing-mcp MCP server on stdio closed"');
  });

  it('a process that opened a SQLite store ends by itself: the checkpoint worker keeps nothing alive', async () => {
    // From a file: `node --input-type=module -e` ends with its script even while handles stay open.
    const script = path.join(dir, 'open-store.mjs');
    fs.writeFileSync(
      script,
      `import { SqliteStore } from ${JSON.stringify(path.resolve('dist/store/sqlite.js'))};
      const store = SqliteStore.open(${JSON.stringify(path.join(dir, 'open-store.sqlite'))});
      await store.transaction((tx) => tx.system.listOrganisations());`,
    );
    const child = spawn(process.execPath, [script], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 5000).unref());
    try {
      expect(await Promise.race([exited, timeout])).toBe(0);
    } finally {
      child.kill();
    }
  });

  it('--read-only exposes only read-only tools', async () => {
    const stdioDb = path.join(dir, 'stdio-ro.sqlite');
    const init = JSON.parse((await cli(['init', '--org', 'Stdio RO'], { BILLING_DB: stdioDb })).stdout);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'stdio', '--read-only', '--toolsets', 'catalogue'],
      env: { ...(process.env as Record<string, string>), BILLING_DB: stdioDb, BILLING_API_KEY: init.apiKey, LOG_LEVEL: 'silent' },
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.every((t) => t.annotations?.readOnlyHint)).toBe(true);
    } finally {
      await client.close();
    }
  });
});
