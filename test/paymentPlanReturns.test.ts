import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/schemas/webhooks.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';
import { Receiver } from './webhookReceiver.js';

/**
 * Payment plans after a returned SEPA direct debit of one of their installments, through the MCP
 * tools: a completed plan whose invoice the customer's credit balance keeps settled does not break,
 * and extending a plan keeps each partly paid installment paid when its own money arrived.
 */

const CREDITOR = { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing & Co. GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };
const PLAN_EVENTS = EVENT_TYPES.filter((type) => type.startsWith('payment_plan.'));

let env: TestEnv;
let receiver: Receiver;

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000 });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});

/**
 * An organisation of its own (its collection runs see no other test's installments) with a SEPA
 * creditor and a webhook for the plan events, and a customer paying by direct debit under a signed
 * mandate; `planned(installments)` splits a new invoice of their total into them.
 */
async function sepaOrg(name: string) {
  env.setNow('2027-05-03T09:00:00Z');
  const mcp = await env.mcpFor((await env.newOrg(name)).apiKey);
  await ok(mcp, 'update_sepa_creditor', CREDITOR);
  const webhook = await ok(mcp, 'create_webhook', { url: receiver.url, events: PLAN_EVENTS });
  const customer = await ok(mcp, 'create_customer', { companyName: name });
  await ok(mcp, 'create_payment_method', {
    id: customer.id,
    type: 'sepa_debit',
    default: true,
    sepaDebit: { iban: 'DE02120300000000202051', accountHolder: `${name} Account`, mandateReference: `MND-${name.replace(/ /g, '-')}`, signingDate: '2027-05-01' },
  });
  const planned = async (installments: Array<{ dueAt: string; amount: number }>) => {
    const total = installments.reduce((sum, i) => sum + i.amount, 0);
    const invoice = await ok(mcp, 'create_invoice', { customer: customer.id, dueAt: '2027-06-30T00:00:00Z', lines: [{ description: 'Licence', quantity: 1, unitAmount: total }] });
    const plan = await ok(mcp, 'create_payment_plan', { invoice: invoice.id, installments });
    return { invoice, plan };
  };
  return { mcp, customer, webhook, planned };
}

/** The event types of the webhook's deliveries so far: written with the change that emits them, so complete once the call answered. */
async function eventTypes(mcp: Client, webhook: string): Promise<string[]> {
  return (await ok(mcp, 'list_webhook_deliveries', { id: webhook, limit: 100 })).data.map((d: any) => d.eventType);
}

describe('a completed plan whose collection is returned', () => {
  it('does not break while the credit balance keeps its invoice paid: it stays completed, the installment shows the returned amount', async () => {
    const { mcp, customer, webhook, planned } = await sepaOrg('Completed Credited');
    const { invoice, plan } = await planned([
      { dueAt: '2027-05-04', amount: 10_000 },
      { dueAt: '2027-05-05', amount: 10_000 },
    ]);
    const statement = await ok(mcp, 'run_sepa_collection', { collectionDate: '2027-05-05' });
    expect(statement.payments.map((p: any) => [p.installment, p.amount])).toEqual([
      [plan.installments[0].id, 10_000],
      [plan.installments[1].id, 10_000],
    ]);
    const completed = await ok(mcp, 'get_payment_plan', { id: plan.id });
    expect(completed).toMatchObject({ status: 'completed', completedAt: '2027-05-03T09:00:00.000Z' });
    const paid = await ok(mcp, 'get_invoice', { id: invoice.id });
    expect(paid.status).toBe('paid');
    // Credited after it was paid: the credit goes to the customer's balance.
    await ok(mcp, 'create_credit_note', { id: invoice.id, amount: 10_000, reason: 'Goodwill' });
    expect((await ok(mcp, 'get_customer', { id: customer.id })).creditBalance).toBe(10_000);

    env.setNow('2027-05-10T09:00:00Z');
    await ok(mcp, 'return_sepa_xml_payment', { id: statement.payments[1].id, reasonCode: 'AM04' });
    // The credit moves back onto the invoice and covers the returned 100.00: nothing is due.
    expect(await ok(mcp, 'get_invoice', { id: invoice.id })).toMatchObject({
      status: 'paid',
      amountPaid: 10_000,
      amountCredited: 10_000,
      amountDue: 0,
      paidAt: paid.paidAt,
      dueAt: paid.dueAt,
    });
    expect((await ok(mcp, 'get_customer', { id: customer.id })).creditBalance).toBe(0);
    const after = await ok(mcp, 'get_payment_plan', { id: plan.id });
    expect(after).toEqual({
      ...completed,
      updatedAt: '2027-05-10T09:00:00.000Z',
      installments: [completed.installments[0], { ...completed.installments[1], amountPaid: 0, status: 'failed', paidAt: null }],
    });
    expect(await eventTypes(mcp, webhook.id)).toEqual(['payment_plan.created', 'payment_plan.rate_paid', 'payment_plan.completed']);
    // Still final: nothing is left to schedule, pay or fail.
    expect((await fails(mcp, 'extend_payment_plan', { id: plan.id, installments: [{ dueAt: '2027-06-01', amount: 10_000 }] }, 409)).detail).toContain('is completed');
    await fails(mcp, 'fail_payment_plan_installment', { id: plan.id, installmentId: plan.installments[1].id, reason: 'Returned' }, 409);
  });

  it('does not break when the credit voids its invoice', async () => {
    const { mcp, webhook, planned } = await sepaOrg('Completed Voided');
    const { invoice, plan } = await planned([{ dueAt: '2027-05-04', amount: 3_000 }]);
    const [payment] = (await ok(mcp, 'run_sepa_collection', {})).payments;
    await ok(mcp, 'create_credit_note', { id: invoice.id, reason: 'Service not delivered' });

    env.setNow('2027-05-10T09:00:00Z');
    await ok(mcp, 'return_sepa_xml_payment', { id: payment.id, reasonCode: 'AM04' });
    expect(await ok(mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ status: 'void', amountPaid: 0, amountCredited: 3_000, amountDue: 0 });
    const after = await ok(mcp, 'get_payment_plan', { id: plan.id });
    expect(after).toMatchObject({ status: 'completed', brokenAt: null, brokenReason: null });
    expect(after.installments.map((i: any) => [i.status, i.amountPaid])).toEqual([['failed', 0]]);
    expect(await eventTypes(mcp, webhook.id)).toEqual(['payment_plan.created', 'payment_plan.completed']);
  });

  it('breaks when the credit covers only part of what the return makes due again', async () => {
    const { mcp, webhook, planned } = await sepaOrg('Completed Part Credited');
    const { invoice, plan } = await planned([
      { dueAt: '2027-05-04', amount: 10_000 },
      { dueAt: '2027-05-05', amount: 10_000 },
    ]);
    const statement = await ok(mcp, 'run_sepa_collection', { collectionDate: '2027-05-05' });
    await ok(mcp, 'create_credit_note', { id: invoice.id, amount: 4_000, reason: 'Outage' });

    env.setNow('2027-05-10T09:00:00Z');
    await ok(mcp, 'return_sepa_xml_payment', { id: statement.payments[1].id, reasonCode: 'AM04' });
    expect(await ok(mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ status: 'open', amountCredited: 4_000, amountDue: 6_000, dueAt: '2027-05-10T09:00:00.000Z' });
    const after = await ok(mcp, 'get_payment_plan', { id: plan.id });
    expect(after).toMatchObject({ status: 'broken', completedAt: null, brokenAt: '2027-05-10T09:00:00.000Z' });
    expect(after.brokenReason).toContain('AM04');
    expect(after.installments.map((i: any) => [i.status, i.amountPaid])).toEqual([['paid', 10_000], ['failed', 0]]);
    expect(await eventTypes(mcp, webhook.id)).toEqual(['payment_plan.created', 'payment_plan.rate_paid', 'payment_plan.completed', 'payment_plan.broken']);
  });
});

describe('extending a plan after a return', () => {
  it('keeps each partly paid installment paid when the payment that completed it arrived, not both at the last payment', async () => {
    const { mcp, planned } = await sepaOrg('Two Partly Paid');
    const { invoice, plan } = await planned([
      { dueAt: '2027-05-04', amount: 10_000 },
      { dueAt: '2027-06-04', amount: 10_000 },
    ]);
    // 40.00 by transfer on the first installment, its other 60.00 by direct debit.
    env.setNow('2027-05-03T10:00:00Z');
    await ok(mcp, 'record_payment_plan_payment', { id: plan.id, amount: 4_000 });
    env.setNow('2027-05-03T11:00:00Z');
    const [debit] = (await ok(mcp, 'run_sepa_collection', {})).payments;
    expect([debit.installment, debit.amount]).toEqual([plan.installments[0].id, 6_000]);
    // 30.00 by transfer on the second installment.
    env.setNow('2027-05-06T12:00:00Z');
    await ok(mcp, 'record_payment_plan_payment', { id: plan.id, amount: 3_000 });

    env.setNow('2027-05-10T09:00:00Z');
    await ok(mcp, 'return_sepa_xml_payment', { id: debit.id, reasonCode: 'AM04' });
    const broken = await ok(mcp, 'get_payment_plan', { id: plan.id });
    expect(broken.installments.map((i: any) => [i.status, i.amountPaid, i.paidAt])).toEqual([
      ['failed', 4_000, null],
      ['open', 3_000, null],
    ]);
    expect((await ok(mcp, 'get_invoice', { id: invoice.id })).amountDue).toBe(13_000);

    const extended = await ok(mcp, 'extend_payment_plan', { id: plan.id, installments: [{ dueAt: '2027-06-10', amount: 13_000 }] });
    expect(extended.installments.map((i: any) => [i.id, i.dueAt, i.amount, i.status, i.paidAt])).toEqual([
      [plan.installments[0].id, '2027-05-04', 4_000, 'paid', '2027-05-03T10:00:00.000Z'],
      [plan.installments[1].id, '2027-06-04', 3_000, 'paid', '2027-05-06T12:00:00.000Z'],
      [expect.any(String), '2027-06-10', 13_000, 'open', null],
    ]);
  });
});
