import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH, MAX_INPUT_VALUES } from '../src/registry/inputGuard.js';
import { call, ok, setup, type Org, type TestEnv } from './helpers.js';

/**
 * Issue 16, item 1: keys such as `__proto__` in a query string or a body reached objects the server
 * built from input, and from there the prototype every object of the process shares. Each surface
 * must refuse them by name, and afterwards the process and every other organisation must be intact.
 */

// Taken before any request: what Object.prototype and Object hold, and the own keys of their functions.
function snapshot() {
  const describe = (target: object) =>
    Object.fromEntries(
      Reflect.ownKeys(target)
        .filter((k): k is string => typeof k === 'string')
        .map((k) => {
          const d = Object.getOwnPropertyDescriptor(target, k)!;
          const fn = d.value ?? d.get;
          return [k, { value: d.value, get: d.get, set: d.set, keys: typeof fn === 'function' ? Reflect.ownKeys(fn).map(String).sort() : [] }];
        }),
    );
  return { prototype: describe(Object.prototype), object: describe(Object), functionPrototype: describe(Function.prototype) };
}
const ORIGINAL = snapshot();
const ORIGINAL_KEYS = Object.keys;

function expectIntact(label: string) {
  expect(({} as Record<string, unknown>).polluted, label).toBeUndefined();
  expect(({} as Record<string, unknown>).x, label).toBeUndefined();
  expect(Object.keys, label).toBe(ORIGINAL_KEYS);
  expect(snapshot(), label).toEqual(ORIGINAL);
}

let env: TestEnv;
let other: Org;
let otherMcp: Client;
let customerId: string;
let round = 0;

beforeAll(async () => {
  env = await setup();
  other = await env.newOrg('Bystander organisation');
  otherMcp = await env.mcpFor(other.apiKey);
  customerId = (await ok(env.mcp, 'create_customer', { lastName: 'Target' })).id;
});
afterAll(() => env.close());

/** The process is unpolluted and another organisation can still create and list, over REST and MCP. */
async function expectOthersWork(label: string) {
  expectIntact(label);
  round += 1;
  const created = await env.http('POST', '/customers', { token: other.apiKey, body: { lastName: `Bystander ${round}` } });
  expect(created.status, `${label}: ${JSON.stringify(created.body)}`).toBe(201);
  const listed = await env.http('GET', '/customers?limit=100&order[createdAt]=desc', { token: other.apiKey });
  expect(listed.status, `${label}: ${JSON.stringify(listed.body)}`).toBe(200);
  expect(listed.body.data[0].id).toBe(created.body.id);
  const subscriptions = await env.http('GET', '/subscriptions', { token: other.apiKey });
  expect(subscriptions.status, `${label}: ${JSON.stringify(subscriptions.body)}`).toBe(200);
  const overMcp = await ok(otherMcp, 'list_customers', { limit: 100 });
  expect(overMcp.data.map((c: { id: string }) => c.id)).toContain(created.body.id);
  expectIntact(label);
}

/** Query strings and the parameter each must be refused by (a 400 naming it). */
const QUERIES: Array<[string, string]> = [
  ['__proto__[polluted]=1', '__proto__[polluted]'],
  ['constructor[keys]=1', 'constructor[keys]'],
  ['constructor[prototype]=x', 'constructor[prototype]'],
  ['__proto__=1', '__proto__'],
  ['prototype[x]=1', 'prototype[x]'],
  ['order[__proto__]=desc', 'order[__proto__]'],
  ['order[constructor]=desc', 'order[constructor]'],
  ['order[prototype]=desc', 'order[prototype]'],
  ['__proto__[__proto__]=1', '__proto__[__proto__]'],
  ['__proto__[toString]=1', '__proto__[toString]'],
  ['constructor=1', 'constructor'],
  ['prototype=1', 'prototype'],
  ['limit=5&__proto__[polluted]=1', '__proto__[polluted]'],
  ['constructor[name]=x&order[createdAt]=desc', 'constructor[name]'],
];

/** Names of Object.prototype members: not reserved, but they must not reach the shared functions. */
const MEMBER_QUERIES: Array<[string, string]> = [
  ['hasOwnProperty[call]=1', 'hasOwnProperty'],
  ['toString[polluted]=1', 'toString'],
];

describe('REST query parameters', () => {
  it.each(QUERIES)('GET /subscriptions?%s is a 400 naming the parameter', async (query, parameter) => {
    const res = await env.http('GET', `/subscriptions?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.type).toBe('/problems/bad-request');
    expect(res.body.violations).toEqual([expect.objectContaining({ propertyPath: parameter, code: 'reserved_key' })]);
    expect(res.body.detail).toContain(`'${parameter}'`);
    await expectOthersWork(query);
  });

  it.each(MEMBER_QUERIES)('GET /subscriptions?%s is an unknown field and changes nothing shared', async (query, name) => {
    const res = await env.http('GET', `/subscriptions?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.detail).toContain(`'${name}'`);
    await expectOthersWork(query);
  });

  it('refuses the reserved names on every GET and DELETE route, with a customer token too', async () => {
    const routes = ['/customers', `/customers/${customerId}`, '/catalogue/products', '/invoices', '/webhooks', `/customers/${customerId}/payment-methods`];
    for (const route of routes) {
      const res = await env.http('GET', `${route}?constructor[prototype]=x`);
      expect(res.status, route).toBe(400);
    }
    const token = await env.http('POST', `/customers/${customerId}/authenticate`, { body: {} });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body.data.accessToken).toEqual(expect.any(String));
    const asCustomer = await env.http('GET', `/customers/${customerId}/payment-methods?__proto__[polluted]=1`, { token: token.body.data.accessToken });
    expect(asCustomer.status, JSON.stringify(asCustomer.body)).toBe(400);
    const deleted = await env.http('DELETE', '/custom-fields/unknown?__proto__[polluted]=1');
    expect(deleted.status).toBe(400);
    await expectOthersWork('routes');
  });

  it('refuses a name given both as a value and as name[…] (it was a 500)', async () => {
    for (const query of ['order=x&order[createdAt]=desc', 'order[createdAt]=desc&order=x']) {
      const res = await env.http('GET', `/customers?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.violations[0].propertyPath).toBe('order');
    }
    expect((await env.http('GET', '/customers?order[createdAt]=desc&limit=1')).status).toBe(200);
  });
});

/** Bodies (raw JSON text, so `__proto__` is an own key as JSON.parse makes it), routes and the path named. */
const BODIES: Array<{ method: string; path: () => string; body: string; at: string }> = [
  { method: 'POST', path: () => '/customers', body: '{"__proto__":{"polluted":1}}', at: '__proto__' },
  { method: 'POST', path: () => '/customers', body: '{"lastName":"x","__proto__":{"polluted":1}}', at: '__proto__' },
  { method: 'POST', path: () => '/catalogue/products', body: '{"customFields":{"constructor":{"prototype":{"x":1}}}}', at: 'customFields.constructor' },
  { method: 'POST', path: () => '/customers', body: '{"a":{"b":{"__proto__":{}}}}', at: 'a.b.__proto__' },
  { method: 'POST', path: () => '/customers', body: '{"lastName":"x","constructor":{"keys":1}}', at: 'constructor' },
  { method: 'POST', path: () => '/customers', body: '{"prototype":{"x":1}}', at: 'prototype' },
  { method: 'POST', path: () => '/offers', body: '{"customVariables":{"__proto__":{"polluted":1}}}', at: 'customVariables.__proto__' },
  { method: 'POST', path: () => '/subscriptions', body: '{"customFields":{"prototype":"x"}}', at: 'customFields.prototype' },
  { method: 'POST', path: () => '/webhooks', body: '{"url":"https://example.com/hook","events":["customer.created"],"headers":{"__proto__":{"polluted":1}}}', at: 'headers.__proto__' },
  { method: 'POST', path: () => '/subscriptions', body: '{"items":[{"x":1},{"__proto__":{"polluted":1}}]}', at: 'items[1].__proto__' },
  { method: 'PUT', path: () => `/customers/${customerId}`, body: '{"lastName":"y","__proto__":{"polluted":1}}', at: '__proto__' },
];

describe('REST JSON bodies', () => {
  it.each(BODIES)('$method $body is a 422 naming $at', async ({ method, path, body, at }) => {
    const res = await env.http(method, path(), { body });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.type).toBe('/problems/validation');
    expect(res.body.violations).toEqual([expect.objectContaining({ propertyPath: at, code: 'reserved_key' })]);
    await expectOthersWork(body);
  });

  it('leaves the customer that a refused update named unchanged', async () => {
    const res = await env.http('GET', `/customers/${customerId}`);
    expect(res.body.lastName).toBe('Target');
  });

  it(`bounds the walk: deeper than ${MAX_INPUT_DEPTH} levels or more than ${MAX_INPUT_VALUES} values is a 422 naming why`, async () => {
    const deep = `${'{"a":'.repeat(MAX_INPUT_DEPTH + 5)}1${'}'.repeat(MAX_INPUT_DEPTH + 5)}`;
    const tooDeep = await env.http('POST', '/customers', { body: deep });
    expect(tooDeep.status, JSON.stringify(tooDeep.body)).toBe(422);
    expect(tooDeep.body.violations[0].code).toBe('too_deep');
    const wide = `{"lastName":"x","a":[${Array.from({ length: MAX_INPUT_VALUES + 1 }, () => '0').join(',')}]}`;
    const tooMany = await env.http('POST', '/customers', { body: wide });
    expect(tooMany.status, JSON.stringify(tooMany.body)).toBe(422);
    expect(tooMany.body.violations[0].code).toBe('too_many_values');
    await expectOthersWork('bounds');
  });
});

/** Tool arguments as JSON text, the tool, and the argument path named. */
const ARGUMENTS: Array<{ tool: string; args: string; at: string }> = [
  { tool: 'create_customer', args: '{"__proto__":{"polluted":1}}', at: '__proto__' },
  { tool: 'create_customer', args: '{"lastName":"x","constructor":{"keys":1}}', at: 'constructor' },
  { tool: 'create_product', args: '{"customFields":{"constructor":{"prototype":{"x":1}}}}', at: 'customFields.constructor' },
  { tool: 'create_customer', args: '{"a":{"b":{"__proto__":{}}}}', at: 'a.b.__proto__' },
  { tool: 'create_offer', args: '{"customVariables":{"__proto__":{"polluted":1}}}', at: 'customVariables.__proto__' },
  { tool: 'list_subscriptions', args: '{"__proto__":{"polluted":"1"}}', at: '__proto__' },
  { tool: 'list_subscriptions', args: '{"constructor":{"prototype":"x"}}', at: 'constructor' },
  { tool: 'list_subscriptions', args: '{"order":{"__proto__":"desc"}}', at: 'order.__proto__' },
  { tool: 'list_subscriptions', args: '{"order":{"constructor":"desc"}}', at: 'order.constructor' },
  { tool: 'list_subscriptions', args: '{"prototype":{"x":"1"}}', at: 'prototype' },
  { tool: 'update_customer', args: '{"id":"ID","lastName":"z","__proto__":{"polluted":1}}', at: '__proto__' },
];

function argsOf(text: string): Record<string, unknown> {
  return JSON.parse(text.replace('"ID"', JSON.stringify(customerId))) as Record<string, unknown>;
}

describe('MCP tools/call arguments, in memory', () => {
  it.each(ARGUMENTS)('$tool $args is a tool error (422) naming $at', async ({ tool, args, at }) => {
    const r = await call(env.mcp, tool, argsOf(args));
    expect(r.isError, r.text).toBe(true);
    expect(r.body.status).toBe(422);
    expect(r.body.violations).toEqual([expect.objectContaining({ propertyPath: at, code: 'reserved_key' })]);
    await expectOthersWork(`${tool} ${args}`);
  });

  it('refuses arguments whose prototype was already set (an object literal with __proto__)', async () => {
    const args = { lastName: 'Literal', __proto__: { polluted: 1 } } as unknown as Record<string, unknown>;
    expect(Object.keys(args)).toEqual(['lastName']);
    const r = await call(env.mcp, 'create_customer', args);
    expect(r.isError, r.text).toBe(true);
    expect(r.body.violations).toEqual([expect.objectContaining({ propertyPath: '__proto__', code: 'reserved_key' })]);
    const nested = await call(env.mcp, 'create_product', { name: 'p', type: 'recurring', customFields: { __proto__: { polluted: 1 } } });
    expect(nested.isError, nested.text).toBe(true);
    expect(nested.body.violations[0].propertyPath).toBe('customFields.__proto__');
    await expectOthersWork('literal');
  });

  it('leaves the customer that a refused update named unchanged', async () => {
    expect((await ok(env.mcp, 'get_customer', { id: customerId })).lastName).toBe('Target');
  });
});

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

function postMcp(text: string) {
  return env.http('POST', '/mcp', { headers: MCP_HEADERS, body: text });
}

describe('MCP tools/call arguments over /mcp (real HTTP)', () => {
  it.each(ARGUMENTS)('$tool $args is a tool error (422) naming $at', async ({ tool, args, at }) => {
    const text = `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"${tool}","arguments":${args.replace('"ID"', JSON.stringify(customerId))}}}`;
    const res = await postMcp(text);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(11);
    expect(res.body.result.isError, JSON.stringify(res.body)).toBe(true);
    const content = res.body.result.content[0].text as string;
    const problem = JSON.parse(content.slice(content.indexOf('\n') + 1));
    expect(problem.status).toBe(422);
    expect(problem.violations).toEqual([expect.objectContaining({ propertyPath: at, code: 'reserved_key' })]);
    await expectOthersWork(`/mcp ${tool} ${args}`);
  });

  it('refuses reserved keys elsewhere in the message with a JSON-RPC error naming them', async () => {
    const cases: Array<[string, number, string]> = [
      ['{"jsonrpc":"2.0","id":21,"method":"tools/list","params":{"__proto__":{"polluted":1}}}', -32602, 'params.__proto__'],
      ['{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"list_customers","arguments":{},"_meta":{"constructor":{"prototype":1}}}}', -32602, 'params._meta.constructor'],
      ['{"jsonrpc":"2.0","id":23,"method":"tools/list","params":{"cursor":"x","prototype":{}}}', -32602, 'params.prototype'],
    ];
    for (const [text, code, at] of cases) {
      const res = await postMcp(text);
      expect(res.body.error, text).toMatchObject({ code });
      expect(res.body.error.message).toContain(at);
    }
    await expectOthersWork('envelope');
  });

  it('keeps working for the caller itself', async () => {
    const res = await postMcp('{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"get_customer","arguments":{"id":"' + customerId + '"}}}');
    expect(res.body.result.structuredContent.lastName).toBe('Target');
  });
});
