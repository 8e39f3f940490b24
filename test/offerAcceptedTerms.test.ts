/**
 * What a recipient accepted stays what the offer signs and bills (second audit of frozen terms): the
 * trial freezes with the prices, the price plans of the accepted terms do not change, and the
 * offer.* events do not carry the recipients' links (a link accepts or signs the offer, and
 * deliveries are read with webhook:read). Through the real server, over HTTP and MCP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fails, ok, setup, type TestEnv } from './helpers.js';
import { address, customer, getOffer, jane, john, NOW, offer, open, periods, seller, signedPdf, submit, subscriptionOf } from './offerFixtures.js';
import { Receiver } from './webhookReceiver.js';

const LATER = '2026-01-16T10:00:00.000Z';
/** A recipient's link (an offer page's address, not one of its documents) in JSON text. */
const PAGE_LINK = /\/pages\/offers\/[^"/]+"/;

let env: TestEnv;
let receiver: Receiver;
let tax: any;
let n = 0;

beforeAll(async () => {
  env = await setup({ pagesRateLimitPerMinute: 100_000, webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000 });
  receiver = await Receiver.start();
  env.setNow(NOW);
  tax = await seller(env);
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});
beforeEach(() => env.setNow(NOW));

/** A plan of one monthly seat at `amount` (its own product and catalogue price plan), free during the plan's trial. */
async function seatPlan(trialPeriod: string | null, amount = 49.9) {
  n += 1;
  const product = await ok(env.mcp, 'create_product', { name: `Seat ${n}`, taxGroup: tax.id });
  const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount }, billingInterval: '1M', applyTrial: true });
  const plan = await ok(env.mcp, 'create_plan', { code: `seat-${n}`, name: `Seat plan ${n}`, charges: [{ product: product.id, pricePlan: pricePlan.id }], trialPeriod });
  return { product, pricePlan, plan };
}

describe('the trial freezes with the prices', () => {
  it('esignature: a trial changed between the signatures is not the one the second signer sees, the PDF shows or the subscription gets', async () => {
    const { plan } = await seatPlan('14D');
    const o = await offer(env, plan, { acceptanceMode: 'esignature', recipients: [jane, john] });
    const [janeLink, johnLink] = o.recipients.map((r: any) => r.link as string);
    expect((await open(janeLink)).text).toContain(`Free trial until 29 January 2026: Seat ${n} is free until then`);
    expect((await submit(janeLink, 'sign', { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);

    await ok(env.mcp, 'update_plan', { id: plan.id, trialPeriod: '30D' });
    const johnsPage = await open(johnLink);
    expect(johnsPage.text).toContain(`Free trial until 29 January 2026: Seat ${n} is free until then`);
    expect(johnsPage.text).not.toContain('14 February 2026');
    expect((await submit(johnLink, 'sign', { fullName: 'John Roe', agree: 'yes' })).status).toBe(303);

    expect((await getOffer(env, o)).status).toBe('signed');
    expect(await signedPdf(env, o)).toContain(`Free trial until 2026-01-29: Seat ${n} is free until then and billed from then.`);
    expect(await subscriptionOf(env, o)).toMatchObject({ status: 'active', trialEndsOn: '2026-01-29T10:00:00.000Z' });
    // A subscription not made by an offer gets the plan's trial as it is now.
    const plain = await ok(env.mcp, 'create_subscription', { customer: (await customer(env)).id, plan: plan.id, periods, activate: true });
    expect(plain.trialEndsOn).toBe('2026-02-14T10:00:00.000Z');
  });

  it('click awaiting invoice details: the trial removed from the plan after the acceptance is still given at signing', async () => {
    const { plan } = await seatPlan('14D');
    const o = await offer(env, plan, { customer: (await customer(env, false)).id });
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    expect((await getOffer(env, o)).status).toBe('awaiting_invoice_details');
    await ok(env.mcp, 'update_plan', { id: plan.id, trialPeriod: null });
    env.setNow(LATER);
    await ok(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: address });
    // The accepted 14 days, from the activation at signing.
    expect(await subscriptionOf(env, o)).toMatchObject({ status: 'active', trialEndsOn: '2026-01-30T10:00:00.000Z' });
  });

  it('signed without activation: a trial the plan gains later is not given when the draft is activated', async () => {
    const { plan } = await seatPlan(null);
    const o = await offer(env, plan, { autoActivateSubscription: false });
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    expect((await subscriptionOf(env, o)).status).toBe('draft');
    await ok(env.mcp, 'update_plan', { id: plan.id, trialPeriod: '1M' });
    await ok(env.mcp, 'activate_subscription', { id: o.subscription.id });
    expect(await subscriptionOf(env, o)).toMatchObject({ status: 'active', trialEndsOn: null });
  });
});

describe('the price plans of accepted terms do not change', () => {
  it('the frozen copy refuses a new price (409 saying what works instead) while signing and once signed; the same values are accepted', async () => {
    const { plan } = await seatPlan(null);
    const o = await offer(env, plan, { acceptanceMode: 'esignature', recipients: [jane, john] });
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    const copy = (await subscriptionOf(env, o)).items[0].pricePlan;
    const copyId = typeof copy === 'string' ? copy : copy.id;

    const signing = await fails(env.mcp, 'update_price_plan', { id: copyId, price: { amount: 59.9 } }, 409);
    expect(signing.detail).toContain(`prices the terms accepted in offer ${o.number} (signing)`);
    expect(signing.detail).toContain('an accepted price does not change, so price cannot change');
    expect(signing.detail).toContain('withdraw the offer (archive_offer) and make a new one (create_offer)');
    const rest = await env.http('PUT', `/catalogue/price-plans/${copyId}`, { body: { internalName: 'Renamed', status: 'archived' } });
    expect(rest.status).toBe(409);
    expect(rest.body.detail).toContain('so status, internalName cannot change');
    await ok(env.mcp, 'update_price_plan', { id: copyId, price: { amount: 49.9 } });

    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[1].id });
    const sub = await subscriptionOf(env, o);
    const signed = await fails(env.mcp, 'update_price_plan', { id: copyId, price: { amount: 59.9 } }, 409);
    expect(signed.detail).toContain(`(signed), for subscription ${sub.number}`);
    expect(signed.detail).toContain('end its item (update_subscription_item with billingEnd) and order the product at the new price (order_subscription_products)');
    const stored = await ok(env.mcp, 'get_price_plan', { id: copyId });
    expect(stored).toMatchObject({ price: { amount: 49.9 }, status: 'active', internalName: expect.stringContaining(`Accepted in offer ${o.number}`) });
    expect(stored.priceHistory).toHaveLength(1);
  });

  it('a custom price plan ordered onto the open offer is frozen with it; one ordered after signing changes as before', async () => {
    const { plan, product } = await seatPlan(null);
    const o = await offer(env, plan, { customer: (await customer(env, false)).id });
    const custom = { type: 'flat_fee', currencyCode: 'EUR', price: { amount: 15 }, billingInterval: '1M', applyTrial: false, proRata: true, freeUnits: 0 };
    await ok(env.mcp, 'order_subscription_products', { id: o.subscription.id, products: [{ product: product.id, customPricePlan: custom, customName: 'Support' }] });
    const ordered = (await subscriptionOf(env, o)).items.find((i: any) => i.name === 'Support').pricePlan;
    const orderedId = typeof ordered === 'string' ? ordered : ordered.id;
    // While the offer is open its terms change: so does the custom price.
    await ok(env.mcp, 'update_price_plan', { id: orderedId, price: { amount: 17 } });

    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    const waiting = await fails(env.mcp, 'update_price_plan', { id: orderedId, price: { amount: 19 } }, 409);
    expect(waiting.detail).toContain(`offer ${o.number} (awaiting_invoice_details)`);
    expect(waiting.detail).toContain('submit_offer_invoice_details completes it at the accepted price');

    await ok(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: address });
    await fails(env.mcp, 'update_price_plan', { id: orderedId, price: { amount: 19 } }, 409);
    env.setNow(LATER);
    await ok(env.mcp, 'order_subscription_products', { id: o.subscription.id, products: [{ product: product.id, customPricePlan: custom, customName: 'Training' }] });
    const later = (await subscriptionOf(env, o)).items.find((i: any) => i.name === 'Training').pricePlan;
    const laterId = typeof later === 'string' ? later : later.id;
    expect((await ok(env.mcp, 'update_price_plan', { id: laterId, price: { amount: 19 } })).price.amount).toBe(19);
  });
});

describe('offer events withhold the recipients\' links', () => {
  it('offer.accepted and offer.signed carry each recipient with link null, as delivered and as get_webhook_delivery shows them to a webhook:read key', async () => {
    const webhook = await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['offer.accepted', 'offer.signed'], version: 'v1' });
    const { plan } = await seatPlan(null);
    const o = await offer(env, plan, { acceptanceMode: 'esignature', recipients: [jane, john] });
    expect(o.recipients.map((r: any) => r.link)).toEqual([expect.stringMatching(/\/pages\/offers\//), expect.stringMatching(/\/pages\/offers\//)]);
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    await submit(o.recipients[1].link, 'sign', { fullName: 'John Roe', agree: 'yes' });

    const received = await receiver.waitFor(3);
    const ofOffer = received.filter((r) => r.json.data.offer?.id === o.id);
    expect(ofOffer.map((r) => r.json.event.type).sort()).toEqual(['offer.accepted', 'offer.accepted', 'offer.signed']);
    for (const r of ofOffer) {
      expect(r.json.data.offer.recipients.map((x: any) => [x.email, x.link])).toEqual([
        [jane.email, null],
        [john.email, null],
      ]);
    }
    // Only the signed PDFs (the link + /signed.pdf, once the offer is signed and its page accepts nothing) name a page's address.
    expect(JSON.stringify(ofOffer.map((r) => r.json))).not.toMatch(PAGE_LINK);
    const whileSigning = ofOffer.find((r) => r.json.data.offer.status === 'signing')!;
    expect(JSON.stringify(whileSigning.json)).not.toContain('/pages/offers/');

    const reader = await env.mcpFor(await env.newKey(env.org, ['webhook:read']));
    await reader.listTools();
    const deliveries = (await ok(reader, 'list_webhook_deliveries', { id: webhook.id })).data;
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) {
      const delivery = await ok(reader, 'get_webhook_delivery', { id: d.id });
      expect(delivery.payload.data.offer.recipients.map((x: any) => x.link)).toEqual([null, null]);
      expect(JSON.stringify(delivery.payload)).not.toMatch(PAGE_LINK);
    }
    // The offer's own reads by a key that may accept it still show the links.
    expect((await getOffer(env, o)).recipients.map((r: any) => r.link)).toEqual(o.recipients.map((r: any) => r.link));
  });
});
