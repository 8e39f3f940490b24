/** A 404 names the tool that shows the ids of what was not found, so a wrong id is fixed in one retry. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOUND_WITH } from '../src/errors.js';
import { OPERATIONS } from '../src/tools/index.js';
import { fails, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

describe('not found', () => {
  it('names a tool that exists for every resource it knows', () => {
    const names = new Set(OPERATIONS.map((o) => o.name));
    for (const [resource, tool] of Object.entries(FOUND_WITH)) expect(names.has(tool), `${resource}: ${tool}`).toBe(true);
  });

  it('over MCP and REST, the 404 of a wrong id names the list to pick one from', async () => {
    const id = '01a210b1-5348-710a-aa9f-c0c29b103035';
    expect((await fails(env.mcp, 'get_subscription', { id }, 404)).detail).toBe(`Subscription ${id} was not found; list_subscriptions shows the ids`);
    expect((await fails(env.mcp, 'update_subscription_item', { id, quantity: 2 }, 404)).detail).toBe(`Subscription item ${id} was not found; get_subscription shows the ids`);
    const rest = await env.http('GET', `/catalogue/products/${id}`);
    expect(rest.status).toBe(404);
    expect(rest.body.detail).toBe(`Product ${id} was not found; list_products shows the ids`);
  });
});
