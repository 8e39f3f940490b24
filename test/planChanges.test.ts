/**
 * Plan changes and trials through the real server (MCP client, HTTP, a real SQLite store), against
 * hand-computed invoices. Customers are in Europe/Berlin; the tax group charges 19 % in DE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { Receiver } from './webhookReceiver.js';

let env: TestEnv;
let customer: any;
let tax: any;
let n = 0;
let receiver: Receiver;

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true });
  receiver = await Receiver.start();
  await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['subscription.plan_changed', 'subscription.trial_ending'] });
  env.setNow('2026-01-01T12:00:00Z');
  tax = await ok(env.mcp, 'create_tax_group', { internalDescription: 'Standard', taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }] });
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Changer', companyName: 'Changing GmbH' });
  await ok(env.mcp, 'create_invoice_address', { id: customer.id, street: 'Friedrichstraße', houseNumber: '1', zip: '10117', city: 'Berlin', countryCode: 'DE' });
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});

/** The events of a type the webhook received for a subscription, as their data (every due delivery attempted first). */
async function announced(type: string, subscription: string): Promise<any[]> {
  await env.app.deliveries.runDue(new Date('2027-01-01T00:00:00Z'));
  return receiver.received.map((r) => r.json).filter((e: any) => e.event.type === type && e.data.subscription === subscription).map((e: any) => e.data);
}

/** A plan of one monthly fee paid in advance, pro rata, in a family (a new one when none given). */
async function plan(amount: number, extra: Record<string, unknown> = {}, price: Record<string, unknown> = {}): Promise<any> {
  n += 1;
  const product = await ok(env.mcp, 'create_product', { name: `Fee ${n}`, taxGroup: tax.id });
  const pricePlan = await ok(env.mcp, 'create_price_plan', {
    id: product.id,
    type: 'flat_fee',
    currencyCode: 'EUR',
    price: { amount },
    billingInterval: '1M',
    proRata: true,
    ...price,
  });
  return ok(env.mcp, 'create_plan', { code: `p-${n}`, name: `Plan ${n}`, status: 'active', charges: [{ product: product.id, pricePlan: pricePlan.id }], ...extra });
}

async function subscribe(planId: string): Promise<any> {
  return ok(env.mcp, 'create_subscription', { customer: customer.id, plan: planId, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
}

const invoice = async (id: string) => (await env.http('GET', `/invoices/${id}`)).body;
const bill = async (subscription: string) => Promise.all((await ok(env.mcp, 'run_billing', { subscription })).invoices.map(invoice));
const lines = (i: any) => i.lines.map((l: any) => [l.description, l.netAmount, l.taxRate, l.periodStart, l.periodEnd]);

describe('plan changes', () => {
  it('takes a plan by its code wherever it takes its id; a subscription named after its plan (the default) is renamed with it, an own name stays', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const basic = await plan(31);
    const pro = await plan(62, { family: basic.family.id });
    expect((await ok(env.mcp, 'get_plan', { id: basic.code })).id).toBe(basic.id);
    expect((await ok(env.mcp, 'update_plan', { id: pro.code, description: 'More' })).description).toBe('More');
    await fails(env.mcp, 'get_plan', { id: 'no-such-plan' }, 404);

    const named = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: basic.code, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    const own = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: basic.code, name: 'Team Alpha', periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    expect([named.plan.id, named.name, own.name]).toEqual([basic.id, basic.name, 'Team Alpha']);

    env.setNow('2026-01-11T12:00:00Z');
    const changed = await ok(env.mcp, 'change_subscription_plan', { id: named.id, plan: pro.code, applyAt: 'immediately' });
    expect([changed.subscription.plan.id, changed.subscription.name]).toEqual([pro.id, pro.name]);
    const kept = await ok(env.mcp, 'change_subscription_plan', { id: own.id, plan: pro.code, applyAt: 'immediately' });
    expect(kept.subscription.name).toBe('Team Alpha');
  });

  it('upgrades mid-period at once: the unused days are credited, the new plan bills its part-period on an invoice issued now, as previewed', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const basic = await plan(31);
    const pro = await plan(62, { family: basic.family.id });
    const s = await subscribe(basic.id);
    const [january] = await bill(s.id);
    expect(january).toMatchObject({ netAmount: 3100, taxAmount: 589, grossAmount: 3689, amountDue: 3689 });

    // 21 of January's 31 days (11 Jan to 1 Feb) are unused: 31.00 x 21/31 = 21.00 net, 3.99 tax.
    env.setNow('2026-01-11T12:00:00Z');
    const preview = await ok(env.mcp, 'preview_subscription_plan_change', { id: s.id, plan: pro.id, applyAt: 'immediately' });
    expect(preview.applyAt).toBe('2026-01-11T12:00:00.000Z');
    expect(preview.creditNotes).toEqual([
      { invoice: january.id, amount: 2499, lines: [{ description: `Unused Fee ${n - 1} 2026-01-11 – 2026-02-01 (pro rata 21/31 days)`, netAmount: 2100, taxRate: 19 }] },
    ]);
    expect(preview.invoice).toMatchObject({ netAmount: 4200, taxAmount: 798, grossAmount: 4998 });
    // The preview kept nothing.
    expect((await ok(env.mcp, 'list_credit_notes', { invoice: january.id })).data).toHaveLength(0);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).plan.id).toBe(basic.id);

    const change = await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: pro.id, applyAt: 'immediately' });
    expect(change).toMatchObject({ applyAt: '2026-01-11T12:00:00.000Z', applied: true, subscription: { plan: { id: pro.id } } });
    expect(change.creditNotes).toHaveLength(1);
    const note = (await env.http('GET', `/credit-notes/${change.creditNotes[0]}`)).body;
    expect(note).toMatchObject({ invoice: january.id, amount: 2499 });
    expect(await invoice(january.id)).toMatchObject({ status: 'open', amountDue: 3689 - 2499 });

    const issued = await invoice(change.invoice);
    expect(issued).toMatchObject({ status: 'open', issuedAt: '2026-01-11T12:00:00.000Z', netAmount: 4200, taxAmount: 798, grossAmount: 4998 });
    // 62.00 x 21/31 = 42.00 for the rest of the running cycle.
    expect(lines(issued)).toEqual([[`Fee ${n} (pro rata 21/31 days, 2026-01-11 to 2026-01-31)`, 4200, 19, '2026-01-11T12:00:00.000Z', '2026-02-01T12:00:00.000Z']]);
    const strip = ({ id: _i, position: _p, unitAmount: _u, ...l }: any) => l;
    expect(preview.invoice.lines).toEqual(issued.lines.map(strip));

    // From the next period on, the new plan's full fee; the old one bills nothing more.
    env.setNow('2026-02-01T12:00:00Z');
    const [february, ...more] = await bill(s.id);
    expect(more).toEqual([]);
    expect(lines(february)).toEqual([[`Fee ${n} (2026-02-01 to 2026-02-28)`, 6200, 19, '2026-02-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z']]);
    const after = await ok(env.mcp, 'get_subscription', { id: s.id });
    // The old plan's charge has ended: a model reads it as a reference.
    expect(after.items.map((i: any) => i.status)).toEqual(['active']);
    expect(after.endedItems).toEqual([{ id: expect.any(String), name: expect.any(String), billingEnd: '2026-01-11T12:00:00.000Z' }]);
    expect(await announced('subscription.plan_changed', s.id)).toEqual([
      { subscription: s.id, fromPlan: basic.id, toPlan: pro.id, appliedAt: '2026-01-11T12:00:00.000Z', invoice: change.invoice, creditNotes: change.creditNotes },
    ]);
  });

  it('an upgrade after the invoice was paid: the unused days become credit balance, taken off the new invoice', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const basic = await plan(31);
    const pro = await plan(62, { family: basic.family.id });
    const payer = await ok(env.mcp, 'create_customer', { lastName: 'Payer', companyName: 'Paying GmbH' });
    await ok(env.mcp, 'create_invoice_address', { id: payer.id, street: 'Unter den Linden', houseNumber: '5', zip: '10117', city: 'Berlin', countryCode: 'DE' });
    const s = await ok(env.mcp, 'create_subscription', { customer: payer.id, plan: basic.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    const [january] = await bill(s.id);
    await ok(env.mcp, 'record_invoice_payment', { id: january.id, amount: 3689 });

    env.setNow('2026-01-11T12:00:00Z');
    const change = await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: pro.id, applyAt: 'immediately' });
    expect(await invoice(january.id)).toMatchObject({ status: 'paid', amountDue: 0 });
    // 24.99 credited, then taken off the 49.98 of the new invoice.
    expect(await invoice(change.invoice)).toMatchObject({ grossAmount: 4998, creditApplied: 2499, amountDue: 2499 });
    expect((await ok(env.mcp, 'get_customer', { id: payer.id })).creditBalance).toBe(0);
  });

  it('keeps the quantity of each item on the new plan\'s charge of its product (5 seats stay 5, not the plan\'s 3): credit and new invoice add up at 5; keepQuantities false takes the plan\'s', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    n += 1;
    const seat = await ok(env.mcp, 'create_product', { name: `Seat ${n}`, taxGroup: tax.id });
    const price = (amount: number) => ok(env.mcp, 'create_price_plan', { id: seat.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount }, billingInterval: '1M', proRata: true });
    const [dear, cheap] = [await price(62), await price(31)];
    const pro = await ok(env.mcp, 'create_plan', { code: `seats-pro-${n}`, name: 'Seats pro', charges: [{ product: seat.id, pricePlan: dear.id, quantity: 3 }] });
    const basic = await ok(env.mcp, 'create_plan', { code: `seats-basic-${n}`, name: 'Seats basic', family: pro.family.id, charges: [{ product: seat.id, pricePlan: cheap.id, quantity: 3 }] });
    const changed = async (input: Record<string, unknown>) => {
      env.setNow('2026-01-01T12:00:00Z');
      const s = await subscribe(pro.id);
      await ok(env.mcp, 'update_subscription_item', { id: s.items[0].id, quantity: 5 });
      const [january] = await bill(s.id);
      expect(january.netAmount).toBe(31000);
      env.setNow('2026-01-11T12:00:00Z');
      const preview = await ok(env.mcp, 'preview_subscription_plan_change', { id: s.id, plan: basic.id, applyAt: 'immediately', ...input });
      const change = await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id, applyAt: 'immediately', ...input });
      const issued = await invoice(change.invoice);
      expect(issued.netAmount).toBe(preview.invoice.netAmount);
      return { preview, issued, items: (await env.http('GET', `/subscriptions/${s.id}`)).body.items };
    };
    // 21 of January's 31 days: 5 x 62.00 x 21/31 = 210.00 credited; 5 x 31.00 x 21/31 = 105.00 for the new plan.
    const kept = await changed({});
    expect(kept.items.map((i: any) => [i.pricePlan.id, i.quantity])).toEqual([[dear.id, 5], [cheap.id, 5]]);
    expect(kept.preview.creditNotes[0].lines.map((l: any) => l.netAmount)).toEqual([21000]);
    expect(lines(kept.issued)).toEqual([[`Seat ${n} (pro rata 21/31 days, 2026-01-11 to 2026-01-31)`, 10500, 19, '2026-01-11T12:00:00.000Z', '2026-02-01T12:00:00.000Z']]);
    const planned = await changed({ keepQuantities: false });
    expect(planned.items.map((i: any) => i.quantity)).toEqual([5, 3]);
    expect(planned.issued.netAmount).toBe(6300);

    const s = await subscribe(pro.id);
    const later = await fails(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id, applyAt: 'end_of_period', keepQuantities: false }, 422);
    expect(paths(later)).toEqual(['keepQuantities']);
  });

  it('a refused target names the other active plans of the family to pick from (list_plans has no family filter)', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const basic = await plan(31);
    const pro = await plan(62, { family: basic.family.id });
    await plan(93, { family: basic.family.id, status: 'draft' });
    const s = await subscribe(basic.id);
    const missing = await fails(env.mcp, 'change_subscription_plan', { id: s.id, plan: 'nope' }, 422);
    expect(missing.detail).toBe(`plan 'nope' does not exist; the other active plans of its family ${basic.family.id} are ${pro.code} (${pro.id})`);
    expect((await fails(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id }, 422)).detail).toContain(`are ${pro.code} (${pro.id})`);
    const alone = await subscribe((await plan(10)).id);
    expect((await fails(env.mcp, 'change_subscription_plan', { id: alone.id, plan: 'nope' }, 422)).detail).toMatch(/its family \S+ has no other active plan$/);
  });

  it('downgrades at the period end: pending until then, applied by the jobs, billed as previewed', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const pro = await plan(62);
    const basic = await plan(31, { family: pro.family.id });
    const s = await subscribe(pro.id);
    await bill(s.id);

    env.setNow('2026-01-11T12:00:00Z');
    const preview = await ok(env.mcp, 'preview_subscription_plan_change', { id: s.id, plan: basic.id });
    expect(preview).toMatchObject({ applyAt: '2026-02-01T12:00:00.000Z', creditNotes: [], invoice: { netAmount: 3100, taxAmount: 589, grossAmount: 3689 } });
    const change = await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id });
    expect(change).toMatchObject({ applied: false, applyAt: '2026-02-01T12:00:00.000Z', invoice: null, creditNotes: [] });
    expect(change.subscription.pendingPlanChange).toEqual({ plan: { id: basic.id, code: basic.code, name: basic.name }, applyAt: '2026-02-01T12:00:00.000Z' });
    const other = await fails(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id }, 409);
    expect(other.detail).toMatch(/revoke_subscription_plan_change/);

    // Nothing of the old plan is billed past the change, however the runs fall.
    env.setNow('2026-02-01T12:00:00Z');
    const summary = await runDueJobs(env.app, new Date('2026-02-01T12:00:00Z'));
    expect(summary.jobs.planChanges).toEqual({ applied: 1 });
    const invoices = (await ok(env.mcp, 'list_invoices', { subscription: s.id })).data;
    expect(invoices).toHaveLength(2);
    const issued = await invoice(invoices.find((i: any) => i.issuedAt === '2026-02-01T12:00:00.000Z').id);
    expect(lines(issued)).toEqual([[`Fee ${n} (2026-02-01 to 2026-02-28)`, 3100, 19, '2026-02-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z']]);
    const strip = ({ id: _i, position: _p, unitAmount: _u, ...l }: any) => l;
    expect(preview.invoice.lines).toEqual(issued.lines.map(strip));
    const after = await ok(env.mcp, 'get_subscription', { id: s.id });
    expect(after).toMatchObject({ plan: { id: basic.id }, pendingPlanChange: null });
  });

  it('revokes a pending change: the current plan runs on', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const pro = await plan(62);
    const basic = await plan(31, { family: pro.family.id });
    const s = await subscribe(pro.id);
    await bill(s.id);
    await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id, applyAt: 'end_of_period' });
    const revoked = await ok(env.mcp, 'revoke_subscription_plan_change', { id: s.id });
    expect(revoked.pendingPlanChange).toBeNull();
    await fails(env.mcp, 'revoke_subscription_plan_change', { id: s.id }, 409);
    env.setNow('2026-02-01T12:00:00Z');
    const [february] = await bill(s.id);
    expect(lines(february)).toEqual([[`Fee ${n - 1} (2026-02-01 to 2026-02-28)`, 6200, 19, '2026-02-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z']]);
  });

  it('cancelling while a change is pending is a 409 naming revoke_subscription_plan_change; a final subscription keeps no pending change and revokes none', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const pro = await plan(62);
    const basic = await plan(31, { family: pro.family.id });
    const s = await subscribe(pro.id);
    await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: basic.id, applyAt: 'end_of_period' });
    expect((await fails(env.mcp, 'cancel_subscription', { id: s.id }, 409)).detail).toMatch(/revoke_subscription_plan_change first/);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).cancellationDate).toBeNull();
    const terminated = await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect(terminated.pendingPlanChange).toBeNull();
    const revoke = await env.http('DELETE', `/subscriptions/${s.id}/pending-plan-change`);
    expect(revoke.status).toBe(409);
    expect(revoke.body.detail).toMatch(/is terminated, which is final/);
  });

  it('allows only what the plans say, naming the rule', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const basic = await plan(31, { changeBehaviour: 'upgradeable_only' });
    const cheaper = await plan(20, { family: basic.family.id });
    const draft = await plan(40, { family: basic.family.id, status: 'draft' });
    const elsewhere = await plan(50);
    const retired = await plan(45, { family: basic.family.id });
    await ok(env.mcp, 'update_price_plan', { id: retired.charges[0].pricePlan.id, status: 'inactive' });
    const s = await subscribe(basic.id);
    const cases: Array<[string, string]> = [
      [cheaper.id, 'downgrade_not_allowed'],
      [draft.id, 'not_active'],
      [retired.id, 'inactive'],
      [elsewhere.id, 'other_family'],
      [basic.id, 'same_plan'],
      ['nope', 'not_found'],
    ];
    for (const [target, code] of cases) {
      const problem = await fails(env.mcp, 'change_subscription_plan', { id: s.id, plan: target }, 422);
      expect(paths(problem)).toEqual(['plan']);
      expect(problem.violations[0].code).toBe(code);
    }
    const fixed = await plan(31, { changeBehaviour: 'not_changeable' });
    const other = await plan(35, { family: fixed.family.id });
    const locked = await subscribe(fixed.id);
    expect((await fails(env.mcp, 'change_subscription_plan', { id: locked.id, plan: other.id }, 409)).detail).toMatch(/not_changeable/);
    await ok(env.mcp, 'pause_subscription', { id: locked.id });
    expect((await fails(env.mcp, 'change_subscription_plan', { id: locked.id, plan: other.id }, 409)).detail).toMatch(/resume_subscription/);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).plan.id).toBe(basic.id);
  });

  it('is served over REST with the same bearer token', async () => {
    env.setNow('2026-01-01T12:00:00Z');
    const basic = await plan(31);
    const pro = await plan(62, { family: basic.family.id });
    const s = await subscribe(basic.id);
    const preview = await env.http('POST', `/subscriptions/${s.id}/change-plan/preview`, { body: { plan: pro.id } });
    expect(preview.status).toBe(200);
    const changed = await env.http('POST', `/subscriptions/${s.id}/change-plan`, { body: { plan: pro.id } });
    expect(changed.status).toBe(200);
    expect(changed.body.subscription.pendingPlanChange.plan.id).toBe(pro.id);
    const revoked = await env.http('DELETE', `/subscriptions/${s.id}/pending-plan-change`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.pendingPlanChange).toBeNull();
  });
});

describe('trials', () => {
  it('bills items with applyTrial from the trial end, others from the start; announces the end three days before; the estimate shows it', async () => {
    env.setNow('2026-03-01T10:00:00Z');
    const trialPlan = await plan(30, { trialPeriod: '14D' }, { applyTrial: true });
    const setupFee = await ok(env.mcp, 'create_product', { name: 'Support', taxGroup: tax.id });
    const support = await ok(env.mcp, 'create_price_plan', { id: setupFee.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 5 }, billingInterval: '1M' });
    await ok(env.mcp, 'update_plan', {
      id: trialPlan.id,
      charges: [...trialPlan.charges.map((c: any) => ({ product: c.product.id, pricePlan: c.pricePlan.id })), { product: setupFee.id, pricePlan: support.id }],
    });
    expect(trialPlan.trialPeriod).toBe('14D');
    const s = await subscribe(trialPlan.id);
    expect(s.trialEndsOn).toBe('2026-03-15T10:00:00.000Z');

    const [march] = await bill(s.id);
    expect(lines(march)).toEqual([['Support (2026-03-01 to 2026-03-31)', 500, 19, '2026-03-01T10:00:00.000Z', '2026-04-01T09:00:00.000Z']]);
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: s.id });
    expect(estimate.billingDate).toBe('2026-03-15T10:00:00.000Z');
    expect(estimate.estimate).toMatch(/Trial until 2026-03-15/);

    expect((await runDueJobs(env.app, new Date('2026-03-11T10:00:00Z'))).jobs.trials).toEqual({ announced: 0 });
    expect((await runDueJobs(env.app, new Date('2026-03-12T10:00:00Z'))).jobs.trials).toEqual({ announced: 1 });
    expect((await runDueJobs(env.app, new Date('2026-03-13T10:00:00Z'))).jobs.trials).toEqual({ announced: 0 });
    expect(await announced('subscription.trial_ending', s.id)).toEqual([{ subscription: s.id, trialEndsOn: '2026-03-15T10:00:00.000Z' }]);

    env.setNow('2026-03-15T10:00:00Z');
    const [afterTrial] = await bill(s.id);
    // Paid in advance from the trial's end: 15 March 11:00 Berlin to 15 April 11:00 (summer time).
    expect(lines(afterTrial)).toEqual([[`Fee ${n} (2026-03-15 to 2026-04-14)`, 3000, 19, '2026-03-15T10:00:00.000Z', '2026-04-15T09:00:00.000Z']]);
  });

  it('a cancellation during the trial takes effect by its end, without cancellation period, and bills nothing; nextPossibleCancellationDate offers the trial end', async () => {
    env.setNow('2026-03-01T10:00:00Z');
    const trialPlan = await plan(30, { trialPeriod: '2W' }, { applyTrial: true });
    const s = await ok(env.mcp, 'create_subscription', {
      customer: customer.id,
      plan: trialPlan.id,
      periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }],
      activate: true,
    });
    expect(s.trialEndsOn).toBe('2026-03-15T10:00:00.000Z');
    const offered = (await env.http('GET', `/subscriptions/${s.id}`)).body.nextPossibleCancellationDate;
    expect(offered).toEqual(['2026-03-15T10:00:00.000Z']);
    const late = await fails(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2027-03-01T10:00:00Z' }, 422);
    expect(paths(late)).toEqual(['cancellationDate']);
    env.setNow('2026-03-15T10:00:00Z');
    expect((await env.http('GET', `/subscriptions/${s.id}`)).body.nextPossibleCancellationDate).toEqual(['2027-03-01T10:00:00.000Z', '2028-03-01T10:00:00.000Z', '2029-03-01T10:00:00.000Z']);
    env.setNow('2026-03-01T10:00:00Z');
    const cancelled = await ok(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: offered[0] });
    expect(cancelled.cancellationDate).toBe('2026-03-15T10:00:00.000Z');
    env.setNow('2026-03-20T10:00:00Z');
    await runDueJobs(env.app, new Date('2026-03-20T10:00:00Z'));
    expect((await ok(env.mcp, 'list_invoices', { subscription: s.id })).data).toEqual([]);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).status).toBe('cancelled');
  });

  it('refuses a malformed trial period naming the format', async () => {
    const problem = await fails(env.mcp, 'update_plan', { id: (await plan(10)).id, trialPeriod: '2Y' }, 422);
    expect(paths(problem)).toEqual(['trialPeriod']);
  });
});
