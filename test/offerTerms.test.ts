/**
 * What a recipient accepts is what is signed and billed (audit of offers): prices freeze when an
 * offer leaves open, the page's form carries the terms it showed, a refusal the page's state does
 * not explain is shown, the messages of frozen terms name what works, placeholders stay in sections,
 * and the page and PDF show discounts and the trial. Through the real server, over HTTP and MCP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postForm } from './forms.js';
import { billAt, fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { address, csrfOf, customer, getOffer, jane, john, NOW, offer, open, periods, post, seller, signedPdf, submit, subscriptionOf, VALID_UNTIL } from './offerFixtures.js';

const NEXT_MONTH = '2026-02-15T10:00:00.000Z';

let env: TestEnv;
let tax: any;
let n = 0;

beforeAll(async () => {
  env = await setup({ pagesRateLimitPerMinute: 100_000 });
  env.setNow(NOW);
  tax = await seller(env);
});
afterAll(() => env.close());
beforeEach(() => env.setNow(NOW));

/** A plan of one monthly seat at `amount` (its own product and catalogue price plan). */
async function seatPlan(amount = 49.9, price: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  n += 1;
  const product = await ok(env.mcp, 'create_product', { name: `Seat ${n}`, taxGroup: tax.id });
  const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount }, billingInterval: '1M', ...price });
  const plan = await ok(env.mcp, 'create_plan', { code: `seat-${n}`, name: `Seat plan ${n}`, charges: [{ product: product.id, pricePlan: pricePlan.id }], ...extra });
  return { product, pricePlan, plan };
}

/** The net amounts of the invoices a billing run as of `at` issues for the subscription. */
async function billed(at: string, subscription: string): Promise<number[][]> {
  return (await billAt(env, at, subscription)).map((lines) => lines.map((l) => l[1]));
}

describe('prices freeze when the offer leaves open', () => {
  it('click awaiting invoice details: a later catalogue price shows neither on the page nor in the PDF nor on the invoices; other subscriptions follow it', async () => {
    const { pricePlan, plan } = await seatPlan();
    const plain = await ok(env.mcp, 'create_subscription', { customer: (await customer(env)).id, plan: plan.id, periods, activate: true });
    expect(await billed(NOW, plain.id)).toEqual([[4990]]);
    const o = await offer(env, plan, { customer: (await customer(env, false)).id });
    const link: string = o.recipients[0].link;
    expect((await open(link)).text).toContain('€49.90 per month');
    expect((await submit(link, 'accept', { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);
    expect((await getOffer(env, o)).status).toBe('awaiting_invoice_details');

    await ok(env.mcp, 'update_price_plan', { id: pricePlan.id, price: { amount: 59.9 } });
    const waiting = await open(link);
    expect(waiting.text).toContain('€49.90 per month');
    expect(waiting.text).not.toContain('59.90');
    expect((await submit(link, 'invoice-details', address)).status).toBe(303);
    expect((await getOffer(env, o)).status).toBe('signed');

    const pdf = await signedPdf(env, o);
    expect(pdf).toContain('€49.90 per month');
    expect(pdf).not.toContain('59.90');
    const item = (await env.http('GET', `/subscriptions/${o.subscription.id}`)).body.items[0];
    expect(item.pricePlan).toMatchObject({ custom: true, price: { amount: 49.9 }, internalName: `Accepted in offer ${o.number} (price plan ${pricePlan.id})` });
    expect(await billed(NOW, o.subscription.id)).toEqual([[4990]]);
    // The signed contract keeps its price in its next periods; a subscription not from an offer follows the catalogue.
    expect(await billed(NEXT_MONTH, o.subscription.id)).toEqual([[4990]]);
    expect(await billed(NEXT_MONTH, plain.id)).toEqual([[5990]]);
  });

  it('esignature: the second signature is under the price the first signer saw, in the PDF and on the invoice', async () => {
    const { pricePlan, plan } = await seatPlan();
    const o = await offer(env, plan, { acceptanceMode: 'esignature', recipients: [jane, john] });
    const [janeLink, johnLink] = o.recipients.map((r: any) => r.link as string);
    expect((await submit(janeLink, 'sign', { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);
    await ok(env.mcp, 'update_price_plan', { id: pricePlan.id, price: { amount: 59.9 } });
    const johnsPage = await open(johnLink);
    expect(johnsPage.text).toContain('€49.90 per month');
    expect(johnsPage.text).not.toContain('59.90');
    expect((await post(johnLink, 'sign', johnsPage, { fullName: 'John Roe', agree: 'yes' })).status).toBe(303);
    expect((await getOffer(env, o)).status).toBe('signed');
    const pdf = await signedPdf(env, o);
    expect(pdf).toContain('€49.90 per month');
    expect(pdf).not.toContain('59.90');
    expect(await billed(NOW, o.subscription.id)).toEqual([[4990]]);
  });

  it("the frozen price keeps the catalogue price plan's entitlements", async () => {
    const { pricePlan, plan } = await seatPlan();
    const feature = await ok(env.mcp, 'create_feature', { name: `SSO ${n}`, type: 'switch', status: 'active' });
    await ok(env.mcp, 'create_entitlement', { id: feature.id, pricePlan: pricePlan.id });
    const o = await offer(env, plan);
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    const granted = (await ok(env.mcp, 'list_subscription_entitlements', { id: o.subscription.id })).data;
    expect(granted.map((e: any) => [e.feature.id, e.value])).toEqual([[feature.id, true]]);
  });
});

describe('the page accepts the terms it showed', () => {
  it('a form loaded before the quantity changed is refused with the page shown again, nothing recorded; the reloaded form accepts the new terms', async () => {
    const { plan } = await seatPlan(71.28);
    const o = await offer(env, plan);
    const link: string = o.recipients[0].link;
    const stale = await open(link);
    expect(stale.text).toContain('€71.28 per month');
    const item = (await subscriptionOf(env, o)).items[0];
    await ok(env.mcp, 'update_subscription_item', { id: item.id, quantity: 10 });

    const refused = await post(link, 'accept', stale, { fullName: 'Jane Doe', agree: 'yes' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('<div class="errors" role="alert"><p>This offer has changed since the page was loaded. Please review it as it is now and accept again: nothing was accepted.</p></div>');
    expect(refused.text).toContain('€712.80 per month');
    expect(refused.text).toContain('value="Jane Doe"');
    const still = await getOffer(env, o);
    expect(still.status).toBe('open');
    expect(still.recipients[0].signingLog).toEqual([`${NOW} viewed the offer page`]);

    expect((await post(link, 'accept', refused, { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);
    expect((await getOffer(env, o)).status).toBe('signed');
    expect(await billed(NOW, o.subscription.id)).toEqual([[71280]]);
  });

  it('a form loaded before a catalogue price change is refused; one without terms too', async () => {
    const { pricePlan, plan } = await seatPlan();
    const o = await offer(env, plan);
    const link: string = o.recipients[0].link;
    const stale = await open(link);
    await ok(env.mcp, 'update_price_plan', { id: pricePlan.id, price: { amount: 59.9 } });
    expect((await post(link, 'accept', stale, { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(409);
    const fresh = await open(link);
    expect((await postForm(`${link}/accept`, { csrf: csrfOf(fresh), fullName: 'Jane Doe', agree: 'yes' })).status).toBe(409);
    expect((await getOffer(env, o)).status).toBe('open');
    expect((await post(link, 'accept', fresh, { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);
    expect(await billed(NOW, o.subscription.id)).toEqual([[5990]]);
  });

  it('accept_offer through the API acts for the recipient on the current terms', async () => {
    const { plan } = await seatPlan();
    const o = await offer(env, plan);
    const item = (await subscriptionOf(env, o)).items[0];
    await ok(env.mcp, 'update_subscription_item', { id: item.id, quantity: 2 });
    expect((await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id })).status).toBe('signed');
    expect(await billed(NOW, o.subscription.id)).toEqual([[9980]]);
  });

  it('says why when the step is refused for a reason the page does not show: an inactive customer', async () => {
    const { plan } = await seatPlan();
    const c = await customer(env);
    const o = await offer(env, plan, { customer: c.id, contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example' } });
    const link: string = o.recipients[0].link;
    const page = await open(link);
    await ok(env.mcp, 'update_customer', { id: c.id, status: 'STATUS_INACTIVE' });
    const refused = await post(link, 'accept', page, { fullName: 'Jane Doe', agree: 'yes' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain(
      'Your acceptance was not recorded: your customer account with Seller GmbH is not active. Please contact Sam Seller (sam@seller.example) at Seller GmbH.',
    );
    expect(refused.text).toContain('Accept this offer');
    const still = await getOffer(env, o);
    expect(still.status).toBe('open');
    expect(still.recipients[0].signingLog).toEqual([`${NOW} viewed the offer page`]);
  });
});

describe('frozen terms name what still works', () => {
  it('awaiting_invoice_details: the invoice details complete it (it cannot be archived); archived: a new offer', async () => {
    const { plan, product, pricePlan } = await seatPlan();
    const waiting = await offer(env, plan, { customer: (await customer(env, false)).id });
    await ok(env.mcp, 'accept_offer', { id: waiting.id, recipient: waiting.recipients[0].id });
    const order = { id: waiting.subscription.id, products: [{ product: product.id, pricePlan: pricePlan.id, quantity: 3 }] };
    const refused = await fails(env.mcp, 'order_subscription_products', order, 409);
    expect(refused.detail).toContain('submit_offer_invoice_details completes it');
    expect(refused.detail).not.toContain('archive_offer');
    await fails(env.mcp, 'archive_offer', { id: waiting.id }, 409);

    const archived = await offer(env, plan);
    const item = (await subscriptionOf(env, archived)).items[0];
    await ok(env.mcp, 'archive_offer', { id: archived.id });
    const gone = await fails(env.mcp, 'update_subscription_item', { id: item.id, quantity: 5 }, 409);
    expect(gone.detail).toContain('Nothing of it changes any more; to propose other terms, make a new offer (create_offer).');
    expect(gone.detail).not.toContain('archive_offer');
  });
});

describe('placeholders in the name and description', () => {
  it('are refused (422 at the field): only sections are filled in', async () => {
    const { plan } = await seatPlan();
    const args = { customer: (await customer(env)).id, acceptanceMode: 'click', recipients: [jane], validUntil: VALID_UNTIL, subscription: { plan: plan.id, periods } };
    const created = await fails(env.mcp, 'create_offer', { ...args, name: 'Offer for {{who}}', description: 'Dear {{ who }}', customVariables: { who: 'ACME' } }, 422);
    expect(paths(created)).toEqual(['name', 'description']);
    expect(created.violations[0].message).toBe(
      'name contains {{who}}, but placeholders are filled in sections only (the name is shown as written); write the text itself, or move it into a section',
    );
    const o = await ok(env.mcp, 'create_offer', { ...args, name: 'Offer for ACME' });
    expect(paths(await fails(env.mcp, 'update_offer', { id: o.id, description: 'Hi {{who}}' }, 422))).toEqual(['description']);
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    expect(paths(await fails(env.mcp, 'update_offer', { id: o.id, name: '{{who}}' }, 422))).toEqual(['name']);
  });
});

describe('discounts and the trial on the page and in the PDF', () => {
  it("shows each discount's terms with its item and the trial with its end and items", async () => {
    const { plan } = await seatPlan(49.9, { applyTrial: true }, { trialPeriod: '14D' });
    const support = await ok(env.mcp, 'create_product', { name: 'Support', taxGroup: tax.id });
    const supportPrice = await ok(env.mcp, 'create_price_plan', { id: support.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 20 }, billingInterval: '1M' });
    await ok(env.mcp, 'create_coupon', { code: `WELCOME20-${n}`, name: 'Welcome', type: 'percentage', frequency: 'limited', frequencyInterval: 3, percentage: 20 });
    const o = await offer(env, plan);
    await ok(env.mcp, 'order_subscription_products', {
      id: o.subscription.id,
      products: [
        { product: support.id, pricePlan: supportPrice.id, discount: { coupon: `WELCOME20-${n}` } },
        { product: support.id, pricePlan: supportPrice.id, customName: 'Onboarding', discount: { type: 'fixed_amount', frequency: 'once', fixedAmount: { amount: 5, currency: 'EUR' }, name: 'Kick-off' } },
      ],
    });
    const page = await open(o.recipients[0].link);
    for (const expected of [
      '<dt>Starts</dt><dd>When the offer is signed</dd>',
      '<dt>Term</dt><dd>12 months (cancellation 3 months before its end); renewed by 12 months at a time until cancelled</dd>',
      `<br>Discount coupon WELCOME20-${n}: 20% off, on the first 3 invoices</td>`,
      '<br>Discount Kick-off: €5.00 off, on the first invoice only</td>',
      `Free trial until 29 January 2026: Seat ${n} is free until then and billed from then.`,
    ]) {
      expect(page.text, expected).toContain(expected);
    }
    expect((await post(o.recipients[0].link, 'accept', page, { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);
    const pdf = await signedPdf(env, o);
    for (const expected of [
      'Starts: when the offer is signed',
      'Term: 12 months (cancellation 3 months before its end); renewed by 12 months at a time until cancelled',
      `Discount coupon WELCOME20-${n}: 20% off, on the first 3 invoices`,
      'Discount Kick-off: €5.00 off, on the first invoice only',
      `Free trial until 2026-01-29: Seat ${n} is free until then and billed from then.`,
    ]) {
      expect(pdf, expected).toContain(expected);
    }
  });
});
