/**
 * `list_customers` with `search`: text anywhere in the customer number, company, first or last name
 * or an e-mail address, A-Z in either case, `%`, `_` and `\` as themselves; on both engines, with the
 * status filter and the pages.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, paths, setup, type Org, type TestEnv } from './helpers.js';

let env: TestEnv;
let org: Org;
let mcp: Client;
const c: Record<string, any> = {};

beforeAll(async () => {
  env = await setup();
  org = await env.newOrg('Search');
  mcp = await env.mcpFor(org.apiKey);
  c.ada = await ok(mcp, 'create_customer', { firstName: 'Ada', lastName: 'Lovelace', customerNumber: 'K-100' });
  c.analytical = await ok(mcp, 'create_customer', { companyName: 'Analytical Engines Ltd', customerNumber: 'K-101' });
  c.grace = await ok(mcp, 'create_customer', { firstName: 'Grace', lastName: 'Hopper', status: 'STATUS_INACTIVE', customerNumber: 'K-102' });
  c.percent = await ok(mcp, 'create_customer', { companyName: '100% Solar_Power \\ Co', customerNumber: 'K-103' });
  c.umlaut = await ok(mcp, 'create_customer', { lastName: 'Müller', customerNumber: 'K-104' });
  c.mailed = await ok(mcp, 'create_customer', { lastName: 'Byron', customerNumber: 'K-105' });
  await ok(mcp, 'create_customer_email_address', { id: c.mailed.id, email: 'Countess@Engines.example' });
  // Another organisation's customer never matches.
  await ok(env.mcp, 'create_customer', { firstName: 'Ada', lastName: 'Elsewhere' });
});
afterAll(() => env.close());

const found = async (args: Record<string, unknown>) => (await ok(mcp, 'list_customers', args)).data.map((x: { id: string }) => x.id);

describe('list_customers search', () => {
  it.each([
    ['ada', ['ada']],
    ['LOVE', ['ada']],
    ['engines', ['analytical', 'mailed']],
    ['k-10', ['ada', 'analytical', 'grace', 'percent', 'umlaut', 'mailed']],
    ['K-102', ['grace']],
    ['  hopper ', ['grace']],
    ['countess@', ['mailed']],
    ['100%', ['percent']],
    ['%', ['percent']],
    ['_', ['percent']],
    ['r_p', ['percent']],
    ['\\', ['percent']],
    ['ü', ['umlaut']],
    // Only A-Z fold, on both engines alike.
    ['MÜLLER', []],
    ['mÜller', []],
    ['nobody', []],
  ])('%j finds %j', async (search, names) => {
    expect(await found({ search })).toEqual(names.map((n) => c[n].id));
  });

  it('combines with the status filter and pages', async () => {
    expect(await found({ search: 'k-10', status: 'STATUS_INACTIVE' })).toEqual([c.grace.id]);
    const first = await ok(mcp, 'list_customers', { search: 'k-10', limit: 4 });
    expect(first.meta.pagination).toEqual({ totalItems: 6, itemsPerPage: 4, currentPage: 1, lastPage: 2, pageTotalItems: 4 });
    const second = await ok(mcp, 'list_customers', { search: 'k-10', limit: 4, page: 2 });
    expect(second.data.map((x: { id: string }) => x.id)).toEqual([c.umlaut.id, c.mailed.id]);
    expect(await found({ search: 'k-10', order: { createdAt: 'desc' }, limit: 2 })).toEqual([c.mailed.id, c.umlaut.id]);
  });

  it('works over HTTP, and a blank or too long search is a 400 naming it', async () => {
    const res = await env.http('GET', '/customers?search=Ada', { token: org.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([c.ada.id]);
    expect((await env.http('GET', `/customers?search=${encodeURIComponent('50% ')}`, { token: org.apiKey })).body.data).toEqual([]);
    for (const bad of ['', '%20%20', 'x'.repeat(256)]) {
      const r = await env.http('GET', `/customers?search=${bad}`, { token: org.apiKey });
      expect([r.status, paths(r.body)]).toEqual([400, ['search']]);
    }
  });
});
