import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_VIOLATIONS } from '../src/registry/validation.js';
import { call, setup, type TestEnv } from './helpers.js';
import { eachSchema } from './schemaWalk.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

/** Paths of arrays without maxItems in a JSON Schema. */
function unboundedArrays(schema: unknown, at: string): string[] {
  const out: string[] = [];
  eachSchema(schema, at, (s, where) => {
    if (s.type === 'array' && typeof s.maxItems !== 'number') out.push(where);
  });
  return out;
}

describe('bounded input (issue 16, item 9)', () => {
  it('every array of every tool input has a maximum length in its schema', async () => {
    const { tools } = await env.mcp.listTools();
    expect(tools.flatMap((t) => unboundedArrays(t.inputSchema, t.name))).toEqual([]);
  });

  it('100,000 periods under the body limit answer a short 422, over MCP and REST, and change nothing', async () => {
    const products = [{ product: 'p', periods: Array(100_000).fill(1) }];
    const body = JSON.stringify({ products });
    expect(body.length).toBeLessThan(1024 * 1024);
    const rest = await env.http('POST', '/subscriptions/x/products', { body });
    expect(rest.status).toBe(422);
    expect(JSON.stringify(rest.body).length).toBeLessThan(10_000);
    const mcp = await call(env.mcp, 'order_subscription_products', { id: 'x', products });
    expect(mcp.isError).toBe(true);
    expect(mcp.body.status).toBe(422);
    expect(mcp.text.length).toBeLessThan(10_000);
  });

  it('a call with many invalid entries names the first ones and counts the rest', async () => {
    const products = [{ product: 'p', periods: Array(10).fill(1) }, ...Array(40).fill({ product: 7 })];
    const problem = (await call(env.mcp, 'order_subscription_products', { id: 'x', products })).body;
    expect(problem.status).toBe(422);
    expect(problem.violations).toHaveLength(MAX_VIOLATIONS);
    expect(problem.detail).toMatch(/and \d+ more of the same kind/);
  });

  it('an array over its maximum is refused naming the field and the maximum', async () => {
    const periods = Array(11).fill({ contractPeriod: '1M', cancellationPeriod: '0D' });
    const problem = (await call(env.mcp, 'create_subscription', { customer: 'c', plan: 'p', periods })).body;
    expect(problem.status).toBe(422);
    expect(problem.violations).toContainEqual(expect.objectContaining({ propertyPath: 'periods', message: 'periods must contain at most 10 items' }));
  });

  it('U+0000 in a text or a key is a 422 naming where, on either engine, and stores nothing', async () => {
    const count = async () => (await env.http('GET', '/customers')).body.meta.pagination.totalItems;
    const before = await count();
    const named = (await call(env.mcp, 'create_customer', { lastName: 'Nul\u0000Byte' })).body;
    expect([named.status, named.violations[0]]).toEqual([422, expect.objectContaining({ propertyPath: 'lastName', code: 'nul_character' })]);
    expect(named.detail).toBe('lastName contains the character U+0000 (NUL); no field accepts it, remove it');
    const rest = await env.http('POST', '/customers', { body: { lastName: 'Fine', customFields: { 'seg\u0000ment': 'x' } } });
    expect([rest.status, rest.body.violations[0].propertyPath, rest.body.detail]).toEqual([
      422,
      'customFields.seg\u0000ment',
      expect.stringContaining('(NUL) in its key'),
    ]);
    expect(await count()).toBe(before);
  });

  it('free objects nested deeper than the guard allows are a 422, not a stack overflow', async () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 1_000; i++) deep = { a: deep };
    const problem = (await call(env.mcp, 'create_customer', { lastName: 'Deep', customFields: deep })).body;
    expect(problem.status).toBe(422);
    const rest = await env.http('POST', '/customers', { body: JSON.stringify({ lastName: 'Deep', customFields: deep }) });
    expect(rest.status).toBe(422);
    const deeper = `{"lastName":"Deep","customFields":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    expect((await env.http('POST', '/customers', { body: deeper })).status).toBe(422);
  });
});
