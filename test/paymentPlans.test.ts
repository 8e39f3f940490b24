import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { EVENT_TYPES } from '../src/schemas/webhooks.js';
import { call, fails, ok, paths, setup, storedInvoice, type TestEnv } from './helpers.js';
import { expectSigned, Receiver, type Received } from './webhookReceiver.js';

let env: TestEnv;
let receiver: Receiver;
let secret: string;

const T0 = '2026-12-01T09:00:00.000Z';

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000, paymentPlanGraceDays: 7 });
  receiver = await Receiver.start();
  secret = (await ok(env.mcp, 'create_webhook', { url: receiver.url, events: [...EVENT_TYPES] })).secret;
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});
beforeEach(() => env.setNow(T0));

async function openInvoice(amount: number, mcp: Client = env.mcp): Promise<any> {
  const customer = (await ok(mcp, 'create_customer', { companyName: 'Acme' })).id;
  return ok(mcp, 'create_invoice', { customer, lines: [{ description: 'Annual licence', quantity: 1, unitAmount: amount }] });
}

/** The requests about one plan, of one type, once `count` of them have arrived. */
async function eventsOf(planId: string, type: string, count = 1): Promise<Received[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const got = receiver.of(type).filter((r) => r.json.data.paymentPlan.id === planId);
    if (got.length >= count) return got;
    if (Date.now() > deadline) throw new Error(`expected ${count} ${type} event(s) for plan ${planId}, got ${got.length}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const forPlan = (planId: string) => receiver.received.filter((r) => r.json.data.paymentPlan?.id === planId);

/** Checks envelope, headers and both signatures; returns the data of the event. */
function checked(r: Received): any {
  expectSigned(r, secret, env.org.organisationId, { recent: false });
  return r.json.data;
}

describe('payment plan lifecycle, with the events a receiver gets', () => {
  it('created -> rate_paid -> completed; the invoice is settled and dunning resumes', async () => {
    const invoice = await openInvoice(10_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2026-12-15', interval: '1M' });
    expect(plan).toEqual({
      id: expect.any(String),
      invoiceId: invoice.id,
      status: 'active',
      totalAmount: 10_000,
      currencyCode: 'EUR',
      paymentMethodId: null,
      createdAt: T0,
      updatedAt: T0,
      completedAt: null,
      brokenAt: null,
      canceledAt: null,
      brokenReason: null,
      installments: [
        { id: expect.any(String), position: 1, dueAt: '2026-12-15', amount: 3333, amountPaid: 0, status: 'open', paidAt: null },
        { id: expect.any(String), position: 2, dueAt: '2027-01-15', amount: 3333, amountPaid: 0, status: 'open', paidAt: null },
        { id: expect.any(String), position: 3, dueAt: '2027-02-15', amount: 3334, amountPaid: 0, status: 'open', paidAt: null },
      ],
    });
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(plan);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).dunningPaused).toBe(true);

    const [created] = await eventsOf(plan.id, 'payment_plan.created');
    expect(created!.json.event).toMatchObject({ type: 'payment_plan.created', version: 'v1', createdAt: T0 });
    expect(checked(created!)).toEqual({ paymentPlan: plan });

    env.setNow('2026-12-14T08:00:00Z');
    const afterFirst = await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 3333, paidAt: '2026-12-13T16:30:00Z' });
    expect(afterFirst.status).toBe('active');
    expect(afterFirst.installments[0]).toMatchObject({ status: 'paid', amountPaid: 3333, paidAt: '2026-12-13T16:30:00.000Z' });
    const [ratePaid] = await eventsOf(plan.id, 'payment_plan.rate_paid');
    expect(checked(ratePaid!)).toEqual({ paymentPlan: afterFirst, installment: afterFirst.installments[0] });
    expect(ratePaid!.json.event.createdAt).toBe('2026-12-14T08:00:00.000Z');
    const midway = await ok(env.mcp, 'get_invoice', { id: invoice.id });
    expect(midway).toMatchObject({ status: 'open', amountPaid: 3333, amountDue: 6667, dunningPaused: true });
    expect(midway.payments[0]).toMatchObject({ amount: 3333, paymentPlanId: plan.id });

    env.setNow('2027-01-10T08:00:00Z');
    const partial = await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 1000 });
    expect(partial.installments[1]).toMatchObject({ status: 'open', amountPaid: 1000, paidAt: null });
    const done = await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 5667 });
    expect(done).toMatchObject({ status: 'completed', completedAt: '2027-01-10T08:00:00.000Z', totalAmount: 10_000 });
    expect(done.installments.map((i: { status: string }) => i.status)).toEqual(['paid', 'paid', 'paid']);
    const [completed] = await eventsOf(plan.id, 'payment_plan.completed');
    expect(checked(completed!)).toEqual({ paymentPlan: done });
    const ratesPaid = await eventsOf(plan.id, 'payment_plan.rate_paid', 2);
    const second = checked(ratesPaid[1]!);
    expect(second.installment).toMatchObject({ position: 2, status: 'paid', amountPaid: 3333 });
    expect(second.paymentPlan).toMatchObject({ status: 'active', completedAt: null });
    expect(second.paymentPlan.installments[2]).toMatchObject({ status: 'open', amountPaid: 0 });
    // The last installment completes the plan: payment_plan.completed, no rate_paid for it.
    expect(forPlan(plan.id).map((r) => r.json.event.type).sort()).toEqual([
      'payment_plan.completed',
      'payment_plan.created',
      'payment_plan.rate_paid',
      'payment_plan.rate_paid',
    ]);
    const ids = forPlan(plan.id).map((r) => r.json.event.id);
    expect(new Set(ids).size).toBe(ids.length);

    const settled = await ok(env.mcp, 'get_invoice', { id: invoice.id });
    expect(settled).toMatchObject({ status: 'paid', amountDue: 0, paidAt: '2027-01-10T08:00:00.000Z', dunningPaused: false });
    expect(settled.payments).toHaveLength(3);
    // The plan completing it pays the invoice: invoice.paid, with the invoice as it is once paid.
    await receiver.waitFor(1, 'invoice.paid');
    const paid = receiver.of('invoice.paid').filter((r) => r.json.data.invoice.id === invoice.id);
    expect(paid).toHaveLength(1);
    expect(checked(paid[0]!)).toEqual({ invoice: storedInvoice(settled) });
  });

  it('created -> broken by a failed collection -> extended -> completed', async () => {
    const invoice = await openInvoice(9_000);
    const method = await ok(env.mcp, 'create_payment_method', { id: invoice.customer, type: 'paypal', paypal: { email: 'payer@example.com' } });
    const plan = await ok(env.mcp, 'create_payment_plan', {
      invoice: invoice.id,
      paymentMethod: method.id,
      installments: [
        { dueAt: '2026-12-10', amount: 3000 },
        { dueAt: '2027-01-10', amount: 3000 },
        { dueAt: '2027-02-10', amount: 3000 },
      ],
    });
    expect(plan.paymentMethodId).toBe(method.id);
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 3500 });

    env.setNow('2027-01-11T07:00:00Z');
    const broken = await ok(env.mcp, 'fail_payment_plan_installment', {
      id: plan.id,
      installmentId: plan.installments[1].id,
      reason: 'SEPA return MD06',
    });
    expect(broken).toMatchObject({ status: 'broken', brokenAt: '2027-01-11T07:00:00.000Z', brokenReason: 'SEPA return MD06' });
    expect(broken.installments.map((i: { status: string; amountPaid: number }) => [i.status, i.amountPaid])).toEqual([
      ['paid', 3000],
      ['failed', 500],
      ['open', 0],
    ]);
    const [brokenEvent] = await eventsOf(plan.id, 'payment_plan.broken');
    expect(checked(brokenEvent!)).toEqual({ paymentPlan: broken });
    expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({
      status: 'open',
      dueAt: '2027-01-11T07:00:00.000Z',
      amountDue: 5500,
      dunningPaused: false,
    });

    env.setNow('2027-01-12T07:00:00Z');
    const extended = await ok(env.mcp, 'extend_payment_plan', { id: plan.id, installmentCount: 2, firstDueAt: '2027-02-01', interval: '2W' });
    expect(extended).toMatchObject({ status: 'active', brokenAt: null, brokenReason: null, totalAmount: 9000, updatedAt: '2027-01-12T07:00:00.000Z' });
    // The paid part of installment 2 was paid when that money arrived (the 3500 at T0), not when extended.
    expect(extended.installments).toEqual([
      { ...broken.installments[0] },
      { ...broken.installments[1], amount: 500, status: 'paid', paidAt: T0 },
      { id: expect.any(String), position: 3, dueAt: '2027-02-01', amount: 2750, amountPaid: 0, status: 'open', paidAt: null },
      { id: expect.any(String), position: 4, dueAt: '2027-02-15', amount: 2750, amountPaid: 0, status: 'open', paidAt: null },
    ]);
    const [extendedEvent] = await eventsOf(plan.id, 'payment_plan.extended');
    expect(checked(extendedEvent!)).toEqual({ paymentPlan: extended });
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).dunningPaused).toBe(true);

    const done = await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 5500 });
    expect(done.status).toBe('completed');
    await eventsOf(plan.id, 'payment_plan.completed');
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).status).toBe('paid');
  });

  it('created -> broken by an overdue installment in the jobs run -> extended with an explicit schedule', async () => {
    const invoice = await openInvoice(6_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 2, firstDueAt: '2026-12-05', interval: '1M' });
    await eventsOf(plan.id, 'payment_plan.created');

    const early = await runDueJobs(env.app, new Date('2026-12-12T23:59:59Z'));
    expect(early.jobs.overdueInstallments).toEqual({ plansBroken: 0 });
    expect((await ok(env.mcp, 'get_payment_plan', { id: plan.id })).status).toBe('active');

    env.setNow('2026-12-13T00:00:00Z');
    const summary = await runDueJobs(env.app, new Date('2026-12-13T00:00:00Z'));
    expect(summary.jobs.overdueInstallments).toEqual({ plansBroken: 1 });
    expect(summary.jobs.webhookDeliveries).toMatchObject({ attempted: 1, delivered: 1 });
    const broken = await ok(env.mcp, 'get_payment_plan', { id: plan.id });
    expect(broken).toMatchObject({
      status: 'broken',
      brokenAt: '2026-12-13T00:00:00.000Z',
      brokenReason: 'Installment 1 (€30.00, due 2026-12-05) was still open 7 days after its due date',
    });
    expect(broken.installments.map((i: { status: string }) => i.status)).toEqual(['failed', 'open']);
    const [event] = await eventsOf(plan.id, 'payment_plan.broken');
    expect(checked(event!)).toEqual({ paymentPlan: broken });
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).dueAt).toBe('2026-12-13T00:00:00.000Z');
    expect((await runDueJobs(env.app, new Date('2026-12-20T00:00:00Z'))).jobs.overdueInstallments).toEqual({ plansBroken: 0 });

    const extended = await ok(env.mcp, 'extend_payment_plan', {
      id: plan.id,
      installments: [
        { dueAt: '2026-12-20', amount: 1000 },
        { dueAt: '2027-01-20', amount: 5000 },
      ],
    });
    expect(extended).toMatchObject({ status: 'active', brokenAt: null, brokenReason: null, totalAmount: 6000 });
    expect(extended.installments.map((i: { position: number; dueAt: string }) => [i.position, i.dueAt])).toEqual([
      [1, '2026-12-20'],
      [2, '2027-01-20'],
    ]);
    await eventsOf(plan.id, 'payment_plan.extended');
    expect(forPlan(plan.id).map((r) => r.json.event.type)).toEqual(['payment_plan.created', 'payment_plan.broken', 'payment_plan.extended']);
  });

  it('uses BILLING_PAYMENT_PLAN_GRACE_DAYS', async () => {
    const strict = await setup({ paymentPlanGraceDays: 0 });
    try {
      strict.setNow(T0);
      const customer = (await ok(strict.mcp, 'create_customer', { lastName: 'Grace' })).id;
      const invoice = await ok(strict.mcp, 'create_invoice', { customer, lines: [{ description: 'x', quantity: 1, unitAmount: 100 }] });
      const plan = await ok(strict.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2026-12-01', amount: 100 }] });
      expect((await runDueJobs(strict.app, new Date('2026-12-01T23:59:59Z'))).jobs.overdueInstallments).toEqual({ plansBroken: 0 });
      expect((await runDueJobs(strict.app, new Date('2026-12-02T00:00:00Z'))).jobs.overdueInstallments).toEqual({ plansBroken: 1 });
      expect((await ok(strict.mcp, 'get_payment_plan', { id: plan.id })).brokenReason).toContain('still open 0 days after');
    } finally {
      await strict.close();
    }
  });

  it('created -> canceled: the invoice is dunned and paid normally again, and may get a new plan', async () => {
    const invoice = await openInvoice(5_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 5, firstDueAt: '2026-12-01', interval: '1W' });
    env.setNow('2026-12-02T10:00:00Z');
    const canceled = await ok(env.mcp, 'cancel_payment_plan', { id: plan.id });
    expect(canceled).toMatchObject({ status: 'canceled', canceledAt: '2026-12-02T10:00:00.000Z', completedAt: null, brokenAt: null });
    expect(canceled.installments.every((i: { status: string }) => i.status === 'open')).toBe(true);
    const [event] = await eventsOf(plan.id, 'payment_plan.canceled');
    expect(checked(event!)).toEqual({ paymentPlan: canceled });
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).dunningPaused).toBe(false);
    expect((await ok(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 1000 })).amountDue).toBe(4000);
    const again = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2026-12-31', amount: 4000 }] });
    expect(again.totalAmount).toBe(4000);
    const listed = await ok(env.mcp, 'list_payment_plans', { invoice: invoice.id });
    expect(listed.data.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([
      [plan.id, 'canceled'],
      [again.id, 'active'],
    ]);
    expect((await ok(env.mcp, 'list_payment_plans', { invoice: invoice.id, status: 'active' })).data).toHaveLength(1);
  });
});

describe('create_payment_plan paymentMethod', () => {
  it("an unknown method is a 422 saying to pick one or leave the field out (null is not taken)", async () => {
    const invoice = await openInvoice(3000);
    const paymentMethod = '01a210b1-5348-710a-aa9f-c0c29b103035';
    const refused = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, paymentMethod, installmentCount: 2, firstDueAt: '2026-12-15', interval: '1M' }, 422);
    expect(refused.violations).toEqual([
      { propertyPath: 'paymentMethod', code: 'not_found', message: `paymentMethod '${paymentMethod}' is not a payment method of the customer; use list_payment_methods, or leave paymentMethod out` },
    ]);
  });
});

describe('extend_payment_plan', () => {
  it('keeps the paid part of a partly paid installment as paid when that money arrived, and numbers the installments in date order', async () => {
    const invoice = await openInvoice(9_000);
    const plan = await ok(env.mcp, 'create_payment_plan', {
      invoice: invoice.id,
      installments: [
        { dueAt: '2026-12-10', amount: 3000 },
        { dueAt: '2027-01-01', amount: 3000 },
        { dueAt: '2027-02-01', amount: 3000 },
      ],
    });
    // Received an hour before the invoice was issued, on its issue date.
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 3500, paidAt: '2026-12-01T08:00:00Z' });
    env.setNow('2026-12-05T12:00:00Z');
    const extended = await ok(env.mcp, 'extend_payment_plan', { id: plan.id, installmentCount: 2, firstDueAt: '2026-12-15', interval: '1M' });
    expect(extended.installments.map((i: any) => [i.position, i.dueAt, i.amount, i.status, i.paidAt])).toEqual([
      [1, '2026-12-10', 3000, 'paid', '2026-12-01T08:00:00.000Z'],
      [2, '2026-12-15', 2750, 'open', null],
      [3, '2027-01-01', 500, 'paid', '2026-12-01T08:00:00.000Z'],
      [4, '2027-01-15', 2750, 'open', null],
    ]);
    expect(extended.installments[2].id).toBe(plan.installments[1].id);
    const paid = await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 2750 });
    expect(paid.installments.map((i: any) => i.status)).toEqual(['paid', 'paid', 'paid', 'open']);
  });
});

describe('amounts in texts for people are money of the plan currency, not cents', () => {
  async function invoiceIn(currencyCode: string, amount: number): Promise<any> {
    const customer = (await ok(env.mcp, 'create_customer', { companyName: `Currency ${currencyCode}`, currencyCode })).id;
    return ok(env.mcp, 'create_invoice', { customer, lines: [{ description: 'Licence', quantity: 1, unitAmount: amount }] });
  }

  it('brokenReason of an overdue installment of a JPY plan', async () => {
    const invoice = await invoiceIn('JPY', 11);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 4, firstDueAt: '2026-12-01', interval: '1D' });
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 8 });
    env.setNow('2026-12-12T00:00:00Z');
    await runDueJobs(env.app, new Date('2026-12-12T00:00:00Z'));
    expect((await ok(env.mcp, 'get_payment_plan', { id: plan.id })).brokenReason).toBe('Installment 4 (¥3, due 2026-12-04) was still open 7 days after its due date');
  });

  it('schedules and payments refused', async () => {
    const kwd = await invoiceIn('KWD', 12_345);
    const sum = await fails(env.mcp, 'create_payment_plan', { invoice: kwd.id, installments: [{ dueAt: '2026-12-05', amount: 12_344 }] }, 422);
    expect(sum.detail).toContain('sum to 12344 (KWD 12.344) but must sum to exactly 12345 (KWD 12.345)');
    const jpy = await invoiceIn('JPY', 3);
    const split = await fails(env.mcp, 'create_payment_plan', { invoice: jpy.id, installmentCount: 4, firstDueAt: '2026-12-05', interval: '1M' }, 422);
    expect(split.detail).toContain('4 installments cannot split 3 minor units (¥3)');
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: jpy.id, installments: [{ dueAt: '2026-12-05', amount: 3 }] });
    const over = await fails(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 4 }, 422);
    expect(over.detail).toContain('exceeds the 3 minor units (¥3) still open');
    for (const p of [sum, split, over]) expect(p.detail).not.toContain('cent');
  });
});

describe('list_payment_plans', () => {
  it('rows name the invoice by number and show the amounts and the next open installment; REST keeps the plans whole', async () => {
    const invoice = await openInvoice(10_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2026-12-15', interval: '1M' });
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 5000 });
    const row = {
      id: plan.id,
      invoice: { id: invoice.id, number: invoice.number },
      status: 'active',
      totalAmount: 10_000,
      amountPaid: 5000,
      currencyCode: 'EUR',
      nextInstallment: { dueAt: '2027-01-15', amount: 1666 },
      createdAt: T0,
    };
    const listed = await call(env.mcp, 'list_payment_plans', { invoice: invoice.id });
    expect(listed.body.data).toEqual([row]);
    expect(listed.text).toContain(`| ${invoice.id} ${invoice.number} |`);
    const canceled = await ok(env.mcp, 'cancel_payment_plan', { id: plan.id });
    expect((await ok(env.mcp, 'list_payment_plans', { invoice: invoice.number })).data).toEqual([{ ...row, status: 'canceled', nextInstallment: null }]);
    expect((await env.http('GET', `/payment-plans?invoice=${invoice.id}`)).body.data).toEqual([canceled]);
  });
});

describe('idempotency', () => {
  it('a replayed create or payment has no second effect and emits no second event', async () => {
    const invoice = await openInvoice(2_000);
    const input = { invoice: invoice.id, installmentCount: 2, firstDueAt: '2026-12-10', interval: '1M', idempotencyKey: 'plan-1' };
    const plan = await ok(env.mcp, 'create_payment_plan', input);
    expect(await ok(env.mcp, 'create_payment_plan', input)).toEqual(plan);
    const pay = { id: plan.id, amount: 1000, idempotencyKey: 'pay-1' };
    const paid = await ok(env.mcp, 'record_payment_plan_payment', pay);
    expect(await ok(env.mcp, 'record_payment_plan_payment', pay)).toEqual(paid);
    await eventsOf(plan.id, 'payment_plan.rate_paid');
    await new Promise((r) => setTimeout(r, 100));
    expect(forPlan(plan.id).map((r) => r.json.event.type)).toEqual(['payment_plan.created', 'payment_plan.rate_paid']);
    expect((await ok(env.mcp, 'list_payment_plans', { invoice: invoice.id })).data).toHaveLength(1);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).amountPaid).toBe(1000);
  });
});

describe('forbidden transitions are 409 and change nothing', () => {
  async function deliveriesSoFar(): Promise<number> {
    const webhooks = await ok(env.mcp, 'list_webhooks', {});
    return (await ok(env.mcp, 'list_webhook_deliveries', { id: webhooks.data[0].id, limit: 0 })).meta.pagination.totalItems;
  }

  async function planIn(status: 'active' | 'broken' | 'completed' | 'canceled') {
    const invoice = await openInvoice(2_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 2, firstDueAt: '2026-12-10', interval: '1M' });
    if (status === 'broken') await ok(env.mcp, 'fail_payment_plan_installment', { id: plan.id, installmentId: plan.installments[0].id, reason: 'bounced' });
    if (status === 'completed') await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 2000 });
    if (status === 'canceled') await ok(env.mcp, 'cancel_payment_plan', { id: plan.id });
    return { invoice, plan: await ok(env.mcp, 'get_payment_plan', { id: plan.id }) };
  }

  const schedule = { installments: [{ dueAt: '2027-03-01', amount: 1000 }] };

  it.each(['broken', 'completed', 'canceled'] as const)('a %s plan takes no payment, no failure and no cancel', async (status) => {
    const { plan } = await planIn(status);
    const before = await deliveriesSoFar();
    const pay = await fails(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 1 }, 409);
    expect(pay.detail).toContain(`is ${status}; recording a payment is allowed only while it is active`);
    const open = plan.installments.find((i: { status: string }) => i.status === 'open') ?? plan.installments[0];
    await fails(env.mcp, 'fail_payment_plan_installment', { id: plan.id, installmentId: open.id, reason: 'x' }, 409);
    expect((await fails(env.mcp, 'cancel_payment_plan', { id: plan.id }, 409)).detail).toContain(`is ${status}; cancel is allowed only while it is active`);
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(plan);
    expect(await deliveriesSoFar()).toBe(before);
  });

  it.each(['completed', 'canceled'] as const)('a %s plan cannot be extended', async (status) => {
    const { plan } = await planIn(status);
    const p = await fails(env.mcp, 'extend_payment_plan', { id: plan.id, ...schedule }, 409);
    expect(p.detail).toContain(`is ${status}; extend is allowed only while it is active or broken`);
    expect(p.detail).toContain('final');
  });

  it('a broken plan points to extend_payment_plan', async () => {
    const { plan } = await planIn('broken');
    expect((await fails(env.mcp, 'cancel_payment_plan', { id: plan.id }, 409)).detail).toContain('extend_payment_plan');
  });

  it('an installment that is not open cannot fail', async () => {
    const { plan } = await planIn('active');
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 1000 });
    const p = await fails(env.mcp, 'fail_payment_plan_installment', { id: plan.id, installmentId: plan.installments[0].id, reason: 'x' }, 409);
    expect(p.detail).toContain('Installment 1 of payment plan');
    expect(p.detail).toContain('is paid; only an open installment can fail');
    expect((await ok(env.mcp, 'get_payment_plan', { id: plan.id })).status).toBe('active');
  });

  it('a plan needs an open invoice without an active or broken plan', async () => {
    const customer = (await ok(env.mcp, 'create_customer', { lastName: 'Draft' })).id;
    const draft = await ok(env.mcp, 'create_invoice', { customer, status: 'draft', lines: [{ description: 'x', quantity: 1, unitAmount: 1000 }] });
    expect((await fails(env.mcp, 'create_payment_plan', { invoice: draft.id, ...schedule }, 409)).detail).toContain('finalize_invoice');
    const paid = await openInvoice(1000);
    await ok(env.mcp, 'record_invoice_payment', { id: paid.id, amount: 1000 });
    expect((await fails(env.mcp, 'create_payment_plan', { invoice: paid.id, ...schedule }, 409)).detail).toContain('is paid');
    const voided = await openInvoice(1000);
    await ok(env.mcp, 'void_invoice', { id: voided.id });
    await fails(env.mcp, 'create_payment_plan', { invoice: voided.id, ...schedule }, 409);
    for (const status of ['active', 'broken'] as const) {
      const { invoice, plan } = await planIn(status);
      const p = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2027-03-01', amount: 2000 }] }, 409);
      expect(p.detail).toContain(`already has the ${status} payment plan ${plan.id}`);
    }
  });

  it('while a plan is active the invoice takes no direct payment and cannot be voided', async () => {
    const { invoice } = await planIn('active');
    expect((await fails(env.mcp, 'record_invoice_payment', { id: invoice.id, amount: 100 }, 409)).detail).toContain('record_payment_plan_payment');
    expect((await fails(env.mcp, 'void_invoice', { id: invoice.id }, 409)).detail).toContain('cancel_payment_plan');
    expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ status: 'open', amountPaid: 0 });
  });

  it('a broken plan whose invoice was voided or paid is canceled and cannot be extended', async () => {
    const { invoice, plan } = await planIn('broken');
    await ok(env.mcp, 'void_invoice', { id: invoice.id });
    expect((await fails(env.mcp, 'extend_payment_plan', { id: plan.id, ...schedule }, 409)).detail).toContain('is canceled');
    const other = await planIn('broken');
    await ok(env.mcp, 'record_invoice_payment', { id: other.invoice.id, amount: 2000 });
    expect((await fails(env.mcp, 'extend_payment_plan', { id: other.plan.id, ...schedule }, 409)).detail).toContain('is canceled');
  });
});

describe('schedules and payments that are rejected (422)', () => {
  let invoice: any;
  beforeAll(async () => {
    env.setNow(T0);
    invoice = await openInvoice(1_000);
  });

  it.each([
    [{}, ['installments'], 'A schedule is required'],
    [{ installments: [{ dueAt: '2026-12-05', amount: 1000 }], installmentCount: 2, interval: '1M' }, ['installmentCount', 'interval'], 'cannot be combined'],
    [{ installmentCount: 2 }, ['firstDueAt', 'interval'], 'required when generating'],
    [{ installmentCount: 2, firstDueAt: '2026-11-30', interval: '1M' }, ['firstDueAt'], 'lies in the past'],
    [{ installmentCount: 1001, firstDueAt: '2026-12-05', interval: '1M' }, ['installmentCount'], 'from 1 to 120'],
    [{ installmentCount: 2, firstDueAt: '2026-12-05', interval: 'monthly' }, ['interval'], '<n>D'],
    [{ installmentCount: 2, firstDueAt: '2026-12-05', interval: '0M' }, ['interval'], '<n>D'],
    [{ installments: [] }, ['installments'], 'at least 1'],
    [{ installments: [{ dueAt: '2026-12-05', amount: 0 }, { dueAt: '2026-12-06', amount: 1000 }] }, ['installments[0].amount'], 'at least 1 cent'],
    [{ installments: [{ dueAt: '2026-11-30', amount: 1000 }] }, ['installments[0].dueAt'], 'lies in the past'],
    [{ installments: [{ dueAt: '2026-12-05', amount: 500 }, { dueAt: '2026-12-05', amount: 500 }] }, ['installments[1].dueAt'], 'strictly increase'],
    [{ installments: [{ dueAt: '2026-12-05', amount: 500 }, { dueAt: '2026-12-04', amount: 500 }] }, ['installments[1].dueAt'], 'strictly increase'],
    [{ installments: [{ dueAt: '2026-12-05', amount: 500 }, { dueAt: '2026-12-06', amount: 499 }] }, ['installments'], 'sum to 999 (€9.99) but must sum to exactly 1000 (€10.00)'],
    [{ installments: [{ dueAt: '2026-12-05T00:00:00Z', amount: 1000 }] }, ['installments[0].dueAt'], 'YYYY-MM-DD'],
    [{ installments: [{ dueAt: '2026-12-05', amount: 1000 }], paymentMethod: 'card-1' }, ['paymentMethod'], 'UUID'],
  ])('%j -> %j', async (input, expected, says) => {
    const p = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, ...input }, 422);
    expect(paths(p)).toEqual(expected);
    expect(p.detail).toContain(says);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).dunningPaused).toBe(false);
  });

  it('allows due dates from today on, and no more installments than cents', async () => {
    const tiny = await openInvoice(3);
    expect(paths(await fails(env.mcp, 'create_payment_plan', { invoice: tiny.id, installmentCount: 4, firstDueAt: '2026-12-01', interval: '1D' }, 422))).toEqual([
      'installmentCount',
    ]);
    // Due dates are calendar dates, YYYY-MM-DD: a schedule that would run past 9999-12-31 is refused.
    const far = await fails(env.mcp, 'create_payment_plan', { invoice: tiny.id, installmentCount: 3, firstDueAt: '9999-12-01', interval: '1Y' }, 422);
    expect(far.violations).toEqual([
      {
        propertyPath: 'interval',
        message: '3 installments every 1Y from 9999-12-01 would fall due until +010001-12-01, after 9999-12-31; give an earlier firstDueAt, a shorter interval or fewer installments',
        code: 'out_of_range',
      },
    ]);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: tiny.id, installmentCount: 3, firstDueAt: '2026-12-01', interval: '1D' });
    expect(plan.installments.map((i: { amount: number }) => i.amount)).toEqual([1, 1, 1]);
  });

  it("rejects an unknown invoice and another organisation's invoice (422 on invoice)", async () => {
    const unknown = await fails(env.mcp, 'create_payment_plan', { invoice: '0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69', installments: [{ dueAt: '2026-12-05', amount: 1 }] }, 422);
    expect(paths(unknown)).toEqual(['invoice']);
    const stranger = await env.mcpFor((await env.newOrg()).apiKey);
    const theirs = await openInvoice(1000, stranger);
    expect(paths(await fails(env.mcp, 'create_payment_plan', { invoice: theirs.id, installments: [{ dueAt: '2026-12-05', amount: 1000 }] }, 422))).toEqual([
      'invoice',
    ]);
  });

  it('rejects an overpayment, a future paidAt and a bad extension schedule, changing nothing', async () => {
    const other = await openInvoice(1_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: other.id, installmentCount: 2, firstDueAt: '2026-12-05', interval: '1M' });
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 300 });
    const over = await fails(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 701 }, 422);
    expect(paths(over)).toEqual(['amount']);
    expect(over.detail).toContain('exceeds the 700 minor units (€7.00) still open');
    expect(paths(await fails(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: 1, paidAt: '2026-12-01T09:00:01Z' }, 422))).toEqual([
      'paidAt',
    ]);
    const ext = await fails(env.mcp, 'extend_payment_plan', { id: plan.id, installments: [{ dueAt: '2027-01-05', amount: 1000 }] }, 422);
    expect(ext.detail).toContain('must sum to exactly 700 (€7.00)');
    const unchanged = await ok(env.mcp, 'get_payment_plan', { id: plan.id });
    expect(unchanged.installments.map((i: { amountPaid: number }) => i.amountPaid)).toEqual([300, 0]);
    expect((await ok(env.mcp, 'get_invoice', { id: other.id })).amountPaid).toBe(300);
  });

  it('rejects an empty failure reason', async () => {
    const other = await openInvoice(1_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: other.id, installments: [{ dueAt: '2026-12-05', amount: 1000 }] });
    expect(paths(await fails(env.mcp, 'fail_payment_plan_installment', { id: plan.id, installmentId: plan.installments[0].id, reason: ' ' }, 422))).toEqual([
      'reason',
    ]);
  });
});

describe('REST routes, tenancy and permissions', () => {
  it('serves every payment plan route with its status code', async () => {
    const invoice = await openInvoice(4_000);
    const created = await env.http('POST', '/payment-plans', { body: { invoice: invoice.id, installmentCount: 2, firstDueAt: '2026-12-05', interval: '1M' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/payment-plans/${created.body.id}`);
    const id = created.body.id;
    expect((await env.http('GET', `/payment-plans/${id}`)).body).toEqual(created.body);
    const list = await env.http('GET', `/payment-plans?invoice=${invoice.id}&status=active`);
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([id]);
    expect((await env.http('GET', '/payment-plans?status=paused')).status).toBe(400);
    const paid = await env.http('POST', `/payment-plans/${id}/payments`, { body: { amount: 2000 } });
    expect(paid.status).toBe(200);
    expect(paid.body.installments[0].status).toBe('paid');
    const failed = await env.http('POST', `/payment-plans/${id}/installments/${created.body.installments[1].id}/fail`, { body: { reason: 'R01' } });
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe('broken');
    const extended = await env.http('POST', `/payment-plans/${id}/extend`, { body: { installments: [{ dueAt: '2027-02-01', amount: 2000 }] } });
    expect(extended.status).toBe(200);
    const canceled = await env.http('POST', `/payment-plans/${id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect((await env.http('POST', `/payment-plans/${id}/cancel`)).status).toBe(409);
    expect((await env.http('POST', `/payment-plans/${id}/installments/0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69/fail`, { body: { reason: 'x' } })).status).toBe(404);
    expect((await env.http('GET', '/payment-plans/0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69')).status).toBe(404);
  });

  it("answers 404 for another organisation's plan and leaves it untouched", async () => {
    const invoice = await openInvoice(1_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2026-12-05', amount: 1000 }] });
    const org = await env.newOrg();
    const stranger = await env.mcpFor(org.apiKey);
    await fails(stranger, 'get_payment_plan', { id: plan.id }, 404);
    await fails(stranger, 'record_payment_plan_payment', { id: plan.id, amount: 1 }, 404);
    await fails(stranger, 'fail_payment_plan_installment', { id: plan.id, installmentId: plan.installments[0].id, reason: 'x' }, 404);
    await fails(stranger, 'cancel_payment_plan', { id: plan.id }, 404);
    await fails(stranger, 'extend_payment_plan', { id: plan.id, installments: [{ dueAt: '2026-12-05', amount: 1000 }] }, 404);
    expect((await ok(stranger, 'list_payment_plans', {})).data).toEqual([]);
    expect((await env.http('GET', `/payment-plans/${plan.id}`, { token: org.apiKey })).status).toBe(404);
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(plan);
  });

  it('needs payment-plan:read to read and payment-plan:write to change', async () => {
    const invoice = await openInvoice(1_000);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2026-12-05', amount: 1000 }] });
    const reader = await env.newKey(env.org, ['payment-plan:read']);
    expect((await env.http('GET', `/payment-plans/${plan.id}`, { token: reader })).status).toBe(200);
    expect((await env.http('GET', '/payment-plans', { token: reader })).status).toBe(200);
    const body = { invoice: invoice.id, installments: [{ dueAt: '2026-12-05', amount: 1000 }] };
    expect((await env.http('POST', '/payment-plans', { body, token: reader })).status).toBe(403);
    expect((await env.http('POST', `/payment-plans/${plan.id}/payments`, { body: { amount: 1 }, token: reader })).status).toBe(403);
    expect((await env.http('POST', `/payment-plans/${plan.id}/cancel`, { token: reader })).status).toBe(403);
    expect((await env.http('POST', `/payment-plans/${plan.id}/extend`, { body: { installments: body.installments }, token: reader })).status).toBe(403);
    const fail = await env.http('POST', `/payment-plans/${plan.id}/installments/${plan.installments[0].id}/fail`, { body: { reason: 'x' }, token: reader });
    expect(fail.status).toBe(403);
    const none = await env.newKey(env.org, ['invoice:read']);
    expect((await env.http('GET', `/payment-plans/${plan.id}`, { token: none })).status).toBe(403);
    const { tools } = await (await env.mcpFor(none)).listTools();
    expect(tools.filter((t) => t.name.includes('payment_plan'))).toEqual([]);
    expect(await ok(env.mcp, 'get_payment_plan', { id: plan.id })).toEqual(plan);
  });
});
