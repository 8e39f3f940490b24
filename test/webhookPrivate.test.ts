import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { publicOnlyLookup } from '../src/webhooks/delivery.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { eventually, Receiver } from './webhookReceiver.js';

const FAST = { webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 300 };
const open: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close();
});

describe('private targets at delivery time', () => {
  it('the connection-time lookup refuses a name that resolves to a private address', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      publicOnlyLookup('localhost', { all: true }, (err) => resolve(err)),
    );
    expect(error?.code).toBe('EPRIVATE');
    expect(error?.message).toMatch(/localhost resolves to the private address .*BILLING_WEBHOOK_ALLOW_PRIVATE=true/);
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
    expect(refused.lastError).toMatch(/^refused: 127\.0\.0\.1 is a private address/);
    expect(refused.lastStatusCode).toBeNull();
    expect(receiver.received).toHaveLength(0);
  });
});
