import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

/**
 * The dates of payments and due dates against the invoice's issue date, the day it shows in the
 * customer's time zone: money does not arrive, and nothing falls due, before the invoice exists.
 * Through the REST facade over real HTTP and the MCP client.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

/** 2026-11-25 19:00 in Tokyo. */
const ISSUED = '2026-11-25T10:00:00.000Z';
beforeEach(() => env.setNow(ISSUED));

async function customer(timeZone: string): Promise<string> {
  return (await ok(env.mcp, 'create_customer', { companyName: 'Dates KK', currencyCode: 'JPY', timeZone })).id;
}

async function invoiceOf(customerId: string, amount: number, extra: Record<string, unknown> = {}): Promise<any> {
  return ok(env.mcp, 'create_invoice', { customer: customerId, lines: [{ description: 'Licence', quantity: 1, unitAmount: amount }], ...extra });
}

describe('paidAt', () => {
  it('is refused before the issue date (422 at paidAt naming it), in the customer time zone; the invoice is left as it was', async () => {
    const invoice = await invoiceOf(await customer('Asia/Tokyo'), 2_316);
    env.setNow('2026-12-01T00:00:00Z');
    for (const paidAt of ['1970-01-01T00:00:00Z', '2026-11-20T00:00:00Z', '2026-11-24T14:59:59Z']) {
      const refused = await env.http('POST', `/invoices/${invoice.id}/payments`, { body: { amount: 1_000, paidAt } });
      expect(refused.status).toBe(422);
      expect(refused.body.violations).toEqual([
        {
          propertyPath: 'paidAt',
          message: `paidAt ${paidAt} lies before the issue date of invoice ${invoice.number} (2026-11-25); money for it arrives on that day or later (omit paidAt for now)`,
          code: 'before_issue',
        },
      ]);
    }
    expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ status: 'open', amountPaid: 0, payments: [] });
    // 2026-11-25 00:00 in Tokyo, still 2026-11-24 in UTC: on the issue date the invoice shows.
    const first = await ok(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 1_000, paidAt: '2026-11-24T15:00:00Z' });
    expect(first.payments.map((p: any) => p.paidAt)).toEqual(['2026-11-24T15:00:00.000Z']);
  });

  it('is refused before the issue date on a payment plan too', async () => {
    const invoice = await invoiceOf(await customer('Europe/Berlin'), 9_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2026-12-01', interval: '1M' });
    const refused = await fails(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 1, paidAt: '2001-01-01T00:00:00Z' }, 422);
    expect(paths(refused)).toEqual(['paidAt']);
    expect(refused.detail).toContain(`lies before the issue date of invoice ${invoice.number} (2026-11-25)`);
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(plan);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).payments).toEqual([]);
    const paid = await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 3_000, paidAt: '2026-11-25T08:00:00Z' });
    expect(paid.installments[0]).toMatchObject({ status: 'paid', paidAt: '2026-11-25T08:00:00.000Z' });
  });
});

describe("the invoice's paidAt", () => {
  it('is when the latest payment arrived, whichever payment settles it', async () => {
    const invoice = await invoiceOf(await customer('Europe/Berlin'), 2_316);
    const inOrder = await invoiceOf(await customer('Europe/Berlin'), 2_316);
    env.setNow('2026-12-01T09:00:00Z');
    await ok(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 1_000, paidAt: '2026-11-28T12:00:00Z' });
    const paid = await env.http('POST', `/invoices/${invoice.id}/payments`, { body: { amount: 1_316, paidAt: '2026-11-26T12:00:00Z' } });
    expect(paid.body).toMatchObject({ status: 'paid', amountDue: 0, paidAt: '2026-11-28T12:00:00.000Z' });
    await ok(env.mcp, 'record_invoice_payment', { id: inOrder.id, amount: 1_000, paidAt: '2026-11-26T12:00:00Z' });
    expect(await ok(env.mcp, 'record_invoice_payment', { id: inOrder.id, amount: 1_316 })).toMatchObject({ status: 'paid', paidAt: '2026-12-01T09:00:00.000Z' });
  });
});

describe('dueAt', () => {
  it('is refused before the issue date on create_invoice (422 at dueAt), for an open invoice and a draft', async () => {
    const c = await customer('Europe/Berlin');
    for (const status of ['open', 'draft']) {
      const refused = await env.http('POST', '/invoices', { body: { customer: c, status, dueAt: '2020-01-01T00:00:00Z', lines: [{ description: 'x', quantity: 1, unitAmount: 100 }] } });
      expect(refused.status).toBe(422);
      expect(refused.body.violations).toEqual([
        {
          propertyPath: 'dueAt',
          message: `dueAt 2020-01-01T00:00:00Z lies before the issue date 2026-11-25${status === 'draft' ? ' (a draft is issued today at the earliest)' : ''}; give a later dueAt, or omit it for the payment terms`,
          code: 'before_issue',
        },
      ]);
    }
    expect((await ok(env.mcp, 'list_invoices', { customer: c })).data).toEqual([]);
    // Due on the issue date (midnight in Berlin included): due at once, as with 0 days of payment terms.
    expect((await invoiceOf(c, 100, { dueAt: '2026-11-24T23:00:00Z' })).dueAt).toBe('2026-11-24T23:00:00.000Z');
  });

  it('of a draft that has passed by the time it is finalized: 409, the draft is left as it was', async () => {
    const c = await customer('Europe/Berlin');
    const draft = await invoiceOf(c, 100, { status: 'draft', dueAt: '2026-11-30T12:00:00Z' });
    env.setNow('2026-12-01T08:00:00Z');
    const refused = await fails(env.mcp, 'finalize_invoice', { id: draft.id }, 409);
    expect(refused.detail).toContain(`Draft invoice ${draft.id} is due 2026-11-30T12:00:00.000Z, before today's issue date 2026-12-01`);
    expect(refused.detail).toContain('void it (void_invoice) and create it again (create_invoice)');
    expect(await ok(env.mcp, 'get_invoice', { id: draft.id })).toEqual(draft);
    env.setNow('2026-11-30T20:00:00Z');
    expect(await ok(env.mcp, 'finalize_invoice', { id: draft.id })).toMatchObject({ status: 'open', dueAt: '2026-11-30T12:00:00.000Z' });
  });
});
