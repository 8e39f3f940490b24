/**
 * Whom e-mails greet: the dunning reminder's system text and the SEPA pre-notification greet their
 * recipients by their receiverName, as the invoice e-mail does; a rule's own template keeps
 * `{{customer.name}}` the customer's name, and a dunning letter, sent to the invoice address, greets
 * the customer.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';
import { TestSmtp } from './smtpServer.js';

let env: TestEnv;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  env = await setup({ smtpUrl: smtp.url, emailFrom: 'billing@seller.example' });
});
afterAll(async () => {
  await env.close();
  await smtp.close();
});

type Address = { email: string; receiverName?: string; isDunningEmail?: boolean; isInvoiceEmail?: boolean; default?: boolean };

async function customerWith(mcp: Client, name: string, addresses: Address[]) {
  const customer = await ok(mcp, 'create_customer', { companyName: name });
  for (const a of addresses) await ok(mcp, 'create_customer_email_address', { id: customer.id, isDunningEmail: false, isInvoiceEmail: false, default: false, ...a });
  return customer;
}

/** An organisation of its own (its overdue rules and SEPA creditor apply to it alone) and its MCP client. */
async function orgClient(name: string) {
  const org = await env.newOrg(name);
  return { org, mcp: await env.mcpFor(org.apiKey) };
}

/** The dunning e-mail of the invoice's only level, as stored and as the SMTP server received it. */
async function reminderOf(mcp: Client, invoice: string) {
  const [step] = (await ok(mcp, 'list_invoice_dunning', { id: invoice })).data;
  const email = await ok(mcp, 'get_email', { id: step.emailId });
  const received = smtp.received.find((m) => m.mail.subject === email.subject && m.to.includes(email.to[0]));
  return { email, received };
}

describe('dunning greetings', () => {
  it('the system reminder greets the dunning recipients by name; letters and a rule template keep the customer', async () => {
    const system = await orgClient('Greeting Seller GmbH');
    await ok(system.mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7, sendLetter: true });
    const templated = await orgClient('Template Seller GmbH');
    await ok(templated.mcp, 'create_overdue_rule', {
      level: 1,
      daysOverdue: 7,
      dueInDays: 7,
      emailTemplate: { subject: 'Reminder {{invoice.number}}', contentPlain: 'Hello {{customer.name}}, pay {{invoice.amountDue}}.' },
    });

    env.setNow('2026-03-02T09:00:00Z');
    const named = await customerWith(system.mcp, 'Named Dunning AG', [
      { email: 'office@named.example', receiverName: 'Front Desk', default: true },
      { email: 'grace@named.example', receiverName: 'Grace Hopper', isDunningEmail: true },
      { email: 'alan@named.example', receiverName: 'Alan Turing', isDunningEmail: true },
    ]);
    const unnamed = await customerWith(system.mcp, 'Half Named AG', [
      { email: 'grace@half.example', receiverName: 'Grace Hopper', isDunningEmail: true },
      { email: 'ap@half.example', isDunningEmail: true },
    ]);
    const other = await customerWith(templated.mcp, 'Template Customer AG', [{ email: 'grace@template.example', receiverName: 'Grace Hopper', isDunningEmail: true }]);
    const line = { description: 'Consulting', quantity: 1, unitAmount: 10_000, taxRate: 0 };
    const invoices = await Promise.all([
      ok(system.mcp, 'create_invoice', { customer: named.id, lines: [line] }),
      ok(system.mcp, 'create_invoice', { customer: unnamed.id, lines: [line] }),
      ok(templated.mcp, 'create_invoice', { customer: other.id, lines: [line] }),
    ]);
    await runDueJobs(env.app, new Date('2026-03-24T12:00:00Z'));

    const first = await reminderOf(system.mcp, invoices[0].id);
    expect(first.email.to).toEqual(['grace@named.example', 'alan@named.example']);
    expect(first.email.body).toMatch(/^Dear Grace Hopper and Alan Turing,\n/);
    expect(first.received!.mail.text).toMatch(/^Dear Grace Hopper and Alan Turing,\n/);
    // Not every recipient has a name: the customer, as the invoice e-mail does.
    expect((await reminderOf(system.mcp, invoices[1].id)).email.body).toMatch(/^Dear Half Named AG,\n/);
    // The letter goes to the invoice address by post, not to the e-mail recipients.
    const link = await ok(system.mcp, 'get_dunning_letter', { id: invoices[0].id, level: 1 });
    const letter = await fetch(link.url, { headers: { authorization: `Bearer ${system.org.apiKey}` } });
    expect(letter.status).toBe(200);
    const text = (await pdfText(new Uint8Array(await letter.arrayBuffer()))).replace(/\s+/g, ' ');
    expect(text).toContain('Dear Named Dunning AG,');
    expect(text).not.toContain('Grace Hopper');
    // A rule's own template: {{customer.name}} is the customer's name, whoever the e-mail goes to.
    expect((await reminderOf(templated.mcp, invoices[2].id)).email.body).toBe('Hello Template Customer AG, pay €100.00.');
  });
});

describe('SEPA pre-notification greetings', () => {
  it('greets the invoice recipients by name, else the customer', async () => {
    const { mcp } = await orgClient('Debit Seller GmbH');
    env.setNow('2027-03-01T09:00:00Z');
    await ok(mcp, 'update_sepa_creditor', { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Debit Seller GmbH', iban: 'DE89 3704 0044 0532 0130 00' });
    const debtor = async (name: string, addresses: Address[], reference: string) => {
      const customer = await customerWith(mcp, name, addresses);
      const method = await ok(mcp, 'create_payment_method', {
        id: customer.id,
        type: 'sepa_debit',
        default: true,
        sepaDebit: { iban: 'DE02120300000000202051', accountHolder: `${name} Account` },
      });
      await ok(mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: method.id, mandateReference: reference, signatureDate: '2027-02-01' });
      const invoice = await ok(mcp, 'create_invoice', { customer: customer.id, dueAt: '2027-03-02T00:00:00Z', lines: [{ description: 'Licence', quantity: 1, unitAmount: 5_000 }] });
      return invoice.id as string;
    };
    const named = await debtor('Named Debit AG', [
      { email: 'ada@debit.example', receiverName: 'Ada Lovelace', isInvoiceEmail: true },
      { email: 'dunning@debit.example', receiverName: 'Collections', isDunningEmail: true, default: true },
    ], 'MND-GREET-1');
    const unnamed = await debtor('Plain Debit AG', [{ email: 'hello@plain-debit.example', default: true }], 'MND-GREET-2');

    const statement = await ok(mcp, 'run_sepa_collection', {});
    const notification = async (invoice: string) => {
      const { id } = statement.payments.find((p: any) => p.invoice === invoice);
      const payment = await ok(mcp, 'get_sepa_xml_payment', { id });
      return ok(mcp, 'get_email', { id: payment.notifications[0] });
    };
    const toNamed = await notification(named);
    expect(toNamed).toMatchObject({ kind: 'sepa_pre_notification', to: ['ada@debit.example'] });
    expect(toNamed.body).toMatch(/^Dear Ada Lovelace,\n\nwe will collect €50.00 for invoice /);
    expect((await notification(unnamed)).body).toMatch(/^Dear Plain Debit AG,\n/);
  });
});
