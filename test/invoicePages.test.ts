import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PageTokens } from '../src/auth/pageTokens.js';
import { CHROMIUM, launchBrowser, seriousViolations, trackWeight } from './browser.js';
import { ok, setup, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';

const NOW = '2027-03-01T09:00:00Z';
const CREDITOR = { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing & Co. GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  await ok(env.mcp, 'update_organisation', {
    name: 'Billing & Co.',
    legalName: 'Billing & Co. GmbH',
    address: { street: 'Torstraße', houseNumber: '1', zip: '10119', city: 'Berlin', countryCode: 'DE' },
    vatId: 'DE136695976',
    email: 'billing@example.com',
    invoiceFooter: 'Billing & Co. GmbH, Amtsgericht Berlin HRB 12345\nIBAN DE89 3704 0044 0532 0130 00',
  });
  await ok(env.mcp, 'update_sepa_creditor', CREDITOR);
});
beforeEach(() => env.setNow(NOW));
afterAll(() => env.close());

async function customer(name = 'Lovelace') {
  const c = await ok(env.mcp, 'create_customer', { firstName: 'Ada', lastName: name, companyName: 'Analytical Engines Ltd', timeZone: 'Europe/Berlin' });
  await ok(env.mcp, 'create_invoice_address', { id: c.id, street: 'Friedrichstraße', houseNumber: '12a', zip: '10117', city: 'Berlin', countryCode: 'DE' });
  return c;
}

const LINES = [
  { description: 'Pro plan', quantity: 1, unitAmount: 4_990, taxRate: 19 },
  { description: 'API calls', quantity: '1500', unitAmountDecimal: '0.2', taxRate: 19 },
  { description: 'Books <script>alert(1)</script>', quantity: 2, unitAmount: 1_999, taxRate: 7 },
];

const invoiceFor = async (customerId: string, extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'create_invoice', { customer: customerId, lines: LINES, ...extra });

async function get(url: string) {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The token of a hosted-invoice URL. */
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe('hostedUrl', () => {
  it('is an absolute link with a token on every invoice answer, over MCP and REST; null while draft', async () => {
    const c = await customer();
    const invoice = await invoiceFor(c.id);
    expect(invoice.hostedUrl).toMatch(new RegExp(`^${env.url}/pages/invoices/[\\w-]+\\.[\\w-]{43}$`));
    // The MAC alone carries 256 bits that only the installation's secret produces.
    expect(Buffer.from(tokenOf(invoice.hostedUrl).split('.')[1]!, 'base64url').byteLength * 8).toBeGreaterThanOrEqual(128);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.number })).hostedUrl).toBe(invoice.hostedUrl);
    const rest = await env.http('GET', `/invoices/${invoice.id}`);
    expect(rest.body.hostedUrl).toBe(invoice.hostedUrl);
    const list = await env.http('GET', `/invoices?customer=${c.id}`);
    expect(list.body.data.map((i: any) => i.hostedUrl)).toEqual([invoice.hostedUrl]);
    // Nothing about the token is stored: the same link comes back on every read.
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).hostedUrl).toBe(invoice.hostedUrl);

    const draft = await invoiceFor(c.id, { status: 'draft' });
    expect(draft.hostedUrl).toBeNull();
    const wouldBe = (await env.app.pageTokens()).issue('invoice', { org: env.org.organisationId, id: draft.id });
    expect((await get(`${env.url}/pages/invoices/${wouldBe}`)).status).toBe(404);
    expect((await get(`${env.url}/pages/invoices/${wouldBe}/pdf`)).status).toBe(404);
    const issued = await ok(env.mcp, 'finalize_invoice', { id: draft.id });
    expect(tokenOf(issued.hostedUrl)).toBe(wouldBe);
    expect((await get(issued.hostedUrl)).status).toBe(200);
  });
});

describe('the hosted invoice page', () => {
  it('shows seller, customer, dates, lines, taxes, totals and the amount due, escaped, with the page headers', async () => {
    const c = await customer();
    const invoice = await invoiceFor(c.id);
    const started = performance.now();
    const page = await get(invoice.hostedUrl);
    const took = performance.now() - started;
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(took).toBeLessThan(200);
    const text = page.text;
    expect(Buffer.byteLength(text)).toBeLessThan(100 * 1024);
    expect(text).not.toMatch(/<script/i);
    expect(text).toContain('Books &lt;script&gt;alert(1)&lt;/script&gt;');
    for (const expected of [
      `<h1>Invoice ${invoice.number}</h1>`,
      'Billing &amp; Co. GmbH',
      'Torstraße 1',
      'VAT ID DE136695976',
      'Analytical Engines Ltd',
      'Friedrichstraße 12a',
      c.customerNumber,
      '<time datetime="2027-03-01">1 Mar 2027</time>',
      // Due 14 days after issue, in the customer's time zone.
      '<time datetime="2027-03-15">15 Mar 2027</time>',
      '€49.90',
      // 0.2 cents per call: a unit price finer than a cent keeps its digits.
      '€0.002',
      '€3.00',
      'Tax 19% on €52.90',
      '€10.05',
      'Tax 7% on €39.98',
      '€2.80',
      '€105.73',
      'Amount due',
      'Amtsgericht Berlin HRB 12345<br>IBAN DE89',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).toContain(`invoices/${tokenOf(invoice.hostedUrl)}/pdf`);
    // No API key, no internal id of the organisation in the page.
    expect(text).not.toContain(env.org.apiKey);
    expect(text).not.toContain(env.org.organisationId);
  });

  it('names the subscription and its PO number, and states a reverse charge, on the page and in the PDF of a billed invoice', async () => {
    const group = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'EU services',
      reverseChargeType: 'REVERSE_CHARGE',
      taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }, { code: 'AT', rate: 20, countryCode: 'AT', validFrom: '2021-01-01' }],
    });
    const product = await ok(env.mcp, 'create_product', { name: 'Consulting', taxGroup: group.id });
    const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 100 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: `rc-${randomBytes(3).toString('hex')}`, name: 'Consulting', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
    const subscribe = async (countryCode: string, vatId: string) => {
      const buyer = await ok(env.mcp, 'create_customer', { companyName: `Buyer ${countryCode}`, timeZone: 'Europe/Vienna' });
      await ok(env.mcp, 'create_invoice_address', { id: buyer.id, street: 'Ring', zip: '1010', city: 'Wien', countryCode, vatId });
      const s = await ok(env.mcp, 'create_subscription', { customer: buyer.id, plan: plan.id, name: 'Team Alpha', poNumber: 'PO-4711', periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
      const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
      return { s, invoice: await ok(env.mcp, 'get_invoice', { id: run.invoices[0] }) };
    };
    const statement = 'Reverse charge: VAT is payable by the recipient (Article 196 of Directive 2006/112/EC).';

    const { s, invoice } = await subscribe('AT', 'ATU13585627');
    expect(invoice.lines[0].taxRate).toBe(0);
    const page = (await get(invoice.hostedUrl)).text;
    expect(page).toContain(statement);
    expect(page).toContain(`<dt>Subscription</dt><dd>${s.number} - Team Alpha</dd>`);
    expect(page).toContain('<dt>PO number</dt><dd>PO-4711</dd>');
    const pdf = await pdfText(new Uint8Array(await (await fetch(`${env.url}/invoices/${invoice.id}/pdf`, { headers: { authorization: `Bearer ${env.org.apiKey}` } })).arrayBuffer()));
    for (const shown of [statement, `Subscription: ${s.number} - Team Alpha`, 'PO number: PO-4711']) expect(pdf.replace(/\s+/g, ' ')).toContain(shown);

    // A buyer in the seller's country pays the rate: no statement.
    const domestic = await subscribe('DE', 'DE136695976');
    expect(domestic.invoice.lines[0].taxRate).toBe(19);
    expect((await get(domestic.invoice.hostedUrl)).text).not.toContain('Reverse charge');
  });

  it('says when an invoice is overdue, paid or void, with what was paid and credited', async () => {
    const c = await customer('Curie');
    const overdue = await invoiceFor(c.id, { dueAt: '2027-03-01T08:00:00Z' });
    expect((await get(overdue.hostedUrl)).text).toContain('<span class="status warn">Overdue</span>');
    await ok(env.mcp, 'record_invoice_payment', { id: overdue.id, amount: overdue.amountDue });
    const paid = (await get(overdue.hostedUrl)).text;
    expect(paid).toContain('<span class="status ok">Paid</span>');
    expect(paid).toContain('<th scope="row" colspan="4">Paid</th><td class="num">-€105.73</td>');
    expect(paid).toContain('Thank you: this invoice is paid.');
    const voided = await invoiceFor(c.id);
    await ok(env.mcp, 'create_credit_note', { id: voided.id, amount: 1_000, reason: 'Goodwill' });
    await ok(env.mcp, 'void_invoice', { id: voided.id });
    const text = (await get(voided.hostedUrl)).text;
    expect(text).toContain('<span class="status">Void</span>');
    expect(text).toContain('<th scope="row" colspan="4">Credited</th><td class="num">-€105.73</td>');
    expect(text).toContain('This invoice is void: nothing is to be paid.');
  });

  it('answers a forged, altered or other-purpose token with the same 404 that names nothing', async () => {
    const c = await customer('Byron');
    const invoice = await invoiceFor(c.id);
    const token = tokenOf(invoice.hostedUrl);
    const [payload, mac] = token.split('.') as [string, string];
    const tokens = await env.app.pageTokens();
    // What an unknown link answers, at the depth of the page and of its PDF.
    const unknown = { '': await get(`${env.url}/pages/invoices/nothing-here`), '/pdf': await get(`${env.url}/pages/invoices/nothing-here/pdf`) };
    expect(unknown[''].status).toBe(404);
    const forged = [
      `${payload}.${'A'.repeat(43)}`,
      `${Buffer.from(`${env.org.organisationId}\n${c.id}`).toString('base64url')}.${mac}`,
      new PageTokens(randomBytes(32)).issue('invoice', { org: env.org.organisationId, id: invoice.id }),
      tokens.issue('offer-recipient', { org: env.org.organisationId, id: invoice.id }),
      // A genuine token of an invoice of an organisation that does not exist.
      tokens.issue('invoice', { org: 'no-such-org', id: invoice.id }),
      payload,
    ];
    for (const bad of forged) {
      for (const suffix of ['', '/pdf'] as const) {
        const res = await get(`${env.url}/pages/invoices/${bad}${suffix}`);
        expect(res.status, bad + suffix).toBe(404);
        expect(res.text).toBe(unknown[suffix].text);
        expect(res.text).not.toContain(invoice.number);
      }
    }
  });

  it('downloads the PDF of the invoice without a key', async () => {
    const c = await customer('Babbage');
    const invoice = await invoiceFor(c.id);
    const res = await fetch(`${invoice.hostedUrl}/pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${invoice.number}.pdf"`);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    // The same document as GET /invoices/{id}/pdf with a key.
    const keyed = await fetch(`${env.url}/invoices/${invoice.id}/pdf`, { headers: { authorization: `Bearer ${env.org.apiKey}` } });
    expect(Buffer.from(await keyed.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    const text = await pdfText(bytes);
    expect(text).toContain(`Invoice ${invoice.number}`);
    expect(text).toContain('Analytical Engines Ltd');
  });

  it('shows the payment plan schedule with each installment\'s date, amount and status', async () => {
    const c = await customer('Somerville');
    const invoice = await invoiceFor(c.id);
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2027-03-15', interval: '1M' });
    await ok(env.mcp, 'record_payment_plan_payment', { id: plan.id, amount: plan.installments[0].amount });
    const text = (await get(invoice.hostedUrl)).text;
    expect(text).toContain('<h2>Payment plan</h2>');
    const rows = [...text.matchAll(/<tr><td>(\d)<\/td><td><time datetime="([\d-]+)">[^<]+<\/time><\/td><td class="num">([^<]+)<\/td><td><span class="[^"]+">(\w+)<\/span>/g)].map((m) => m.slice(1));
    expect(rows).toEqual([
      ['1', '2027-03-15', '€35.24', 'Paid'],
      ['2', '2027-04-15', '€35.24', 'Open'],
      ['3', '2027-05-15', '€35.25', 'Open'],
    ]);
    expect(text).toContain('Please pay each installment by its due date.');
  });

  it('shows the SEPA mandate reference of an invoice paid by direct debit', async () => {
    const c = await customer('Hopper');
    const method = await ok(env.mcp, 'create_payment_method', {
      id: c.id,
      type: 'sepa_debit',
      default: true,
      sepaDebit: { iban: 'DE02120300000000202051', accountHolder: 'Grace Hopper' },
    });
    await ok(env.mcp, 'create_sepa_mandate', { id: c.id, paymentMethod: method.id, mandateReference: 'MND-HOPPER-1', signatureDate: '2027-02-01' });
    const invoice = await invoiceFor(c.id, { dueAt: '2027-03-02T09:00:00Z' });
    const open = (await get(invoice.hostedUrl)).text;
    expect(open).toContain('<h2>Direct debit</h2>');
    expect(open).toContain('<dd>MND-HOPPER-1</dd>');
    expect(open).toContain(`<dd>${CREDITOR.creditorIdentifier}</dd>`);
    expect(open).toContain(`<dd>${method.sepaDebit.iban}</dd>`);
    expect(open).not.toContain('DE02120300000000202051');
    expect(open).toContain('collected by direct debit');

    // Collected: the page shows the mandate the collection used.
    await ok(env.mcp, 'run_sepa_collection', {});
    const paid = (await get(invoice.hostedUrl)).text;
    expect(paid).toContain('Paid by SEPA Direct Debit');
    expect(paid).toContain('<dd>MND-HOPPER-1</dd>');

    // A customer without a mandate sees no direct debit section.
    const other = await invoiceFor((await customer('Noether')).id);
    expect((await get(other.hostedUrl)).text).not.toContain('Direct debit');
  });
});

describe.skipIf(!CHROMIUM)('the hosted invoice page in Chromium', () => {
  it('downloads the PDF, has no serious accessibility violation and weighs under 100 KB', async () => {
    const c = await customer('Johnson');
    const invoice = await invoiceFor(c.id, { lines: LINES.slice(0, 2) });
    await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 2, firstDueAt: '2027-03-15', interval: '1M' });
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1000, height: 800 } });
      const page = await context.newPage();
      const weight = trackWeight(page);
      const response = await page.goto(invoice.hostedUrl);
      expect(response?.status()).toBe(200);
      await page.waitForLoadState('networkidle');
      expect(weight.total()).toBeGreaterThan(0);
      expect(weight.total()).toBeLessThan(100 * 1024);
      expect(await page.locator('h1').textContent()).toBe(`Invoice ${invoice.number}`);
      // The stylesheet applied although the CSP allows no inline style or script.
      expect(await page.locator('main').evaluate((main) => main.ownerDocument.defaultView!.getComputedStyle(main).maxWidth)).toBe('736px');

      if (process.env.UPDATE_SCREENSHOTS === '1') {
        mkdirSync('docs/screenshots', { recursive: true });
        await page.screenshot({ path: 'docs/screenshots/invoice.png', fullPage: true });
      }

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download the invoice as PDF' }).click()]);
      expect(download.suggestedFilename()).toBe(`${invoice.number}.pdf`);
      const bytes = readFileSync(await download.path());
      expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
      expect(await pdfText(new Uint8Array(bytes))).toContain(`Invoice ${invoice.number}`);

      const audit = await (await browser.newContext({ bypassCSP: true })).newPage();
      await audit.goto(invoice.hostedUrl);
      expect(await seriousViolations(audit)).toEqual([]);
      // On a phone, the page fits the screen: nothing wider than the viewport.
      await audit.setViewportSize({ width: 375, height: 700 });
      expect(await audit.locator('html').evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(375);
    } finally {
      await browser.close();
    }
  });
});
