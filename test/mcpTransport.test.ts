import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
  for (let i = 1; i <= 40; i++) await ok(env.mcp, 'create_unit', { name: `unit ${i} with a name long enough to fill a page` });
});
afterAll(() => env.close());

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

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
