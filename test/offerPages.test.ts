/**
 * The offer pages and signed documents (issue 18) through the real server: links, pages, forms with
 * their CSRF check, the same domain steps and events as the API, the PDFs; then the pages in Chromium.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderMarkdown } from '../src/pages/markdown.js';
import { CHROMIUM, launchBrowser, seriousViolations, trackWeight } from './browser.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';
import { address, csrfOf, customer, getOffer, jane, john, NOW, offer as offerOf, open, periods, post, seller, VALID_UNTIL } from './offerFixtures.js';
import { pdfText } from './pdf.js';
import { eventually, Receiver } from './webhookReceiver.js';
import { postForm } from './forms.js';

let env: TestEnv;
let receiver: Receiver;
let plan: any;

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, pagesRateLimitPerMinute: 100_000 });
  env.setNow(NOW);
  receiver = await Receiver.start();
  await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['offer.accepted', 'offer.signed'] });
  const tax = await seller(env);
  const seat = await ok(env.mcp, 'create_product', { name: 'Pro seat', taxGroup: tax.id });
  const seatPrice = await ok(env.mcp, 'create_price_plan', { id: seat.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 49.9 }, billingInterval: '1M' });
  await ok(env.mcp, 'create_unit', { name: 'request' });
  const m = await ok(env.mcp, 'create_measurement', { unit: 'request', code: 'requests', aggregationType: 'sum', type: 'metered' });
  const api = await ok(env.mcp, 'create_product', { name: 'API requests', measurement: m.id, taxGroup: tax.id });
  const apiPrice = await ok(env.mcp, 'create_price_plan', {
    id: api.id,
    type: 'per_unit',
    currencyCode: 'EUR',
    price: { amount: 0.002 },
    billingInterval: '1M',
    payInAdvance: false,
    freeUnits: 1000,
  });
  plan = await ok(env.mcp, 'create_plan', {
    code: 'team',
    name: 'Team',
    charges: [
      { product: seat.id, pricePlan: seatPrice.id, quantity: 2 },
      { product: api.id, pricePlan: apiPrice.id },
    ],
  });
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});
beforeEach(() => env.setNow(NOW));

/** An offer of the team plan with a description and a section filling in a custom variable; `extra` adds or overrides fields. */
async function offer(extra: Record<string, unknown> = {}): Promise<any> {
  return offerOf(env, plan, {
    name: 'Team plan for ACME',
    description: 'Two seats and the API.',
    sections: [{ title: 'Scope', content: 'Everything in **Team** for {{company}}.\n\n- two seats\n- the API <script>alert(1)</script>' }],
    customVariables: { company: 'ACME' },
    ...extra,
  });
}

/** Opens the recipient's page and posts its form to `action` with the page's CSRF token and terms; a redirect leads back to the page. */
async function submit(link: string, action: string, fields: Record<string, string>) {
  const response = await post(link, action, await open(link), fields);
  if (response.location) expect(new URL(response.location, `${link}/${action}`).href).toBe(link);
  return response;
}

async function fetchBytes(url: string, token: string | null = env.org.apiKey) {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** The event types the webhook received for an offer, in order, once `count` have arrived. */
async function eventsOf(offerId: string, count: number): Promise<string[]> {
  const types = () => receiver.received.filter((r) => r.json.data.offer?.id === offerId).map((r) => r.json.event.type as string);
  return eventually(async () => types().length >= count && types());
}

describe('markdown of sections', () => {
  it('renders formatting, lists and links, and keeps out scripts, raw HTML, unsafe links and images', () => {
    const out = String(
      renderMarkdown('# Title\n\n**bold** <b onclick="x()">raw</b> [bad](javascript:alert(1)) [ok](https://ok.example)\n\n1. one\n\n![tracker](https://evil.example/t.png)'),
    );
    expect(out).toContain('<h3>Title</h3>');
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('&lt;b onclick="x()"&gt;raw&lt;/b&gt;');
    expect(out).toContain('<a href="https://ok.example" rel="noreferrer nofollow">ok</a>');
    expect(out).not.toMatch(/href="javascript|<img|<script|<b /);
    expect(out).toContain('<li>one</li>');
    expect(out).toContain('<span>tracker</span>');
  });
});

describe('the offer page over HTTP', () => {
  it("gives each recipient an absolute link under the server's address carrying a token of at least 128 bits", async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature' });
    const tokens = await env.app.pageTokens();
    const [a, b] = o.recipients.map((r: any) => r.link as string);
    expect(a.startsWith(`${env.url}/pages/offers/`)).toBe(true);
    expect(a).not.toBe(b);
    const token = a.slice(a.lastIndexOf('/') + 1);
    expect(tokens.verify('offer-recipient', token)).toEqual({ org: env.org.organisationId, id: o.recipients[0].id });
    expect(Buffer.from(token.split('.')[1]!, 'base64url').byteLength * 8).toBeGreaterThanOrEqual(128);
    expect((await getOffer(env, o)).recipients[0].link).toBe(a);
    const listed = await env.http('GET', `/offers?customer=${o.customer.id}`);
    expect(listed.body.data[0].recipients[1].link).toBe(b);
    expect(await getOffer(env, o)).toMatchObject({ signedDocument: null, auditLogDocument: null, recipients: [{ signedDocument: null }, { signedDocument: null }] });

    const proxied = await setup({ publicUrl: 'https://billing.example/base' });
    try {
      const p = await ok(proxied.mcp, 'create_customer', { lastName: 'Behind a proxy' });
      const g = await ok(proxied.mcp, 'create_product', { name: 'Thing' });
      const price = await ok(proxied.mcp, 'create_price_plan', { id: g.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 1 }, billingInterval: '1M' });
      const pl = await ok(proxied.mcp, 'create_plan', { code: 'thing', name: 'Thing', charges: [{ product: g.id, pricePlan: price.id }] });
      const far = await ok(proxied.mcp, 'create_offer', {
        customer: p.id,
        acceptanceMode: 'click',
        name: 'Thing',
        recipients: [jane],
        validUntil: '2099-01-01T00:00:00Z',
        subscription: { plan: pl.id, periods },
      });
      expect(far.recipients[0].link).toMatch(/^https:\/\/billing\.example\/base\/pages\/offers\/[\w-]+\.[\w-]{43}$/);
    } finally {
      await proxied.close();
    }
  });

  it('shows the offer as it will be billed: sections, plan, items with their prices, the first invoice with tax and totals, validity and signers', async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature', contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example' } });
    const started = performance.now();
    const page = await open(o.recipients[1].link);
    const elapsed = performance.now() - started;
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    const text = page.text;
    for (const expected of [
      'Offer from Seller GmbH',
      '<h1 lang="en">Team plan for ACME</h1>',
      `Offer ${o.number} for ACME GmbH`,
      'Two seats and the API.',
      '<h2 id="section-0">Scope</h2>',
      'Everything in <strong>Team</strong> for ACME.',
      '<li>two seats</li>',
      'Plan: <strong>Team</strong>',
      // Items: 2 × 49.90 a month in advance; the API by usage beyond 1,000 free requests.
      '€99.80 per month',
      'monthly in advance',
      '€0.002 per unit, 1000 free',
      'monthly in arrears, by usage',
      // The first invoice: 99.80 net, 19 % = 18.962 → 18.96, 118.76 gross, on 15 January.
      'First invoice, on 15 January 2026',
      // The line names its period, first to last day, as the invoice will.
      'Pro seat (2026-01-15 to 2026-02-14)<br><span class="muted">2 × €49.90',
      'Tax 19% on €99.80</th><td class="num">€18.96',
      '<td class="num" id="total">€118.76</td>',
      'Valid until</dt><dd>15 February 2026 at 01:00 (Europe/Berlin)',
      'Sam Seller',
      'Every recipient signs; the offer is signed once all of them have.',
      'Jane Doe: <span class="status">not signed</span>',
      'John Roe (you): <span class="status">not signed</span>',
      'Sign this offer',
      'Type your full name (John Roe) to sign.',
    ]) {
      expect(text, expected).toContain(expected);
    }
    expect(text).not.toMatch(/<script|alert\(1\)<\/script>/);
    expect(text).not.toContain(env.org.apiKey);
    const estimate = await ok(env.mcp, 'get_estimated_invoice', { id: o.subscription.id });
    expect([estimate.netAmount, estimate.taxAmount, estimate.grossAmount]).toEqual([9980, 1896, 11876]);
    expect(Buffer.byteLength(text)).toBeLessThan(100 * 1024);
    expect(elapsed).toBeLessThan(200);
  });

  it('logs a view per recipient, address and browser once an hour, so signingLog stays readable', async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature' });
    await open(o.recipients[0].link, { 'user-agent': 'Browser A' });
    await open(o.recipients[0].link, { 'user-agent': 'Browser A' });
    env.setNow('2026-01-15T10:30:00.000Z');
    await open(o.recipients[0].link, { 'user-agent': 'Browser A' });
    await open(o.recipients[0].link, { 'user-agent': 'Browser B' });
    env.setNow('2026-01-15T11:30:00.000Z');
    await open(o.recipients[0].link, { 'user-agent': 'Browser A' });
    const got = await getOffer(env, o);
    expect(got.recipients[0].signingLog).toEqual([
      '2026-01-15T10:00:00.000Z viewed the offer page',
      '2026-01-15T10:30:00.000Z viewed the offer page',
      '2026-01-15T11:30:00.000Z viewed the offer page',
    ]);
    expect(got.recipients[1].signingLog).toEqual([]);
  });

  it('answers a forged, altered, foreign or other-purpose token with the same 404 page that reveals nothing', async () => {
    const o = await offer();
    const link: string = o.recipients[0].link;
    const token = link.slice(link.lastIndexOf('/') + 1);
    const [payload, mac] = token.split('.');
    const tokens = await env.app.pageTokens();
    const other = await env.newOrg();
    const notFound = (await open(`${env.url}/pages/offers/nothing.here`)).text;
    for (const forged of [
      `${payload}.${'A'.repeat(43)}`,
      `${Buffer.from(`${env.org.organisationId}\n${o.id}`).toString('base64url')}.${mac}`,
      tokens.issue('invoice', { org: env.org.organisationId, id: o.recipients[0].id }),
      tokens.issue('offer-recipient', { org: other.organisationId, id: o.recipients[0].id }),
      tokens.issue('offer-recipient', { org: env.org.organisationId, id: o.id }),
    ]) {
      const page = await open(`${env.url}/pages/offers/${forged}`);
      expect(page.status).toBe(404);
      expect(page.text).toBe(notFound);
      expect((await open(`${env.url}/pages/offers/${forged}/signed.pdf`)).status).toBe(404);
      const csrf = tokens.derive('csrf', forged);
      expect((await postForm(`${env.url}/pages/offers/${forged}/accept`, { csrf, fullName: 'Jane Doe', agree: 'yes' })).status).toBe(404);
    }
    expect(notFound).not.toContain(payload);
    expect((await getOffer(env, o)).status).toBe('open');
  });

  it('refuses a POST without the CSRF field, with a wrong one, or from another site (403), and changes nothing', async () => {
    const o = await offer();
    const link: string = o.recipients[0].link;
    const csrf = csrfOf(await open(link));
    const fields = { fullName: 'Jane Doe', agree: 'yes' };
    const refused = [
      await postForm(`${link}/accept`, fields),
      await postForm(`${link}/accept`, { ...fields, csrf: `${csrf.slice(0, -2)}xx` }),
      await postForm(`${link}/accept`, { ...fields, csrf: csrfOf(await open((await offer()).recipients[0].link)) }),
      await postForm(`${link}/accept`, { ...fields, csrf }, { 'sec-fetch-site': 'cross-site' }),
      await postForm(`${link}/accept`, { ...fields, csrf }, { origin: 'https://evil.example' }),
      await postForm(`${link}/accept`, { ...fields, csrf }, { origin: 'not a url' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(refused[0]!.text).toContain('This form has expired or was not sent from this page');
    const got = await getOffer(env, o);
    expect(got.status).toBe('open');
    expect(got.recipients[0].signingLog).toEqual([`${NOW} viewed the offer page`]);
  });

  it('click: a wrong name or an unticked box shows the form again with the errors and the name entered; then Accept signs the offer and activates the subscription', async () => {
    const o = await offer();
    const link: string = o.recipients[0].link;
    const wrong = await submit(link, 'accept', { fullName: 'Joan Doe' });
    expect(wrong.status).toBe(422);
    expect(wrong.text).toContain('Please correct the fields marked below.');
    expect(wrong.text).toContain('<p class="field-error" id="fullName-error">Enter your full name as this offer names you: Jane Doe.</p>');
    expect(wrong.text).toContain('value="Joan Doe" autocomplete="name" required aria-invalid="true" aria-describedby="fullName-error"');
    expect(wrong.text).toContain('<p class="field-error" id="agree-error">Tick the box to confirm that you agree.</p>');
    expect((await submit(link, 'accept', { fullName: ' ', agree: 'yes' })).text).toContain('Enter your full name.</p>');
    const nul = await submit(link, 'accept', { fullName: 'Jane\u0000Doe', agree: 'yes' });
    expect([nul.status, nul.text]).toEqual([422, expect.stringContaining('contains the character U+0000 (NUL)')]);
    expect((await getOffer(env, o)).status).toBe('open');

    env.setNow('2026-01-16T09:00:00.000Z');
    const done = await submit(link, 'accept', { fullName: '  jane   DOE ', agree: 'yes' });
    expect(done.status).toBe(303);
    const signed = await getOffer(env, o);
    expect(signed).toMatchObject({ status: 'signed', signedAt: '2026-01-16T09:00:00.000Z', subscription: { status: 'active', activatedAt: '2026-01-16T09:00:00.000Z' } });
    expect(signed.recipients[0].signingLog).toEqual([
      `${NOW} viewed the offer page`,
      '2026-01-16T09:00:00.000Z viewed the offer page',
      '2026-01-16T09:00:00.000Z accepted (click) on the offer page as jane DOE',
    ]);
    const page = await open(link);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>This offer is signed</h1>');
    expect(page.text).toContain('was signed on 16 January 2026 at 10:00 (Europe/Berlin)');
    expect(page.text).toContain('Download the signed offer (PDF)');
    expect(page.text).not.toContain('<form');
  });

  it("emits the events the API emits: offer.accepted then offer.signed, with the offer as GET shows it, recipients' links withheld", async () => {
    const viaApi = await offer();
    await ok(env.mcp, 'accept_offer', { id: viaApi.id, recipient: viaApi.recipients[0].id });
    const viaPage = await offer();
    await submit(viaPage.recipients[0].link, 'accept', { fullName: 'Jane Doe', agree: 'yes' });
    expect(await eventsOf(viaApi.id, 2)).toEqual(['offer.accepted', 'offer.signed']);
    expect(await eventsOf(viaPage.id, 2)).toEqual(['offer.accepted', 'offer.signed']);
    const [accepted, signed] = receiver.received.filter((r) => r.json.data.offer?.id === viaPage.id).map((r) => r.json.data);
    expect(accepted.recipient).toBe(viaPage.recipients[0].id);
    const read = (await env.http('GET', `/offers/${viaPage.id}`)).body;
    expect(signed.offer).toEqual({ ...read, recipients: read.recipients.map((r: any) => ({ ...r, link: null })) });
  });

  it('esignature: each recipient signs with their own name, case and spaces aside; the offer is signed when both have', async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature' });
    const [janeLink, johnLink] = o.recipients.map((r: any) => r.link as string);
    const johnCsrf = csrfOf(await open(johnLink));
    const mismatch = await submit(johnLink, 'sign', { fullName: 'Jane Doe', agree: 'yes' });
    expect(mismatch.status).toBe(422);
    expect(mismatch.text).toContain('Enter your full name as this offer names you: John Roe.');
    expect(mismatch.text).toContain('value="Jane Doe"');
    // A click form posted to an esignature offer changes nothing: back to the page.
    expect((await submit(johnLink, 'accept', { fullName: 'John Roe', agree: 'yes' })).status).toBe(303);
    expect((await getOffer(env, o)).status).toBe('open');

    env.setNow('2026-01-16T09:00:00.000Z');
    expect((await submit(johnLink, 'sign', { fullName: 'john roe', agree: 'yes' })).status).toBe(303);
    expect((await getOffer(env, o)).status).toBe('signing');
    const waiting = await open(johnLink);
    expect(waiting.text).toContain('You signed this offer on 16 January 2026 at 10:00 (Europe/Berlin). It is signed once Jane Doe has signed too.');
    expect(waiting.text).not.toContain('<form');
    // The form sent again (a second click, a stale tab) changes nothing: back to the page.
    expect((await postForm(`${johnLink}/sign`, { csrf: johnCsrf, fullName: 'John Roe', agree: 'yes' })).status).toBe(303);

    env.setNow('2026-01-17T09:00:00.000Z');
    expect((await submit(janeLink, 'sign', { fullName: 'Jane Doe', agree: 'yes' })).status).toBe(303);
    const signed = await getOffer(env, o);
    expect(signed).toMatchObject({ status: 'signed', signedAt: '2026-01-17T09:00:00.000Z', subscription: { status: 'active' } });
    expect(signed.recipients.map((r: any) => r.signingLog.filter((l: string) => !l.endsWith('viewed the offer page')))).toEqual([
      ['2026-01-17T09:00:00.000Z signed (esignature) on the offer page as Jane Doe'],
      ['2026-01-16T09:00:00.000Z signed (esignature) on the offer page as john roe'],
    ]);
  });

  it('awaiting_invoice_details: the form shows mistakes next to its fields, validated as the API validates, and keeps what was entered; a valid address signs the offer', async () => {
    const c = await customer(env, false);
    const o = await offer({ customer: c.id });
    await submit(o.recipients[0].link, 'accept', { fullName: 'Jane Doe', agree: 'yes' });
    expect((await getOffer(env, o)).status).toBe('awaiting_invoice_details');
    const link: string = o.recipients[0].link;
    const page = await open(link);
    expect(page.text).toContain('<h2 id="act">Your invoice address</h2>');
    expect(page.text).toContain('Jane Doe accepted this offer on 15 January 2026 at 11:00 (Europe/Berlin)');
    expect(page.text).toContain('<label for="zip">Postal code</label>');
    expect(page.text).toContain('<option value="DE">Germany</option>');
    expect(page.text).toContain('No tax is shown yet');

    const entered = { companyName: 'ACME GmbH', street: 'Friedrichstraße', houseNumber: '', zip: ' ', city: 'Berlin', countryCode: 'de', vatId: '' };
    const invalid = await submit(link, 'invoice-details', entered);
    expect(invalid.status).toBe(422);
    const api = await fails(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: { companyName: 'ACME GmbH', street: 'Friedrichstraße', zip: ' ', city: 'Berlin', countryCode: 'de' } }, 422);
    const messages = Object.fromEntries(api.violations.map((v: any) => [v.propertyPath.replace('invoiceAddress.', ''), v.message.replace(`${v.propertyPath} `, '')]));
    expect(Object.keys(messages).sort()).toEqual(['countryCode', 'zip']);
    for (const [field, text] of Object.entries(messages)) {
      expect(invalid.text).toContain(`<p class="field-error" id="${field}-error">${text.charAt(0).toUpperCase()}${text.slice(1)}</p>`);
    }
    expect(invalid.text).toContain('id="street" name="street" value="Friedrichstraße"');
    expect(invalid.text).toContain('id="zip" name="zip" value=" "');

    const badVat = await submit(link, 'invoice-details', { ...entered, zip: '10117', countryCode: 'DE', vatId: 'DE123456789' });
    expect(badVat.status).toBe(422);
    expect(badVat.text).toMatch(/<p class="field-error" id="vatId-error">Must be a VAT id of DE: /);
    expect(badVat.text).toContain('<option value="DE" selected>Germany</option>');
    expect((await getOffer(env, o)).status).toBe('awaiting_invoice_details');

    env.setNow('2026-01-15T12:00:00.000Z');
    expect((await submit(link, 'invoice-details', { ...entered, zip: '10117', countryCode: 'DE', vatId: 'DE 136 695 976' })).status).toBe(303);
    const signed = await getOffer(env, o);
    expect(signed).toMatchObject({ status: 'signed', signedAt: '2026-01-15T12:00:00.000Z', subscription: { status: 'active' } });
    expect(signed.recipients[0].signingLog.at(-1)).toBe('2026-01-15T12:00:00.000Z gave the invoice details on the offer page');
    const addresses = (await ok(env.mcp, 'list_invoice_addresses', { id: c.id })).data;
    expect(addresses).toEqual([expect.objectContaining({ ...address, houseNumber: null, companyName: 'ACME GmbH', vatId: 'DE136695976', default: true })]);
    expect(await eventsOf(o.id, 2)).toEqual(['offer.accepted', 'offer.signed']);
  });

  it('print: shows the offer and that the seller records the signed printout, with no form', async () => {
    const o = await offer({ acceptanceMode: 'print' });
    const page = await open(o.recipients[0].link);
    expect(page.status).toBe(200);
    // Without an invoice address, only a click offer asks the recipient for one.
    const bare = await open((await offer({ acceptanceMode: 'print', customer: (await customer(env, false)).id })).recipients[0].link);
    expect(bare.text).toContain('No tax is shown: tax follows your invoice address, which the seller does not have yet.');
    expect(bare.text).not.toContain('which you give after accepting');
    expect(page.text).toContain('Print this offer, sign it and return it to Seller GmbH. Seller GmbH records your signed printout');
    expect(page.text).not.toContain('<form');
  });

  it('after validUntil, after archiving and once signed, shows a plain message and takes no action', async () => {
    const expired = await offer();
    const archived = await offer();
    await ok(env.mcp, 'archive_offer', { id: archived.id });
    const signed = await offer();
    await ok(env.mcp, 'accept_offer', { id: signed.id, recipient: signed.recipients[0].id });
    const csrf = csrfOf(await open(expired.recipients[0].link));
    env.setNow(VALID_UNTIL);
    const cases: Array<[any, number, string]> = [
      [expired, 410, 'This offer has expired'],
      [archived, 410, 'This offer was withdrawn'],
      [signed, 200, 'This offer is signed'],
    ];
    for (const [o, status, title] of cases) {
      const page = await open(o.recipients[0].link);
      expect(page.status, title).toBe(status);
      expect(page.text).toContain(`<h1>${title}</h1>`);
      expect(page.text).not.toMatch(/<form|<table/);
    }
    expect((await open(expired.recipients[0].link)).text).toContain('could be accepted until 15 February 2026 at 01:00 (Europe/Berlin). Ask Seller GmbH for a new offer.');
    const late = await postForm(`${expired.recipients[0].link}/accept`, { csrf, fullName: 'Jane Doe', agree: 'yes' });
    expect(late.status).toBe(303);
    expect((await getOffer(env, expired)).status).toBe('open');
    expect((await getOffer(env, expired)).recipients[0].signingLog).toEqual([`${NOW} viewed the offer page`]);
  });
});

describe('signed documents', () => {
  it('before signing: no document URLs, the tools answer 409 naming the status, the recipient PDF is a 404', async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature' });
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    const problem = await fails(env.mcp, 'get_offer_signed_document', { id: o.id }, 409);
    expect(problem.detail).toContain(`Offer ${o.number} is signing`);
    await fails(env.mcp, 'get_offer_audit_log_document', { id: o.id }, 409);
    expect((await env.http('GET', `/offers/${o.id}/signed-document`)).status).toBe(409);
    expect((await open(`${o.recipients[0].link}/signed.pdf`)).status).toBe(404);
    expect((await getOffer(env, o)).signedDocument).toBeNull();
    await fails(env.mcp, 'get_offer_signed_document', { id: '01JUNKNOWN0000000000000000' }, 404);
  });

  it('once signed: organisation keys fetch both PDFs (401 without a key), the recipient fetches the signed one by its link; they hold the names, signatures and the hash', async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature' });
    env.setNow('2026-01-16T09:00:00.000Z');
    await submit(o.recipients[1].link, 'sign', { fullName: 'John Roe', agree: 'yes' });
    env.setNow('2026-01-17T09:30:00.000Z');
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    const signed = await getOffer(env, o);
    expect(signed.signedDocument).toBe(`${env.url}/offers/${o.id}/signed-document`);
    expect(signed.auditLogDocument).toBe(`${env.url}/offers/${o.id}/audit-log-document`);
    expect(signed.recipients.map((r: any) => r.signedDocument)).toEqual(signed.recipients.map((r: any) => `${r.link}/signed.pdf`));

    const document = await fetchBytes(signed.signedDocument);
    expect([document.status, document.type]).toEqual([200, 'application/pdf']);
    expect((await fetchBytes(signed.signedDocument, null)).status).toBe(401);
    expect((await fetchBytes(signed.auditLogDocument, null)).status).toBe(401);
    const byRecipient = await fetchBytes(signed.recipients[1].signedDocument, null);
    expect(byRecipient.status).toBe(200);
    expect(Buffer.from(byRecipient.bytes).equals(Buffer.from(document.bytes))).toBe(true);
    const stranger = await env.newOrg();
    expect((await fetchBytes(signed.signedDocument, stranger.apiKey)).status).toBe(404);
    expect((await fetchBytes(signed.signedDocument, await env.newKey(env.org, ['customer:read']))).status).toBe(403);

    const hash = createHash('sha256').update(document.bytes).digest('hex');
    const tool = (await env.mcp.callTool({ name: 'get_offer_signed_document', arguments: { id: o.id } })) as CallToolResult;
    expect(tool.structuredContent).toEqual({
      offer: o.id,
      number: o.number,
      url: signed.signedDocument,
      mimeType: 'application/pdf',
      sha256: hash,
      createdAt: '2026-01-17T09:30:00.000Z',
    });
    expect(tool.content.find((c) => c.type === 'resource_link')).toEqual({
      type: 'resource_link',
      uri: signed.signedDocument,
      name: `${o.number}-signed.pdf`,
      mimeType: 'application/pdf',
    });
    expect(JSON.stringify(tool)).not.toContain('%PDF');

    const text = await pdfText(document.bytes);
    for (const expected of [
      'Seller GmbH',
      `Offer ${o.number}`,
      'Team plan for ACME',
      'Everything in Team for ACME.',
      '• two seats',
      '€99.80 per month',
      // The line names its period, first to last day, as the invoice will.
      'Pro seat (2026-01-17 to 2026-02-16)',
      '€118.76',
      'Jane Doe',
      'jane@acme.example - 2026-01-17 09:30:00 UTC',
      'signed (esignature)',
      'John Roe',
      'john@acme.example - 2026-01-16 09:00:00 UTC',
      'signed (esignature) on the offer page as John Roe',
    ]) {
      expect(text, expected).toContain(expected);
    }

    const audit = await fetchBytes(signed.auditLogDocument);
    expect(audit.status).toBe(200);
    const auditText = await pdfText(audit.bytes);
    for (const expected of [hash, 'Audit log', o.number, 'John Roe', 'Jane Doe', 'viewed the offer page', '127.0.0.1', 'through the API', 'signed (esignature) on the offer page as John Roe']) {
      expect(auditText, expected).toContain(expected);
    }
    expect((await ok(env.mcp, 'get_offer_audit_log_document', { id: o.id })).sha256).toBe(createHash('sha256').update(audit.bytes).digest('hex'));
  });
});

/** A browser test starts Chromium and loads several pages: more than the default time on a busy machine. */
const BROWSER_TIMEOUT_MS = 60_000;

describe.skipIf(!CHROMIUM)('the offer page in Chromium', { timeout: BROWSER_TIMEOUT_MS }, () => {
  const screenshots = process.env.UPDATE_SCREENSHOTS === '1';
  const shotDir = join(dirname(new URL(import.meta.url).pathname), '..', 'docs', 'screenshots');

  async function browse<T>(fn: (browser: Awaited<ReturnType<typeof launchBrowser>>) => Promise<T>): Promise<T> {
    const browser = await launchBrowser();
    try {
      return await fn(browser);
    } finally {
      await browser.close();
    }
  }

  it('a recipient opens the link, reads the total, ticks the terms and accepts: the subscription becomes active', async () => {
    const o = await offer({
      contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example' },
      sections: [
        { title: 'Scope', content: 'Everything in **Team** for {{company}}:\n\n- two seats\n- the API, 1,000 requests a month included\n- support by [e-mail](mailto:help@seller.example)' },
        { title: 'Terms', content: 'Twelve months, then month by month; three months notice before the end of a term.' },
      ],
    });
    await browse(async (browser) => {
      const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1000, height: 1400 } });
      const page = await context.newPage();
      const weight = trackWeight(page);
      const started = Date.now();
      await page.goto(o.recipients[0].link);
      expect(Date.now() - started).toBeLessThan(2000);
      await expect(page.title()).resolves.toBe(`Team plan for ACME – offer ${o.number}`);
      expect(await page.locator('#total').textContent()).toBe('€118.76');
      await page.waitForLoadState('networkidle');
      expect(weight.total()).toBeGreaterThan(0);
      expect(weight.total()).toBeLessThan(100 * 1024);
      expect(await seriousViolations(page)).toEqual([]);
      if (screenshots) {
        mkdirSync(shotDir, { recursive: true });
        await page.screenshot({ path: join(shotDir, 'offer.png'), fullPage: true });
      }
      // The name is filled in; the browser refuses to send the form until the box is ticked.
      expect(await page.getByLabel('Your full name').inputValue()).toBe('Jane Doe');
      await page.getByRole('button', { name: 'Accept offer' }).click();
      expect((await getOffer(env, o)).status).toBe('open');
      await page.getByLabel('I have read this offer and accept it').check();
      await page.getByRole('button', { name: 'Accept offer' }).click();
      await page.waitForURL(o.recipients[0].link);
      await expect(page.locator('h1').textContent()).resolves.toBe('This offer is signed');
      expect(await seriousViolations(page)).toEqual([]);
      if (screenshots) await page.screenshot({ path: join(shotDir, 'offer-signed.png'), fullPage: true });
      const pdf = await page.getByRole('link', { name: 'Download the signed offer (PDF)' }).getAttribute('href');
      expect(new URL(pdf!, page.url()).href).toBe(`${o.recipients[0].link}/signed.pdf`);
    });
    const signed = await getOffer(env, o);
    expect(signed.status).toBe('signed');
    expect((await ok(env.mcp, 'get_subscription', { id: o.subscription.id })).status).toBe('active');
    expect(signed.recipients[0].signingLog.at(-1)).toBe(`${NOW} accepted (click) on the offer page as Jane Doe`);
  });

  it('two recipients sign an esignature offer in turn; the PDFs hold their names and the signed document\'s hash', async () => {
    const o = await offer({ recipients: [jane, john], acceptanceMode: 'esignature' });
    await browse(async (browser) => {
      for (const [i, name] of [
        [1, 'John Roe'],
        [0, 'Jane Doe'],
      ] as const) {
        const context = await browser.newContext({ bypassCSP: true });
        const page = await context.newPage();
        await page.goto(o.recipients[i].link);
        expect(await seriousViolations(page)).toEqual([]);
        await page.getByLabel('Your full name').fill('Someone Else');
        await page.getByLabel('I sign this offer electronically').check();
        await page.getByRole('button', { name: 'Sign offer' }).click();
        await expect(page.locator('#fullName-error').textContent()).resolves.toBe(`Enter your full name as this offer names you: ${name}.`);
        expect(await seriousViolations(page)).toEqual([]);
        await page.getByLabel('Your full name').fill(name);
        await page.getByLabel('I sign this offer electronically').check();
        await page.getByRole('button', { name: 'Sign offer' }).click();
        await page.waitForURL(o.recipients[i].link);
        if (i === 1) {
          await expect(page.getByRole('heading', { name: 'You have signed' }).isVisible()).resolves.toBe(true);
          expect(await seriousViolations(page)).toEqual([]);
          expect((await getOffer(env, o)).status).toBe('signing');
        } else {
          await expect(page.locator('h1').textContent()).resolves.toBe('This offer is signed');
        }
        await context.close();
      }
    });
    const signed = await getOffer(env, o);
    expect(signed.status).toBe('signed');
    const document = await fetchBytes(signed.recipients[0].signedDocument, null);
    const hash = createHash('sha256').update(document.bytes).digest('hex');
    const text = await pdfText(document.bytes);
    expect(text).toContain('signed (esignature) on the offer page as John Roe');
    expect(text).toContain('signed (esignature) on the offer page as Jane Doe');
    const audit = await pdfText((await fetchBytes(signed.auditLogDocument)).bytes);
    expect(audit).toContain(hash);
    expect(audit).toContain('HeadlessChrome');
    expect(audit).toContain('John Roe');
    expect(audit).toContain('Jane Doe');
  });

  it('the invoice address form, its errors, print and the messages have no serious accessibility violation', async () => {
    const c = await customer(env, false);
    const waiting = await offer({ customer: c.id });
    await ok(env.mcp, 'accept_offer', { id: waiting.id, recipient: waiting.recipients[0].id });
    const print = await offer({ acceptanceMode: 'print' });
    const archived = await offer();
    await ok(env.mcp, 'archive_offer', { id: archived.id });
    await browse(async (browser) => {
      const context = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      await page.goto(waiting.recipients[0].link);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel('Postal code').fill(' ');
      await page.getByLabel('Street').fill('Friedrichstraße');
      await page.getByLabel('City').fill('Berlin');
      await page.getByLabel('Country').selectOption('DE');
      await page.getByLabel('VAT ID').fill('DE123456789');
      await page.getByRole('button', { name: 'Complete the offer' }).click();
      await expect(page.locator('#zip-error').isVisible()).resolves.toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      // Readable on a phone: nothing wider than the screen.
      expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      for (const link of [print.recipients[0].link, archived.recipients[0].link]) {
        await page.goto(link);
        expect(await seriousViolations(page)).toEqual([]);
      }
    });
  });
});
