/**
 * A list's `invoice` or `subscription` filter naming nothing is the 404 of that invoice or subscription,
 * naming the ref and the list that shows the ids, as a `customer` filter's (listCustomerFilter.test.ts):
 * an empty 200 told a model with a misspelt number that the invoice has no e-mails, notes or plans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { buildFixture } from './fixtures.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
const known: Record<'invoice' | 'subscription', { id: string; number: string }[]> = { invoice: [], subscription: [] };
const stranger: Record<'invoice' | 'subscription', { id: string; number: string }[]> = { invoice: [], subscription: [] };
const periods = [{ contractPeriod: '1M', cancellationPeriod: '0D' }];

/**
 * An invoice and a subscription of a new customer of the organisation `mcp` works for; the `skip`-th
 * of each, so that another organisation's numbers differ from this one's (numbers count per organisation).
 */
async function both(mcp: TestEnv['mcp'], suffix: string, skip = 0) {
  const f = await buildFixture(mcp, suffix);
  const make = async () => ({
    invoice: await ok(mcp, 'create_invoice', { customer: f.customer.id, lines: [{ description: 'Licence', quantity: 1, unitAmount: 1_000 }] }),
    subscription: await ok(mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods }),
  });
  for (let i = 0; i < skip; i++) await make();
  const { invoice, subscription } = await make();
  return { customer: f.customer, invoice: { id: invoice.id, number: invoice.number }, subscription: { id: subscription.id, number: subscription.number } };
}

let own: Awaited<ReturnType<typeof both>>;

beforeAll(async () => {
  env = await setup();
  own = await both(env.mcp, '');
  known.invoice.push(own.invoice);
  known.subscription.push(own.subscription);
  const elsewhere = await both(await env.mcpFor((await env.newOrg('Elsewhere')).apiKey), ' elsewhere', 4);
  stranger.invoice.push(elsewhere.invoice);
  stranger.subscription.push(elsewhere.subscription);
  expect(elsewhere.invoice.number).not.toBe(own.invoice.number);
  expect(elsewhere.subscription.number).not.toBe(own.subscription.number);
});
afterAll(() => env.close());

/**
 * Every page-numbered list with an `invoice` or `subscription` filter. list_usage_events (keyset pages)
 * reports every bad filter of a call in one 400 with violations (docs/decisions.md, "list_usage_events").
 */
const lists = OPERATIONS.filter((op) => op.kind === 'list' && op.method === 'GET' && op.name !== 'list_usage_events').flatMap((op) =>
  (['invoice', 'subscription'] as const).filter((field) => field in op.input.shape).map((field) => [op.name, op.path, field] as const),
);
const LISTED_BY = { invoice: 'list_invoices', subscription: 'list_subscriptions' } as const;
const MISSING = { invoice: 'INV-2026-999999', subscription: 'SUB-999999' } as const;

describe('a list filtered by an invoice or subscription that does not exist', () => {
  it('covers every list with an invoice or subscription filter', () => {
    expect(lists.map(([name, , field]) => `${name} ${field}`).sort()).toEqual([
      'list_credit_notes invoice',
      'list_emails invoice',
      'list_invoices subscription',
      'list_payment_plans invoice',
      'list_sepa_xml_payments invoice',
    ]);
  });

  it.each(lists)('%s (%s) answers 404 for a %s filter naming nothing, over MCP and REST', async (name, path, field) => {
    const resource = field === 'invoice' ? 'Invoice' : 'Subscription';
    const refs = [MISSING[field], '01a210b1-5348-710a-aa9f-c0c29b103035', ...stranger[field].flatMap((s) => [s.id, s.number])];
    for (const ref of refs) {
      const detail = `${resource} ${ref} was not found; ${LISTED_BY[field]} shows the ids`;
      expect((await fails(env.mcp, name, { [field]: ref }, 404)).detail).toBe(detail);
      const rest = await env.http('GET', `${path}?${field}=${encodeURIComponent(ref)}`);
      expect(rest.status).toBe(404);
      expect(rest.body.detail).toBe(detail);
    }
    for (const ref of known[field].flatMap((s) => [s.id, s.number])) {
      expect(Array.isArray((await ok(env.mcp, name, { [field]: ref })).data)).toBe(true);
      expect((await env.http('GET', `${path}?${field}=${encodeURIComponent(ref)}`)).status).toBe(200);
    }
  });

  it('a filter by a known invoice or subscription, by id or number, still lists its rows', async () => {
    const note = await ok(env.mcp, 'create_credit_note', { id: own.invoice.id, amount: 100, reason: 'Goodwill' });
    for (const ref of [own.invoice.id, own.invoice.number]) {
      expect((await ok(env.mcp, 'list_credit_notes', { invoice: ref })).data.map((n: { id: string }) => n.id)).toEqual([note.id]);
      expect((await env.http('GET', `/credit-notes?invoice=${ref}`)).body.data.map((n: { id: string }) => n.id)).toEqual([note.id]);
    }
    expect((await ok(env.mcp, 'list_invoices', { subscription: own.subscription.number })).data).toEqual([]);
  });

  it("a customer token naming another customer's invoice or subscription learns nothing of it", async () => {
    const { accessToken } = (await env.http('POST', `/customers/${own.customer.id}/authenticate`)).body.data;
    const other = await both(env.mcp, ' other');
    // The subscription's own read: another customer's subscription is a 404, as one that does not exist.
    expect((await env.http('GET', `/subscriptions/${other.subscription.id}`, { token: accessToken })).status).toBe(404);
    expect((await env.http('GET', `/subscriptions/${MISSING.subscription}`, { token: accessToken })).status).toBe(404);
    expect((await env.http('GET', `/subscriptions/${own.subscription.id}`, { token: accessToken })).status).toBe(200);
    // The lists filtered by invoice or subscription are closed to customer tokens: the same answer
    // whether the invoice or subscription named exists, is another customer's, or is the token's own.
    for (const [, path, field] of lists) {
      const answers = new Set<number>();
      for (const ref of [other[field].id, MISSING[field], own[field].id]) {
        answers.add((await env.http('GET', `${path}?${field}=${encodeURIComponent(ref)}`, { token: accessToken })).status);
      }
      expect([...answers]).toEqual([403]);
    }
  });
});
