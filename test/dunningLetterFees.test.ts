/**
 * A dunning letter names the fee invoices of earlier levels that are still open, as the reminder
 * e-mail of its level does: fee invoices are never dunned themselves, so the letter that goes by post
 * is where the customer learns of them.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
});
afterAll(async () => {
  await env.close();
});

/** The text of the letter of an invoice's dunning level, fetched as the link of get_dunning_letter says. */
async function letterText(mcp: Client, token: string, invoice: string, level: number): Promise<string> {
  const { url } = await ok(mcp, 'get_dunning_letter', { id: invoice, level });
  const letter = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect([letter.status, letter.headers.get('content-type')]).toEqual([200, 'application/pdf']);
  return (await pdfText(new Uint8Array(await letter.arrayBuffer()))).replace(/\s+/g, ' ');
}

describe('the letter of a higher level', () => {
  it('lists the fee invoices of earlier levels still open, as the e-mail of its level names them', async () => {
    const org = await env.newOrg('Letter Fees GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    await ok(mcp, 'create_overdue_rule', { level: 1, daysOverdue: 3, dueInDays: 7, amountInCents: 500, sendLetter: true });
    await ok(mcp, 'create_overdue_rule', { level: 2, daysOverdue: 15, dueInDays: 7, amountInCents: 1500, sendLetter: true });
    await ok(mcp, 'create_overdue_rule', { level: 3, daysOverdue: 30, dueInDays: 7, sendLetter: true });
    const customer = await ok(mcp, 'create_customer', { companyName: 'Slow Letters GmbH' });
    env.setNow('2026-06-01T12:00:00Z');
    const invoice = await ok(mcp, 'create_invoice', { customer: customer.id, lines: [{ description: 'Consulting', quantity: 1, unitAmount: 10_000, taxRate: 0 }] });
    const jobs = (at: string) => runDueJobs(env.app, new Date(at));
    await jobs('2026-06-20T12:00:00Z');
    await jobs('2026-07-01T12:00:00Z');
    const [step1, step2] = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data;
    const fee1 = await ok(mcp, 'get_invoice', { id: step1.feeInvoice });
    const fee2 = await ok(mcp, 'get_invoice', { id: step2.feeInvoice });

    // Level 1 has no earlier level; its own fee is the fee row, not an earlier one.
    const first = await letterText(mcp, org.apiKey, invoice.id, 1);
    expect(first).toContain('Dunning fee (separate invoice) €5.00');
    expect(first).not.toContain('Earlier dunning fee');

    // Level 2: the fee of level 1, as its e-mail names it.
    expect((await ok(mcp, 'get_email', { id: step2.emailId })).body).toContain(`still open: invoice ${fee1.number} (€5.00)`);
    const second = await letterText(mcp, org.apiKey, invoice.id, 2);
    expect(second).toContain('Dunning fee (separate invoice) €15.00');
    expect(second).toContain(`Earlier dunning fee, invoice ${fee1.number} €5.00`);
    expect(second).not.toContain(`invoice ${fee2.number}`);

    // Level 1's fee paid before level 3: its letter, like its e-mail, names only the fee of level 2.
    env.setNow('2026-07-02T12:00:00Z');
    await ok(mcp, 'record_invoice_payment', { id: fee1.id, amount: 500 });
    await jobs('2026-07-20T12:00:00Z');
    const step3 = (await ok(mcp, 'list_invoice_dunning', { id: invoice.id })).data[2];
    expect((await ok(mcp, 'get_email', { id: step3.emailId })).body).toContain(`still open: invoice ${fee2.number} (€15.00)`);
    const third = await letterText(mcp, org.apiKey, invoice.id, 3);
    expect(third).toContain(`Earlier dunning fee, invoice ${fee2.number} €15.00`);
    expect(third).not.toContain(fee1.number);
    expect(third).not.toContain('Dunning fee (separate invoice)');
  });
});
