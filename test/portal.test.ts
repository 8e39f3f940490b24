import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHROMIUM, launchBrowser, seriousViolations, trackWeight } from './browser.js';
import { buildFixture, type Fixture } from './fixtures.js';
import { call, fails, ok, setup, type TestEnv } from './helpers.js';
import { Receiver } from './webhookReceiver.js';
import { postForm } from './forms.js';

const NOW = '2027-03-01T09:00:00Z';
const CREDITOR = { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing & Co. GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };
const IBAN = 'DE02 1203 0000 0000 2020 51';

let env: TestEnv;
let f: Fixture;
let receiver: Receiver;

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0] });
  env.setNow(NOW);
  receiver = await Receiver.start();
  await ok(env.mcp, 'create_webhook', { url: receiver.url, events: ['subscription.cancellation_scheduled'] });
  await ok(env.mcp, 'update_organisation', { name: 'Billing & Co.', legalName: 'Billing & Co. GmbH' });
  await ok(env.mcp, 'update_sepa_creditor', CREDITOR);
  f = await buildFixture(env.mcp);
});
beforeEach(() => env.setNow(NOW));
afterAll(async () => {
  await env.close();
  await receiver.close();
});

/** An active subscription of 12-month terms with 3 months' notice, started at the beginning of the year. */
const subscribe = (customer: string = f.customer.id, name?: string) =>
  ok(env.mcp, 'create_subscription', {
    customer,
    plan: f.plan.id,
    name,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }],
    startDate: '2027-01-01T00:00:00+01:00',
    activate: true,
  });

const openPortal = async (customer: string = f.customer.id): Promise<string> => (await ok(env.mcp, 'create_portal_session', { id: customer })).url;

async function get(url: string) {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}


/** The hidden field of the form on a page. */
const hidden = (page: string, name: string) => page.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? '';


describe('create_portal_session', () => {
  it('answers { url, expiresAt }: a token shown once, kept only as its SHA-256 hash, valid one hour', async () => {
    const res = await env.http('POST', `/customers/${f.customer.customerNumber}/portal-sessions`);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'url']);
    expect(res.body.url).toMatch(new RegExp(`^${env.url}/pages/portal/[\\w-]{43}$`));
    expect(res.headers.get('location')).toBe(res.body.url);
    expect(res.body.expiresAt).toBe('2027-03-01T10:00:00.000Z');
    const token = res.body.url.slice(res.body.url.lastIndexOf('/') + 1);
    expect(Buffer.from(token, 'base64url').byteLength).toBe(32);
    const rows = await env.sql.all<Record<string, unknown>>('SELECT * FROM portal_sessions');
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows.map((r) => r.token_hash)).toContain(createHash('sha256').update(token).digest('hex'));

    // A result that carries a secret is never stored for a replay: it takes no idempotency key.
    const tool = (await env.mcp.listTools()).tools.find((t) => t.name === 'create_portal_session')!;
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(['id']);
    const again = await env.http('POST', `/customers/${f.customer.id}/portal-sessions`, { headers: { 'idempotency-key': 'same' } });
    const twice = await env.http('POST', `/customers/${f.customer.id}/portal-sessions`, { headers: { 'idempotency-key': 'same' } });
    expect(again.body.url).not.toBe(twice.body.url);
    expect(JSON.stringify(await env.sql.all('SELECT * FROM idempotency_keys'))).not.toContain('/pages/portal/');
  });

  it('needs customer:write; another organisation\'s customer is a 404', async () => {
    const reader = await env.newKey(env.org, ['customer:read']);
    const refused = await env.http('POST', `/customers/${f.customer.id}/portal-sessions`, { token: reader });
    expect(refused.status).toBe(403);
    const writer = await env.newKey(env.org, ['customer:write']);
    expect((await env.http('POST', `/customers/${f.customer.id}/portal-sessions`, { token: writer })).status).toBe(201);
    const customerToken = (await ok(env.mcp, 'authenticate_customer', { id: f.customer.id })).data.accessToken;
    expect((await env.http('POST', `/customers/${f.customer.id}/portal-sessions`, { token: customerToken })).status).toBe(403);
    const other = await env.mcpFor((await env.newOrg()).apiKey);
    await fails(other, 'create_portal_session', { id: f.customer.id }, 404);
  });
});

describe('the portal over HTTP', () => {
  it("shows the customer's subscriptions, invoices (through invoice tokens) and payment methods, nobody else's", async () => {
    const c = await ok(env.mcp, 'create_customer', { companyName: 'Portal Overview GmbH', timeZone: 'Europe/Berlin' });
    const s = await subscribe(c.id, 'Team workspace');
    const invoice = await ok(env.mcp, 'create_invoice', { customer: c.id, lines: [{ description: 'Setup', quantity: 1, unitAmount: 10_000 }] });
    const draft = await ok(env.mcp, 'create_invoice', { customer: c.id, status: 'draft', lines: [{ description: 'Later', quantity: 1, unitAmount: 500 }] });
    await ok(env.mcp, 'create_payment_method', { id: c.id, type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } });
    const strangers = await subscribe(f.customer.id, 'Someone else');
    const url = await openPortal(c.id);

    const started = performance.now();
    const page = await get(url);
    expect(performance.now() - started).toBeLessThan(200);
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(Buffer.byteLength(page.text)).toBeLessThan(100 * 1024);
    const text = page.text;
    expect(text).toContain('<h1>Your account</h1>');
    expect(text).toContain('Portal Overview GmbH');
    expect(text).toContain('Team workspace');
    expect(text).toContain(s.number);
    expect(text).toContain('Renews automatically');
    // The next billing date as the customer's calendar day (Europe/Berlin).
    const berlinDay = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date(s.nextBillingDate));
    expect(text).toContain(`<dt>Next billing date</dt><dd><time datetime="${berlinDay}">`);
    expect(text).toContain(invoice.number);
    expect(text).toContain('€100.00');
    // The invoice links are its hosted page and PDF, opened by the invoice's own token.
    const hosted = invoice.hostedUrl.slice(invoice.hostedUrl.indexOf('/pages/') + '/pages/'.length);
    expect(text).toContain(`href="../${hosted}"`);
    expect(text).toContain(`href="../${hosted}/pdf"`);
    expect((await get(new URL(`../${hosted}/pdf`, url).href)).headers.get('content-type')).toBe('application/pdf');
    expect(text).not.toContain(draft.id);
    expect(text).toContain('Card, visa ending in 4242');
    expect(text).not.toContain('Someone else');
    expect(text).not.toContain(strangers.number);
    expect(text).not.toContain(env.org.apiKey);
    expect(text).toContain('works until <time datetime="2027-03-01T10:00:00.000Z">1 Mar 2027, 11:00 CET</time>');
  });

  it('answers an expired, revoked, forged or unknown session with the generic 404', async () => {
    const url = await openPortal();
    const unknown = await get(`${env.url}/pages/portal/${'x'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('This link is not valid');
    expect((await get(url)).status).toBe(200);
    env.setNow('2027-03-01T09:59:59Z');
    expect((await get(url)).status).toBe(200);
    env.setNow('2027-03-01T10:00:00Z');
    const expired = await get(url);
    expect(expired.status).toBe(404);
    expect(expired.text).toBe(unknown.text);
    expect((await get(`${url}/bank-account`)).status).toBe(404);
    expect((await postForm(`${url}/bank-account`, { iban: IBAN, accountHolder: 'X' })).status).toBe(404);

    env.setNow(NOW);
    const key = await env.newKey(env.org, ['customer:write']);
    const revocable = (await env.http('POST', `/customers/${f.customer.id}/portal-sessions`, { token: key })).body.url;
    expect((await get(revocable)).status).toBe(200);
    await env.sql.run('UPDATE api_keys SET revoked_at = ? WHERE organisation_id = ? AND revoked_at IS NULL AND id <> ?', NOW, env.org.organisationId, env.org.keyId);
    expect((await get(revocable)).text).toBe(unknown.text);

    const token = url.slice(url.lastIndexOf('/') + 1);
    for (const forged of [token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'), token.slice(0, 42), `${token}x`, 'a.b']) {
      const res = await get(`${env.url}/pages/portal/${forged}`);
      expect(res.status, forged).toBe(404);
    }
  });

  it('refuses a form without the right CSRF field (403) and changes nothing', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Csrf' });
    const s = await subscribe(c.id);
    const url = await openPortal(c.id);
    const csrf = hidden((await get(`${url}/bank-account`)).text, 'csrf');
    expect(csrf).toMatch(/^[\w-]{43}$/);
    const account = { iban: IBAN, accountHolder: 'Eve', mandate: 'yes' };
    const otherSession = hidden((await get(`${await openPortal(c.id)}/bank-account`)).text, 'csrf');
    for (const [fields, headers] of [
      [account, {}],
      [{ ...account, csrf: 'forged' }, {}],
      [{ ...account, csrf: otherSession }, {}],
      [{ ...account, csrf }, { origin: 'https://evil.example' }],
      [{ ...account, csrf }, { 'sec-fetch-site': 'cross-site' }],
    ] as const) {
      const res = await postForm(`${url}/bank-account`, fields, headers);
      expect(res.status).toBe(403);
      expect(res.text).toContain('This form has expired or was not sent from this page');
    }
    expect((await ok(env.mcp, 'list_payment_methods', { id: c.id })).data).toEqual([]);

    const cancelCsrf = hidden((await get(`${url}/subscriptions/${s.id}/cancel`)).text, 'csrf');
    expect(cancelCsrf).toBe(csrf);
    const date = hidden((await get(`${url}/subscriptions/${s.id}/cancel`)).text, 'cancellationDate');
    expect((await postForm(`${url}/subscriptions/${s.id}/cancel`, { cancellationDate: date })).status).toBe(403);
    expect((await postForm(`${url}/subscriptions/${s.id}/cancel`, { cancellationDate: date, csrf: otherSession })).status).toBe(403);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).cancellationDate).toBeNull();
  });

  it('checks the IBAN as create_payment_method does: the form comes back with the error at its field and the values kept', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Typo' });
    const url = await openPortal(c.id);
    const csrf = hidden((await get(`${url}/bank-account`)).text, 'csrf');
    const wrong = 'DE02 1203 0000 0000 2020 52';
    const res = await postForm(`${url}/bank-account`, { csrf, iban: wrong, accountHolder: 'Ada <Lovelace>', mandate: 'yes' });
    expect(res.status).toBe(422);
    const api = await fails(env.mcp, 'create_payment_method', { id: c.id, type: 'sepa_debit', sepaDebit: { iban: wrong, accountHolder: 'Ada' } }, 422);
    const problem = api.violations[0].message.replace('sepaDebit.iban ', '');
    expect(res.text).toContain(`<p class="field-error" id="iban-error">IBAN ${problem}.</p>`);
    expect(res.text).toContain('aria-invalid="true" aria-describedby="iban-error"');
    expect(hidden(res.text, 'iban')).toBe(wrong);
    expect(res.text).toContain('value="Ada &lt;Lovelace&gt;"');
    expect(res.text).toMatch(/name="mandate" value="yes" required checked/);

    const blank = await postForm(`${url}/bank-account`, { csrf, iban: IBAN, accountHolder: ' ', mandate: 'yes' });
    expect(blank.status).toBe(422);
    expect(blank.text).toContain('id="accountHolder-error">Account holder must be 1 to 255 characters and not blank.</p>');

    const unconfirmed = await postForm(`${url}/bank-account`, { csrf, iban: IBAN, accountHolder: 'Ada' });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.text).toContain('id="mandate-error">Please confirm the mandate to pay by direct debit.</p>');
    expect((await ok(env.mcp, 'list_payment_methods', { id: c.id })).data).toEqual([]);
  });

  it('shows every field error at once: a wrong IBAN with a blank account holder and no mandate, and adds nothing', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Hasty' });
    const url = await openPortal(c.id);
    const csrf = hidden((await get(`${url}/bank-account`)).text, 'csrf');
    const wrong = 'DE02 1203 0000 0000 2020 52';
    const res = await postForm(`${url}/bank-account`, { csrf, iban: wrong, accountHolder: ' ' });
    expect(res.status).toBe(422);
    const api = await fails(env.mcp, 'create_payment_method', { id: c.id, type: 'sepa_debit', sepaDebit: { iban: wrong, accountHolder: 'Ada' } }, 422);
    expect(res.text).toContain(`id="iban-error">IBAN ${api.violations[0].message.replace('sepaDebit.iban ', '')}.</p>`);
    expect(res.text).toContain('id="accountHolder-error">Account holder must be 1 to 255 characters and not blank.</p>');
    expect(res.text).toContain('id="mandate-error">Please confirm the mandate to pay by direct debit.</p>');
    expect(res.text.match(/class="field-error"/g)).toHaveLength(3);

    const holderOnly = await postForm(`${url}/bank-account`, { csrf, iban: IBAN, accountHolder: ' ', mandate: 'yes' });
    expect(holderOnly.text.match(/class="field-error"/g)).toHaveLength(1);
    expect((await ok(env.mcp, 'list_payment_methods', { id: c.id })).data).toEqual([]);
    expect((await ok(env.mcp, 'list_sepa_mandates', { id: c.id })).data).toEqual([]);
  });

  it('adds a SEPA account with its mandate, then shows the overview (Post/Redirect/Get)', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Saver' });
    const url = await openPortal(c.id);
    const form = (await get(`${url}/bank-account`)).text;
    expect(form).toContain('<label for="iban">IBAN</label>');
    expect(form).toContain(`Billing &amp; Co. GmbH (creditor identifier ${CREDITOR.creditorIdentifier})`);
    const res = await postForm(`${url}/bank-account`, { csrf: hidden(form, 'csrf'), iban: IBAN, accountHolder: 'Sam Saver', mandate: 'yes', default: 'yes' });
    expect(res.status).toBe(303);
    const token = url.slice(url.lastIndexOf('/') + 1);
    expect(res.headers.get('location')).toBe(`../../portal/${token}?notice=bank-account-added`);
    const [method] = (await ok(env.mcp, 'list_payment_methods', { id: c.id })).data;
    expect(method).toMatchObject({ type: 'sepa_debit', default: true, status: 'active', sepaDebit: { iban: 'DE02**************2051', accountHolder: 'Sam Saver' } });
    const [mandate] = (await ok(env.mcp, 'list_sepa_mandates', { id: c.id })).data;
    expect(mandate).toMatchObject({ mandateReference: expect.stringMatching(/^PORTAL-[0-9A-Z]{26}$/), signatureDate: '2027-03-01', sepaType: 'core', sequenceType: 'FRST' });
    expect(method.sepaDebit.mandateReference).toBe(mandate.mandateReference);
    const overview = await get(new URL(res.headers.get('location')!, `${url}/bank-account`).href);
    expect(overview.text).toContain('Your bank account was added.');
    expect(overview.text).toContain('SEPA Direct Debit, DE02**************2051 (Sam Saver)');
    expect(overview.text).toContain(`Mandate reference ${mandate.mandateReference}`);
  });

  it('shows the date cancel_subscription would set, and cancels there with its event', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Leaver', timeZone: 'Europe/Berlin' });
    const s = await subscribe(c.id, 'Leaving soon');
    const twin = await subscribe(c.id, 'Twin');
    const url = await openPortal(c.id);
    expect((await get(url)).text).toContain(`href="../portal/${url.slice(url.lastIndexOf('/') + 1)}/subscriptions/${s.id}/cancel"`);
    const confirm = await get(`${url}/subscriptions/${s.id}/cancel`);
    expect(confirm.status).toBe(200);
    const shown = hidden(confirm.text, 'cancellationDate');
    // What the API sets without a date, on an identical subscription.
    const byApi = await ok(env.mcp, 'cancel_subscription', { id: twin.id });
    expect(shown).toBe(byApi.cancellationDate);
    expect(shown).toBe(s.nextPossibleCancellationDate[0]);
    expect(shown).toBe('2027-12-31T23:00:00.000Z');
    expect(confirm.text).toContain('your subscription ends on <strong><time datetime="2028-01-01">1 Jan 2028</time></strong>');

    const res = await postForm(`${url}/subscriptions/${s.id}/cancel`, { csrf: hidden(confirm.text, 'csrf'), cancellationDate: shown });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/\?notice=cancellation-scheduled$/);
    const cancelled = await ok(env.mcp, 'get_subscription', { id: s.id });
    expect(cancelled).toMatchObject({ status: 'active', cancellationDate: shown, isCancellationPending: true });
    const events = await receiver.waitFor(2, 'subscription.cancellation_scheduled');
    expect(events.map((e) => e.json.data)).toContainEqual({ subscription: s.id, cancellationDate: shown, reason: null });

    // Scheduled already: the page says so and offers no form.
    const again = await get(`${url}/subscriptions/${s.id}/cancel`);
    expect(again.text).toContain('This subscription is already cancelled: it ends on <time datetime="2028-01-01">1 Jan 2028</time>.');
    expect(again.text).not.toContain('<form');
    const overview = (await get(url)).text;
    expect(overview).not.toContain(`subscriptions/${s.id}/cancel`);
    expect(overview).toContain('Cancellation scheduled</span></dd>');
    expect(overview).toContain('<dt>Ends</dt><dd><time datetime="2028-01-01">1 Jan 2028</time></dd>');
  });

  it('offers no cancellation while a plan change is pending (cancel_subscription refuses it), and says when the plan changes', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Changer', timeZone: 'Europe/Berlin' });
    const s = await subscribe(c.id, 'Changing');
    const smaller = await ok(env.mcp, 'create_plan', {
      code: `small-${s.id.slice(-6)}`,
      name: 'Small',
      family: f.plan.family.id,
      charges: [{ product: f.product.id, pricePlan: f.pricePlan.id }],
    });
    const changed = await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: smaller.id, applyAt: 'end_of_period' });
    const applyAt = changed.subscription.pendingPlanChange.applyAt;
    const url = await openPortal(c.id);
    const overview = (await get(url)).text;
    expect(overview).not.toContain(`subscriptions/${s.id}/cancel`);
    expect(overview).toContain('<dt>Plan changes</dt>');
    const page = await get(`${url}/subscriptions/${s.id}/cancel`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('You can cancel once the change has taken effect.');
    expect(page.text).not.toContain('<form');
    expect(applyAt).toBeTruthy();
  });

  it('refuses a date that is no longer possible, showing the new one; other customers\' subscriptions are a 404', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Late' });
    const s = await subscribe(c.id);
    const url = await openPortal(c.id);
    const confirm = (await get(`${url}/subscriptions/${s.id}/cancel`)).text;
    const csrf = hidden(confirm, 'csrf');
    // A later term end is possible through the API, but the portal offers the next one only: an altered form is refused.
    const later = s.nextPossibleCancellationDate[1];
    expect(later > hidden(confirm, 'cancellationDate')).toBe(true);
    for (const stale of ['2027-06-30T22:00:00.000Z', 'tomorrow', later]) {
      const res = await postForm(`${url}/subscriptions/${s.id}/cancel`, { csrf, cancellationDate: stale });
      expect(res.status).toBe(409);
      expect(res.text).toContain('Your subscription was not cancelled');
      expect(hidden(res.text, 'cancellationDate')).toBe(hidden(confirm, 'cancellationDate'));
    }
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).cancellationDate).toBeNull();

    const strangers = await subscribe(f.customer.id);
    expect((await get(`${url}/subscriptions/${strangers.id}/cancel`)).status).toBe(404);
    expect((await postForm(`${url}/subscriptions/${strangers.id}/cancel`, { csrf, cancellationDate: hidden(confirm, 'cancellationDate') })).status).toBe(404);
    expect((await ok(env.mcp, 'get_subscription', { id: strangers.id })).cancellationDate).toBeNull();
    const draft = await ok(env.mcp, 'create_subscription', { customer: c.id, plan: f.plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }] });
    expect((await get(`${url}/subscriptions/${draft.id}/cancel`)).status).toBe(404);
    // A draft (or an offer's subscription) that ended without ever running is not the customer's to see.
    await ok(env.mcp, 'terminate_subscription', { id: draft.id });
    expect((await get(`${url}/subscriptions/${draft.id}/cancel`)).status).toBe(404);
    expect((await get(url)).text).not.toContain(draft.number);
    expect((await call(env.mcp, 'get_subscription', { id: s.id })).isError).toBe(false);
  });
});

/** Loads `url` in a context that lets axe run (the pages' CSP allows no script) and lists its serious violations. */
async function audit(page: Page, url: string) {
  await page.goto(url);
  return seriousViolations(page);
}

describe.skipIf(!CHROMIUM)('the portal in Chromium', () => {
  it('adds a SEPA payment method and schedules a cancellation; every page is accessible and under 100 KB', async () => {
    const c = await ok(env.mcp, 'create_customer', { firstName: 'Grace', lastName: 'Hopper', companyName: 'Compilers Inc.', timeZone: 'Europe/Berlin' });
    await ok(env.mcp, 'create_payment_method', { id: c.id, type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } });
    const s = await subscribe(c.id, 'Compiler cloud');
    await ok(env.mcp, 'create_invoice', { customer: c.id, subscription: s.id, lines: [{ description: 'Compiler cloud, March', quantity: 1, unitAmount: 4_990, taxRate: 19 }] });
    const url = await openPortal(c.id);
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
      const page = await context.newPage();
      const weights: number[] = [];
      const load = async (go: () => Promise<unknown>) => {
        const weight = trackWeight(page);
        await go();
        await page.waitForLoadState('networkidle');
        weights.push(weight.total());
      };
      await load(() => page.goto(url));
      expect(await page.locator('h1').textContent()).toBe('Your account');

      await load(() => page.getByRole('link', { name: 'Add a bank account for SEPA Direct Debit' }).click());
      await page.getByLabel('IBAN').fill(IBAN);
      await page.getByLabel('Account holder').fill('Grace Hopper');
      await page.getByLabel('I authorise this direct debit mandate').check();
      await load(() => page.getByRole('button', { name: 'Add bank account' }).click());
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Your bank account was added.');
      const methods = (await ok(env.mcp, 'list_payment_methods', { id: c.id })).data;
      expect(methods.map((m: any) => [m.type, m.default])).toEqual([['card', false], ['sepa_debit', true]]);
      expect((await ok(env.mcp, 'list_sepa_mandates', { id: c.id })).data).toHaveLength(1);

      await load(() => page.getByRole('link', { name: 'Cancel Compiler cloud' }).click());
      const shown = await page.locator('strong time').getAttribute('datetime');
      expect(shown).toBe('2028-01-01');
      await load(() => page.getByRole('button', { name: /^Cancel on / }).click());
      expect(await page.getByRole('status').textContent()).toContain('Your cancellation is confirmed');
      const cancelled = await ok(env.mcp, 'get_subscription', { id: s.id });
      expect(cancelled).toMatchObject({ isCancellationPending: true, cancellationDate: '2027-12-31T23:00:00.000Z' });
      expect(cancelled.cancellationDate).toBe(s.nextPossibleCancellationDate[0]);

      if (process.env.UPDATE_SCREENSHOTS === '1') {
        mkdirSync('docs/screenshots', { recursive: true });
        await page.screenshot({ path: 'docs/screenshots/portal.png', fullPage: true });
      }
      for (const w of weights) expect(w).toBeLessThan(100 * 1024);
      expect(weights).toHaveLength(5);

      const axe = await (await browser.newContext({ bypassCSP: true })).newPage();
      expect(await audit(axe, url)).toEqual([]);
      expect(await audit(axe, `${url}/bank-account`)).toEqual([]);
      await axe.getByLabel('IBAN').fill('DE00 0000');
      await axe.getByLabel('Account holder').fill('Grace Hopper');
      await axe.getByLabel('I authorise this direct debit mandate').check();
      await axe.getByRole('button', { name: 'Add bank account' }).click();
      expect(await axe.locator('#iban-error').textContent()).toMatch(/^IBAN /);
      expect(await seriousViolations(axe)).toEqual([]);
      const other = await subscribe(c.id, 'Second seat');
      expect(await audit(axe, `${url}/subscriptions/${other.id}/cancel`)).toEqual([]);
      expect(await audit(axe, `${url}/subscriptions/${s.id}/cancel`)).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('answers a reused URL after expiry and a forged token with the 404 page', async () => {
    const url = await openPortal();
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      expect((await page.goto(url))?.status()).toBe(200);
      env.setNow('2027-03-01T10:00:01Z');
      const reused = await page.goto(url);
      expect(reused?.status()).toBe(404);
      expect(await page.title()).toBe('Page not found');
      expect(await page.locator('main').textContent()).not.toContain(f.customer.customerNumber);
      const forged = await page.goto(`${env.url}/pages/portal/${'A'.repeat(43)}`);
      expect(forged?.status()).toBe(404);
      expect(await page.title()).toBe('Page not found');
    } finally {
      await browser.close();
    }
  });
});
