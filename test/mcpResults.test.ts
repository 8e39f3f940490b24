import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, problemOf, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

/** A tools/call as the SDK client returns it, with its text content joined. */
async function raw(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }> {
  const result = (await env.mcp.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('an MCP error says each thing once', () => {
  it('a lone violation: the summary line says the message, the problem JSON the path and code; REST keeps the whole problem', async () => {
    const message = "'lastname' is not a field of the input; did you mean 'lastName'?";
    const result = await raw('create_customer', { lastname: 'Lovelace' });
    expect(result.isError).toBe(true);
    const [summary, json, ...rest] = result.text.split('\n');
    expect(summary).toBe(`Validation failed: ${message}`);
    expect(JSON.parse(json!)).toEqual({ type: '/problems/validation', status: 422, violations: [{ propertyPath: 'lastname', code: 'unrecognized_keys' }] });
    expect(rest).toEqual([]);
    expect(occurrences(result.text, message)).toBe(1);
    expect(occurrences(result.text, 'Validation failed')).toBe(1);

    const rest422 = await env.http('POST', '/customers', { body: { lastname: 'Lovelace' } });
    expect(rest422.body).toEqual({
      type: '/problems/validation',
      title: 'Validation failed',
      status: 422,
      detail: message,
      violations: [{ propertyPath: 'lastname', message, code: 'unrecognized_keys' }],
    });
    expect(problemOf(result.text)).toEqual(rest422.body);
  });

  it('several violations keep their messages beside their paths; the detail they make up is the summary line', async () => {
    const result = await raw('create_customer', { lastName: 'L', colour: 'red', size: 3 });
    const [summary, json] = result.text.split('\n');
    const problem = JSON.parse(json!);
    expect(Object.keys(problem)).toEqual(['type', 'status', 'violations']);
    expect(problem.violations.map((v: { propertyPath: string }) => v.propertyPath)).toEqual(['colour', 'size']);
    for (const v of problem.violations) {
      expect(v.message).toMatch(new RegExp(`^'${v.propertyPath}' is not a field of the input`));
      expect(summary).toContain(v.message);
    }
    const rest = await env.http('POST', '/customers', { body: { lastName: 'L', colour: 'red', size: 3 } });
    expect(problemOf(result.text)).toEqual(rest.body);
  });

  it('a problem without violations is its type and status after the summary line', async () => {
    const id = '00000000-0000-7000-8000-000000000000';
    const result = await raw('get_customer', { id });
    expect(result.text).toBe(`Not found: Customer ${id} was not found; list_customers shows the ids\n{"type":"/problems/not-found","status":404}`);
    expect(problemOf(result.text)).toEqual((await env.http('GET', `/customers/${id}`)).body);
  });
});

describe('an idempotent replay over MCP', () => {
  it('is marked in _meta and in its summary line; the first call is not', async () => {
    const args = { lastName: 'Replay', idempotencyKey: 'replay-marker-1' };
    const first = await raw('create_customer', args);
    const again = await raw('create_customer', args);
    expect(first._meta?.idempotentReplayed).toBeUndefined();
    expect(first.text).toMatch(/^Create customer: done: /);
    expect(again._meta).toEqual({ idempotentReplayed: true });
    expect(again.text.split('\n')[0]).toBe(`Create customer: done earlier (replayed for this idempotencyKey): ${again.structuredContent!.customerNumber} (id ${again.structuredContent!.id})`);
    expect(again.structuredContent).toEqual(first.structuredContent);
  });
});

describe('summary lines name the resource', () => {
  const summaryOf = async (name: string, args: Record<string, unknown>) => {
    const result = await raw(name, args);
    expect(result.isError, result.text).toBeFalsy();
    return { line: result.text.split('\n')[0], body: result.structuredContent as Record<string, any> };
  };

  it('a price plan by its internal name, else by its type, price and interval', async () => {
    const product = await ok(env.mcp, 'create_product', { name: 'Labelled', usageMetric: { eventName: 'calls', aggregation: 'count' } });
    const terms = { id: product.id, currencyCode: 'EUR', billingInterval: '1M', payInAdvance: false };
    const named = await summaryOf('create_price_plan', { ...terms, type: 'flat_fee', price: { amount: 9.5 }, internalName: 'Gold monthly' });
    expect(named.line).toBe(`Create price plan: done: Gold monthly (id ${named.body.id})`);
    const unnamed = await summaryOf('create_price_plan', { ...terms, type: 'per_unit', price: { amount: 0.01 } });
    expect(unnamed.line).toBe(`Create price plan: done: per_unit 0.01 EUR every 1M (id ${unnamed.body.id})`);
    expect((await summaryOf('get_price_plan', { id: unnamed.body.id })).line).toBe(`Get price plan: per_unit 0.01 EUR every 1M (id ${unnamed.body.id})`);
    const renamed = await summaryOf('update_price_plan', { id: unnamed.body.id, internalName: 'Metered' });
    expect(renamed.line).toBe(`Update price plan: done: Metered (id ${unnamed.body.id})`);
  });

  it('an invoice address by its city and country, a tax group by its description', async () => {
    const customer = await ok(env.mcp, 'create_customer', { lastName: 'Addressed' });
    const address = await summaryOf('create_invoice_address', { id: customer.id, street: 'Friedrichstraße', houseNumber: '1', zip: '10117', city: 'Berlin', countryCode: 'DE' });
    expect(address.line).toBe(`Create invoice address: done: Berlin, DE (id ${address.body.id})`);
    const group = await summaryOf('create_tax_group', { internalDescription: 'Standard Germany', taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }] });
    expect(group.line).toBe(`Create tax group: done: Standard Germany (id ${group.body.id})`);
  });

  it('a payment plan by its status, installment count and invoice', async () => {
    const customer = await ok(env.mcp, 'create_customer', { companyName: 'Acme' });
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: [{ description: 'Annual licence', quantity: 1, unitAmount: 9_000 }] });
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2099-12-15', interval: '1M' });
    expect((await summaryOf('get_payment_plan', { id: plan.id })).line).toBe(`Get payment plan: active, 3 installments of invoice ${invoice.id} (id ${plan.id})`);
  });
});
