import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { deliveryLookup, type Resolve } from '../src/webhooks/delivery.js';
import { ACCEPTED, REFUSED } from './addresses.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { eventually, Receiver } from './webhookReceiver.js';

const FAST = { webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 300 };
const open: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close();
});

/** A resolver that answers every name with these addresses and touches no network. */
function resolvingTo(...addresses: string[]): Resolve {
  const answer: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  return (_hostname, _options, callback) => queueMicrotask(() => callback(null, answer));
}

/** The lookup's answer as undici's connector asks for it (a single address). */
function lookup(fn: ReturnType<typeof deliveryLookup>, hostname: string): Promise<{ error: NodeJS.ErrnoException | null; address?: string }> {
  return new Promise((resolve) =>
    fn(hostname, {}, (error, address) => resolve(error ? { error } : { error: null, address: address as string })),
  );
}

async function planFor(mcp: Client): Promise<void> {
  const customer = (await ok(mcp, 'create_customer', { lastName: 'Private' })).id;
  const invoice = await ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Service', quantity: 1, unitAmount: 1000 }] });
  await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: new Date().toISOString().slice(0, 10), amount: 1000 }] });
}

describe('private targets at delivery time', () => {
  it('the connection-time lookup refuses a name that resolves to a private address', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => deliveryLookup()('localhost', { all: true }, (err) => resolve(err)));
    expect(error?.code).toBe('EPRIVATE');
    expect(error?.message).toMatch(/localhost resolves to .*, which is not a public address \(loopback.*BILLING_WEBHOOK_ALLOW_PRIVATE=true/);
  });

  it.each(REFUSED)('the connection-time lookup refuses a name resolving to %s (%s)', async (address, reason) => {
    const answer = await lookup(deliveryLookup(resolvingTo(address)), 'hooks.example.com');
    expect(answer.error?.code).toBe('EPRIVATE');
    expect(answer.error?.message).toContain(`hooks.example.com resolves to ${address}, which is not a public address (${reason})`);
    // Allowed by configuration, the same answer passes.
    expect((await lookup(deliveryLookup(resolvingTo(address), true), 'hooks.example.com')).address).toBe(address);
  });

  it.each(ACCEPTED)('the connection-time lookup passes a name resolving to %s', async (address) => {
    expect(await lookup(deliveryLookup(resolvingTo(address)), 'hooks.example.com')).toEqual({ error: null, address });
  });

  it('refuses a name when any of its addresses is not public, whichever comes first', async () => {
    for (const answer of [
      ['93.184.215.14', '64:ff9b::7f00:1'],
      ['::ffff:a00:1', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    ]) {
      expect((await lookup(deliveryLookup(resolvingTo(...answer)), 'hooks.example.com')).error?.code).toBe('EPRIVATE');
    }
  });

  it('a name that resolves to a private address at connection time receives nothing; resolved alike but allowed, it is delivered', async () => {
    const receiver = await Receiver.start();
    open.push(receiver);
    const port = new URL(receiver.url).port;
    const url = `http://hooks.billing-test.example:${port}/hooks`;
    // The seam stands for DNS: the name resolves to the receiver's loopback address.
    const resolve = resolvingTo('127.0.0.1');

    const strict = await setup({ ...FAST, webhookAllowPrivate: false }, { resolve });
    open.push(strict);
    const webhook = await ok(strict.mcp, 'create_webhook', { url, events: ['payment_plan.created'] });
    await planFor(strict.mcp);
    const refused = await eventually(async () =>
      (await ok(strict.mcp, 'list_webhook_deliveries', { id: webhook.id })).data.find((d: any) => d.attempts > 0),
    );
    expect(refused.lastError).toBe(
      `refused: hooks.billing-test.example resolves to 127.0.0.1, which is not a public address (loopback); webhooks must target public hosts unless BILLING_WEBHOOK_ALLOW_PRIVATE=true`,
    );
    expect(refused.lastStatusCode).toBeNull();
    expect(receiver.received).toHaveLength(0);

    const permissive = await setup({ ...FAST, webhookAllowPrivate: true }, { resolve });
    open.push(permissive);
    await ok(permissive.mcp, 'create_webhook', { url, events: ['payment_plan.created'] });
    await planFor(permissive.mcp);
    const [got] = await receiver.waitFor(1);
    expect(got!.headers.host).toBe(`hooks.billing-test.example:${port}`);
  });

  it('a webhook registered while private targets were allowed receives nothing once they are not', async () => {
    const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'billing-private-')), 'db.sqlite');
    const receiver = await Receiver.start();
    open.push(receiver);
    const permissive: TestEnv = await setup({ ...FAST, db, webhookAllowPrivate: true });
    const webhook = await ok(permissive.mcp, 'create_webhook', { url: receiver.url, events: ['payment_plan.created'] });
    await permissive.close();

    const strict = await setup({ ...FAST, db, webhookAllowPrivate: false });
    open.push(strict);
    const mcp = await strict.mcpFor(permissive.org.apiKey);
    const customer = (await ok(mcp, 'create_customer', { lastName: 'Private' })).id;
    const invoice = await ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Service', quantity: 1, unitAmount: 1000 }] });
    await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: new Date().toISOString().slice(0, 10), amount: 1000 }] });
    const refused = await eventually(async () =>
      (await ok(mcp, 'list_webhook_deliveries', { id: webhook.id })).data.find((d: any) => d.attempts > 0),
    );
    expect(refused.lastError).toMatch(/^refused: 127\.0\.0\.1 is not a public host \(loopback\)/);
    expect(refused.lastStatusCode).toBeNull();
    expect(receiver.received).toHaveLength(0);
  });
});
