/**
 * Overdue rules as a ladder: a higher level is reached later, so the run (which applies the highest
 * level reached) never passes over a lower level's fee and letter; template texts that would be sent
 * literally or never used are refused; a reminder names the earlier fee invoices still open, in its
 * e-mail and in its letter.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
});
afterAll(async () => {
  await env.close();
});

/** An organisation of its own: its API key and MCP client. */
async function ownOrg(name: string): Promise<{ token: string; mcp: Client }> {
  const org = await env.newOrg(name);
  return { token: org.apiKey, mcp: await env.mcpFor(org.apiKey) };
}

describe('levels are reached in their order', () => {
  it('refuses a level whose daysOverdue lies before a lower level or after a higher one, on create and update, naming the neighbours', async () => {
    const { token, mcp } = await ownOrg('Ladder GmbH');
    const post = (body: Record<string, unknown>) => env.http('POST', '/dunning/overdue-rules', { token, body });
    await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 3, dueInDays: 7 });
    const second = await ok(mcp, 'create_overdue_rule', { level: 2, daysOverdue: 15, dueInDays: 7, amountInCents: 500 });
    await ok(mcp, 'create_overdue_rule', { level: 3, daysOverdue: 30, dueInDays: 7, amountInCents: 1500, sendLetter: true });

    // The audit's case: level 4 on day 2 would take fresh invoices straight to level 4, past level 3's fee and letter.
    const early = await post({ level: 4, daysOverdue: 2, dueInDays: 1 });
    expect(early.status).toBe(422);
    expect(early.body.violations).toEqual([
      { propertyPath: 'daysOverdue', code: 'out_of_order', message: expect.stringContaining('must be greater than 30 (level 3)') },
    ]);
    expect((await ok(mcp, 'list_overdue_rules', {})).data.map((r: any) => r.level)).toEqual([1, 2, 3]);

    // Between two levels: both neighbours are named.
    const between = await fails(mcp, 'update_overdue_rule', { id: second.id, daysOverdue: 31 }, 422);
    expect(between.violations).toEqual([
      { propertyPath: 'daysOverdue', code: 'out_of_order', message: expect.stringContaining('must be greater than 3 (level 1) and less than 30 (level 3)') },
    ]);
    expect(paths(await fails(mcp, 'update_overdue_rule', { id: second.id, daysOverdue: 3 }, 422))).toEqual(['daysOverdue']);
    // Moving a level moves it among the others.
    expect(paths(await fails(mcp, 'update_overdue_rule', { id: second.id, level: 9 }, 422))).toEqual(['daysOverdue']);
    expect((await ok(mcp, 'update_overdue_rule', { id: second.id, daysOverdue: 29 })).daysOverdue).toBe(29);
    expect((await post({ level: 4, daysOverdue: 45, dueInDays: 1 })).status).toBe(201);

    // A gap a delete leaves keeps the order: the levels around it still rise.
    expect((await env.http('DELETE', `/dunning/overdue-rules/${second.id}`, { token })).status).toBe(204);
    expect((await post({ level: 2, daysOverdue: 10, dueInDays: 7 })).status).toBe(201);
  });
});

describe('template texts', () => {
  it('refuses a documentTemplate that no letter would use, and empty letter parts', async () => {
    const { mcp } = await ownOrg('Letters GmbH');
    const unused = await fails(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7, documentTemplate: { title: 'First reminder' } }, 422);
    expect(unused.violations).toEqual([{ propertyPath: 'documentTemplate', code: 'unused', message: expect.stringContaining('sendLetter is false') }]);
    const empty = await fails(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7, sendLetter: true, documentTemplate: { title: '', closing: ' ' } }, 422);
    expect(paths(empty)).toEqual(['documentTemplate.title', 'documentTemplate.closing']);

    const rule = await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7 });
    expect(paths(await fails(mcp, 'update_overdue_rule', { id: rule.id, documentTemplate: { title: 'First reminder' } }, 422))).toEqual(['documentTemplate']);
    const lettered = await ok(mcp, 'update_overdue_rule', { id: rule.id, sendLetter: true, documentTemplate: { title: 'First reminder' } });
    expect(lettered).toMatchObject({ sendLetter: true, documentTemplate: { title: 'First reminder' } });
    // Letters switched off for a while: the template stays for when they are switched on again.
    expect(await ok(mcp, 'update_overdue_rule', { id: rule.id, sendLetter: false })).toMatchObject({ sendLetter: false, documentTemplate: { title: 'First reminder' } });
  });

  it('refuses stray braces that would be sent literally, naming the field and the placeholders', async () => {
    const { mcp } = await ownOrg('Braces GmbH');
    const stray = await fails(
      mcp,
      'create_overdue_rule',
      {
        level: 1,
        daysOverdue: 7,
        dueInDays: 7,
        sendLetter: true,
        documentTemplate: { introduction: 'Hi {{customer.name}', closing: 'Still open: {invoice.amountDue}}' },
        emailTemplate: { subject: 'Reminder {{dunning.level}}', contentPlain: 'Pay {{ invoice.amountDue }} by {{invoice.dueAt', contentHtml: '<p>{invoice.number}}</p>' },
      },
      422,
    );
    expect(paths(stray)).toEqual(['emailTemplate.contentPlain', 'emailTemplate.contentHtml', 'documentTemplate.introduction', 'documentTemplate.closing']);
    expect(stray.violations[2]).toEqual({
      propertyPath: 'documentTemplate.introduction',
      code: 'stray_braces',
      message: expect.stringMatching(/^documentTemplate\.introduction has \{\{ or \}\} outside a placeholder.*\{\{customer\.name\}\}, \{\{invoice\.number\}\}/),
    });
    // Style sheets close nested blocks with }}: HTML keeps them.
    const css = '<style>@media (max-width:600px){p{font-size:12px}}</style><p>Dear {{customer.name}}</p>';
    const rule = await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 7, dueInDays: 7, emailTemplate: { subject: 'Reminder', contentPlain: 'Pay', contentHtml: css } });
    expect(rule.emailTemplate.contentHtml).toBe(css);
  });
});

/** The text of the letter of an invoice's dunning level, fetched as the link of get_dunning_letter says. */
async function letterText(mcp: Client, token: string, invoice: string, level: number): Promise<string> {
  const { url } = await ok(mcp, 'get_dunning_letter', { id: invoice, level });
  const letter = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect([letter.status, letter.headers.get('content-type')]).toEqual([200, 'application/pdf']);
  return (await pdfText(new Uint8Array(await letter.arrayBuffer()))).replace(/\s+/g, ' ');
}

describe('the reminder of a higher level', () => {
  it('names the fee invoices of earlier levels that are still open, in its e-mail and in its letter', async () => {
    const { token, mcp } = await ownOrg('Fees GmbH');
    await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 3, dueInDays: 7, amountInCents: 500, sendLetter: true });
    await ok(mcp, 'create_overdue_rule', { level: 2, daysOverdue: 15, dueInDays: 7, amountInCents: 1500, sendLetter: true });
    await ok(mcp, 'create_overdue_rule', { level: 3, daysOverdue: 30, dueInDays: 7, sendLetter: true });
    const customer = await ok(mcp, 'create_customer', { companyName: 'Slow Payer GmbH' });
    env.setNow('2026-06-01T12:00:00Z');
    const invoice = await ok(mcp, 'create_invoice', { customer: customer.id, lines: [{ description: 'Consulting', quantity: 1, unitAmount: 10_000, taxRate: 0 }] });
    const jobs = (at: string) => runDueJobs(env.app, new Date(at));
    await jobs('2026-06-20T12:00:00Z');
    await jobs('2026-07-01T12:00:00Z');
    const [step1, step2] = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data;
    const fee1 = await ok(mcp, 'get_invoice', { id: step1.feeInvoice });
    const fee2 = await ok(mcp, 'get_invoice', { id: step2.feeInvoice });
    expect((await ok(mcp, 'get_email', { id: step2.emailId })).body).toContain(
      `Dunning fees of earlier reminders are still open: invoice ${fee1.number} (€5.00). Please pay them as well.`,
    );
    // The letter goes by post: fee invoices are never dunned themselves, so it names them too.
    const second = await letterText(mcp, token, invoice.id, 2);
    expect(second).toContain('Dunning fee (separate invoice) €15.00');
    expect(second).toContain(`Earlier dunning fee, invoice ${fee1.number} €5.00`);
    expect(second).not.toContain(`invoice ${fee2.number}`);
    // Level 1 has no earlier level; its own fee is the fee row, not an earlier one.
    const first = await letterText(mcp, token, invoice.id, 1);
    expect(first).toContain('Dunning fee (separate invoice) €5.00');
    expect(first).not.toContain('Earlier dunning fee');
    // Paid before level 3: no longer named.
    env.setNow('2026-07-02T12:00:00Z');
    await ok(mcp, 'record_invoice_payment', { id: fee1.id, amount: 500 });
    await jobs('2026-07-20T12:00:00Z');
    const steps = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data;
    expect(steps.map((s: any) => s.level)).toEqual([1, 2, 3]);
    const third = (await ok(mcp, 'get_email', { id: steps[2].emailId })).body;
    expect(third).toContain(`Dunning fees of earlier reminders are still open: invoice ${fee2.number} (€15.00). Please pay them as well.`);
    expect(third).not.toContain(fee1.number);
    const thirdLetter = await letterText(mcp, token, invoice.id, 3);
    expect(thirdLetter).toContain(`Earlier dunning fee, invoice ${fee2.number} €15.00`);
    expect(thirdLetter).not.toContain(fee1.number);
    expect(thirdLetter).not.toContain('Dunning fee (separate invoice)');
    expect((await ok(mcp, 'get_email', { id: steps[0].emailId })).body).not.toContain('earlier reminders');
  });
});
