/**
 * HEAD on the link pages (src/pages) over real HTTP: every GET page answers it as the GET would
 * (status and headers, no body), and a HEAD records nothing (an offer page's view).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_ROUTES } from '../src/pages/routes.js';
import { buildFixture } from './fixtures.js';
import { ok, setup, type TestEnv } from './helpers.js';

const NOW = '2026-01-15T10:00:00.000Z';
const periods = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];
const HEADERS = ['content-type', 'content-length', 'content-disposition', 'content-security-policy', 'cache-control', 'location', 'retry-after'];

let env: TestEnv;
beforeAll(async () => {
  env = await setup({ pagesRateLimitPerMinute: 100_000 });
  env.setNow(NOW);
});
afterAll(() => env.close());

/** The answer to `method` with the body as bytes; identity encoding, so Content-Length is the body's own length. */
async function request(method: 'GET' | 'HEAD', url: string) {
  const res = await fetch(url, { method, redirect: 'manual', headers: { 'accept-encoding': 'identity', 'user-agent': 'HEAD test' } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: Object.fromEntries(HEADERS.map((name) => [name, res.headers.get(name)])), body };
}

/** HEAD, then GET: the same status and headers, and the HEAD without a body. */
async function expectHeadLikeGet(url: string, what: string) {
  const head = await request('HEAD', url);
  const get = await request('GET', url);
  expect(head.body.byteLength, what).toBe(0);
  expect({ status: head.status, headers: head.headers }, what).toEqual({ status: get.status, headers: get.headers });
  expect(Number(get.headers['content-length']), what).toBe(get.body.byteLength);
  return get;
}

async function offer(customer: string, plan: string, recipient: { email: string; firstName: string; lastName: string }) {
  return ok(env.mcp, 'create_offer', {
    customer,
    acceptanceMode: 'click',
    name: 'Head offer',
    recipients: [recipient],
    validUntil: '2026-02-15T00:00:00.000Z',
    subscription: { plan, periods },
  });
}

describe('HEAD on the link pages', () => {
  it('answers every GET page route as the GET would, without the body', async () => {
    const f = await buildFixture(env.mcp);
    await ok(env.mcp, 'create_invoice_address', { id: f.customer.id, street: 'Hauptstraße', houseNumber: '1', zip: '10115', city: 'Berlin', countryCode: 'DE' });
    const open = await offer(f.customer.id, f.plan.id, { email: 'open@example.com', firstName: 'Olga', lastName: 'Open' });
    const signed = await offer(f.customer.id, f.plan.id, { email: 'signed@example.com', firstName: 'Sam', lastName: 'Signed' });
    await ok(env.mcp, 'accept_offer', { id: signed.id, recipient: signed.recipients[0].id });
    const subscription = await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods, activate: true });
    const invoice = await ok(env.mcp, 'create_invoice', { customer: f.customer.id, lines: [{ description: 'Head', quantity: 1, unitAmount: 1_000, taxRate: 19 }] });
    const portal: string = (await ok(env.mcp, 'create_portal_session', { id: f.customer.id })).url;
    const urls: Record<string, string> = {
      '/pages/offers/:token': open.recipients[0].link,
      '/pages/offers/:token/signed.pdf': `${signed.recipients[0].link}/signed.pdf`,
      '/pages/invoices/:token': invoice.hostedUrl,
      '/pages/invoices/:token/pdf': `${invoice.hostedUrl}/pdf`,
      '/pages/portal/:token': portal,
      '/pages/portal/:token/bank-account': `${portal}/bank-account`,
      '/pages/portal/:token/subscriptions/:id/cancel': `${portal}/subscriptions/${subscription.id}/cancel`,
    };
    // A GET page added later fails here until it is listed.
    expect(Object.keys(urls).sort()).toEqual(PAGE_ROUTES.filter((r) => r.method === 'GET').map((r) => r.path).sort());
    for (const [route, url] of Object.entries(urls)) {
      const get = await expectHeadLikeGet(url, route);
      expect(get.status, route).toBe(200);
    }
    const css = await expectHeadLikeGet(`${env.url}/pages/style.css`, 'stylesheet');
    expect([css.status, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8']);
    const unknown = await expectHeadLikeGet(`${env.url}/pages/invoices/forged.token`, 'unknown token');
    expect([unknown.status, unknown.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
  });

  it('records no view of an offer; the GET after it does', async () => {
    const f = await buildFixture(env.mcp, '-view');
    const o = await offer(f.customer.id, f.plan.id, { email: 'viewer@example.com', firstName: 'Vera', lastName: 'Viewer' });
    const head = await request('HEAD', o.recipients[0].link);
    expect(head.status).toBe(200);
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).recipients[0].signingLog).toEqual([]);
    await request('GET', o.recipients[0].link);
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).recipients[0].signingLog).toEqual([`${NOW} viewed the offer page`]);
  });
});

describe('a page asked for with a method it does not answer', () => {
  it('is a 405 naming the methods it answers; an address no page has stays a 404', async () => {
    const post = await fetch(`${env.url}/pages/offers/some.token`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.text()).toContain('This address answers GET, HEAD only.');
    const get = await fetch(`${env.url}/pages/offers/some.token/accept`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(`${env.url}/pages/nothing/here/at/all`, { method: 'POST' })).status).toBe(404);
  });
});
