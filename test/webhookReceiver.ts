import { createHmac } from 'node:crypto';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  body: string;
  json: any;
}

/** What the receiver does with the n-th request (0-based): answer a status, or never answer. */
export type Responder = (request: Received, n: number) => number | 'hang';

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export class Receiver {
  readonly received: Received[] = [];
  respond: Responder = () => 204;
  private readonly hanging: ServerResponse[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const received: Received = { headers: req.headers, body, json: JSON.parse(body) };
        const n = receiver.received.length;
        receiver.received.push(received);
        const answer = receiver.respond(received, n);
        if (answer === 'hang') {
          receiver.hanging.push(res);
          return;
        }
        res.writeHead(answer);
        res.end(answer >= 300 ? 'not accepted' : undefined);
      });
    });
    return receiver;
  }

  /** The requests of one event type, in arrival order. */
  of(type: string): Received[] {
    return this.received.filter((r) => r.json.event.type === type);
  }

  /** Waits until at least `count` requests (of `type`, if given) have arrived. */
  async waitFor(count: number, type?: string, timeoutMs = 5000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = type ? this.of(type) : this.received;
      if (got.length >= count) return got;
      if (Date.now() > deadline) throw new Error(`expected ${count} request(s)${type ? ` of ${type}` : ''}, got ${got.length}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls `check` until it returns a truthy value. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/**
 * Checks a request against interface section 6 and the contract, independently of the service's
 * signing code: the envelope, every header, the hex HMAC (node:crypto) and the Standard Webhooks
 * signature (the standardwebhooks package: `verify` when the timestamp is recent, else its `sign`).
 */
export function expectSigned(r: Received, secret: string, tenantId: string, options: { recent?: boolean } = {}): void {
  const { event } = r.json;
  expect(Object.keys(r.json).sort()).toEqual(['data', 'event']);
  expect(Object.keys(event).sort()).toEqual(['createdAt', 'id', 'type', 'version']);
  expect(event.id).toMatch(ULID);
  expect(event.version).toBe('v1');
  expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt);
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['x-webhook-event']).toBe(event.type);
  expect(r.headers['x-webhook-event-version']).toBe('v1');
  expect(r.headers['x-webhook-id']).toBe(event.id);
  expect(r.headers['webhook-id']).toBe(event.id);
  expect(r.headers['x-tenant-id']).toBe(tenantId);
  expect(r.headers['x-webhook-timestamp']).toMatch(/^\d{10}$/);
  expect(r.headers['webhook-timestamp']).toBe(r.headers['x-webhook-timestamp']);
  expect(r.headers['x-webhook-signature']).toBe(createHmac('sha256', secret).update(r.body, 'utf8').digest('hex'));
  const standard = {
    'webhook-id': r.headers['webhook-id'] as string,
    'webhook-timestamp': r.headers['webhook-timestamp'] as string,
    'webhook-signature': r.headers['webhook-signature'] as string,
  };
  const wh = new Webhook(secret);
  if (options.recent ?? true) {
    expect(wh.verify(r.body, standard)).toEqual(r.json);
  } else {
    const signedAt = new Date(Number(standard['webhook-timestamp']) * 1000);
    expect(standard['webhook-signature']).toBe(wh.sign(standard['webhook-id'], signedAt, r.body));
  }
}
