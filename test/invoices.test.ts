import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());
beforeEach(() => env.setNow('2026-11-20T10:00:00Z'));

const NOW = '2026-11-20T10:00:00.000Z';
const UUID = '0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69';

async function customer(mcp: Client = env.mcp, currencyCode = 'EUR'): Promise<string> {
  return (await ok(mcp, 'create_customer', { lastName: 'Lovelace', currencyCode })).id;
}

const consulting = { description: 'Consulting', quantity: 3, unitAmount: 12_000, taxRate: 19 };

/** A draft subscription of the customer, on a one-charge plan of its organisation. */
async function subscriptionOf(mcp: Client, customerId: string): Promise<string> {
  const product = await ok(mcp, 'create_product', { name: 'Seat' });
  const price = await ok(mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
  const plan = await ok(mcp, 'create_plan', { code: `seat-${product.id}`, name: 'Seat', charges: [{ product: product.id, pricePlan: price.id }] });
  const s = await ok(mcp, 'create_subscription', { customer: customerId, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }] });
  return s.id;
}

describe('create_invoice', () => {
  it('issues an open invoice with the next number, totals per rate and the customer currency', async () => {
    const mcp = await env.mcpFor((await env.newOrg()).apiKey);
    const c = await customer(mcp, 'CHF');
    const inv = await ok(mcp, 'create_invoice', {
      customer: c,
      lines: [consulting, { description: 'Books', quantity: 2, unitAmount: 1_999, taxRate: 7 }, { description: 'Fee', quantity: 1, unitAmount: 250 }],
    });
    expect(inv).toEqual({
      id: expect.any(String),
      number: 'INV-2026-000001',
      customer: c,
      subscription: null,
      status: 'open',
      currencyCode: 'CHF',
      lines: [
        { id: expect.any(String), position: 1, description: 'Consulting', quantity: '3', unitAmountDecimal: '12000', unitAmount: 12000, netAmount: 36000, taxRate: 19, periodStart: null, periodEnd: null },
        { id: expect.any(String), position: 2, description: 'Books', quantity: '2', unitAmountDecimal: '1999', unitAmount: 1999, netAmount: 3998, taxRate: 7, periodStart: null, periodEnd: null },
        { id: expect.any(String), position: 3, description: 'Fee', quantity: '1', unitAmountDecimal: '250', unitAmount: 250, netAmount: 250, taxRate: 0, periodStart: null, periodEnd: null },
      ],
      taxes: [
        { rate: 19, netAmount: 36000, taxAmount: 6840 },
        { rate: 7, netAmount: 3998, taxAmount: 280 },
        { rate: 0, netAmount: 250, taxAmount: 0 },
      ],
      netAmount: 40248,
      taxAmount: 7120,
      grossAmount: 47368,
      amountPaid: 0,
      amountCredited: 0,
      creditApplied: 0,
      amountDue: 47368,
      issuedAt: NOW,
      // 14 days, BILLING_PAYMENT_TERM_DAYS' default, in the customer's time zone (Europe/Berlin, no DST change in between).
      dueAt: '2026-12-04T10:00:00.000Z',
      originalDueAt: '2026-12-04T10:00:00.000Z',
      paidAt: null,
      voidedAt: null,
      dunningPaused: false,
      dunningOf: null,
      payments: [],
      createdAt: NOW,
      updatedAt: NOW,
      hostedUrl: expect.stringMatching(new RegExp(`^${env.url}/pages/invoices/[\\w-]+\\.[\\w-]{43}$`)),
    });
    expect(await ok(mcp, 'get_invoice', { id: inv.id })).toEqual(inv);
    expect((await ok(mcp, 'create_invoice', { customer: c, lines: [consulting] })).number).toBe('INV-2026-000002');
  });

  it('taxes a rate on the summed net of its lines, rounded half-up', async () => {
    const c = await customer();
    const cent = { description: 'Tiny', quantity: 1, unitAmount: 3, taxRate: 19 };
    const inv = await ok(env.mcp, 'create_invoice', { customer: c, lines: [cent, cent, cent] });
    expect(inv).toMatchObject({ netAmount: 9, taxAmount: 2, grossAmount: 11 });
    const half = await ok(env.mcp, 'create_invoice', { customer: c, lines: [{ description: 'Half', quantity: 1, unitAmount: 50, taxRate: 1 }] });
    expect(half.taxAmount).toBe(1);
    const precise = await ok(env.mcp, 'create_invoice', { customer: c, lines: [{ description: 'x', quantity: 1, unitAmount: 10000, taxRate: 8.1 }] });
    expect(precise.taxes).toEqual([{ rate: 8.1, netAmount: 10000, taxAmount: 810 }]);
  });

  it('numbers per organisation and per calendar year of issue; drafts take no number', async () => {
    const mcp = await env.mcpFor((await env.newOrg()).apiKey);
    const c = await customer(mcp);
    const draft = await ok(mcp, 'create_invoice', { customer: c, status: 'draft', lines: [consulting] });
    expect(draft).toMatchObject({ number: null, status: 'draft', issuedAt: null, dueAt: null });
    expect((await ok(mcp, 'create_invoice', { customer: c, lines: [consulting] })).number).toBe('INV-2026-000001');
    env.setNow('2027-01-01T00:00:00Z');
    expect((await ok(mcp, 'create_invoice', { customer: c, lines: [consulting] })).number).toBe('INV-2027-000001');
    expect((await ok(mcp, 'finalize_invoice', { id: draft.id })).number).toBe('INV-2027-000002');
    expect((await ok(env.mcp, 'create_invoice', { customer: await customer(), lines: [consulting] })).number).toMatch(/^INV-2027-000001$/);
  });

  it('keeps a given dueAt and subscription, normalised to UTC', async () => {
    const c = await customer();
    const sub = await subscriptionOf(env.mcp, c);
    const inv = await ok(env.mcp, 'create_invoice', {
      customer: c,
      subscription: sub,
      dueAt: '2026-12-20T12:00:00+01:00',
      lines: [consulting],
    });
    expect(inv).toMatchObject({ subscription: sub, dueAt: '2026-12-20T11:00:00.000Z', issuedAt: NOW });
  });

  it('allows discount lines but not a negative total; an invoice of 0 is paid at once', async () => {
    const c = await customer();
    const discounted = await ok(env.mcp, 'create_invoice', {
      customer: c,
      lines: [consulting, { description: 'Loyalty discount', quantity: 1, unitAmount: -6000, taxRate: 19 }],
    });
    expect(discounted).toMatchObject({ netAmount: 30000, taxAmount: 5700, grossAmount: 35700 });
    const negative = await fails(
      env.mcp,
      'create_invoice',
      { customer: c, lines: [{ description: 'Credit', quantity: 1, unitAmount: -100 }] },
      422,
    );
    expect(paths(negative)).toEqual(['lines']);
    expect(negative.detail).toContain('would total -100 minor units (-€1.00); an invoice cannot be negative');
    const free = await ok(env.mcp, 'create_invoice', { customer: c, lines: [{ description: 'Free trial', quantity: 1, unitAmount: 0 }] });
    expect(free).toMatchObject({ status: 'paid', paidAt: NOW, amountDue: 0, number: expect.stringMatching(/^INV-2026-/) });
  });

  it.each([
    [{ lines: [] }, ['lines']],
    [{ lines: [{ ...consulting, quantity: 1.1234567 }] }, ['lines[0].quantity']],
    [{ lines: [{ ...consulting, quantity: '0.0000001' }] }, ['lines[0].quantity']],
    [{ lines: [{ ...consulting, quantity: '-1' }] }, ['lines[0].quantity']],
    [{ lines: [{ ...consulting, quantity: '1e3' }] }, ['lines[0].quantity']],
    [{ lines: [{ ...consulting, quantity: '0.000' }] }, ['lines[0].quantity']],
    [{ lines: [{ ...consulting, quantity: 0 }] }, ['lines[0].quantity']],
    [{ lines: [{ ...consulting, unitAmount: 12.5 }] }, ['lines[0].unitAmount']],
    [{ lines: [{ ...consulting, taxRate: 101 }] }, ['lines[0].taxRate']],
    [{ lines: [consulting, { ...consulting, taxRate: 19.12345 }] }, ['lines[1].taxRate']],
    [{ lines: [{ ...consulting, description: '' }] }, ['lines[0].description']],
    [{ lines: [{ ...consulting, colour: 'red' }] }, ['lines[0].colour']],
    [{ lines: [{ ...consulting, quantity: 1_000_000, unitAmount: 999_999_999_999 }] }, ['lines[0]']],
    [{ lines: [consulting], status: 'paid' }, ['status']],
    [{ lines: [consulting], subscription: 'SUB-1' }, ['subscription']],
    [{ lines: [consulting], dueAt: '2026-12-01T00:00:00' }, ['dueAt']],
  ])('rejects %j naming %j', async (input, expected) => {
    const p = await fails(env.mcp, 'create_invoice', { customer: await customer(), ...input }, 422);
    expect(paths(p)).toEqual(expected);
  });

  it('says the rule a number breaks: a whole number too large is out of range, not a fraction; a line quantity must be > 0', async () => {
    const violation = async (input: Record<string, unknown>) => (await fails(env.mcp, 'create_invoice', { customer: await customer(), ...input }, 422)).violations;
    expect(await violation({ lines: [{ ...consulting, unitAmount: 99999999999999999999 }] })).toEqual([
      { propertyPath: 'lines[0].unitAmount', message: 'lines[0].unitAmount must be within ±999999999999 minor units (cents)', code: 'too_big' },
    ]);
    expect(await violation({ lines: [{ ...consulting, unitAmount: -1e20 }] })).toEqual([
      { propertyPath: 'lines[0].unitAmount', message: 'lines[0].unitAmount must be within ±999999999999 minor units (cents)', code: 'too_small' },
    ]);
    expect(await violation({ lines: [{ ...consulting, unitAmount: 12.5 }] })).toEqual([
      { propertyPath: 'lines[0].unitAmount', message: 'lines[0].unitAmount must be a whole number of minor units (cents); use unitAmountDecimal for a fraction', code: 'invalid_type' },
    ]);
    for (const quantity of ['-2', -2, 0]) {
      expect(await violation({ lines: [{ ...consulting, quantity }] })).toEqual([
        { propertyPath: 'lines[0].quantity', message: `lines[0].quantity must be greater than 0 (got ${quantity})`, code: 'custom' },
      ]);
    }
    const open = await ok(env.mcp, 'create_invoice', { customer: await customer(), lines: [consulting] });
    const huge = await env.http('POST', `/invoices/${open.id}/payments`, { body: { amount: 1e20 } });
    expect(huge.status).toBe(422);
    expect(huge.body.violations).toEqual([{ propertyPath: 'amount', message: 'amount must be at most 999999999999 minor units (cents)', code: 'too_big' }]);
    const credit = await fails(env.mcp, 'create_credit_note', { id: open.id, amount: 1e20, reason: 'x' }, 422);
    expect(credit.violations).toEqual([{ propertyPath: 'amount', message: 'amount must be at most 999999999999 minor units (cents)', code: 'too_big' }]);
    const fraction = await fails(env.mcp, 'record_invoice_payment', { id: open.id, amount: 10.5 }, 422);
    expect(fraction.violations).toEqual([{ propertyPath: 'amount', message: 'amount must be a whole number of minor units (cents)', code: 'invalid_type' }]);
  });

  it("rejects an unknown customer and another organisation's customer (422 on customer)", async () => {
    const p = await fails(env.mcp, 'create_invoice', { customer: UUID, lines: [consulting] }, 422);
    expect(paths(p)).toEqual(['customer']);
    expect(p.detail).toContain('does not exist');
    const other = await customer(await env.mcpFor((await env.newOrg()).apiKey));
    expect(paths(await fails(env.mcp, 'create_invoice', { customer: other, lines: [consulting] }, 422))).toEqual(['customer']);
  });
});

describe('invoice transitions', () => {
  it('draft -> open by finalize (number, issuedAt, dueAt); finalize again is a 409', async () => {
    const c = await customer();
    const draft = await ok(env.mcp, 'create_invoice', { customer: c, status: 'draft', lines: [consulting] });
    env.setNow('2026-11-21T08:00:00Z');
    const open = await ok(env.mcp, 'finalize_invoice', { id: draft.id });
    expect(open).toMatchObject({
      status: 'open',
      number: expect.stringMatching(/^INV-2026-\d{6}$/),
      issuedAt: '2026-11-21T08:00:00.000Z',
      dueAt: '2026-12-05T08:00:00.000Z',
      updatedAt: '2026-11-21T08:00:00.000Z',
      createdAt: NOW,
    });
    const again = await fails(env.mcp, 'finalize_invoice', { id: draft.id }, 409);
    expect(again.detail).toContain('is open; finalize is allowed only for draft invoices');
    const withDue = await ok(env.mcp, 'create_invoice', { customer: c, status: 'draft', dueAt: '2027-01-15T00:00:00Z', lines: [consulting] });
    expect((await ok(env.mcp, 'finalize_invoice', { id: withDue.id })).dueAt).toBe('2027-01-15T00:00:00.000Z');
  });

  it('voids a draft (no number) and an open invoice; paid and void are final', async () => {
    const c = await customer();
    const draft = await ok(env.mcp, 'create_invoice', { customer: c, status: 'draft', lines: [consulting] });
    expect(await ok(env.mcp, 'void_invoice', { id: draft.id })).toMatchObject({ status: 'void', number: null, voidedAt: NOW, amountDue: 0 });
    const open = await ok(env.mcp, 'create_invoice', { customer: c, lines: [consulting] });
    await ok(env.mcp, 'record_invoice_payment', { id: open.id, amount: 100 });
    const voided = await ok(env.mcp, 'void_invoice', { id: open.id });
    expect(voided).toMatchObject({ status: 'void', number: open.number, amountDue: 0, amountPaid: 100 });
    expect((await fails(env.mcp, 'void_invoice', { id: open.id }, 409)).detail).toContain('is void');
    await fails(env.mcp, 'finalize_invoice', { id: open.id }, 409);
    await fails(env.mcp, 'record_invoice_payment', { id: open.id, amount: 1 }, 409);

    const paid = await ok(env.mcp, 'create_invoice', { customer: c, lines: [consulting] });
    await ok(env.mcp, 'record_invoice_payment', { id: paid.id, amount: paid.amountDue });
    expect((await fails(env.mcp, 'void_invoice', { id: paid.id }, 409)).detail).toContain('Paid and void invoices are final');
    await fails(env.mcp, 'finalize_invoice', { id: paid.id }, 409);
  });

  it('records partial and full payments; the last one settles the invoice', async () => {
    const inv = await ok(env.mcp, 'create_invoice', { customer: await customer(), lines: [consulting] });
    expect(inv.grossAmount).toBe(42840);
    env.setNow('2026-11-25T09:00:00Z');
    const partial = await ok(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 40000, paidAt: '2026-11-24T15:00:00+01:00' });
    expect(partial).toMatchObject({ status: 'open', amountPaid: 40000, amountDue: 2840, paidAt: null });
    expect(partial.payments).toEqual([
      { id: expect.any(String), amount: 40000, paidAt: '2026-11-24T14:00:00.000Z', paymentPlanId: null, createdAt: '2026-11-25T09:00:00.000Z', returnedAt: null },
    ]);
    const over = await fails(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 2841 }, 422);
    expect(paths(over)).toEqual(['amount']);
    expect(over.detail).toContain('exceeds the 2840 minor units (€28.40) still due');
    const paid = await ok(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 2840 });
    expect(paid).toMatchObject({ status: 'paid', amountPaid: 42840, amountDue: 0, paidAt: '2026-11-25T09:00:00.000Z' });
    expect(paid.payments).toHaveLength(2);
    const again = await fails(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 1 }, 409);
    expect(again.detail).toContain('is paid');
  });

  it('refuses payments on drafts (409), in the future, of 0 or fractions of a cent (422)', async () => {
    const c = await customer();
    const draft = await ok(env.mcp, 'create_invoice', { customer: c, status: 'draft', lines: [consulting] });
    expect((await fails(env.mcp, 'record_invoice_payment', { id: draft.id, amount: 100 }, 409)).detail).toContain('finalize_invoice');
    const open = await ok(env.mcp, 'create_invoice', { customer: c, lines: [consulting] });
    const future = await fails(env.mcp, 'record_invoice_payment', { id: open.id, amount: 100, paidAt: '2026-11-20T10:00:01Z' }, 422);
    expect(paths(future)).toEqual(['paidAt']);
    expect(paths(await fails(env.mcp, 'record_invoice_payment', { id: open.id, amount: 0 }, 422))).toEqual(['amount']);
    expect(paths(await fails(env.mcp, 'record_invoice_payment', { id: open.id, amount: 10.5 }, 422))).toEqual(['amount']);
    expect((await ok(env.mcp, 'get_invoice', { id: open.id })).amountPaid).toBe(0);
  });
});

describe('create_invoice names a subscription', () => {
  it("of its own customer only: an unknown id, another organisation's or another customer's subscription is a 422 at subscription", async () => {
    const a = await customer();
    const b = await customer();
    const subB = await subscriptionOf(env.mcp, b);
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const foreign = await subscriptionOf(mcp, await customer(mcp));
    for (const subscription of [UUID, foreign, subB]) {
      expect(paths(await fails(env.mcp, 'create_invoice', { customer: a, subscription, lines: [consulting] }, 422))).toEqual(['subscription']);
    }
    const own = await subscriptionOf(env.mcp, a);
    expect((await ok(env.mcp, 'create_invoice', { customer: a, subscription: own, lines: [consulting] })).subscription).toBe(own);
  });
});

describe('list_invoices', () => {
  it('filters by customer, subscription and status', async () => {
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const a = await customer(mcp);
    const b = await customer(mcp);
    const sub = await subscriptionOf(mcp, a);
    const first = await ok(mcp, 'create_invoice', { customer: a, lines: [consulting] });
    const draft = await ok(mcp, 'create_invoice', { customer: a, status: 'draft', subscription: sub, lines: [consulting] });
    const other = await ok(mcp, 'create_invoice', { customer: b, lines: [consulting] });
    const ids = (page: { data: Array<{ id: string }> }) => page.data.map((i) => i.id);
    expect(ids(await ok(mcp, 'list_invoices', {}))).toEqual([first.id, draft.id, other.id]);
    expect(ids(await ok(mcp, 'list_invoices', { customer: a }))).toEqual([first.id, draft.id]);
    expect(ids(await ok(mcp, 'list_invoices', { subscription: sub }))).toEqual([draft.id]);
    expect(ids(await ok(mcp, 'list_invoices', { status: 'open' }))).toEqual([first.id, other.id]);
    expect(ids(await ok(mcp, 'list_invoices', { customer: a, status: 'draft' }))).toEqual([draft.id]);
    const page = await ok(mcp, 'list_invoices', { limit: 1, page: 2, order: { createdAt: 'desc' } });
    expect(ids(page)).toEqual([draft.id]);
    expect(page.meta.pagination).toEqual({ totalItems: 3, itemsPerPage: 1, currentPage: 2, lastPage: 3, pageTotalItems: 1 });
    expect(page.data[0]).toMatchObject({ id: draft.id, customer: { id: a }, subscription: sub, status: 'draft' });
    expect((await ok(mcp, 'get_invoice', { id: page.data[0].id })).lines).toHaveLength(1);
    const rest = await env.http('GET', '/invoices?limit=1&page=2&order[createdAt]=desc', { token: org.apiKey });
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((i: { id: string }) => i.id)).toEqual([draft.id]);
    expect(rest.body.data[0].lines).toHaveLength(1);
  });

  it('rows name the customer by number and name and show whether a payment plan covers the invoice; REST keeps the invoice', async () => {
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const c = await ok(mcp, 'create_customer', { companyName: 'Schmidt AG', currencyCode: 'EUR' });
    const planned = await ok(mcp, 'create_invoice', { customer: c.id, lines: [consulting] });
    const plain = await ok(mcp, 'create_invoice', { customer: c.id, lines: [consulting] });
    await ok(mcp, 'create_payment_plan', { invoice: planned.id, installmentCount: 2, firstDueAt: '2026-12-01', interval: '1M' });
    const listed = await call(mcp, 'list_invoices', {});
    const customerRef = { id: c.id, customerNumber: c.customerNumber, companyName: 'Schmidt AG', firstName: null, lastName: null };
    const row = (invoice: any, dunningPaused: boolean) => ({
      id: invoice.id,
      number: invoice.number,
      customer: customerRef,
      subscription: null,
      status: 'open',
      currencyCode: 'EUR',
      grossAmount: invoice.grossAmount,
      amountDue: invoice.amountDue,
      issuedAt: NOW,
      dueAt: invoice.dueAt,
      dunningPaused,
    });
    expect(listed.body.data).toEqual([row(planned, true), row(plain, false)]);
    expect(listed.text).toContain(`| ${c.id} ${c.customerNumber} Schmidt AG |`);
    const rest = await env.http('GET', '/invoices', { token: org.apiKey });
    const full = await Promise.all([planned, plain].map(async (i) => (await env.http('GET', `/invoices/${i.id}`, { token: org.apiKey })).body));
    expect(rest.body.data).toEqual(full);
    expect(rest.body.data[0]).toMatchObject({ customer: c.id, dunningPaused: true });
  });

  it('overdue: open, past dueAt, something due, under no active payment plan; dueBefore: open and due before', async () => {
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const a = await customer(mcp);
    const b = await customer(mcp);
    env.setNow('2026-10-01T10:00:00Z');
    const due = '2026-10-15T10:00:00Z';
    const late = await ok(mcp, 'create_invoice', { customer: a, dueAt: due, lines: [consulting] });
    const planned = await ok(mcp, 'create_invoice', { customer: a, dueAt: due, lines: [consulting] });
    const paid = await ok(mcp, 'create_invoice', { customer: a, dueAt: due, lines: [consulting] });
    const voided = await ok(mcp, 'create_invoice', { customer: a, dueAt: due, lines: [consulting] });
    await ok(mcp, 'create_invoice', { customer: a, dueAt: due, status: 'draft', lines: [consulting] });
    const later = await ok(mcp, 'create_invoice', { customer: a, dueAt: '2026-12-31T12:00:00Z', lines: [consulting] });
    const elsewhere = await ok(mcp, 'create_invoice', { customer: b, dueAt: due, lines: [consulting] });
    env.setNow(NOW);
    await ok(mcp, 'record_invoice_payment', { id: late.id, amount: 100 });
    await ok(mcp, 'record_invoice_payment', { id: paid.id, amount: paid.amountDue });
    await ok(mcp, 'void_invoice', { id: voided.id });
    await ok(mcp, 'create_payment_plan', { invoice: planned.id, installmentCount: 2, firstDueAt: '2026-12-01', interval: '1M' });

    const ids = async (args: Record<string, unknown>) => (await ok(mcp, 'list_invoices', args)).data.map((i: { id: string }) => i.id);
    expect(await ids({ overdue: true })).toEqual([late.id, elsewhere.id]);
    expect((await ok(mcp, 'list_invoices', { overdue: true, limit: 1 })).meta.pagination.totalItems).toBe(2);
    expect(await ids({ overdue: true, customer: a })).toEqual([late.id]);
    expect(await ids({ overdue: true, status: 'paid' })).toEqual([]);
    expect(await ids({ dueBefore: NOW })).toEqual([late.id, planned.id, elsewhere.id]);
    expect(await ids({ dueBefore: '2027-01-01T00:00:00+01:00' })).toEqual([late.id, planned.id, later.id, elsewhere.id]);
    expect(await ids({ dueBefore: '2026-12-31T13:00:00+02:00' })).toEqual([late.id, planned.id, elsewhere.id]);
    expect(await ids({ overdue: true, dueBefore: '2026-10-15T10:00:00Z' })).toEqual([]);
    expect(await ids({ overdue: true, dueBefore: '2026-10-15T10:00:00.001Z' })).toEqual([late.id, elsewhere.id]);
    await fails(mcp, 'list_invoices', { overdue: false }, 400);
    await fails(mcp, 'list_invoices', { dueBefore: 'yesterday' }, 400);

    const rest = async (query: string) => env.http('GET', `/invoices?${query}`, { token: org.apiKey });
    expect((await rest('overdue=true')).body.data.map((i: { id: string }) => i.id)).toEqual([late.id, elsewhere.id]);
    expect((await rest(`overdue=true&customer=${a}`)).body.data[0]).toMatchObject({ id: late.id, customer: a, amountDue: late.amountDue - 100 });
    expect((await rest('dueBefore=2026-11-20T10:00:00Z')).body.data).toHaveLength(3);
    expect((await rest('overdue=false')).status).toBe(400);

    env.setNow('2026-12-31T12:00:01Z');
    expect(await ids({ overdue: true })).toEqual([late.id, later.id, elsewhere.id]);
  });
});

describe('REST routes', () => {
  it('POST /invoices answers 201 with Location; actions answer 200', async () => {
    const c = await customer();
    const created = await env.http('POST', '/invoices', { body: { customer: c, status: 'draft', lines: [consulting] } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/invoices/${created.body.id}`);
    const id = created.body.id;
    expect((await env.http('GET', `/invoices/${id}`)).body).toEqual(created.body);
    const finalized = await env.http('POST', `/invoices/${id}/finalize`);
    expect(finalized.status).toBe(200);
    expect(finalized.body.status).toBe('open');
    const paid = await env.http('POST', `/invoices/${id}/payments`, { body: { amount: 100 } });
    expect(paid.status).toBe(200);
    expect(paid.body.amountPaid).toBe(100);
    expect((await env.http('POST', `/invoices/${id}/void`)).body.status).toBe('void');
    expect((await env.http('POST', `/invoices/${id}/void`)).status).toBe(409);
    const list = await env.http('GET', `/invoices?customer=${c}&status=void`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { id: string }) => i.id)).toEqual([id]);
    expect((await env.http('GET', '/invoices?status=late')).status).toBe(400);
    expect((await env.http('POST', '/invoices', { body: { customer: c, lines: [] } })).status).toBe(422);
  });

  it('answers 404 for unknown ids', async () => {
    expect((await env.http('GET', `/invoices/${UUID}`)).status).toBe(404);
    expect((await env.http('POST', `/invoices/${UUID}/finalize`)).status).toBe(404);
    expect((await env.http('POST', `/invoices/${UUID}/void`)).status).toBe(404);
    expect((await env.http('POST', `/invoices/${UUID}/payments`, { body: { amount: 1 } })).status).toBe(404);
  });
});

describe('tenancy and permissions', () => {
  it("answers 404 for another organisation's invoice and leaves it untouched", async () => {
    const inv = await ok(env.mcp, 'create_invoice', { customer: await customer(), status: 'draft', lines: [consulting] });
    const org = await env.newOrg();
    const stranger = await env.mcpFor(org.apiKey);
    await fails(stranger, 'get_invoice', { id: inv.id }, 404);
    await fails(stranger, 'finalize_invoice', { id: inv.id }, 404);
    await fails(stranger, 'void_invoice', { id: inv.id }, 404);
    await fails(stranger, 'record_invoice_payment', { id: inv.id, amount: 1 }, 404);
    expect((await ok(stranger, 'list_invoices', {})).data).toEqual([]);
    expect((await env.http('GET', `/invoices/${inv.id}`, { token: org.apiKey })).status).toBe(404);
    expect((await ok(env.mcp, 'get_invoice', { id: inv.id })).status).toBe('draft');
  });

  it('needs invoice:read to read and invoice:write to change', async () => {
    const inv = await ok(env.mcp, 'create_invoice', { customer: await customer(), lines: [consulting] });
    const reader = await env.newKey(env.org, ['invoice:read']);
    expect((await env.http('GET', `/invoices/${inv.id}`, { token: reader })).status).toBe(200);
    expect((await env.http('GET', '/invoices', { token: reader })).status).toBe(200);
    expect((await env.http('POST', '/invoices', { body: { customer: inv.customer, lines: [consulting] }, token: reader })).status).toBe(403);
    for (const action of ['finalize', 'void']) {
      expect((await env.http('POST', `/invoices/${inv.id}/${action}`, { token: reader })).status).toBe(403);
    }
    expect((await env.http('POST', `/invoices/${inv.id}/payments`, { body: { amount: 1 }, token: reader })).status).toBe(403);
    const none = await env.newKey(env.org, ['customer:read']);
    expect((await env.http('GET', `/invoices/${inv.id}`, { token: none })).status).toBe(403);
    const { tools } = await (await env.mcpFor(none)).listTools();
    const invoiceTools = ['create_invoice', 'list_invoices', 'get_invoice', 'finalize_invoice', 'void_invoice', 'record_invoice_payment'];
    expect(tools.filter((t) => invoiceTools.includes(t.name))).toEqual([]);
    await fails(await env.mcpFor(reader), 'record_invoice_payment', { id: inv.id, amount: 1 }, 403);
    expect((await ok(env.mcp, 'get_invoice', { id: inv.id })).amountPaid).toBe(0);
  });
});
