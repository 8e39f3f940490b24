/**
 * The e-mail outbox (issue 13): invoices of billing runs e-mailed with their PDF to the invoice
 * addresses, received by a real SMTP server on 127.0.0.1; retries with backoff, permanent refusals,
 * a restart that resends what is queued, no SMTP configured, and the settings' validation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { runDueJobs } from '../src/jobs/runner.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';
import { TestSmtp } from './smtpServer.js';

let env: TestEnv;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  env = await setup({ smtpUrl: smtp.url, emailFrom: 'Seller Billing <billing@seller.example>', emailRetryDelaysSeconds: [60, 600] });
});
afterAll(async () => {
  await env.close();
  await smtp.close();
});

const jobs = (at: string, e: TestEnv = env) => runDueJobs(e.app, new Date(at));

/** A customer with the given addresses and an active subscription of 49.90 EUR a month in advance, started now. */
async function subscribed(
  mcp: Client,
  name: string,
  addresses: Array<{ email: string; receiverName?: string; isInvoiceEmail?: boolean; isDunningEmail?: boolean; default?: boolean }>,
) {
  const customer = await ok(mcp, 'create_customer', { companyName: name });
  for (const a of addresses) await ok(mcp, 'create_customer_email_address', { id: customer.id, isInvoiceEmail: false, isDunningEmail: false, default: false, ...a });
  const product = await ok(mcp, 'create_product', { name: `${name} seat` });
  const price = await ok(mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 49.9 }, billingInterval: '1M' });
  const plan = await ok(mcp, 'create_plan', { code: `plan-${customer.id}`, name: `${name} plan`, charges: [{ product: product.id, pricePlan: price.id }] });
  await ok(mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }], activate: true });
  return customer;
}

async function invoiceEmail(mcp: Client, customer: string): Promise<any> {
  const [invoice] = (await ok(mcp, 'list_invoices', { customer })).data;
  const [email] = (await ok(mcp, 'list_emails', { invoice: invoice.id })).data;
  return { invoice, email: await ok(mcp, 'get_email', { id: email.id }) };
}

describe('invoice e-mails', () => {
  it('a billing run e-mails each invoice with its PDF to the invoice addresses, else the default address', async () => {
    env.setNow('2026-05-04T09:00:00Z');
    const flagged = await subscribed(env.mcp, 'Flagged AG', [
      { email: 'main@flagged.example', default: true },
      { email: 'invoices@flagged.example', isInvoiceEmail: true },
    ]);
    const plain = await subscribed(env.mcp, 'Plain AG', [{ email: 'hello@plain.example', default: true, isDunningEmail: true }]);
    const summary = await jobs('2026-05-04T09:00:00Z');
    expect(summary.jobs.emails).toEqual({ sent: 2, retrying: 0, failed: 0, notSent: 0 });

    const { invoice, email } = await invoiceEmail(env.mcp, flagged.id);
    expect(email).toEqual({
      id: expect.any(String),
      kind: 'invoice',
      invoice: invoice.id,
      customer: flagged.id,
      to: ['invoices@flagged.example'],
      subject: `Invoice ${invoice.number}`,
      body: `Dear Flagged AG,\n\nplease find attached invoice ${invoice.number} of 2026-05-04 over €49.90.\nPlease pay €49.90 by 2026-05-18.\n`,
      status: 'sent',
      attempts: 1,
      lastError: null,
      nextAttemptAt: null,
      sentAt: '2026-05-04T09:00:00.000Z',
      attachments: [`${invoice.number}.pdf`],
      createdAt: '2026-05-04T09:00:00.000Z',
      updatedAt: '2026-05-04T09:00:00.000Z',
    });
    const mail = smtp.received.find((m) => m.mail.subject === `Invoice ${invoice.number}`)!;
    expect(mail.to).toEqual(['invoices@flagged.example']);
    expect(mail.mail.from?.text).toBe('"Seller Billing" <billing@seller.example>');
    expect(mail.mail.text).toBe(email.body);
    expect(mail.mail.attachments).toHaveLength(1);
    expect(mail.mail.attachments[0]).toMatchObject({ filename: `${invoice.number}.pdf`, contentType: 'application/pdf' });
    const pdf = await env.http('GET', `/invoices/${invoice.id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(mail.mail.attachments[0]!.content.subarray(0, 5).toString()).toBe('%PDF-');

    const other = await invoiceEmail(env.mcp, plain.id);
    expect(other.email).toMatchObject({ to: ['hello@plain.example'], status: 'sent' });
    expect(smtp.received.find((m) => m.mail.subject === `Invoice ${other.invoice.number}`)!.to).toEqual(['hello@plain.example']);

    // Over HTTP: the contract's shape, filters, the permission.
    const listed = await env.http('GET', `/emails?kind=invoice&customer=${flagged.customerNumber}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([email]);
    expect((await env.http('GET', `/emails/${email.id}`)).body).toEqual(email);
    const noEmails = await env.newKey(env.org, ['invoice:read']);
    expect((await env.http('GET', '/emails', { token: noEmails })).status).toBe(403);
    const reader = await env.newKey(env.org, ['email:read']);
    expect((await env.http('GET', `/emails/${email.id}`, { token: reader })).status).toBe(200);
    await fails(env.mcp, 'get_email', { id: 'nope' }, 404);
  });

  it('retries a temporary failure with backoff, gives up at once on a permanent one', async () => {
    env.setNow('2026-06-10T09:00:00Z');
    const customer = await subscribed(env.mcp, 'Retry AG', [{ email: 'ap@retry.example', default: true }]);
    const received = smtp.received.filter((m) => m.to.includes('ap@retry.example')).length;
    let answered = false;
    smtp.respond = (to) => {
      if (answered || !to.includes('ap@retry.example')) return 'accept';
      answered = true;
      return 451;
    };
    // The run also sends the June invoices of the customers before.
    expect((await jobs('2026-06-10T09:00:00Z')).jobs.emails).toMatchObject({ retrying: 1, failed: 0, notSent: 0 });
    let { email } = await invoiceEmail(env.mcp, customer.id);
    expect(email).toMatchObject({ status: 'queued', attempts: 1, nextAttemptAt: '2026-06-10T09:01:00.000Z', sentAt: null });
    expect(email.lastError).toContain('451');
    expect((await jobs('2026-06-10T09:00:59Z')).jobs.emails).toEqual({ sent: 0, retrying: 0, failed: 0, notSent: 0 });
    expect((await jobs('2026-06-10T09:01:00Z')).jobs.emails).toEqual({ sent: 1, retrying: 0, failed: 0, notSent: 0 });
    ({ email } = await invoiceEmail(env.mcp, customer.id));
    expect(email).toMatchObject({ status: 'sent', attempts: 2, lastError: null, sentAt: '2026-06-10T09:01:00.000Z' });
    expect(smtp.received.filter((m) => m.to.includes('ap@retry.example'))).toHaveLength(received + 1);

    env.setNow('2026-06-11T09:00:00Z');
    const refused = await subscribed(env.mcp, 'Refused AG', [{ email: 'gone@refused.example', default: true }]);
    smtp.respond = (to) => (to.includes('gone@refused.example') ? 550 : 'accept');
    try {
      expect((await jobs('2026-06-11T09:00:00Z')).jobs.emails).toEqual({ sent: 0, retrying: 0, failed: 1, notSent: 0 });
    } finally {
      smtp.respond = () => 'accept';
    }
    expect((await invoiceEmail(env.mcp, refused.id)).email).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null });
  });

  it('a recipient the server refuses does not keep the others from getting the e-mail', async () => {
    env.setNow('2026-06-12T09:00:00Z');
    const customer = await subscribed(env.mcp, 'Half AG', [
      { email: 'left@half.example', isInvoiceEmail: true },
      { email: 'ap@half.example', isInvoiceEmail: true },
    ]);
    smtp.unknownMailboxes.add('left@half.example');
    await jobs('2026-06-12T09:00:00Z');
    const { email } = await invoiceEmail(env.mcp, customer.id);
    expect(email).toMatchObject({ to: ['left@half.example', 'ap@half.example'], status: 'sent', attempts: 1 });
    expect(email.lastError).toBe('the server refused left@half.example; sent to the others');
    expect(smtp.received.filter((m) => m.mail.subject === email.subject).map((m) => m.to)).toEqual([['ap@half.example']]);
  });

  it('shows each receiverName in the To header, quoted or encoded by nodemailer, and greets the receivers by name', async () => {
    env.setNow('2026-06-13T09:00:00Z');
    const named = await subscribed(env.mcp, 'Named AG', [
      { email: 'ada@named.example', receiverName: 'Lovelace, Ada', isInvoiceEmail: true },
      { email: 'charles@named.example', receiverName: 'Charles "Engine" Bäbbage', isInvoiceEmail: true },
    ]);
    const mixed = await subscribed(env.mcp, 'Mixed AG', [
      { email: 'ada@mixed.example', receiverName: 'Ada Lovelace', isInvoiceEmail: true },
      { email: 'ap@mixed.example', isInvoiceEmail: true },
    ]);
    await jobs('2026-06-13T09:00:00Z');
    const { email } = await invoiceEmail(env.mcp, named.id);
    expect(email.to).toEqual(['ada@named.example', 'charles@named.example']);
    expect(email.body).toMatch(/^Dear Lovelace, Ada and Charles "Engine" Bäbbage,\n/);
    const mail = smtp.received.find((m) => m.mail.subject === email.subject)!;
    expect(mail.to).toEqual(['ada@named.example', 'charles@named.example']);
    const to = Array.isArray(mail.mail.to) ? mail.mail.to[0]! : mail.mail.to!;
    expect(to.value).toEqual([
      { address: 'ada@named.example', name: 'Lovelace, Ada' },
      { address: 'charles@named.example', name: 'Charles "Engine" Bäbbage' },
    ]);
    const header = mail.mail.headerLines.find((h) => h.key === 'to')!.line;
    expect(header).toContain('"Lovelace, Ada" <ada@named.example>');
    expect(header).not.toContain('Bäbbage');

    const other = await invoiceEmail(env.mcp, mixed.id);
    expect(other.email.body).toMatch(/^Dear Mixed AG,\n/);
    const mixedMail = smtp.received.find((m) => m.mail.subject === other.email.subject)!;
    const mixedTo = Array.isArray(mixedMail.mail.to) ? mixedMail.mail.to[0]! : mixedMail.mail.to!;
    expect(mixedTo.value).toEqual([
      { address: 'ada@mixed.example', name: 'Ada Lovelace' },
      { address: 'ap@mixed.example', name: '' },
    ]);
  });

  it('sends to each address once, whatever its case, and still sends e-mails queued with bare addresses', async () => {
    env.setNow('2026-06-14T09:00:00Z');
    const customer = await subscribed(env.mcp, 'Twice AG', [{ email: 'ap@twice.example', receiverName: 'Accounts', isInvoiceEmail: true }]);
    // Two spellings of one address, as stored before addresses were unique per customer.
    await env.sql.run(
      `INSERT INTO customer_emails (id, organisation_id, customer_id, email, receiver_name, is_invoice_email, is_dunning_email, is_default, created_at, updated_at)
       VALUES (?, ?, ?, 'AP@Twice.example', NULL, 1, 0, 0, ?, ?)`,
      '00000000-0000-7000-8000-000000000001',
      env.org.organisationId,
      customer.id,
      '2026-06-14T09:00:01.000Z',
      '2026-06-14T09:00:01.000Z',
    );
    await jobs('2026-06-14T09:00:00Z');
    const { email } = await invoiceEmail(env.mcp, customer.id);
    expect(email.to).toEqual(['ap@twice.example']);
    expect(email.body).toMatch(/^Dear Accounts,\n/);
    expect(smtp.received.filter((m) => m.mail.subject === email.subject).map((m) => m.to)).toEqual([['ap@twice.example']]);

    await env.sql.run(
      `UPDATE emails SET recipients = '["legacy@twice.example"]', status = 'queued', next_attempt_at = ?, sent_at = NULL WHERE id = ?`,
      '2026-06-14T10:00:00.000Z',
      email.id,
    );
    expect((await ok(env.mcp, 'get_email', { id: email.id })).to).toEqual(['legacy@twice.example']);
    expect((await jobs('2026-06-14T10:00:00Z')).jobs.emails).toMatchObject({ sent: 1, failed: 0 });
    expect(smtp.received.filter((m) => m.mail.subject === email.subject).map((m) => m.to)).toEqual([['ap@twice.example'], ['legacy@twice.example']]);
  });
});

describe('durability and configuration', () => {
  it('an e-mail that could not be sent stays queued and is sent by the next process', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-emails-'));
    const db = path.join(dir, 'billing.sqlite');
    const down = await TestSmtp.start();
    await down.close();
    const first = await setup({ db, smtpUrl: down.url, emailFrom: 'billing@seller.example', emailRetryDelaysSeconds: [1, 1] });
    let customer: any;
    try {
      first.setNow('2026-07-01T09:00:00Z');
      customer = await subscribed(first.mcp, 'Restart AG', [{ email: 'ap@restart.example', default: true }]);
      expect((await jobs('2026-07-01T09:00:00Z', first)).jobs.emails).toEqual({ sent: 0, retrying: 1, failed: 0, notSent: 0 });
      const { email } = await invoiceEmail(first.mcp, customer.id);
      expect(email).toMatchObject({ status: 'queued', attempts: 1, lastError: expect.stringContaining('ECONNREFUSED') });
    } finally {
      await first.close();
    }
    const second = await setup({ db, smtpUrl: smtp.url, emailFrom: 'billing@seller.example', emailRetryDelaysSeconds: [1, 1] });
    try {
      const mcp = await second.mcpFor(first.org.apiKey);
      expect((await jobs('2026-07-01T09:00:01Z', second)).jobs.emails).toEqual({ sent: 1, retrying: 0, failed: 0, notSent: 0 });
      expect((await invoiceEmail(mcp, customer.id)).email).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
      expect(smtp.received.some((m) => m.to.includes('ap@restart.example'))).toBe(true);
    } finally {
      await second.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without BILLING_SMTP_URL e-mails stay in the outbox, not sent', async () => {
    const offline = await setup();
    try {
      offline.setNow('2026-08-03T09:00:00Z');
      const customer = await subscribed(offline.mcp, 'Offline AG', [{ email: 'ap@offline.example', default: true }]);
      expect((await jobs('2026-08-03T09:00:00Z', offline)).jobs.emails).toEqual({ sent: 0, retrying: 0, failed: 0, notSent: 1 });
      expect((await invoiceEmail(offline.mcp, customer.id)).email).toMatchObject({
        to: ['ap@offline.example'],
        status: 'not_sent',
        attempts: 0,
        lastError: 'no SMTP configured (BILLING_SMTP_URL)',
      });
    } finally {
      await offline.close();
    }
  });

  it('validates the settings, naming the variable and never echoing the SMTP password', () => {
    expect(() => loadConfig({ BILLING_SMTP_URL: 'http://user:secret@mail.example', BILLING_EMAIL_FROM: 'a@b.example' })).toThrow(/BILLING_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => loadConfig({ BILLING_SMTP_URL: 'http://user:secret@mail.example' })).not.toThrow(/secret/);
    expect(() => loadConfig({ BILLING_SMTP_URL: 'smtps://mail.example:465' })).toThrow(/BILLING_EMAIL_FROM must be set/);
    expect(() => loadConfig({ BILLING_EMAIL_FROM: 'not an address' })).toThrow(/BILLING_EMAIL_FROM must be an e-mail address/);
    expect(() => loadConfig({ BILLING_EMAIL_RETRY_DELAYS: '1,x' })).toThrow(/BILLING_EMAIL_RETRY_DELAYS/);
    const config = loadConfig({ BILLING_SMTP_URL: 'smtps://u:p@mail.example:465', BILLING_EMAIL_FROM: 'Billing <billing@example.com>' });
    expect(config).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example:465', emailFrom: 'Billing <billing@example.com>', emailRetryDelaysSeconds: [60, 600, 3600, 21_600] });
  });
});
