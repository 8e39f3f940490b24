/**
 * A recipient's `link` opens their offer page, which accepts or signs the offer with no key: a key
 * with offer:read alone reads offers without it (null), so reading does not grant accepting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, type Fixture } from './fixtures.js';
import { ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let f: Fixture;
let offer: any;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-15T10:00:00.000Z');
  f = await buildFixture(env.mcp, '-links');
  offer = await ok(env.mcp, 'create_offer', {
    customer: f.customer.id,
    acceptanceMode: 'click',
    name: 'Pro for ACME',
    recipients: [
      { email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' },
      { email: 'john@example.com', firstName: 'John', lastName: 'Roe' },
    ],
    validUntil: '2026-02-15T00:00:00.000Z',
    subscription: { plan: f.plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }] },
  });
});
afterAll(() => env.close());

/** Each recipient's link as get_offer (MCP) and GET /offers/{id}, list_offers' REST rows answer them to the key. */
async function linksSeenBy(apiKey: string): Promise<{ mcp: unknown[]; rest: unknown[]; restList: unknown[] }> {
  const client = await env.mcpFor(apiKey);
  await client.listTools(); // the client then checks each result against the tool's output schema
  const mcp = (await ok(client, 'get_offer', { id: offer.id })).recipients.map((r: any) => r.link);
  const one = await env.http('GET', `/offers/${offer.number}`, { token: apiKey });
  expect(one.status).toBe(200);
  const list = await env.http('GET', `/offers?customer=${f.customer.id}`, { token: apiKey });
  expect(list.status).toBe(200);
  const row = list.body.data.find((o: any) => o.id === offer.id);
  return { mcp, rest: one.body.recipients.map((r: any) => r.link), restList: row.recipients.map((r: any) => r.link) };
}

describe("recipients' links by the reader's permissions", () => {
  it('a key with offer:read alone sees each recipient without their link (null), over MCP and REST', async () => {
    const seen = await linksSeenBy(await env.newKey(env.org, ['offer:read']));
    expect(seen).toEqual({ mcp: [null, null], rest: [null, null], restList: [null, null] });
  });

  it('a key that may accept the offer (offer:write, or every permission) sees the links', async () => {
    const links = offer.recipients.map((r: any) => r.link);
    expect(links).toEqual([expect.stringMatching(/\/pages\/offers\//), expect.stringMatching(/\/pages\/offers\//)]);
    for (const key of [await env.newKey(env.org, ['offer:write']), env.org.apiKey]) {
      expect(await linksSeenBy(key)).toEqual({ mcp: links, rest: links, restList: links });
    }
  });
});
