/**
 * Dunning (issue 13): overdue rules, the dunning run in the jobs loop with its fee invoices, new due
 * dates, reminder e-mails received by a real SMTP server and signed webhook events; pause and resume
 * with payment plans; exactly once under overlapping runs on two stores.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';
import { TestSmtp } from './smtpServer.js';
import { expectSigned, Receiver } from './webhookReceiver.js';

let env: TestEnv;
let smtp: TestSmtp;
let receiver: Receiver;
let secret: string;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  receiver = await Receiver.start();
  env = await setup({ smtpUrl: smtp.url, emailFrom: 'billing@seller.example', webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0] });
  secret = (await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['invoice.dunning_level_reached'] })).secret;
});
afterAll(async () => {
  await env.close();
  await smtp.close();
  await receiver.close();
});

const jobs = (at: string, e: TestEnv = env) => runDueJobs(e.app, new Date(at));

async function customerWith(mcp: Client, name: string, addresses: Array<{ email: string; isDunningEmail?: boolean; isInvoiceEmail?: boolean; default?: boolean }>) {
  const customer = await ok(mcp, 'create_customer', { companyName: name });
  for (const a of addresses) await ok(mcp, 'create_customer_email_address', { id: customer.id, isDunningEmail: false, isInvoiceEmail: false, default: false, ...a });
  return customer;
}

const invoiceOf = (mcp: Client, customer: string, amount = 10_000) =>
  ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Consulting', quantity: 1, unitAmount: amount, taxRate: 0 }] });

const mailTo = (address: string) => smtp.received.filter((m) => m.to.includes(address));

describe('overdue rules', () => {
  it('create, list (the interface envelope), get, update, delete; fields validated, level unique per organisation', async () => {
    const org = await env.newOrg('Rules GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    const rule = await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7 });
    expect(rule).toEqual({
      id: expect.any(String),
      level: 1,
      daysOverdue: 7,
      dueInDays: 7,
      type: 'reminder',
      amountInCents: 0,
      attachOriginalInvoice: false,
      sendLetter: false,
      isEnabled: true,
      emailTemplate: null,
      documentTemplate: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await ok(mcp, 'get_overdue_rule', { id: rule.id })).toEqual(rule);

    const taken = await fails(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 14, dueInDays: 7 }, 422);
    expect(paths(taken)).toEqual(['level']);
    const bad = await fails(mcp, 'create_overdue_rule', { level: 0, daysOverdue: 0, dueInDays: -1, amountInCents: -5, type: 'letter' }, 422);
    expect(paths(bad).sort()).toEqual(['amountInCents', 'daysOverdue', 'dueInDays', 'level', 'type']);
    const placeholder = await fails(
      mcp,
      'create_overdue_rule',
      { level: 2, daysOverdue: 14, dueInDays: 7, emailTemplate: { subject: 'Invoice {{invoice.id}}', contentPlain: 'Pay {{invoice.amountDue}}', contentHtml: '<p>{{ amount }}</p>' } },
      422,
    );
    expect(paths(placeholder)).toEqual(['emailTemplate.subject', 'emailTemplate.contentHtml']);

    const second = await ok(mcp, 'create_overdue_rule', {
      level: 2,
      daysOverdue: 14,
      dueInDays: 7,
      amountInCents: 500,
      sendLetter: true,
      documentTemplate: { title: 'Second reminder' },
      emailTemplate: { subject: 'Reminder {{ dunning.level }}', contentPlain: 'Dear {{customer.name}}' },
    });
    expect(second.emailTemplate).toEqual({ subject: 'Reminder {{ dunning.level }}', contentPlain: 'Dear {{customer.name}}', contentHtml: null });
    expect(paths(await fails(mcp, 'update_overdue_rule', { id: second.id, level: 1 }, 422))).toEqual(['level']);
    const updated = await ok(mcp, 'update_overdue_rule', { id: second.id, isEnabled: false, emailTemplate: null });
    expect(updated).toMatchObject({ level: 2, amountInCents: 500, isEnabled: false, emailTemplate: null, documentTemplate: { title: 'Second reminder' } });
    const letterProblem = await fails(
      env.mcp,
      'create_overdue_rule',
      { level: 9, daysOverdue: 90, dueInDays: 7, sendLetter: true, documentTemplate: { title: 'Hi {{customer.nam}}', footer: 'x' } },
      422,
    );
    expect(paths(letterProblem).sort()).toEqual(['documentTemplate.footer', 'documentTemplate.title']);
    expect(letterProblem.detail).toContain('use title, introduction, closing');

    const listed = await env.http('GET', '/dunning/overdue-rules?itemsPerPage=1&page=2', { token: org.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      data: [updated],
      meta: { pagination: { totalItems: 2, itemsPerPage: 1, currentPage: 2, lastPage: 2, pageTotalItems: 1 } },
    });
    const rows = await ok(mcp, 'list_overdue_rules', {});
    expect(rows.data.map((r: any) => [r.level, r.isEnabled])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(rows.data[0]).not.toHaveProperty('emailTemplate');

    const reader = await env.newKey(org, ['invoice:read']);
    expect((await env.http('GET', '/dunning/overdue-rules', { token: reader })).status).toBe(403);
    expect((await env.http('GET', `/dunning/overdue-rules/${rule.id}`)).status).toBe(404);
    expect((await env.http('DELETE', `/dunning/overdue-rules/${rule.id}`, { token: org.apiKey })).status).toBe(204);
    await fails(mcp, 'get_overdue_rule', { id: rule.id }, 404);
    expect((await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 3, dueInDays: 0 })).level).toBe(1);
  });
});

describe('the dunning run', () => {
  it('two levels by hand: fee invoices, new due dates across the change to summer time, originalDueAt, e-mails and events', async () => {
    await ok(env.mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7, amountInCents: 500, attachOriginalInvoice: true });
    await ok(env.mcp, 'create_overdue_rule', {
      level: 2,
      daysOverdue: 21,
      dueInDays: 10,
      amountInCents: 1500,
      emailTemplate: {
        subject: 'Level {{dunning.level}}: {{invoice.number}}',
        contentPlain: 'Hello {{customer.name}}, pay {{invoice.amountDue}} by {{invoice.dueAt}} (fee {{dunning.fee}}).',
        contentHtml: '<p>Hello {{customer.name}}</p>',
      },
      sendLetter: true,
      documentTemplate: { title: 'Second reminder for {{invoice.number}}', closing: 'Yours, the accounts team' },
    });
    await ok(env.mcp, 'create_overdue_rule', { level: 3, daysOverdue: 28, dueInDays: 1, isEnabled: false });
    const customer = await customerWith(env.mcp, 'Acme & Sons', [
      { email: 'office@acme.example', default: true },
      { email: 'dunning@acme.example', isDunningEmail: true },
      { email: 'cfo@acme.example', isDunningEmail: true },
    ]);
    env.setNow('2026-03-02T09:00:00Z');
    const invoice = await invoiceOf(env.mcp, customer.id);
    // 14 days in Europe/Berlin, before summer time starts on 29 March.
    expect(invoice).toMatchObject({ dueAt: '2026-03-16T09:00:00.000Z', originalDueAt: '2026-03-16T09:00:00.000Z', dunningOf: null });

    // Level 1 is reached 7 days after the first due date: 23 March, 10:00 Berlin time.
    await jobs('2026-03-23T08:59:59Z');
    expect((await ok(env.mcp, 'list_invoice_dunning', { id: invoice.id })).data).toEqual([]);
    await jobs('2026-03-23T10:00:00Z');
    const [first] = (await ok(env.mcp, 'list_invoice_dunning', { id: invoice.number })).data;
    // Due 7 days after the step, on the wall clock: 30 March 11:00 CEST is 09:00 UTC.
    expect(first).toEqual({
      level: 1,
      appliedAt: '2026-03-23T10:00:00.000Z',
      feeInvoice: expect.any(String),
      feeAmount: 500,
      emailId: expect.any(String),
      newDueAt: '2026-03-30T09:00:00.000Z',
      letter: false,
    });
    expect((await fails(env.mcp, 'get_dunning_letter', { id: invoice.id, level: 1 }, 409)).detail).toMatch(/sendLetter false/);
    await fails(env.mcp, 'get_dunning_letter', { id: invoice.id, level: 2 }, 404);
    expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({
      status: 'open',
      amountDue: 10_000,
      dueAt: '2026-03-30T09:00:00.000Z',
      originalDueAt: '2026-03-16T09:00:00.000Z',
    });
    const fee = await ok(env.mcp, 'get_invoice', { id: first.feeInvoice });
    expect(fee).toMatchObject({
      status: 'open',
      customer: customer.id,
      dunningOf: invoice.id,
      grossAmount: 500,
      amountDue: 500,
      issuedAt: '2026-03-23T10:00:00.000Z',
      dueAt: '2026-03-30T09:00:00.000Z',
      lines: [{ description: `Dunning fee, level 1, invoice ${invoice.number}`, quantity: '1', unitAmount: 500, netAmount: 500, taxRate: 0 }],
    });
    // The original invoice was never edited: same lines and amounts.
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).lines).toEqual(invoice.lines);

    const email = await ok(env.mcp, 'get_email', { id: first.emailId });
    expect(email).toEqual({
      id: first.emailId,
      kind: 'dunning',
      invoice: invoice.id,
      customer: customer.id,
      to: ['dunning@acme.example', 'cfo@acme.example'],
      subject: `Payment reminder 1: invoice ${invoice.number}`,
      body: expect.stringContaining(`invoice ${invoice.number} is overdue: €100.00 is still open. Please pay it by 2026-03-30.`),
      status: 'sent',
      attempts: 1,
      lastError: null,
      nextAttemptAt: null,
      sentAt: '2026-03-23T10:00:00.000Z',
      attachments: [`${invoice.number}.pdf`, `${fee.number}.pdf`],
      createdAt: '2026-03-23T10:00:00.000Z',
      updatedAt: '2026-03-23T10:00:00.000Z',
    });
    const [mail1] = mailTo('dunning@acme.example');
    expect(mail1!.to.sort()).toEqual(['cfo@acme.example', 'dunning@acme.example']);
    expect(mail1!.from).toBe('billing@seller.example');
    expect(mail1!.mail.from?.text).toBe('"Test organisation" <billing@seller.example>');
    expect(mail1!.mail.subject).toBe(`Payment reminder 1: invoice ${invoice.number}`);
    expect(mail1!.mail.text).toContain('Dear Acme & Sons,');
    expect(mail1!.mail.text).toContain(`A dunning fee of €5.00 is charged on invoice ${fee.number} (attached), due by the same date.`);
    expect(mail1!.mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      [`${invoice.number}.pdf`, 'application/pdf'],
      [`${fee.number}.pdf`, 'application/pdf'],
    ]);
    for (const a of mail1!.mail.attachments) expect(a.content.subarray(0, 5).toString()).toBe('%PDF-');
    expect(mailTo('office@acme.example')).toEqual([]);

    // Nothing more until level 2: 21 days after 16 March 10:00 CET is 6 April 10:00 CEST (08:00 UTC).
    await jobs('2026-03-30T10:00:00Z');
    await jobs('2026-04-06T07:59:59Z');
    expect((await ok(env.mcp, 'list_invoice_dunning', { id: invoice.id })).data).toHaveLength(1);
    await jobs('2026-04-06T08:00:00Z');
    const steps = (await ok(env.mcp, 'list_invoice_dunning', { id: invoice.id })).data;
    expect(steps[1]).toEqual({
      level: 2,
      appliedAt: '2026-04-06T08:00:00.000Z',
      feeInvoice: expect.any(String),
      feeAmount: 1500,
      emailId: expect.any(String),
      newDueAt: '2026-04-16T08:00:00.000Z',
      letter: true,
    });
    // Level 2 sends a letter: the rule's title and closing, the system introduction, the figures.
    const link = await ok(env.mcp, 'get_dunning_letter', { id: invoice.number, level: 2 });
    expect(link).toEqual({ invoice: invoice.id, level: 2, url: `${env.url}/invoices/${invoice.id}/dunning/2/letter`, mimeType: 'application/pdf' });
    const letter = await fetch(link.url, { headers: { authorization: `Bearer ${env.org.apiKey}` } });
    expect([letter.status, letter.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    const text = (await pdfText(new Uint8Array(await letter.arrayBuffer()))).replace(/\s+/g, ' ');
    for (const expected of [
      `Second reminder for ${invoice.number}`,
      `Dear Acme & Sons,`,
      `invoice ${invoice.number} has not been paid in full: €100.00 is still open. Please pay it by 2026-04-16.`,
      'Dunning fee (separate invoice) €15.00',
      'Please pay by 2026-04-16',
      'Yours, the accounts team',
      'Date: 2026-04-06',
    ]) {
      expect(text).toContain(expected);
    }
    expect((await fetch(link.url)).status).toBe(401);
    expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ dueAt: '2026-04-16T08:00:00.000Z', originalDueAt: '2026-03-16T09:00:00.000Z' });
    const fee2 = await ok(env.mcp, 'get_invoice', { id: steps[1].feeInvoice });
    expect(fee2).toMatchObject({ dunningOf: invoice.id, grossAmount: 1500, dueAt: '2026-04-16T08:00:00.000Z', lines: [{ description: `Dunning fee, level 2, invoice ${invoice.number}` }] });
    const mail2 = mailTo('dunning@acme.example')[1]!;
    expect(mail2.mail.subject).toBe(`Level 2: ${invoice.number}`);
    expect(mail2.mail.text?.trim()).toBe('Hello Acme & Sons, pay €100.00 by 2026-04-16 (fee €15.00).');
    expect(mail2.mail.html).toContain('<p>Hello Acme &amp; Sons</p>');
    expect(mail2.mail.attachments.map((a) => a.filename)).toEqual([`${fee2.number}.pdf`]);

    // Every level is applied; the disabled level 3 never is.
    await jobs('2026-05-30T08:00:00Z');
    expect((await ok(env.mcp, 'list_invoice_dunning', { id: invoice.id })).data).toHaveLength(2);
    // Fee invoices are not dunned themselves.
    expect((await ok(env.mcp, 'list_invoice_dunning', { id: fee.id })).data).toEqual([]);

    const events = (await receiver.waitFor(2, 'invoice.dunning_level_reached')).filter((r) => r.json.data.invoice.id === invoice.id);
    expect(events.map((r) => r.json.data.dunning)).toEqual(steps);
    for (const r of events) expectSigned(r, secret, env.org.organisationId, { recent: false });
    expect(events[1]!.json.data.invoice).toMatchObject({ dueAt: '2026-04-16T08:00:00.000Z', originalDueAt: '2026-03-16T09:00:00.000Z' });
  });

  it('the highest level reached is applied and lower ones passed over never are; a paid invoice is not dunned', async () => {
    const org = await env.newOrg('Late GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    for (const [level, daysOverdue] of [
      [1, 5],
      [2, 10],
      [3, 30],
    ]) {
      await ok(mcp, 'create_overdue_rule', { level, daysOverdue, dueInDays: 3 });
    }
    const customer = await customerWith(mcp, 'Late GmbH', [{ email: 'late@late.example', default: true }]);
    env.setNow('2026-06-01T12:00:00Z');
    const late = await invoiceOf(mcp, customer.id);
    const paid = await invoiceOf(mcp, customer.id);
    await ok(mcp, 'record_invoice_payment', { id: paid.id, amount: 10_000 });
    // First run 12 days after the due date: level 2, not 1.
    await jobs('2026-06-27T12:00:00Z');
    expect((await ok(mcp, 'list_invoice_dunning', { id: late.id })).data.map((s: any) => s.level)).toEqual([2]);
    await jobs('2026-07-20T12:00:00Z');
    expect((await ok(mcp, 'list_invoice_dunning', { id: late.id })).data.map((s: any) => s.level)).toEqual([2, 3]);
    expect((await ok(mcp, 'list_invoice_dunning', { id: paid.id })).data).toEqual([]);
    // No fee: no fee invoice; the reminder goes to the default address when no address is flagged for dunning.
    const [step] = (await ok(mcp, 'list_invoice_dunning', { id: late.id })).data;
    expect(step).toMatchObject({ feeInvoice: null, feeAmount: 0 });
    expect(await ok(mcp, 'get_email', { id: step.emailId })).toMatchObject({ to: ['late@late.example'], status: 'sent', attachments: [] });
    expect((await ok(mcp, 'list_invoices', { customer: customer.id })).data).toHaveLength(2);
  });

  it('pauses while a payment plan is active and resumes when the plan breaks', async () => {
    const org = await env.newOrg('Planned GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 3, dueInDays: 5, amountInCents: 250 });
    await ok(mcp, 'create_overdue_rule', { level: 2, daysOverdue: 40, dueInDays: 5, amountInCents: 900 });
    const customer = await customerWith(mcp, 'Planned GmbH', []);
    env.setNow('2026-09-01T08:00:00Z');
    const invoice = await invoiceOf(mcp, customer.id, 9000);
    env.setNow('2026-09-16T08:00:00Z');
    const plan = await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2026-09-20', interval: '1M' });
    expect((await ok(mcp, 'get_invoice', { id: invoice.id })).dunningPaused).toBe(true);
    await jobs('2026-09-19T08:00:00Z');
    expect((await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data).toEqual([]);

    env.setNow('2026-10-15T08:00:00Z');
    await ok(mcp, 'fail_payment_plan_installment', { id: plan.id, installmentId: plan.installments[0].id, reason: 'SEPA return AM04' });
    expect(await ok(mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ dunningPaused: false, dueAt: '2026-10-15T08:00:00.000Z', originalDueAt: '2026-09-15T08:00:00.000Z' });
    // Resumed: 30 days past the first due date, level 1 is the highest reached.
    await jobs('2026-10-15T08:00:01Z');
    const [step] = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data;
    expect(step).toMatchObject({ level: 1, feeAmount: 250, newDueAt: '2026-10-20T08:00:01.000Z' });
    // A customer without any address: the reminder stays in the outbox, not sent, saying why.
    expect(await ok(mcp, 'get_email', { id: step.emailId })).toMatchObject({
      to: [],
      status: 'not_sent',
      attempts: 0,
      lastError: `customer ${customer.customerNumber} has no e-mail address with isDunningEmail and no default address`,
    });
    const listed = await ok(mcp, 'list_emails', { invoice: invoice.number, status: 'not_sent' });
    expect(listed.data).toEqual([
      { id: step.emailId, kind: 'dunning', invoice: invoice.id, to: [], subject: `Payment reminder 1: invoice ${invoice.number}`, status: 'not_sent', attempts: 0, lastError: expect.any(String), sentAt: null },
    ]);
  });

  it('an overdue installment breaks the plan and the same jobs run dunns the invoice', async () => {
    const org = await env.newOrg('Overdue plan GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 1, dueInDays: 7 });
    const customer = await customerWith(mcp, 'Overdue plan GmbH', [{ email: 'ap@overdue.example', default: true }]);
    env.setNow('2026-08-01T08:00:00Z');
    const invoice = await invoiceOf(mcp, customer.id, 9000);
    env.setNow('2026-08-20T08:00:00Z');
    await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 2, firstDueAt: '2026-08-21', interval: '1M' });
    // Grace of 7 days (the default): the installment of 21 August is overdue from 29 August; the plan
    // breaks, the invoice is due at once, and the same run applies the level reached since 15 August.
    const summary = await jobs('2026-08-29T00:00:00Z');
    expect(summary.jobs.overdueInstallments!.plansBroken).toBeGreaterThanOrEqual(1);
    const steps = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data;
    expect(steps).toEqual([{ level: 1, appliedAt: '2026-08-29T00:00:00.000Z', feeInvoice: null, feeAmount: 0, emailId: expect.any(String), newDueAt: '2026-09-05T00:00:00.000Z', letter: false }]);
  });
});

describe('exactly once', () => {
  let dir: string;
  let fileEnv: TestEnv;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-dunning-'));
    fileEnv = await setup({ db: path.join(dir, 'billing.sqlite'), smtpUrl: smtp.url, emailFrom: 'Billing <billing@seller.example>' });
  });
  afterAll(async () => {
    await fileEnv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('overlapping runs on two stores of one file apply each level once', async () => {
    const mcp = fileEnv.mcp;
    await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 2, dueInDays: 7, amountInCents: 300 });
    await ok(mcp, 'create_overdue_rule', { level: 2, daysOverdue: 20, dueInDays: 7, amountInCents: 600 });
    const customer = await customerWith(mcp, 'Parallel GmbH', [{ email: 'ap@parallel.example', default: true }]);
    fileEnv.setNow('2026-02-01T10:00:00Z');
    const invoices = [];
    for (let i = 0; i < 10; i++) invoices.push(await invoiceOf(mcp, customer.id, 1000 + i));
    const other = SqliteStore.open(path.join(dir, 'billing.sqlite'), { synchronous: 'full', lockTimeoutMs: 10_000 });
    try {
      const twice = { ...fileEnv.app, store: other };
      for (const at of ['2026-02-20T10:00:00Z', '2026-03-10T10:00:00Z']) {
        const runs = await Promise.all([fileEnv.app, twice, fileEnv.app, twice].map((deps) => runDueJobs(deps, new Date(at))));
        expect(runs.reduce((n, r) => n + r.jobs.dunning!.levelsApplied!, 0)).toBe(10);
      }
    } finally {
      await other.close();
    }
    for (const invoice of invoices) {
      const steps = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data;
      expect(steps.map((s: any) => s.level)).toEqual([1, 2]);
    }
    const all = (await ok(mcp, 'list_invoices', { customer: customer.id, limit: 100 })).data;
    expect(all).toHaveLength(30);
    const dunning = (await ok(mcp, 'list_emails', { kind: 'dunning', limit: 100 })).data;
    expect(dunning).toHaveLength(20);
    expect(dunning.every((e: any) => e.status === 'sent' && e.attempts === 1)).toBe(true);
  });
});
