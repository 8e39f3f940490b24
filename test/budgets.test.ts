import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/tools/index.js';
import { buildFixture, type Fixture } from './fixtures.js';
import { ok, setup, type TestEnv } from './helpers.js';

/**
 * What a model must read, counted with the o200k tokenizer. The figures are budgets of the product:
 * a change that breaks one is a regression (README, "Tools"). The surface grows with each capability,
 * so the whole list is held per tool and per toolset (what enabling one adds), not as one total.
 */
const BUDGET = {
  toolsListBytesPerTool: 3_000,
  shownTokensPerTool: 250,
  shownTokensPerToolset: 8_000,
  shownTokensDefault: 8_510,
  listSubscriptionsTokens: 10_000,
  getSubscriptionTokens: 2_500,
  batchTokens: 1_000,
  listToolsetsTokens: 1_500,
  oneViolationErrorTokens: 120,
};

const tokens = (value: unknown) => encode(typeof value === 'string' ? value : JSON.stringify(value)).length;

/** Name, description and input schema: what a client puts in front of the model for each tool. */
const shown = (tools: Array<{ name: string; description?: string; inputSchema: unknown }>) =>
  tokens(tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })));

async function shownTokens(client: Client): Promise<number> {
  return shown((await client.listTools()).tools);
}

/** A whole tools/call result as it travels: text content and structured content both count. */
async function resultTokens(client: Client, name: string, args: Record<string, unknown>): Promise<number> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return tokens({ content: result.content, structuredContent: result.structuredContent });
}

let env: TestEnv;
let f: Fixture;
const figures: Record<string, number> = {};

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-03-20T12:00:00Z');
  f = await buildFixture(env.mcp);
});
afterAll(() => {
  console.info(`token budgets (o200k): ${JSON.stringify(figures)}`);
  return env.close();
});

const subscribe = () =>
  ok(env.mcp, 'create_subscription', {
    customer: f.customer.id,
    plan: f.plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }],
    startDate: '2026-03-01T00:00:00Z',
    activate: true,
  });

describe('the tool surface fits a model context', () => {
  it(`the whole tools/list, output schemas included, is at most ${BUDGET.toolsListBytesPerTool} bytes per tool`, async () => {
    const { tools } = await env.mcp.listTools();
    figures.toolsListBytes = Buffer.byteLength(JSON.stringify({ tools }));
    figures.toolsListBytesPerTool = Math.round(figures.toolsListBytes / tools.length);
    expect(figures.toolsListBytesPerTool).toBeLessThanOrEqual(BUDGET.toolsListBytesPerTool);
  });

  it(`what a model is shown of every tool is at most ${BUDGET.shownTokensPerTool} tokens per tool`, async () => {
    const { tools } = await env.mcp.listTools();
    figures.shownTokensAll = shown(tools);
    figures.shownTokensPerTool = Math.round(figures.shownTokensAll / tools.length);
    expect(figures.shownTokensPerTool).toBeLessThanOrEqual(BUDGET.shownTokensPerTool);
  });

  it(`enabling any one toolset shows at most ${BUDGET.shownTokensPerToolset} tokens`, async () => {
    const { tools } = await env.mcp.listTools();
    const toolsetOf = new Map(OPERATIONS.map((op) => [op.name, op.toolset]));
    const toolsets = [...new Set(OPERATIONS.map((op) => op.toolset))];
    const perToolset = toolsets.map((name) => [name, shown(tools.filter((t) => toolsetOf.get(t.name) === name))] as const);
    const [largest, most] = perToolset.reduce((a, b) => (b[1] > a[1] ? b : a));
    figures.shownTokensLargestToolset = most;
    expect(most, `toolset ${largest}`).toBeLessThanOrEqual(BUDGET.shownTokensPerToolset);
  });

  it(`the default list of stdio (no flags) is at most ${BUDGET.shownTokensDefault} tokens`, async () => {
    const stdio = await setup({ toolsets: undefined });
    try {
      figures.shownTokensDefault = await shownTokens(stdio.mcp);
    } finally {
      await stdio.close();
    }
    expect(figures.shownTokensDefault).toBeLessThanOrEqual(BUDGET.shownTokensDefault);
  });
});

describe('typical results fit a model context', () => {
  it(`list_subscriptions, a default page of 30 subscriptions, is at most ${BUDGET.listSubscriptionsTokens} tokens`, async () => {
    for (let i = 0; i < 30; i++) await subscribe();
    figures.listSubscriptionsTokens = await resultTokens(env.mcp, 'list_subscriptions', {});
    expect(figures.listSubscriptionsTokens).toBeLessThanOrEqual(BUDGET.listSubscriptionsTokens);
  });

  it(`get_subscription with two items is at most ${BUDGET.getSubscriptionTokens} tokens`, async () => {
    const s = await subscribe();
    expect(s.items).toHaveLength(2);
    figures.getSubscriptionTokens = await resultTokens(env.mcp, 'get_subscription', { id: s.id });
    expect(figures.getSubscriptionTokens).toBeLessThanOrEqual(BUDGET.getSubscriptionTokens);
  });

  it(`list_toolsets (discovery on demand, every tool allowed) is at most ${BUDGET.listToolsetsTokens} tokens`, async () => {
    const stdio = await setup({ toolsets: undefined });
    try {
      figures.listToolsetsTokens = await resultTokens(stdio.mcp, 'list_toolsets', {});
    } finally {
      await stdio.close();
    }
    expect(figures.listToolsetsTokens).toBeLessThanOrEqual(BUDGET.listToolsetsTokens);
  });

  it(`an error with one violation is at most ${BUDGET.oneViolationErrorTokens} tokens: its message said once`, async () => {
    const result = await env.mcp.callTool({ name: 'create_customer', arguments: { lastName: 'L', colour: 'red' } });
    expect(result.isError).toBe(true);
    figures.oneViolationErrorTokens = tokens(result.content);
    expect(figures.oneViolationErrorTokens).toBeLessThanOrEqual(BUDGET.oneViolationErrorTokens);
  });

  it(`a batch of 1,000 usage values answers in at most ${BUDGET.batchTokens} tokens`, async () => {
    const s = await subscribe();
    const item = s.items.find((i: any) => i.product.id === f.meteredProduct.id).id;
    const values = Array.from({ length: 1000 }, (_, i) => ({
      subscriptionItem: item,
      quantity: i + 1,
      measuredAt: new Date(Date.parse('2026-03-02T00:00:00Z') + i * 60_000).toISOString(),
    }));
    figures.batchTokens = await resultTokens(env.mcp, 'create_subscription_measurements_batch', { values });
    expect(figures.batchTokens).toBeLessThanOrEqual(BUDGET.batchTokens);
  });
});
