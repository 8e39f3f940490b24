import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fails, ok, setup, type TestEnv } from './helpers.js';
import { expectSigned, Receiver, type Received } from './webhookReceiver.js';

/**
 * A broken payment plan whose invoice is settled outside it (a direct payment, a credit note,
 * void_invoice) ends: it becomes canceled (canceledAt, payment_plan.canceled) instead of staying
 * broken for good, which nothing could end (extend needs an open invoice, cancel an active plan).
 * Through the REST facade over real HTTP and the MCP client, with a real webhook receiver.
 */

let env: TestEnv;
let receiver: Receiver;
let secret: string;

const T0 = '2026-12-01T09:00:00.000Z';
const LATER = '2026-12-20T10:00:00.000Z';

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000 });
  receiver = await Receiver.start();
  secret = (await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['payment_plan.broken', 'payment_plan.canceled', 'invoice.paid', 'invoice.voided'] })).secret;
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});
beforeEach(() => env.setNow(T0));

/** A ¥9,000 invoice under a plan of three installments, broken by the failed first one; the clock then at LATER. */
async function brokenPlan(): Promise<{ invoice: any; plan: any }> {
  const customer = (await ok(env.mcp, 'create_customer', { companyName: 'Yamada KK', currencyCode: 'JPY', timeZone: 'Asia/Tokyo' })).id;
  const invoice = await ok(env.mcp, 'create_invoice', { customer, lines: [{ description: 'Licence', quantity: 1, unitAmount: 9_000 }] });
  const created = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2026-12-10', interval: '1M' });
  const failed = await env.http('POST', `/payment-plans/${created.id}/installments/${created.installments[0].id}/fail`, { body: { reason: 'Card declined' } });
  expect(failed.body).toMatchObject({ status: 'broken', brokenReason: 'Card declined' });
  env.setNow(LATER);
  return { invoice, plan: failed.body };
}

/** The events about one plan of one type, once `count` of them have arrived, checked and unwrapped. */
async function planEvents(planId: string, type: string, count = 1): Promise<any[]> {
  const mine = () => receiver.of(type).filter((r: Received) => r.json.data.paymentPlan.id === planId);
  const deadline = Date.now() + 5000;
  while (mine().length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} ${type} for plan ${planId}, got ${mine().length}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return mine().map((r) => {
    expectSigned(r, secret, env.org.organisationId, { recent: false });
    return r.json.data;
  });
}

/** What a plan ended by its settled invoice shows: canceled now, no longer broken, installments as they were. */
function ended(plan: any): any {
  return { ...plan, status: 'canceled', canceledAt: LATER, brokenAt: null, brokenReason: null, updatedAt: LATER };
}

/** The plan is over: listed as canceled, no longer as broken, and neither cancel nor extend applies. */
async function expectOver(invoice: any, plan: any): Promise<void> {
  const listed = await env.http('GET', `/payment-plans?invoice=${invoice.id}`);
  expect(listed.body.data.map((p: any) => p.status)).toEqual(['canceled']);
  expect((await env.http('GET', `/payment-plans?invoice=${invoice.id}&status=broken`)).body.data).toEqual([]);
  expect((await fails(env.mcp, 'cancel_payment_plan', { id: plan.id }, 409)).detail).toContain('is canceled');
  const schedule = { installments: [{ dueAt: '2027-01-31', amount: 1 }] };
  expect((await fails(env.mcp, 'extend_payment_plan', { id: plan.id, ...schedule }, 409)).detail).toContain('is canceled');
  const [event] = await planEvents(plan.id, 'payment_plan.canceled');
  expect(event).toEqual({ paymentPlan: await ok(env.mcp, 'get_payment_plan', { id: plan.id }) });
}

describe('a broken plan whose invoice is settled outside it', () => {
  it('is canceled when a direct payment pays the invoice', async () => {
    const { invoice, plan } = await brokenPlan();
    const paid = await env.http('POST', `/invoices/${invoice.id}/payments`, { body: { amount: 9_000 } });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', amountDue: 0, paidAt: LATER });
    const after = (await env.http('GET', `/payment-plans/${plan.id}`)).body;
    expect(after).toEqual(ended(plan));
    expect(after.installments.map((i: any) => i.status)).toEqual(['failed', 'open', 'open']);
    await expectOver(invoice, plan);
    expect(await planEvents(plan.id, 'payment_plan.broken')).toHaveLength(1);
  });

  it('stays broken while the invoice is only partly paid, and can still be extended', async () => {
    const { invoice, plan } = await brokenPlan();
    await ok(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 4_000 });
    expect((await ok(env.mcp, 'get_payment_plan', { id: plan.id })).status).toBe('broken');
    const extended = await ok(env.mcp, 'extend_payment_plan', { id: plan.id, installments: [{ dueAt: '2027-01-31', amount: 5_000 }] });
    expect(extended).toMatchObject({ status: 'active', totalAmount: 5_000 });
  });

  it('is canceled when a credit note voids the invoice', async () => {
    const { invoice, plan } = await brokenPlan();
    await ok(env.mcp, 'create_credit_note', { id: invoice.id, reason: 'Licence withdrawn' });
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).status).toBe('void');
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(ended(plan));
    await expectOver(invoice, plan);
  });

  it('is canceled when a credit note settles the rest of a partly paid invoice', async () => {
    const { invoice, plan } = await brokenPlan();
    await ok(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 6_000 });
    await ok(env.mcp, 'create_credit_note', { id: invoice.id, amount: 3_000, reason: 'Goodwill' });
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).status).toBe('paid');
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(ended(plan));
    await expectOver(invoice, plan);
  });

  it('is canceled when the invoice is voided', async () => {
    const { invoice, plan } = await brokenPlan();
    const voided = await env.http('POST', `/invoices/${invoice.id}/void`);
    expect(voided.body.status).toBe('void');
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(ended(plan));
    await expectOver(invoice, plan);
  });
});

describe('a broken plan left on a settled invoice by earlier versions', () => {
  it('can be canceled; extend points there', async () => {
    const { invoice, plan } = await brokenPlan();
    // As before plans ended with their invoice: paid directly, the plan left broken.
    await env.sql.run("UPDATE invoices SET status = 'paid', amount_settled = gross_amount, paid_at = ? WHERE id = ?", LATER, invoice.id);
    const extend = await fails(env.mcp, 'extend_payment_plan', { id: plan.id, installments: [{ dueAt: '2027-01-31', amount: 1 }] }, 409);
    expect(extend.detail).toContain('is paid; only a plan on an open invoice can be extended');
    expect(extend.detail).toContain('cancel_payment_plan');
    const canceled = await env.http('POST', `/payment-plans/${plan.id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toEqual(ended(plan));
    await expectOver(invoice, plan);
  });

  it('on an open invoice is still only extended, not canceled', async () => {
    const { plan } = await brokenPlan();
    expect((await fails(env.mcp, 'cancel_payment_plan', { id: plan.id }, 409)).detail).toContain('extend_payment_plan');
    expect((await ok(env.mcp, 'get_payment_plan', { id: plan.id })).status).toBe('broken');
  });
});
