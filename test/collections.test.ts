/**
 * Issue 13 end to end: an invoice goes overdue, two dunning levels send reminders that a real SMTP
 * server receives, a payment plan pauses dunning, its installment is collected in a pain.008 file
 * that validates against the XSD, a return breaks the plan, and dunning resumes.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { runDueJobs } from '../src/jobs/runner.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { TestSmtp } from './smtpServer.js';
import { Receiver } from './webhookReceiver.js';

const XSD = readFileSync(new URL('./fixtures/pain.008.001.02.xsd', import.meta.url), 'utf8');

let env: TestEnv;
let smtp: TestSmtp;
let receiver: Receiver;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  receiver = await Receiver.start();
  env = await setup({ smtpUrl: smtp.url, emailFrom: 'billing@seller.example', webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0] });
  await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['payment_plan.broken', 'invoice.dunning_level_reached'] });
});
afterAll(async () => {
  await env.close();
  await smtp.close();
  await receiver.close();
});

const jobs = (at: string) => runDueJobs(env.app, new Date(at));
const steps = async (invoice: string) => (await ok(env.mcp, 'list_invoice_dunning', { id: invoice })).data.map((s: any) => [s.level, s.appliedAt, s.newDueAt]);
const toDebtor = () => smtp.received.filter((m) => m.to.includes('ap@debtor.example')).map((m) => m.mail);
const reminders = () => toDebtor().filter((m) => !m.subject?.startsWith('Direct debit')).map((m) => m.subject);
const preNotifications = () => toDebtor().filter((m) => m.subject?.startsWith('Direct debit'));

it('invoice → overdue → two dunning levels by e-mail → a payment plan pauses dunning → SEPA collection → a return breaks the plan → dunning resumes', async () => {
  env.setNow('2027-02-01T09:00:00Z');
  await ok(env.mcp, 'update_sepa_creditor', { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Seller GmbH', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' });
  for (const [level, daysOverdue, amountInCents] of [
    [1, 3, 500],
    [2, 14, 1000],
    [3, 21, 1500],
  ]) {
    await ok(env.mcp, 'create_overdue_rule', { level, daysOverdue, dueInDays: 7, amountInCents });
  }
  const customer = await ok(env.mcp, 'create_customer', { companyName: 'Debtor GmbH' });
  await ok(env.mcp, 'create_customer_email_address', { id: customer.id, email: 'ap@debtor.example', isDunningEmail: true, isInvoiceEmail: false, default: true });
  const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: [{ description: 'Consulting', quantity: 1, unitAmount: 10_000, taxRate: 0 }] });
  // 14 days' terms: due 15 February, 10:00 in Berlin.
  expect(invoice.dueAt).toBe('2027-02-15T09:00:00.000Z');

  // Overdue: level 1 after 3 days, level 2 after 14, each with its reminder received by SMTP.
  await jobs('2027-02-18T09:00:00Z');
  await jobs('2027-03-01T09:00:00Z');
  expect(await steps(invoice.id)).toEqual([
    [1, '2027-02-18T09:00:00.000Z', '2027-02-25T09:00:00.000Z'],
    [2, '2027-03-01T09:00:00.000Z', '2027-03-08T09:00:00.000Z'],
  ]);
  expect(reminders()).toEqual([`Payment reminder 1: invoice ${invoice.number}`, `Payment reminder 2: invoice ${invoice.number}`]);

  // The customer agrees to pay by direct debit in installments: a payment plan pauses dunning, and
  // level 3 (21 days, 8 March) is not applied while it is active.
  env.setNow('2027-03-02T09:00:00Z');
  const method = await ok(env.mcp, 'create_payment_method', {
    id: customer.id,
    type: 'sepa_debit',
    sepaDebit: { iban: 'DE02120300000000202051', bic: 'BYLADEM1001', accountHolder: 'Debtor GmbH' },
  });
  await ok(env.mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: method.id, mandateReference: 'DEBTOR-1', signatureDate: '2027-03-02' });
  const plan = await ok(env.mcp, 'create_payment_plan', {
    invoice: invoice.id,
    paymentMethod: method.id,
    installments: [
      { dueAt: '2027-03-04', amount: 5_000 },
      { dueAt: '2027-04-04', amount: 5_000 },
    ],
  });
  expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).dunningPaused).toBe(true);

  // The jobs collect by direct debit once a day, D-1: on 2 March the first fee invoice (due since
  // 25 February) for the 3rd, on 3 March the first installment for the 4th; the file validates
  // against the XSD.
  expect((await jobs('2027-03-02T09:00:00Z')).jobs.sepaCollections).toEqual({ statements: 1, payments: 1 });
  expect((await jobs('2027-03-03T09:00:00Z')).jobs.sepaCollections).toEqual({ statements: 1, payments: 1 });
  expect((await jobs('2027-03-03T15:00:00Z')).jobs.sepaCollections).toEqual({ statements: 0, payments: 0 });
  const [payment] = (await ok(env.mcp, 'list_sepa_xml_payments', { invoice: invoice.id })).data;
  expect(payment).toMatchObject({ installment: plan.installments[0].id, amount: 5_000 });
  const statement = await ok(env.mcp, 'get_sepa_xml_payment', { id: payment.id });
  expect(statement.executionDate).toBe('2027-03-04');
  const file = await env.http('GET', `/sepa-xml-statements/${statement.sepaXmlStatement}`);
  expect(file.status).toBe(200);
  const validation = await validateXML({ xml: [{ fileName: 'statement.xml', contents: file.body }], schema: [{ fileName: 'pain.008.001.02.xsd', contents: XSD }] });
  expect(validation.errors.map((e) => e.message)).toEqual([]);
  expect(file.body).toContain('<MndtId>DEBTOR-1</MndtId>');
  // Each debit was announced to the debtor with its amount, date, mandate and creditor; the
  // collection names that e-mail as its notification and is captured on its execution date.
  expect(statement).toMatchObject({ autoCaptureAt: '2027-03-03T23:00:00.000Z', notifications: [expect.any(String)] });
  const notice = await ok(env.mcp, 'get_email', { id: statement.notifications[0] });
  expect(notice).toMatchObject({ kind: 'sepa_pre_notification', invoice: invoice.id, to: ['ap@debtor.example'] });
  expect(notice.subject).toBe(`Direct debit of €50.00 on 2027-03-04 for installment 1 of 2 of invoice ${invoice.number}`);
  expect(notice.body).toContain('Mandate reference: DEBTOR-1');
  expect(notice.body).toContain('Creditor identifier: DE98ZZZ09999999999 (Seller GmbH)');
  expect(notice.body).toMatch(/from your account DE02\*{14}2051 \(Debtor GmbH\) on 2027-03-04\./);
  expect(preNotifications()).toHaveLength(2);
  await jobs('2027-03-09T09:00:00Z');
  expect(await steps(invoice.id)).toHaveLength(2);

  // The bank returns the debit: the plan breaks naming the reason, the invoice owes it again.
  env.setNow('2027-03-10T09:00:00Z');
  await ok(env.mcp, 'record_sepa_return', { endToEndId: payment.endToEndId, reasonCode: 'AM04' });
  const broken = await ok(env.mcp, 'get_payment_plan', { id: plan.id });
  expect(broken.status).toBe('broken');
  expect(broken.brokenReason).toContain('AM04');
  expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ status: 'open', amountDue: 10_000, dunningPaused: false });

  // Dunning resumes: level 3, whose day passed during the plan, is applied at the next run.
  await jobs('2027-03-10T09:00:01Z');
  expect((await steps(invoice.id)).map(([level]: any) => level)).toEqual([1, 2, 3]);
  expect(reminders()).toHaveLength(3);
  await env.app.deliveries.runDue(new Date('2027-12-31T00:00:00Z'));
  const types = receiver.received.map((r) => r.json.event.type);
  expect(types.filter((t) => t === 'invoice.dunning_level_reached')).toHaveLength(3);
  expect(types).toContain('payment_plan.broken');
});
