import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { fails, ok, paths, setup, storedInvoice, type TestEnv } from './helpers.js';
import { eventually, expectSigned, Receiver, type Received } from './webhookReceiver.js';

/**
 * Invoice line precision, payment terms, credit notes, credit balances and the invoice events
 * (issue 11), through the MCP client and the REST facade over real HTTP, with a real webhook receiver.
 */

let env: TestEnv;
let receiver: Receiver;
let secret: string;
const NOW = '2026-11-20T10:00:00.000Z';
const INVOICE_EVENTS = ['invoice.created', 'invoice.paid', 'invoice.voided', 'credit_note.created'];

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000 });
  receiver = await Receiver.start();
  secret = (await ok(env.mcp, 'create_webhook', { url: receiver.url, events: INVOICE_EVENTS })).secret;
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});
beforeEach(() => env.setNow(NOW));

async function customer(fields: Record<string, unknown> = {}, mcp: Client = env.mcp): Promise<any> {
  return ok(mcp, 'create_customer', { lastName: 'Lovelace', timeZone: 'UTC', ...fields });
}

/** One line of `net` cents at 19 %: gross = net + round(net x 0.19). */
async function invoice(customerId: string, unitAmount: number, extra: Record<string, unknown> = {}): Promise<any> {
  return ok(env.mcp, 'create_invoice', { customer: customerId, lines: [{ description: 'Licence', quantity: 1, unitAmount, taxRate: 19 }], ...extra });
}

/** The deliveries about one resource (data.invoice or data.creditNote with this id), checked and unwrapped. */
async function delivered(type: string, id: string, count = 1): Promise<any[]> {
  const mine = () => receiver.of(type).filter((r: Received) => (r.json.data.invoice ?? r.json.data.creditNote).id === id);
  const deadline = Date.now() + 5000;
  while (mine().length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} ${type} for ${id}, got ${mine().length}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return mine().map((r) => {
    expectSigned(r, secret, env.org.organisationId, { recent: false });
    return r.json.data;
  });
}

describe('invoice line precision', () => {
  it('takes decimal quantities and unitAmountDecimal, rounding quantity x price once, half-up', async () => {
    const c = (await customer()).id;
    const inv = await ok(env.mcp, 'create_invoice', {
      customer: c,
      lines: [
        // 1000 x 0.0025 cents = 2.5 -> 3 (rounding the unit price first would give 0)
        { description: 'Tokens', quantity: 1000, unitAmountDecimal: '0.0025' },
        // 2.5 h x 33.335 cents = 83.3375 -> 83
        { description: 'Support hours', quantity: '2.50', unitAmountDecimal: '33.3350', taxRate: 19 },
        // 0.5 x 1999.5 = 999.75 -> 1000
        { description: 'Half a seat', quantity: 0.5, unitAmountDecimal: '1999.5' },
        // 1.5 x 4900 = 7350, an integer price given as a decimal string
        { description: 'Seats', quantity: '1.5', unitAmountDecimal: '4900.000' },
        { description: 'Refund', quantity: '0.000001', unitAmount: -1_000_000 },
      ],
    });
    expect(inv.lines.map((l: any) => [l.quantity, l.unitAmountDecimal, l.unitAmount, l.netAmount])).toEqual([
      ['1000', '0.0025', null, 3],
      ['2.5', '33.335', null, 83],
      ['0.5', '1999.5', null, 1000],
      ['1.5', '4900', 4900, 7350],
      ['0.000001', '-1000000', -1000000, -1],
    ]);
    // 0 %: 3 + 1000 + 7350 - 1 = 8352; 19 %: 83 -> 15.77 -> 16.
    expect(inv).toMatchObject({ netAmount: 8435, taxAmount: 16, grossAmount: 8451 });
    const rest = await env.http('GET', `/invoices/${inv.id}`);
    expect(rest.body.lines[0]).toMatchObject({ quantity: '1000', unitAmountDecimal: '0.0025', unitAmount: null, netAmount: 3 });
  });

  it.each([
    [{ description: 'x', quantity: 1 }, 'lines[0].unitAmount', 'give unitAmount'],
    [{ description: 'x', quantity: 1, unitAmount: 100, unitAmountDecimal: '100' }, 'lines[0].unitAmountDecimal', 'exactly one'],
    [{ description: 'x', quantity: 1, unitAmountDecimal: '0.0000000000001' }, 'lines[0].unitAmountDecimal', 'at most 12 decimals'],
    [{ description: 'x', quantity: 1, unitAmountDecimal: '1e3' }, 'lines[0].unitAmountDecimal', 'decimal string'],
    [{ description: 'x', quantity: 1, unitAmountDecimal: 12 }, 'lines[0].unitAmountDecimal', ''],
    [{ description: 'x', quantity: 1, unitAmount: 0.5 }, 'lines[0].unitAmount', 'unitAmountDecimal'],
    [{ description: 'x', quantity: '0', unitAmount: 1 }, 'lines[0].quantity', 'greater than 0'],
    [{ description: 'x', quantity: '1.0000001', unitAmount: 1 }, 'lines[0].quantity', '6 fractional digits'],
  ])('rejects line %j naming %s', async (line, path, message) => {
    const problem = await fails(env.mcp, 'create_invoice', { customer: (await customer()).id, lines: [line] }, 422);
    expect(paths(problem)).toEqual([path]);
    expect(JSON.stringify(problem.violations)).toContain(message);
    const rest = await env.http('POST', '/invoices', { body: { customer: (await customer()).id, lines: [line] } });
    expect(rest.status).toBe(422);
    expect(paths(rest.body)).toEqual([path]);
  });
});

describe('payment terms', () => {
  it("dueAt is issuedAt + the customer's paymentTermDays, else BILLING_PAYMENT_TERM_DAYS; a given dueAt wins", async () => {
    const own = await customer({ paymentTermDays: 30 });
    expect(own.paymentTermDays).toBe(30);
    expect((await invoice(own.id, 100)).dueAt).toBe('2026-12-20T10:00:00.000Z');
    const none = await customer();
    expect(none.paymentTermDays).toBeNull();
    expect((await invoice(none.id, 100)).dueAt).toBe('2026-12-04T10:00:00.000Z');
    expect((await invoice(none.id, 100, { dueAt: '2026-11-25T00:00:00Z' })).dueAt).toBe('2026-11-25T00:00:00.000Z');
    const now = await ok(env.mcp, 'update_customer', { id: own.id, paymentTermDays: 0 });
    expect((await invoice(now.id, 100)).dueAt).toBe(NOW);
    // finalize_invoice issues with the terms as they are then
    const draft = await invoice(own.id, 100, { status: 'draft' });
    expect(draft.dueAt).toBeNull();
    await ok(env.mcp, 'update_customer', { id: own.id, paymentTermDays: null });
    env.setNow('2026-11-21T08:00:00Z');
    expect((await ok(env.mcp, 'finalize_invoice', { id: draft.id })).dueAt).toBe('2026-12-05T08:00:00.000Z');
  });

  it('paymentTermDays is a whole number from 0 to 365 or null', async () => {
    for (const bad of [-1, 366, 1.5, '10']) {
      expect(paths(await fails(env.mcp, 'create_customer', { lastName: 'X', paymentTermDays: bad }, 422))).toEqual(['paymentTermDays']);
    }
    const c = await customer({ paymentTermDays: 365 });
    expect(paths(await fails(env.mcp, 'update_customer', { id: c.id, paymentTermDays: 400 }, 422))).toEqual(['paymentTermDays']);
    expect((await env.http('PUT', `/customers/${c.id}`, { body: { paymentTermDays: 10 } })).body.paymentTermDays).toBe(10);
  });

  it('BILLING_PAYMENT_TERM_DAYS sets the default (14 unless set; 0 to 365)', async () => {
    expect(loadConfig({}).paymentTermDays).toBe(14);
    expect(loadConfig({ BILLING_PAYMENT_TERM_DAYS: '30' }).paymentTermDays).toBe(30);
    expect(() => loadConfig({ BILLING_PAYMENT_TERM_DAYS: '366' })).toThrow(/BILLING_PAYMENT_TERM_DAYS/);
    const other = await setup({ paymentTermDays: 3 });
    try {
      other.setNow(NOW);
      const c = (await ok(other.mcp, 'create_customer', { lastName: 'Y', timeZone: 'UTC' })).id;
      const inv = await ok(other.mcp, 'create_invoice', { customer: c, lines: [{ description: 'x', quantity: 1, unitAmount: 1 }] });
      expect(inv.dueAt).toBe('2026-11-23T10:00:00.000Z');
    } finally {
      await other.close();
    }
  });
});

describe('credit notes on open invoices', () => {
  it('take credit off amountDue; crediting the rest voids an unpaid invoice; more than due is a 422', async () => {
    const c = (await customer()).id;
    const inv = await invoice(c, 10_000); // gross 11900
    const first = await ok(env.mcp, 'create_credit_note', { id: inv.number, amount: 1_900, reason: 'Late delivery' });
    expect(first).toEqual({
      id: expect.any(String),
      number: expect.stringMatching(/^CN-2026-\d{6}$/),
      invoice: inv.id,
      customer: c,
      amount: 1_900,
      currencyCode: 'EUR',
      reason: 'Late delivery',
      createdAt: NOW,
    });
    const after = await ok(env.mcp, 'get_invoice', { id: inv.id });
    expect(after).toMatchObject({ status: 'open', amountCredited: 1_900, amountPaid: 0, amountDue: 10_000 });

    const tooMuch = await fails(env.mcp, 'create_credit_note', { id: inv.id, amount: 10_001, reason: 'x' }, 422);
    expect(paths(tooMuch)).toEqual(['amount']);
    expect(tooMuch.detail).toContain('10000 minor units');

    const rest = await ok(env.mcp, 'create_credit_note', { id: inv.id, reason: 'Cancelled order' });
    expect(rest.amount).toBe(10_000);
    const voided = await ok(env.mcp, 'get_invoice', { id: inv.id });
    expect(voided).toMatchObject({ status: 'void', voidedAt: NOW, amountCredited: 11_900, amountDue: 0, paidAt: null });
    expect((await fails(env.mcp, 'create_credit_note', { id: inv.id, reason: 'again' }, 409)).detail).toContain('is void');

    const [created] = await delivered('credit_note.created', rest.id);
    expect(created).toEqual({ creditNote: rest });
    const [voidEvent] = await delivered('invoice.voided', inv.id);
    expect(voidEvent).toEqual({ invoice: storedInvoice(voided) });
  });

  it('crediting the rest of a partly paid invoice makes it paid', async () => {
    const inv = await invoice((await customer()).id, 1_000); // gross 1190
    await ok(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 1_000 });
    await ok(env.mcp, 'create_credit_note', { id: inv.id, reason: 'Goodwill' });
    const paid = await ok(env.mcp, 'get_invoice', { id: inv.id });
    expect(paid).toMatchObject({ status: 'paid', paidAt: NOW, amountPaid: 1_000, amountCredited: 190, amountDue: 0 });
    expect(await delivered('invoice.paid', inv.id)).toEqual([{ invoice: storedInvoice(paid) }]);
  });

  /** A customer whose 300 of credit balance (a credit note on a paid invoice) the next invoice took: gross 2380, 2080 due. */
  async function invoiceWithCreditApplied(): Promise<{ c: any; inv: any }> {
    const c = await customer();
    const paidOne = await invoice(c.id, 1_000); // gross 1190
    await ok(env.mcp, 'record_invoice_payment', { id: paidOne.id, amount: 1_190 });
    await ok(env.mcp, 'create_credit_note', { id: paidOne.id, amount: 300, reason: 'Price correction' });
    const inv = await invoice(c.id, 2_000);
    expect(inv).toMatchObject({ creditApplied: 300, amountDue: 2_080 });
    return { c, inv };
  }

  it('crediting what is left of an invoice partly settled by the credit balance makes it paid, keeping the balance applied: gross = credited + applied', async () => {
    const { c, inv } = await invoiceWithCreditApplied();

    const note = await ok(env.mcp, 'create_credit_note', { id: inv.id, reason: 'Goodwill' });
    expect(note.amount).toBe(2_080);
    const settled = await ok(env.mcp, 'get_invoice', { id: inv.id });
    expect(settled).toMatchObject({ status: 'paid', paidAt: NOW, amountPaid: 0, amountCredited: 2_080, creditApplied: 300, amountDue: 0, grossAmount: 2_380 });
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(0);
    expect(await delivered('invoice.paid', inv.id)).toEqual([{ invoice: storedInvoice(settled) }]);
  });

  it("numbers credit notes by the year of their creation in the customer's time zone", async () => {
    const c = await customer({ timeZone: 'Pacific/Auckland' });
    const inv = await invoice(c.id, 1_000);
    env.setNow('2026-12-31T12:00:00.000Z'); // 2027-01-01 01:00 in Auckland
    expect((await ok(env.mcp, 'create_credit_note', { id: inv.id, amount: 100, reason: 'New year' })).number).toBe('CN-2027-000001');
  });

  it('void_invoice issues the credit note for what is due and the applied credit, which returns to the balance: gross = paid + credited', async () => {
    const { c, inv } = await invoiceWithCreditApplied();
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(0);
    await ok(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 80 });

    const voided = await ok(env.mcp, 'void_invoice', { id: inv.id });
    expect(voided).toMatchObject({ status: 'void', amountPaid: 80, amountCredited: 2_300, creditApplied: 0, amountDue: 0 });
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(300);
    const notes = await ok(env.mcp, 'list_credit_notes', { invoice: inv.number });
    expect(notes.data).toEqual([
      { id: expect.any(String), number: expect.any(String), invoice: inv.id, customer: c.id, amount: 2_300, currencyCode: 'EUR', createdAt: NOW },
    ]);
    expect((await ok(env.mcp, 'get_credit_note', { id: notes.data[0].id })).reason).toBe('Invoice voided');
    expect(await delivered('invoice.voided', inv.id)).toEqual([{ invoice: storedInvoice(voided) }]);
  });

  it('refuses drafts, void invoices and invoices under an active payment plan (409)', async () => {
    const c = (await customer()).id;
    const draft = await invoice(c, 100, { status: 'draft' });
    const onDraft = (await fails(env.mcp, 'create_credit_note', { id: draft.id, reason: 'x' }, 409)).detail;
    expect(onDraft).toContain('is draft');
    // Nothing changes an invoice: the answer names the tools that exist for a draft.
    expect(onDraft).toContain('void it (void_invoice) and create a corrected one (create_invoice), or finalize it (finalize_invoice)');
    expect(onDraft).not.toContain('Change');
    const planned = await invoice(c, 1_000);
    await ok(env.mcp, 'create_payment_plan', { invoice: planned.id, installmentCount: 2, firstDueAt: '2026-12-01', interval: '1M' });
    expect((await fails(env.mcp, 'create_credit_note', { id: planned.id, reason: 'x' }, 409)).detail).toContain('cancel_payment_plan');
    expect(await ok(env.mcp, 'list_credit_notes', { customer: c })).toMatchObject({ data: [] });
  });
});

describe('credit notes on paid invoices and the credit balance', () => {
  it("become the customer's creditBalance, taken off their next invoices until used up", async () => {
    const c = await customer();
    expect(c.creditBalance).toBe(0);
    const inv = await invoice(c.id, 5_000); // gross 5950
    await ok(env.mcp, 'record_invoice_payment', { id: inv.id, amount: 5_950 });
    const note = await ok(env.mcp, 'create_credit_note', { id: inv.id, amount: 2_000, reason: 'Outage' });
    expect(note.amount).toBe(2_000);
    expect(await ok(env.mcp, 'get_invoice', { id: inv.id })).toMatchObject({ status: 'paid', amountPaid: 5_950, amountCredited: 0, amountDue: 0 });
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(2_000);

    // gross less earlier credit notes: 5950 - 2000 = 3950 at most
    expect(paths(await fails(env.mcp, 'create_credit_note', { id: inv.id, amount: 3_951, reason: 'x' }, 422))).toEqual(['amount']);

    // The next invoice: 1000 + 190 = 1190, fully covered by credit: paid at once.
    const covered = await invoice(c.id, 1_000);
    expect(covered).toMatchObject({ status: 'paid', paidAt: NOW, creditApplied: 1_190, amountDue: 0 });
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(810);
    expect((await delivered('invoice.paid', covered.id))[0].invoice).toEqual(storedInvoice(covered));
    // The one after: 2380 with 810 off.
    const part = await invoice(c.id, 2_000);
    expect(part).toMatchObject({ status: 'open', creditApplied: 810, amountDue: 1_570 });
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(0);
    // A draft takes the balance only when it is issued.
    await ok(env.mcp, 'create_credit_note', { id: inv.id, reason: 'Rest' }); // default: 3950
    const draft = await invoice(c.id, 1_000, { status: 'draft' });
    expect(draft).toMatchObject({ creditApplied: 0, amountDue: 1_190 });
    expect((await ok(env.mcp, 'finalize_invoice', { id: draft.id })).creditApplied).toBe(1_190);
    expect((await ok(env.mcp, 'get_customer', { id: c.id })).creditBalance).toBe(2_760);

    // The balance is kept in the customer's currency, which is fixed once the customer has an invoice.
    const moved = await customer();
    const eur = await invoice(moved.id, 100);
    await ok(env.mcp, 'record_invoice_payment', { id: eur.id, amount: eur.amountDue });
    expect((await fails(env.mcp, 'update_customer', { id: moved.id, currencyCode: 'USD' }, 409)).detail).toContain('fixed at EUR');

    const full = await fails(env.mcp, 'create_credit_note', { id: inv.id, reason: 'x' }, 409);
    expect(full.detail).toContain('credited in full');
    expect((await ok(env.mcp, 'list_credit_notes', { invoice: inv.id })).data.map((n: any) => n.amount)).toEqual([2_000, 3_950]);
  });
});

describe('credit note tools', () => {
  it('serve REST: 201 with Location, lists filtered by invoice and customer, gets by id or number; 404 elsewhere', async () => {
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const a = await customer({}, mcp);
    const b = await customer({}, mcp);
    const invA = await ok(mcp, 'create_invoice', { customer: a.id, lines: [{ description: 'x', quantity: 1, unitAmount: 1_000 }] });
    const invB = await ok(mcp, 'create_invoice', { customer: b.id, lines: [{ description: 'y', quantity: 1, unitAmount: 500 }] });
    const created = await env.http('POST', `/invoices/${invA.id}/credit-notes`, { token: org.apiKey, body: { amount: 100, reason: 'Discount' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ number: 'CN-2026-000001', amount: 100, invoice: invA.id, customer: a.id });
    expect(created.headers.get('location')).toBe(`/credit-notes/${created.body.id}`);
    const second = await env.http('POST', `/invoices/${invB.number}/credit-notes`, { token: org.apiKey, body: { reason: 'Void' } });
    expect(second.body).toMatchObject({ number: 'CN-2026-000002', amount: 500 });

    const all = await env.http('GET', '/credit-notes', { token: org.apiKey });
    expect(all.body.data.map((n: any) => n.number)).toEqual(['CN-2026-000001', 'CN-2026-000002']);
    expect(all.body.data[0].reason).toBe('Discount');
    expect((await env.http('GET', `/credit-notes?customer=${b.customerNumber}`, { token: org.apiKey })).body.data.map((n: any) => n.amount)).toEqual([500]);
    expect((await env.http('GET', `/credit-notes?invoice=${invA.id}`, { token: org.apiKey })).body.meta.pagination.totalItems).toBe(1);
    expect((await env.http('GET', `/credit-notes/CN-2026-000002`, { token: org.apiKey })).body).toEqual(second.body);
    expect((await env.http('GET', `/credit-notes/${created.body.id}`, { token: org.apiKey })).body).toEqual(created.body);

    // MCP list rows leave out the reason; get_credit_note has it.
    const rows = await ok(mcp, 'list_credit_notes', { customer: a.id });
    expect(rows.data).toEqual([{ ...created.body, reason: undefined }].map(({ reason: _r, ...row }) => row));

    // Another organisation sees none of it.
    expect((await env.http('GET', `/credit-notes/${created.body.id}`)).status).toBe(404);
    expect((await env.http('POST', `/invoices/${invA.id}/credit-notes`, { body: { reason: 'x' } })).status).toBe(404);
    expect((await env.http('GET', `/credit-notes?invoice=${invA.id}`)).status).toBe(404);
    expect((await env.http('GET', '/credit-notes/nothing')).status).toBe(404);
    expect((await env.http('POST', `/invoices/${invA.id}/credit-notes`, { token: org.apiKey, body: { reason: '' } })).status).toBe(422);
    expect((await env.http('POST', `/invoices/${invA.id}/credit-notes`, { token: org.apiKey, body: { amount: 0, reason: 'x' } })).status).toBe(422);
  });

  it('need invoice:write to create and invoice:read to read', async () => {
    const reader = await env.newKey(env.org, ['invoice:read']);
    const inv = await invoice((await customer()).id, 100);
    expect((await env.http('POST', `/invoices/${inv.id}/credit-notes`, { token: reader, body: { reason: 'x' } })).status).toBe(403);
    expect((await env.http('GET', '/credit-notes', { token: reader })).status).toBe(200);
    const none = await env.newKey(env.org, ['customer:read']);
    expect((await env.http('GET', '/credit-notes', { token: none })).status).toBe(403);
  });
});

describe('invoice events', () => {
  it('invoice.created when issued (create open, finalize), invoice.paid by payment, none for a draft; all signed', async () => {
    const c = (await customer()).id;
    const open = await invoice(c, 1_000);
    const [created] = await delivered('invoice.created', open.id);
    expect(created).toEqual({ invoice: storedInvoice(open) });
    const draft = await invoice(c, 500, { status: 'draft' });
    env.setNow('2026-11-21T09:00:00Z');
    const finalized = await ok(env.mcp, 'finalize_invoice', { id: draft.id });
    expect(await delivered('invoice.created', draft.id)).toEqual([{ invoice: storedInvoice(finalized) }]);
    await ok(env.mcp, 'record_invoice_payment', { id: open.id, amount: 190 });
    const paid = await ok(env.mcp, 'record_invoice_payment', { id: open.id, amount: 1_000 });
    expect(await delivered('invoice.paid', open.id)).toEqual([{ invoice: storedInvoice(paid) }]);
    const free = await invoice(c, 0);
    const types = async () => receiver.received.filter((r) => r.json.data.invoice?.id === free.id).map((r) => r.json.event.type);
    await delivered('invoice.paid', free.id);
    expect(await types()).toEqual(['invoice.created', 'invoice.paid']);
    // A draft voided was never issued: no event for it at all.
    const unissued = await invoice(c, 100, { status: 'draft' });
    await ok(env.mcp, 'void_invoice', { id: unissued.id });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received.filter((r) => r.json.data.invoice?.id === unissued.id)).toEqual([]);
    const head = receiver.of('invoice.created').find((r) => r.json.data.invoice.id === open.id)!;
    expect(head.headers['x-webhook-event']).toBe('invoice.created');
  });
});

describe('invoices of instant usage', () => {
  it('announce themselves: recording an instant_metered value sends invoice.created once it commits', async () => {
    await ok(env.mcp, 'create_unit', { name: 'sms' });
    const m = await ok(env.mcp, 'create_measurement', { unit: 'sms', code: 'sms_sent', aggregationType: 'last_value', type: 'instant_metered' });
    const product = await ok(env.mcp, 'create_product', { name: 'SMS', measurement: m.id });
    const price = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'per_unit', currencyCode: 'EUR', price: { amount: 0.09 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'sms', name: 'SMS', charges: [{ product: product.id, pricePlan: price.id }] });
    const c = await ok(env.mcp, 'create_customer', { companyName: 'Texting GmbH' });
    const s = await ok(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    // The delivery worker is woken after the commit that issued the invoice (and only then: ingestion is a hot path).
    const worker = env.app.deliveries;
    const kick = worker.kick.bind(worker);
    let kicks = 0;
    worker.kick = () => {
      kicks += 1;
      kick();
    };
    try {
      await ok(env.mcp, 'create_subscription_measurement', { subscriptionItem: s.items[0].id, quantity: 10 });
      expect(kicks).toBe(1);
    } finally {
      worker.kick = kick;
    }
    const [invoice] = (await ok(env.mcp, 'list_invoices', { subscription: s.id })).data;
    expect(invoice).toMatchObject({ grossAmount: 90 });
    const delivered = await eventually(async () => receiver.of('invoice.created').find((r: Received) => r.json.data.invoice.id === invoice.id));
    expectSigned(delivered, secret, env.org.organisationId, { recent: false });
  });
});
