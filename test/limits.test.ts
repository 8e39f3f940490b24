import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ok, setup, type Org, type TestEnv } from './helpers.js';

/**
 * Issue 16, item 7: slow clients, many connections and many concurrent requests of one key must not
 * hold the server. Real HTTP on 127.0.0.1 with small configured limits; every wait is bounded.
 */

const WINDOW_MS = 400;
const MIN_RATE = 50; // bytes per second: 20 bytes per window
const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 2500;
const PER_KEY = 3;

let env: TestEnv;
let port: number;

beforeAll(async () => {
  env = await setup({
    httpRequestTimeoutMs: REQUEST_TIMEOUT_MS,
    httpHeadersTimeoutMs: HEADERS_TIMEOUT_MS,
    httpMinBodyBytesPerSecond: MIN_RATE,
    httpBodyRateWindowMs: WINDOW_MS,
    maxConcurrentPerKey: PER_KEY,
  });
  port = Number(new URL(env.url).port);
});
afterAll(() => env.close());

interface Raw {
  socket: net.Socket;
  /** Everything the server has sent so far. */
  received(): string;
  /** Resolves when the server closes the connection (or after `ms`): the time it took since `since`, or undefined. */
  closed(ms: number): Promise<number | undefined>;
  /** Resolves when something has been received (or after `ms`). */
  answered(ms: number): Promise<string>;
  /** Sends `bytes` bytes every `everyMs` ms, at most `times` times, until stopped or closed. */
  dribble(bytes: number, everyMs: number, times: number): void;
  stop(): void;
  startedAt: number;
}

/** A raw connection to the test server: what goes out is exactly what the test writes. */
function connect(targetPort = port): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: targetPort });
    let data = '';
    let closedAt: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const waiters = new Set<() => void>();
    const wake = () => [...waiters].forEach((w) => w());
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      data += d;
      wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closedAt = Date.now();
      if (timer) clearInterval(timer);
      wake();
    });
    const wait = (ms: number, done: () => boolean) =>
      new Promise<void>((res) => {
        if (done()) return res();
        const check = () => {
          if (!done()) return;
          clearTimeout(t);
          waiters.delete(check);
          res();
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          res();
        }, ms);
        waiters.add(check);
      });
    socket.once('connect', () => {
      const raw: Raw = {
        socket,
        startedAt: Date.now(),
        received: () => data,
        async closed(ms) {
          await wait(ms, () => closedAt !== undefined);
          return closedAt === undefined ? undefined : closedAt - raw.startedAt;
        },
        async answered(ms) {
          await wait(ms, () => data.length > 0 || closedAt !== undefined);
          return data;
        },
        dribble(bytes, everyMs, times) {
          let sent = 0;
          timer = setInterval(() => {
            if (sent++ >= times || socket.destroyed) return clearInterval(timer);
            socket.write('x'.repeat(bytes));
          }, everyMs);
        },
        stop() {
          if (timer) clearInterval(timer);
          socket.destroy();
        },
      };
      resolve(raw);
    });
    socket.once('error', reject);
  });
}

function head(method: string, path: string, token: string, contentLength?: number): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${token}`];
  if (contentLength !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${contentLength}`);
  if (path === '/mcp') lines.push('Accept: application/json, text/event-stream');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function statusOf(response: string): number | undefined {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(response);
  return m ? Number(m[1]) : undefined;
}

function bodyOf(response: string): any {
  const text = response.slice(response.indexOf('\r\n\r\n') + 4);
  return JSON.parse(text);
}

/** A request that holds a slot of its key: headers, then a body well above the minimum rate, never finished. */
async function holdSlot(path: string, token: string): Promise<Raw> {
  const raw = await connect();
  raw.socket.write(head('POST', path, token, 100_000));
  raw.dribble(30, 100, 40);
  return raw;
}

/** Polls `check` until it is true, at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('configuration', () => {
  it('reads the limits from the environment, with defaults, and refuses bad values naming them', () => {
    const defaults = loadConfig({});
    expect(defaults).toMatchObject({
      httpRequestTimeoutMs: 30_000,
      httpHeadersTimeoutMs: 10_000,
      httpMinBodyBytesPerSecond: 1024,
      httpBodyRateWindowMs: 5_000,
      httpMaxConnections: 1_000,
      maxConcurrentPerKey: 20,
    });
    const set = loadConfig({
      BILLING_HTTP_REQUEST_TIMEOUT_MS: '5000',
      BILLING_HTTP_HEADERS_TIMEOUT_MS: '2000',
      BILLING_HTTP_MIN_BODY_BYTES_PER_SECOND: '0',
      BILLING_HTTP_BODY_RATE_WINDOW_MS: '1000',
      BILLING_HTTP_MAX_CONNECTIONS: '10',
      BILLING_MAX_CONCURRENT_PER_KEY: '5',
    });
    expect(set).toMatchObject({ httpRequestTimeoutMs: 5000, httpHeadersTimeoutMs: 2000, httpMinBodyBytesPerSecond: 0, httpBodyRateWindowMs: 1000, httpMaxConnections: 10, maxConcurrentPerKey: 5 });
    for (const [name, value] of [
      ['BILLING_HTTP_REQUEST_TIMEOUT_MS', '0'],
      ['BILLING_HTTP_HEADERS_TIMEOUT_MS', 'soon'],
      ['BILLING_HTTP_MIN_BODY_BYTES_PER_SECOND', '-1'],
      ['BILLING_HTTP_BODY_RATE_WINDOW_MS', '0'],
      ['BILLING_HTTP_MAX_CONNECTIONS', '0'],
      ['BILLING_MAX_CONCURRENT_PER_KEY', '1.5'],
    ]) {
      expect(() => loadConfig({ [name!]: value }), name).toThrow(new RegExp(`${name}.*got "${value!.replace('.', '\\.')}"`));
    }
    expect(() => loadConfig({ BILLING_HTTP_HEADERS_TIMEOUT_MS: '40000' })).toThrow(/BILLING_HTTP_HEADERS_TIMEOUT_MS must be at most BILLING_HTTP_REQUEST_TIMEOUT_MS/);
  });
});

describe('slow bodies', () => {
  it.each(['/customers', '/mcp'])('POST %s with a body of 1 byte per 200 ms is cut with a 408 problem within the window, and only such a body', async (path) => {
    const raw = await connect();
    raw.socket.write(head('POST', path, env.org.apiKey, 100));
    raw.dribble(1, 200, 25);
    await raw.answered(REQUEST_TIMEOUT_MS * 2);
    const elapsed = Date.now() - raw.startedAt;
    expect(await raw.closed(2000), 'the server closes the connection').toBeDefined();
    const response = raw.received();
    expect(statusOf(response), response).toBe(408);
    expect(response).toMatch(/content-type: application\/problem\+json/i);
    expect(response).toMatch(/connection: close/i);
    expect(bodyOf(response)).toMatchObject({ status: 408, type: '/problems/bad-request', title: 'Request timeout' });
    // Cut by the rate check (a window or two), not by the request timeout (which sends no problem).
    expect(elapsed).toBeLessThan(REQUEST_TIMEOUT_MS);
    expect(elapsed).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    raw.stop();

    // Only such a body: one split into pieces that keep above the rate goes through.
    const body = JSON.stringify(
      path === '/mcp'
        ? { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_customer', arguments: { lastName: 'Dribbled but fast enough' } } }
        : { lastName: 'Dribbled but fast enough' },
    );
    const fast = await connect();
    fast.socket.write(head('POST', path, env.org.apiKey, Buffer.byteLength(body)));
    for (let i = 0; i < body.length; i += 15) {
      fast.socket.write(body.slice(i, i + 15));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(statusOf(await fast.answered(REQUEST_TIMEOUT_MS)), fast.received()).toBe(path === '/mcp' ? 200 : 201);
    fast.stop();
  });

  it('closes a connection whose whole request takes longer than the request timeout, although its body keeps the rate', async () => {
    const raw = await connect();
    raw.socket.write(head('POST', '/customers', env.org.apiKey, 100_000));
    raw.dribble(30, 100, 60);
    const closedAfter = await raw.closed(REQUEST_TIMEOUT_MS + 3000);
    expect(closedAfter, 'closed by the request timeout').toBeDefined();
    expect(closedAfter!).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(statusOf(raw.received())).toBe(408);
    raw.stop();
  });

  it('closes a connection that never finishes its headers after the headers timeout', async () => {
    const raw = await connect();
    raw.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const closedAfter = await raw.closed(HEADERS_TIMEOUT_MS + 3000);
    expect(closedAfter, 'closed by the headers timeout').toBeDefined();
    expect(closedAfter!).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(closedAfter!).toBeLessThan(REQUEST_TIMEOUT_MS);
    expect(statusOf(raw.received())).toBe(408);
    raw.stop();
  });
});

describe('requests in flight per key', () => {
  let other: Org;
  let sameOrgKey: string;
  let customerId: string;
  let customerToken: string;

  beforeAll(async () => {
    other = await env.newOrg('Unaffected organisation');
    sameOrgKey = await env.newKey(env.org, ['*']);
    customerId = (await ok(env.mcp, 'create_customer', { lastName: 'Portal user' })).id;
    customerToken = (await env.http('POST', `/customers/${customerId}/authenticate`, { body: {} })).body.data.accessToken;
    expect(customerToken).toEqual(expect.any(String));
  });

  async function freed(token: string): Promise<boolean> {
    return eventually(async () => (await env.http('GET', '/customers?limit=1', { token })).status === 200);
  }

  it(`answers a request beyond ${PER_KEY} in flight with 429 and Retry-After, over REST and /mcp; other keys, tokens and organisations are unaffected`, async () => {
    const held = [await holdSlot('/customers', env.org.apiKey), await holdSlot('/mcp', env.org.apiKey), await holdSlot('/customers', env.org.apiKey)];
    try {
      // The held requests are in flight once the server has read their headers and authenticated them.
      const refused = await eventually(async () => (await env.http('GET', '/customers?limit=1')).status === 429, 2000);
      expect(refused).toBe(true);
      const rest = await env.http('GET', '/customers?limit=1');
      expect(rest.status).toBe(429);
      expect(rest.headers.get('retry-after')).toBe('1');
      expect(rest.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(rest.body).toMatchObject({ type: '/problems/rate-limited', status: 429 });
      expect(rest.body.detail).toMatch(/at most 3 may be in flight/);
      const write = await env.http('POST', '/customers', { body: { lastName: 'Refused' } });
      expect(write.status).toBe(429);
      const mcp = await env.http('POST', '/mcp', {
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_customers', arguments: {} } },
      });
      expect(mcp.status).toBe(429);
      expect(mcp.headers.get('retry-after')).toBe('1');
      expect(mcp.body).toMatchObject({ type: '/problems/rate-limited', status: 429 });

      expect((await env.http('GET', '/customers?limit=1', { token: sameOrgKey })).status).toBe(200);
      expect((await env.http('GET', '/customers?limit=1', { token: other.apiKey })).status).toBe(200);
      expect((await env.http('GET', `/customers/${customerId}/payment-methods`, { token: customerToken })).status).toBe(200);
      const otherMcp = await env.http('POST', '/mcp', {
        token: other.apiKey,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_customers', arguments: {} } },
      });
      expect(otherMcp.status).toBe(200);
      expect(otherMcp.body.result.isError).toBeUndefined();
      for (const raw of held) expect(raw.received(), 'the held requests are still waiting for their bodies').toBe('');
    } finally {
      for (const raw of held) raw.stop();
    }
    expect(await freed(env.org.apiKey), 'slots are given back when the requests end').toBe(true);
  });

  it('counts a /mcp batch as one slot per message, at most the whole allowance', async () => {
    const held = [await holdSlot('/customers', env.org.apiKey)];
    try {
      const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_customers', arguments: {} } });
      const triple = () => env.http('POST', '/mcp', { headers: { accept: 'application/json, text/event-stream' }, body: [call(1), call(2), call(3)] });
      // Once the held request is in flight, three more would be four.
      expect(await eventually(async () => (await triple()).status === 429, 2000)).toBe(true);
      const pair = await env.http('POST', '/mcp', { headers: { accept: 'application/json, text/event-stream' }, body: [call(1), call(2)] });
      expect(pair.status, JSON.stringify(pair.body)).toBe(200);
    } finally {
      for (const raw of held) raw.stop();
    }
    expect(await freed(env.org.apiKey)).toBe(true);
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_customers', arguments: {} } });
    const big = await env.http('POST', '/mcp', { headers: { accept: 'application/json, text/event-stream' }, body: Array.from({ length: 10 }, (_, i) => call(i)) });
    expect(big.status, 'a batch larger than the allowance runs when nothing else of the key does').toBe(200);
    expect(big.body).toHaveLength(10);
  });

  it('gives the slot back when a held request is cut for its slow body', async () => {
    const slow = [await connect(), await connect(), await connect()];
    for (const raw of slow) {
      raw.socket.write(head('POST', '/customers', env.org.apiKey, 100));
      raw.dribble(1, 200, 25);
    }
    try {
      for (const raw of slow) expect(statusOf(await raw.answered(REQUEST_TIMEOUT_MS))).toBe(408);
    } finally {
      for (const raw of slow) raw.stop();
    }
    expect((await env.http('GET', '/customers?limit=1')).status).toBe(200);
  });
});

describe('connections', () => {
  let small: TestEnv;
  let smallPort: number;
  beforeAll(async () => {
    small = await setup({ httpMaxConnections: 3 });
    smallPort = Number(new URL(small.url).port);
  });
  afterAll(() => small.close());

  async function keptAlive(): Promise<Raw> {
    const raw = await connect(smallPort);
    raw.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${smallPort}\r\n\r\n`);
    expect(statusOf(await raw.answered(3000))).toBe(200);
    return raw;
  }

  it('closes connections beyond BILLING_HTTP_MAX_CONNECTIONS as they arrive, and accepts again when one ends', async () => {
    const open = [await keptAlive(), await keptAlive(), await keptAlive()];
    try {
      const extra = await connect(smallPort);
      extra.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${smallPort}\r\n\r\n`);
      expect(await extra.closed(3000), 'the fourth connection is closed').toBeDefined();
      expect(extra.received()).toBe('');
      extra.stop();
      for (const raw of open) expect(raw.socket.destroyed, 'the first three stay open').toBe(false);

      open.shift()!.stop();
      const again = await eventually(async () => {
        const raw = await connect(smallPort);
        raw.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${smallPort}\r\n\r\n`);
        const answered = statusOf(await raw.answered(1000)) === 200;
        if (answered) open.push(raw);
        else raw.stop();
        return answered;
      });
      expect(again, 'a connection is accepted once one has ended').toBe(true);
    } finally {
      for (const raw of open) raw.stop();
    }
  });
});
