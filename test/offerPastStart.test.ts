/**
 * An offer's subscription never starts in the past (audit of offers): a past startDate is refused at
 * create_offer, and a start that passes while the offer waits (or one set in the past on its
 * subscription) starts the subscription at the signing, on the page, the estimate and the invoices.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postForm } from './forms.js';
import { billAt, fails, ok, paths, setup, type TestEnv } from './helpers.js';

const NOW = '2026-01-15T10:00:00.000Z';
const LATER = '2026-02-01T10:00:00.000Z';
const periods = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];
const address = { street: 'Friedrichstraße', houseNumber: '12', zip: '10117', city: 'Berlin', countryCode: 'DE' };

let env: TestEnv;
let plan: any;
let customer: any;

beforeAll(async () => {
  env = await setup({ pagesRateLimitPerMinute: 100_000 });
  env.setNow(NOW);
  const seat = await ok(env.mcp, 'create_product', { name: 'Pro seat' });
  const price = await ok(env.mcp, 'create_price_plan', { id: seat.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 49.9 }, billingInterval: '1M' });
  plan = await ok(env.mcp, 'create_plan', { code: 'team', name: 'Team', charges: [{ product: seat.id, pricePlan: price.id }] });
  customer = await ok(env.mcp, 'create_customer', { companyName: 'ACME GmbH', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  await ok(env.mcp, 'create_invoice_address', { id: customer.id, ...address });
});
afterAll(() => env.close());
beforeEach(() => env.setNow(NOW));

const args = (subscription: Record<string, unknown> = {}) => ({
  customer: customer.id,
  acceptanceMode: 'click',
  name: 'Team for ACME',
  recipients: [{ email: 'jane@acme.example', firstName: 'Jane', lastName: 'Doe' }],
  validUntil: '2026-03-01T00:00:00Z',
  subscription: { plan: plan.id, periods, ...subscription },
});

/** Loads the recipient's page and accepts with its form. */
async function acceptOnPage(link: string) {
  const text = await (await fetch(link)).text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(text)?.[1] ?? '';
  return postForm(`${link}/accept`, { csrf: field('csrf'), terms: field('terms'), fullName: 'Jane Doe', agree: 'yes' });
}

describe("an offer's subscription start", () => {
  it('before now is a 422 at subscription.startDate naming the rule, and nothing is created', async () => {
    const before = (await env.http('GET', '/offers')).body.meta.pagination.totalItems;
    const problem = await fails(env.mcp, 'create_offer', args({ startDate: '2020-01-01T00:00:00Z' }), 422);
    expect(paths(problem)).toEqual(['subscription.startDate']);
    expect(problem.violations[0]).toEqual({
      propertyPath: 'subscription.startDate',
      code: 'in_the_past',
      message: `subscription.startDate must not lie in the past (before ${NOW}): signing would bill every period since then at once; give a later date, or omit it to start the subscription when the offer is signed`,
    });
    expect((await env.http('GET', '/offers')).body.meta.pagination.totalItems).toBe(before);
    expect((await ok(env.mcp, 'create_offer', args({ startDate: NOW }))).status).toBe('open');
  });

  it('in the future is shown; once it has passed while the offer is open, the subscription starts at the signing', async () => {
    const o = await ok(env.mcp, 'create_offer', args({ startDate: '2026-01-19T23:00:00Z' }));
    const link: string = o.recipients[0].link;
    const ahead = await (await fetch(link)).text();
    expect(ahead).toContain('<dt>Starts</dt><dd>20 January 2026</dd>');
    expect(ahead).toContain('First invoice, on 20 January 2026');

    env.setNow(LATER);
    const passed = await (await fetch(link)).text();
    expect(passed).toContain('<dt>Starts</dt><dd>When the offer is signed</dd>');
    expect(passed).toContain('First invoice, on 1 February 2026');
    expect((await ok(env.mcp, 'get_estimated_invoice', { id: o.subscription.id })).billingDate).toBe(LATER);
    expect((await acceptOnPage(link)).status).toBe(303);
    const subscription = await ok(env.mcp, 'get_subscription', { id: o.subscription.id });
    expect(subscription).toMatchObject({ status: 'active', startDate: LATER, activatedAt: LATER });
    const invoices = await billAt(env, LATER, o.subscription.id);
    expect(invoices.map((lines) => lines.map((l) => l[1]))).toEqual([[4990]]);
  });

  it("set in the past on the open offer's subscription is a 422 at startDate, as at create_offer; a later one is taken", async () => {
    const o = await ok(env.mcp, 'create_offer', args());
    const problem = await fails(env.mcp, 'update_subscription', { id: o.subscription.id, periods, startDate: '2020-01-01T00:00:00Z' }, 422);
    expect(problem.violations).toEqual([expect.objectContaining({ propertyPath: 'startDate', code: 'in_the_past' })]);
    expect((await ok(env.mcp, 'get_subscription', { id: o.subscription.id })).startDate).toBeNull();
    expect((await ok(env.mcp, 'update_subscription', { id: o.subscription.id, periods, startDate: LATER })).startDate).toBe(LATER);
    expect((await acceptOnPage(o.recipients[0].link)).status).toBe(303);
    expect(await ok(env.mcp, 'get_subscription', { id: o.subscription.id })).toMatchObject({ status: 'active', startDate: LATER });
  });
});
