/**
 * A list's `customer` filter naming no customer is a 404 naming the ref and list_customers, as any
 * unknown id: an empty 200 told a model with a misspelt number that the customer has nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let known: { id: string; customerNumber: string };
let stranger: { id: string; customerNumber: string };

beforeAll(async () => {
  env = await setup();
  known = await ok(env.mcp, 'create_customer', { lastName: 'Known' });
  const elsewhere = await env.mcpFor((await env.newOrg('Elsewhere')).apiKey);
  stranger = await ok(elsewhere, 'create_customer', { lastName: 'Stranger', customerNumber: 'STRANGER-1' });
});
afterAll(() => env.close());

/**
 * Every page-numbered list with a `customer` filter. list_usage_events (keyset pages) reports every
 * bad filter of a call in one 400 with violations (docs/decisions.md, "list_usage_events").
 */
const lists = OPERATIONS.filter((op) => op.kind === 'list' && op.method === 'GET' && 'customer' in op.input.shape && op.name !== 'list_usage_events');

describe('a list filtered by a customer that does not exist', () => {
  it('covers every list with a customer filter', () => {
    expect(lists.map((op) => op.name).sort()).toEqual([
      'list_credit_notes',
      'list_emails',
      'list_invoices',
      'list_offers',
      'list_sepa_xml_payments',
      'list_subscriptions',
    ]);
  });

  it.each(lists.map((op) => [op.name, op.path] as const))('%s answers 404 naming the customer, over MCP and REST', async (name, path) => {
    for (const ref of ['CUS-999999', '01a210b1-5348-710a-aa9f-c0c29b103035', stranger.id, stranger.customerNumber]) {
      const detail = `Customer ${ref} was not found; list_customers shows the ids`;
      expect((await fails(env.mcp, name, { customer: ref }, 404)).detail).toBe(detail);
      const rest = await env.http('GET', `${path}?customer=${encodeURIComponent(ref)}`);
      expect(rest.status).toBe(404);
      expect(rest.body.detail).toBe(detail);
    }
    for (const ref of [known.id, known.customerNumber]) {
      expect((await ok(env.mcp, name, { customer: ref })).data).toEqual([]);
      expect((await env.http('GET', `${path}?customer=${encodeURIComponent(ref)}`)).status).toBe(200);
    }
  });

  it("a customer token naming another customer still gets a 404", async () => {
    const res = await env.http('POST', `/customers/${known.id}/authenticate`);
    const { accessToken } = res.body.data;
    const other = await ok(env.mcp, 'create_customer', { lastName: 'Other' });
    expect((await env.http('GET', `/subscriptions?customer=${other.id}`, { token: accessToken })).status).toBe(404);
    expect((await env.http('GET', '/subscriptions?customer=CUS-999999', { token: accessToken })).status).toBe(404);
    expect((await env.http('GET', '/subscriptions', { token: accessToken })).status).toBe(200);
  });
});
