import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathParams } from '../src/registry/operation.js';
import { OPERATIONS } from '../src/tools/index.js';
import type { Resolve } from '../src/webhooks/delivery.js';
import { ok, setup, type TestEnv } from './helpers.js';

/**
 * Every tool's input, fuzzed over MCP and REST with a fixed seed (a failure names the seed and the
 * path to replay it): no call may answer 5xx or an internal JSON-RPC error, and afterwards another
 * organisation works as before. Names never resolve, so no fuzzed webhook can reach a network.
 */
const SEED = 20_261_123;
const MCP_RUNS = 25;
const REST_RUNS = 6;

const noNetwork: Resolve = (_hostname, _options, callback) => callback(Object.assign(new Error('fuzz: no DNS'), { code: 'ENOTFOUND' }), []);

let env: TestEnv;
let ids: string[] = [];

beforeAll(async () => {
  env = await setup({}, { resolve: noNetwork });
  env.setNow('2026-03-02T09:00:00Z');
  const m = env.mcp;
  const customer = await ok(m, 'create_customer', { companyName: 'Fuzz GmbH' });
  const product = await ok(m, 'create_product', { name: 'Fuzzed' });
  const pricePlan = await ok(m, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
  const plan = await ok(m, 'create_plan', { code: 'fuzz', name: 'Fuzz', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
  const subscription = await ok(m, 'create_subscription', {
    customer: customer.id,
    plan: plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
    activate: true,
  });
  const invoice = await ok(m, 'create_invoice', { customer: customer.id, status: 'open', lines: [{ description: 'x', quantity: 1, unitAmount: 1000 }] });
  ids = [customer.id, customer.customerNumber, product.id, pricePlan.id, plan.id, subscription.id, subscription.number, subscription.items[0].id, invoice.id];
});
afterAll(() => env.close());

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', '__proto__', 'constructor', 'x'.repeat(300), '2026-01-01T00:00:00Z', '2026-13-45', '1M', 'EUR', 'jpy', '-1', 'NaN', 'null'),
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((i) => ids[i % ids.length]) },
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

type Json = Record<string, unknown>;

/** A value of the schema's type (enum members, strings, numbers, arrays, objects), sometimes anything at all. */
function typed(schema: Json | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return value;
  const branches = (schema.anyOf as Json[] | undefined) ?? [schema];
  const shaped = fc.oneof(
    ...branches.map((b): fc.Arbitrary<unknown> => {
      if (Array.isArray(b.enum)) return fc.constantFrom(...(b.enum as unknown[]));
      switch (b.type) {
        case 'string':
          return fc.oneof(text, fc.nat().map((i) => ids[i % ids.length]));
        case 'integer':
          return fc.oneof(fc.integer({ min: -2, max: 1_000_000 }), fc.constantFrom(0, 1, 12));
        case 'number':
          return fc.oneof(fc.integer({ min: -2, max: 100_000 }), fc.double({ min: -1, max: 1e6, noNaN: true }), fc.constantFrom(0.5, 12.345, 1e-7));
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return fc.array(typed(b.items as Json | undefined, depth + 1), { maxLength: 3 });
        case 'object':
          return objectOf(b, depth + 1);
        default:
          return value;
      }
    }),
  );
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: value });
}

function objectOf(schema: Json, depth: number): fc.Arbitrary<Json> {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  return fc.record(Object.fromEntries(Object.entries(properties).map(([n, p]) => [n, typed(p, depth)])), { requiredKeys: [] });
}

/** Arguments shaped like the tool's input: its own fields with values of their types or any, and a stray field now and then. */
function argumentsFor(inputSchema: Json): fc.Arbitrary<Json> {
  const stray = fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(text, value, { maxKeys: 1 }) });
  return fc.tuple(objectOf(inputSchema, 0), stray).map(([own, extra]) => ({ ...extra, ...own }));
}

async function mcpOutcome(client: Client, name: string, args: Record<string, unknown>): Promise<number> {
  try {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    if (!result.isError) return 200;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    return (JSON.parse(text.slice(text.indexOf('\n') + 1)) as { status: number }).status;
  } catch (err) {
    if (err instanceof McpError && err.code === -32602) return 400;
    throw err;
  }
}

describe('fuzzing every tool (seeded)', () => {
  it('no tool call over MCP answers a server error', async () => {
    const { tools } = await env.mcp.listTools();
    for (const tool of tools) {
      await fc.assert(
        fc.asyncProperty(argumentsFor(tool.inputSchema as Json), async (args) => {
          const status = await mcpOutcome(env.mcp, tool.name, args);
          expect(status, `${tool.name} ${JSON.stringify(args).slice(0, 300)}`).toBeLessThan(500);
        }),
        { seed: SEED, numRuns: MCP_RUNS, endOnFailure: true },
      );
    }
  }, 120_000);

  it('no REST route answers a server error', async () => {
    const { tools } = await env.mcp.listTools();
    for (const op of OPERATIONS) {
      const schema = tools.find((t) => t.name === op.name)!.inputSchema as Json;
      await fc.assert(
        fc.asyncProperty(argumentsFor(schema), fc.nat(), async (args, n) => {
          const fallbackId = ids[n % ids.length]!;
          let path = op.path;
          for (const p of pathParams(op)) path = path.replace(`{${p}}`, encodeURIComponent(String(args[p] ?? fallbackId)));
          const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !pathParams(op).includes(k)));
          const query = new URLSearchParams(Object.entries(rest).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
          const res =
            op.method === 'GET' || op.method === 'DELETE'
              ? await env.http(op.method, `${path}?${query}`)
              : await env.http(op.method, path, { body: rest, contentType: op.contentType ?? 'application/json' });
          expect(res.status, `${op.method} ${path} ${JSON.stringify(rest).slice(0, 300)}`).toBeLessThan(500);
        }),
        { seed: SEED, numRuns: REST_RUNS, endOnFailure: true },
      );
    }
  }, 120_000);

  it('leaves every organisation working and no prototype touched', async () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const other = await env.newOrg('After the fuzz');
    const client = await env.mcpFor(other.apiKey);
    const customer = await ok(client, 'create_customer', { lastName: 'Still works' });
    expect((await ok(client, 'list_customers', {})).data.map((c: { id: string }) => c.id)).toEqual([customer.id]);
    const rest = await env.http('GET', '/customers', { token: other.apiKey });
    expect(rest.status).toBe(200);
    expect((await env.http('GET', '/subscriptions')).status).toBe(200);
  });
});
