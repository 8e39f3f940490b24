import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { jsonPieces } from '../src/http/send.js';
import { OPERATIONS } from '../src/tools/index.js';
import { ok, setup, type TestEnv } from './helpers.js';

const APP_ORIGIN = 'https://app.example.com';

let env: TestEnv;
beforeAll(async () => {
  env = await setup({ mcpAllowedOrigins: [APP_ORIGIN] });
  for (let i = 1; i <= 40; i++) await ok(env.mcp, 'create_unit', { name: `unit ${i} with a name long enough to fill a page` });
});
afterAll(() => env.close());

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 3,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'transport-test', version: '1.0.0' } },
};

function mcp(body: unknown, headers: Record<string, string> = {}) {
  return env.http('POST', '/mcp', { headers: { ...MCP_HEADERS, ...headers }, body });
}

interface RawResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request whose headers (Host, Accept-Encoding) go out exactly as given and whose body comes back undecoded. */
function raw(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<RawResult> {
  const url = new URL(env.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const all: Record<string, string> = { authorization: `Bearer ${env.org.apiKey}`, ...headers };
  if (payload !== undefined) all['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('Origin on /mcp (DNS-rebinding protection)', () => {
  it('refuses a foreign Origin with a 403 problem, before doing anything', async () => {
    const res = await mcp(TOOLS_LIST, { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: '/problems/forbidden', status: 403 });
    expect(res.body.detail).toMatch(/Origin https:\/\/evil\.example may not call \/mcp/);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const unauthenticated = await env.http('POST', '/mcp', { token: null, headers: { ...MCP_HEADERS, origin: 'null' }, body: TOOLS_LIST });
    expect(unauthenticated.status).toBe(403);
  });

  it("lets the server's own origin through, with its loopback variants, but not a host name rebound to it", async () => {
    const port = new URL(env.url).port;
    for (const origin of [env.url, `http://localhost:${port}`, `http://[::1]:${port}`]) {
      const res = await mcp(TOOLS_LIST, { origin });
      expect(res.status, origin).toBe(200);
      expect(res.body.result.tools.length).toBe(OPERATIONS.length);
    }
    const otherPort = await mcp(TOOLS_LIST, { origin: `http://localhost:${Number(port) + 1}` });
    expect(otherPort.status).toBe(403);
    const rebound = await raw('POST', '/mcp', { ...MCP_HEADERS, host: `evil.example.com:${port}`, origin: `http://evil.example.com:${port}` }, PING);
    expect(rebound.status).toBe(403);
    const sameHost = await raw('POST', '/mcp', { ...MCP_HEADERS, host: `localhost:${port}`, origin: `http://localhost:${port}` }, PING);
    expect(sameHost.status).toBe(200);
  });

  it('lets an origin of BILLING_MCP_ALLOWED_ORIGINS through with CORS headers, and answers its preflight', async () => {
    const res = await mcp(PING, { origin: APP_ORIGIN });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('vary')).toMatch(/Origin/);
    const preflight = await env.http('OPTIONS', '/mcp', {
      token: null,
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const foreign = await env.http('OPTIONS', '/mcp', {
      token: null,
      headers: { origin: 'https://other.example.com', 'access-control-request-method': 'POST' },
    });
    expect(foreign.status).toBe(403);
  });

  it('lets a request without Origin (not a browser) through, where the same request from a foreign origin is refused', async () => {
    const plain = await mcp(TOOLS_LIST);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    expect((await mcp(TOOLS_LIST, { origin: 'http://127.0.0.1.evil.example' })).status).toBe(403);
  });

  it('BILLING_MCP_ALLOWED_ORIGINS takes comma-separated origins; anything else stops start-up naming the variable', () => {
    const config = loadConfig({ BILLING_MCP_ALLOWED_ORIGINS: 'https://App.example.com/, http://localhost:3000' });
    expect(config.mcpAllowedOrigins).toEqual([APP_ORIGIN, 'http://localhost:3000']);
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    for (const bad of ['*', 'app.example.com', 'https://app.example.com/path', 'ftp://files.example.com']) {
      expect(() => loadConfig({ BILLING_MCP_ALLOWED_ORIGINS: bad }), bad).toThrow(/BILLING_MCP_ALLOWED_ORIGINS must be comma-separated origins/);
    }
  });
});

describe('MCP-Protocol-Version on /mcp', () => {
  it('refuses a version the SDK does not speak with a 400 that lists the supported ones', async () => {
    const res = await mcp(TOOLS_LIST, { 'mcp-protocol-version': '1999-01-01' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: '/problems/bad-request', status: 400 });
    expect(res.body.detail).toContain('Unsupported MCP-Protocol-Version "1999-01-01"');
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) expect(res.body.detail).toContain(version);
  });

  it('accepts every supported version and an absent header, and does not judge the initialize request by it', async () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const res = await mcp(PING, { 'mcp-protocol-version': version });
      expect(res.status, version).toBe(200);
    }
    expect((await mcp(PING)).status).toBe(200);
    const init = await mcp(INITIALIZE, { 'mcp-protocol-version': '2099-01-01' });
    expect(init.status).toBe(200);
    expect(init.body.result.protocolVersion).toBe('2025-11-25');
    expect((await mcp(PING, { 'mcp-protocol-version': '2099-01-01' })).status).toBe(400);
  });
});

describe('other transport rules of /mcp', () => {
  it('415 for a body that is not application/json', async () => {
    const res = await env.http('POST', '/mcp', { headers: MCP_HEADERS, body: JSON.stringify(PING), contentType: 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.body.type).toBe('/problems/unsupported-media-type');
  });

  it('answers a batch with an array of answers, a batch of notifications with 202, an empty batch with 400', async () => {
    const res = await mcp([PING, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...TOOLS_LIST, id: 'b' }]);
    expect(res.status).toBe(200);
    expect(res.body.map((m: { id: unknown }) => m.id)).toEqual([2, 'b']);
    expect(res.body[1].result.tools.length).toBe(OPERATIONS.length);
    expect((await mcp([{ jsonrpc: '2.0', method: 'notifications/initialized' }])).status).toBe(202);
    const empty = await mcp([]);
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe(-32600);
  });

  it('answers a body that is no JSON-RPC message with HTTP 400', async () => {
    const res = await mcp({ hello: 'world' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32600);
  });
});

describe('gzip', () => {
  it('gzips a large /mcp answer for a client that accepts it', async () => {
    const res = await raw('POST', '/mcp', { ...MCP_HEADERS, 'accept-encoding': 'gzip, deflate' }, TOOLS_LIST);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    const json = JSON.parse(gunzipSync(res.body).toString('utf8'));
    expect(json.id).toBe(1);
    expect(json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
    expect(res.body.length).toBeLessThan(JSON.stringify(json).length / 3);
  });

  it('gzips REST lists and /openapi.json through the same path', async () => {
    const list = await raw('GET', '/catalogue/units?limit=40', { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
    expect(list.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(list.body).toString('utf8')).data).toHaveLength(40);
    const openApi = await raw('GET', '/openapi.json', { 'accept-encoding': '*' });
    expect(openApi.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(openApi.body).toString('utf8')).openapi).toMatch(/^3\.1/);
  });

  it('writes a REST list that is not gzipped row by row: its length and JSON are those of the whole', async () => {
    const list = await raw('GET', '/catalogue/units?limit=40', {});
    expect(list.headers['content-encoding']).toBeUndefined();
    expect(Number(list.headers['content-length'])).toBe(list.body.length);
    const zipped = await raw('GET', '/catalogue/units?limit=40', { 'accept-encoding': 'gzip' });
    expect(list.body.toString('utf8')).toBe(gunzipSync(zipped.body).toString('utf8'));
    const page = JSON.parse(list.body.toString('utf8'));
    expect(page.data).toHaveLength(40);
    expect(list.body.toString('utf8')).toBe(JSON.stringify(page));
  });

  it('splits a list envelope into pieces that join to exactly JSON.stringify of it', () => {
    const row = fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.constant(() => 1), fc.date({ noInvalidDate: true }));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.constant(undefined))), fc.array(row, { minLength: 2 }), fc.boolean(), (rest, data, first) => {
        const body = first ? { data, ...rest } : { ...rest, data };
        expect(jsonPieces(body).join('')).toBe(JSON.stringify(body));
      }),
    );
    for (const body of [{ data: [1] }, { data: [] }, [1, 2], { data: [1, 2], toJSON: () => 'x' }, 'text', null]) {
      expect(jsonPieces(body)).toEqual([JSON.stringify(body)]);
    }
  });

  it('sends plain JSON when gzip is not accepted, and small answers always plain', async () => {
    for (const acceptEncoding of [undefined, 'identity', 'gzip;q=0', 'br', '*;q=0']) {
      const headers: Record<string, string> = acceptEncoding === undefined ? { ...MCP_HEADERS } : { ...MCP_HEADERS, 'accept-encoding': acceptEncoding };
      const res = await raw('POST', '/mcp', headers, TOOLS_LIST);
      expect(res.headers['content-encoding'], acceptEncoding).toBeUndefined();
      expect(res.headers.vary, acceptEncoding).toMatch(/Accept-Encoding/);
      expect(JSON.parse(res.body.toString('utf8')).result.tools.length).toBe(OPERATIONS.length);
    }
    const small = await raw('POST', '/mcp', { ...MCP_HEADERS, 'accept-encoding': 'gzip' }, PING);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.body.toString('utf8'))).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });
});
