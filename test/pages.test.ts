import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageTokens } from '../src/auth/pageTokens.js';
import { PAGE_ROUTES } from '../src/pages/routes.js';
import { csrfToken } from '../src/pages/security.js';
import { CHROMIUM, launchBrowser, seriousViolations } from './browser.js';
import { buildFixture } from './fixtures.js';
import { ok, setup, type TestEnv } from './helpers.js';

describe('page tokens', () => {
  const tokens = new PageTokens(randomBytes(32));
  const subject = { org: '01ORG', id: '01RECIPIENT' };

  it('open only what they were issued for', () => {
    const token = tokens.issue('offer-recipient', subject);
    expect(tokens.verify('offer-recipient', token)).toEqual(subject);
    expect(tokens.verify('invoice', token)).toBeUndefined();
  });

  it('cannot be forged without the secret or altered', () => {
    const token = tokens.issue('invoice', subject);
    const [payload] = token.split('.');
    const other = Buffer.from('01ORG\n01OTHER').toString('base64url');
    expect(new PageTokens(randomBytes(32)).verify('invoice', token)).toBeUndefined();
    expect(tokens.verify('invoice', `${other}.${token.split('.')[1]}`)).toBeUndefined();
    expect(tokens.verify('invoice', `${payload}.${'A'.repeat(43)}`)).toBeUndefined();
    expect(tokens.verify('invoice', payload!)).toBeUndefined();
    expect(tokens.verify('invoice', '')).toBeUndefined();
  });

  it('carry at least 128 bits that only the secret produces', () => {
    const mac = tokens.issue('invoice', subject).split('.')[1]!;
    expect(Buffer.from(mac, 'base64url').byteLength * 8).toBeGreaterThanOrEqual(128);
  });
});

describe('page serving', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setup({ pagesRateLimitPerMinute: 5 });
  });
  afterAll(() => env.close());

  it('keeps one secret in the database, so every instance on it verifies the others\' tokens', async () => {
    const [a, b] = await Promise.all([env.app.pageTokens(), env.app.pageTokens()]);
    expect(a).toBe(b);
    const another = await PageTokens.load(env.app.store, new Date());
    const token = a.issue('invoice', { org: 'o', id: 'i' });
    expect(another.verify('invoice', token)).toEqual({ org: 'o', id: 'i' });
  });

  it('answers an unknown link with a 404 page that reveals nothing, with the security headers', async () => {
    const res = await fetch(`${env.url}/pages/offers/forged.token`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline|https?:/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.text();
    expect(body).toContain('This link is not valid');
    expect(body).not.toContain('forged');
  });

  it('serves the one stylesheet', async () => {
    const res = await fetch(`${env.url}/pages/style.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await res.text()).length).toBeLessThan(4096);
  });

  it('rate-limits the token pages per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await fetch(`${env.url}/pages/invoices/x${i}`)).status);
    expect(statuses).toContain(429);
    const limited = await fetch(`${env.url}/pages/invoices/y`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe.skipIf(!CHROMIUM)('pages in Chromium', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setup();
  });
  afterAll(() => env.close());

  it('renders the not-found page with its stylesheet and no accessibility violation', async () => {
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ bypassCSP: true });
      const page = await context.newPage();
      const response = await page.goto(`${env.url}/pages/offers/nothing-here`);
      expect(response?.status()).toBe(404);
      await expect(page.title()).resolves.toBe('Page not found');
      expect(await page.locator('main').evaluate((main) => main.ownerDocument.defaultView!.getComputedStyle(main).maxWidth)).toBe('736px');
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('pages under random input', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setup({ pagesRateLimitPerMinute: 1_000_000 });
  });
  afterAll(() => env.close());

  it('answer every route, genuine token or not, form or garbage, without a server error (seeded)', async () => {
    const f = await buildFixture(env.mcp);
    await ok(env.mcp, 'create_invoice_address', { id: f.customer.id, street: 'Hauptstraße', houseNumber: '1', zip: '10115', city: 'Berlin', countryCode: 'DE' });
    const offer = await ok(env.mcp, 'create_offer', {
      customer: f.customer.id,
      acceptanceMode: 'click',
      name: 'Fuzz',
      recipients: [{ email: 'fuzz@example.com', firstName: 'Fuzz', lastName: 'Er' }],
      validUntil: new Date(Date.now() + 86_400_000).toISOString(),
      subscription: { plan: f.plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }] },
    });
    const subscription = await ok(env.mcp, 'create_subscription', {
      customer: f.customer.id,
      plan: f.plan.id,
      periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }],
      activate: true,
    });
    const invoice = await ok(env.mcp, 'create_invoice', { customer: f.customer.id, lines: [{ description: 'Fuzz', quantity: 1, unitAmount: 100 }] });
    const portal = await ok(env.mcp, 'create_portal_session', { id: f.customer.id });
    const tokenOf = (url: string) => new URL(url).pathname.split('/')[3]!;
    const genuine: Record<string, string> = {
      offers: tokenOf(offer.recipients[0].link),
      invoices: tokenOf(invoice.hostedUrl),
      portal: tokenOf(portal.url),
    };
    const tokens = await env.app.pageTokens();
    const routes = PAGE_ROUTES.map((r) => ({ method: r.method, path: r.path }));
    const text = fc.string({ maxLength: 40 });
    const field = fc.constantFrom('csrf', 'fullName', 'agree', 'iban', 'accountHolder', 'street', 'houseNumber', 'zip', 'city', 'countryCode', 'vatId', 'confirm', 'cancellationDate', 'mandate');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.boolean(),
        text,
        fc.boolean(),
        fc.dictionary(field, text, { maxKeys: 8 }),
        fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', ''),
        async (route, useGenuine, randomToken, withCsrf, fields, contentType) => {
          const family = route.path.split('/')[2]!;
          const token = useGenuine ? genuine[family]! : randomToken;
          const path = route.path.replace(':token', encodeURIComponent(token)).replace(':id', encodeURIComponent(useGenuine ? subscription.id : randomToken));
          const init: RequestInit = { method: route.method, redirect: 'manual' };
          if (route.method === 'POST') {
            const body = { ...fields, ...(withCsrf ? { csrf: csrfToken(tokens, token) } : {}) };
            init.body = new URLSearchParams(body).toString();
            init.headers = contentType ? { 'content-type': contentType } : {};
          }
          const res = await fetch(`${env.url}${path}`, init);
          await res.arrayBuffer();
          expect(res.status, `${route.method} ${path} ${JSON.stringify(fields)}`).toBeLessThan(500);
        },
      ),
      { seed: 18, numRuns: 300 },
    );
  });
});
