import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderInvoicePdf, type InvoiceDocument } from '../src/documents/invoicePdf.js';
import { loadConfig } from '../src/config.js';
import { formatMoney } from '../src/values/money.js';
import { PublicUrl } from '../src/server.js';
import { fails, ok, setup, type TestEnv } from './helpers.js';

const NOW = '2026-03-20T10:00:00Z';
/** pdfjs draws the standard fonts (which the PDF names, not embeds) from the files it ships. */
const STANDARD_FONTS = `${join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`;

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
beforeEach(() => env.setNow(NOW));
afterAll(() => env.close());

interface Fetched {
  status: number;
  type: string | null;
  disposition: string | null;
  bytes: Uint8Array;
}

async function fetchPdf(url: string, token: string | null = env.org.apiKey): Promise<Fetched> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

const openPdf = (bytes: Uint8Array) => getDocument({ data: new Uint8Array(bytes), standardFontDataUrl: STANDARD_FONTS, isEvalSupported: false, verbosity: 0 }).promise;

/** The text of each page, its items joined by spaces. */
async function pagesText(bytes: Uint8Array): Promise<string[]> {
  const pdf = await openPdf(bytes);
  const pages: string[] = [];
  for (let n = 1; n <= pdf.numPages; n++) {
    const content = await (await pdf.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await pdf.destroy();
  return pages;
}

async function customerWithAddress(lastName = 'Lovelace') {
  const customer = await ok(env.mcp, 'create_customer', { firstName: 'Ada', lastName, companyName: 'Analytical Engines Ltd', currencyCode: 'EUR' });
  await ok(env.mcp, 'create_invoice_address', {
    id: customer.id,
    street: 'Friedrichstraße',
    houseNumber: '12a',
    zip: '10117',
    city: 'Berlin',
    countryCode: 'DE',
    vatId: 'DE136695976',
  });
  return customer;
}

const LINES = [
  { description: 'Consulting, March 2026', quantity: 3, unitAmount: 12_000, taxRate: 19 },
  { description: 'Books', quantity: 2, unitAmount: 1_999, taxRate: 7 },
  { description: 'Setup fee', quantity: 1, unitAmount: 250 },
];

describe('GET /invoices/{id}/pdf', () => {
  it('answers the invoice as a PDF showing seller, number, customer, address, lines, taxes and totals', async () => {
    const customer = await customerWithAddress();
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    const res = await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/pdf');
    expect(res.disposition).toBe(`inline; filename="${invoice.number}.pdf"`);
    expect(Buffer.from(res.bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    const [text, ...more] = await pagesText(res.bytes);
    expect(more).toEqual([]);
    for (const expected of [
      'Test organisation',
      `Invoice ${invoice.number}`,
      'Issue date: 2026-03-20',
      `Customer number: ${customer.customerNumber}`,
      'Analytical Engines Ltd',
      'Ada Lovelace',
      'Friedrichstraße 12a',
      '10117 Berlin',
      'VAT ID DE136695976',
      ...LINES.map((l) => l.description),
      '€120.00',
      '€19.99',
      `Tax 19% on ${formatMoney(36_000, 'EUR')}`,
      formatMoney(invoice.taxAmount, 'EUR'),
      formatMoney(invoice.grossAmount, 'EUR'),
      'Amount due',
      'Status: Open',
    ]) {
      expect(text, expected).toContain(expected);
    }
    expect(formatMoney(invoice.grossAmount, 'EUR')).toBe('€473.68');
    // By number too; the same invoice renders the same bytes.
    const byNumber = await fetchPdf(`${env.url}/invoices/${invoice.number}/pdf`);
    expect(Buffer.from(byNumber.bytes).equals(Buffer.from(res.bytes))).toBe(true);
  });

  it('renders page 1 to an image that is not blank', async () => {
    const customer = await customerWithAddress();
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    const pdf = await openPdf((await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`)).bytes);
    const page = await pdf.getPage(1);
    const viewport = page.getViewport({ scale: 1 });
    expect([Math.round(viewport.width), Math.round(viewport.height)]).toEqual([595, 842]);
    const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    await page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise;
    const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
    let dark = 0;
    let topDark = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i]! < 128 && data[i + 1]! < 128 && data[i + 2]! < 128) {
        dark++;
        if (i / 4 / canvas.width < 120) topDark++;
      }
    }
    // Text in black: a few percent of the page, some of it in the header (seller and title).
    expect(dark / (data.length / 4)).toBeGreaterThan(0.005);
    expect(dark / (data.length / 4)).toBeLessThan(0.3);
    expect(topDark).toBeGreaterThan(200);
    await pdf.destroy();
  });

  it("prints the seller's name and the title in the organisation's brandColor", async () => {
    await ok(env.mcp, 'update_organisation', { brandColor: '#D00000' });
    try {
      const customer = await customerWithAddress();
      const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
      const pdf = await openPdf((await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`)).bytes);
      const page = await pdf.getPage(1);
      const viewport = page.getViewport({ scale: 1 });
      const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
      const context = canvas.getContext('2d');
      context.fillStyle = '#ffffff';
      context.fillRect(0, 0, canvas.width, canvas.height);
      await page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise;
      const { data } = context.getImageData(0, 0, canvas.width, 80);
      let red = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i]! > 150 && data[i + 1]! < 90 && data[i + 2]! < 90) red++;
      expect(red).toBeGreaterThan(100);
      await pdf.destroy();
    } finally {
      await ok(env.mcp, 'update_organisation', { brandColor: null });
    }
  });

  it('continues a long invoice on further pages, each line once', async () => {
    const customer = await customerWithAddress();
    const lines = Array.from({ length: 120 }, (_, i) => ({ description: `Item ${String(i + 1).padStart(3, '0')}`, quantity: 1, unitAmount: 100 + i, taxRate: 19 }));
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines });
    const pages = await pagesText((await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`)).bytes);
    expect(pages.length).toBeGreaterThan(1);
    const all = pages.join('\n');
    for (const line of lines) expect(all.split(line.description).length - 1, line.description).toBe(1);
    pages.forEach((text, i) => expect(text).toContain(`Page ${i + 1} of ${pages.length}`));
    expect(pages.at(-1)).toContain(formatMoney(invoice.grossAmount, 'EUR'));
    expect(pages[1]).toContain(`Invoice ${invoice.number} (continued)`);
  });

  it('marks a draft DRAFT, a paid invoice PAID and a void one VOID', async () => {
    const customer = await customerWithAddress();
    const draft = await ok(env.mcp, 'create_invoice', { customer: customer.id, status: 'draft', lines: LINES });
    const draftText = (await pagesText((await fetchPdf(`${env.url}/invoices/${draft.id}/pdf`)).bytes))[0];
    expect(draftText).toContain('Draft invoice');
    expect(draftText).toContain('DRAFT');
    expect(draftText).toContain('Issue date: not issued');
    const paid = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    await ok(env.mcp, 'record_invoice_payment', { id: paid.id, amount: paid.grossAmount });
    const paidText = (await pagesText((await fetchPdf(`${env.url}/invoices/${paid.id}/pdf`)).bytes))[0];
    expect(paidText).toContain('PAID');
    expect(paidText).toContain('Status: Paid');
    expect(paidText).toContain(`-${formatMoney(paid.grossAmount, 'EUR')}`);
    const voided = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    await ok(env.mcp, 'void_invoice', { id: voided.id });
    const voidText = (await pagesText((await fetchPdf(`${env.url}/invoices/${voided.id}/pdf`)).bytes))[0];
    expect(voidText).toContain('VOID');
    expect(voidText).toContain('This invoice is void.');
  });

  it('lists credit notes, credit applied and payments between Total and Amount due, which they reconcile', async () => {
    const customer = await customerWithAddress();
    // A credit note on a paid invoice becomes the customer's credit balance, which settles the next one in full.
    const first = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    await ok(env.mcp, 'record_invoice_payment', { id: first.id, amount: first.grossAmount });
    await ok(env.mcp, 'create_credit_note', { id: first.id, amount: first.grossAmount, reason: 'Returned' });
    const covered = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    expect(covered).toMatchObject({ status: 'paid', creditApplied: 47_368, amountDue: 0 });
    // Credit left for the third: €10.00, then a credit note of €50.00 and a payment of €9.38.
    await ok(env.mcp, 'create_credit_note', { id: covered.id, amount: 1_000, reason: 'Goodwill' });
    const created = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    await ok(env.mcp, 'create_credit_note', { id: created.id, amount: 5_000, reason: 'Outage' });
    await ok(env.mcp, 'record_invoice_payment', { id: created.id, amount: 938 });
    const invoice = await ok(env.mcp, 'get_invoice', { id: created.id });
    expect(invoice).toMatchObject({ status: 'open', amountCredited: 5_000, creditApplied: 1_000, amountPaid: 938, amountDue: 40_430 });

    /** The totals block from Total on: its rows as [label, minor units]. */
    const totals = async (id: string) => {
      const text = (await pagesText((await fetchPdf(`${env.url}/invoices/${id}/pdf`)).bytes))[0]!.replace(/\s+/g, ' ');
      const block = / (Total -?€[\d,.]+ .*Amount due -?€[\d,.]+)/.exec(text)?.[1] ?? '';
      return [...block.matchAll(/([A-Za-z ()]+?) (-?)€([\d,.]+)/g)].map(([, label, sign, amount]) => [label!.trim(), Number(`${sign}${amount!.replace(/\D/g, '')}`)] as const);
    };
    const reconciles = (rows: ReadonlyArray<readonly [string, number]>) =>
      rows.slice(1, -1).reduce((left, [, amount]) => left + amount, rows[0]![1]) === rows.at(-1)![1];

    const rows = await totals(invoice.id);
    expect(rows).toEqual([
      ['Total', 47_368],
      ['Paid', -938],
      ['Credited', -5_000],
      ['Credit balance applied', -1_000],
      ['Amount due', 40_430],
    ]);
    expect(reconciles(rows)).toBe(true);
    const coveredRows = await totals(covered.id);
    expect(coveredRows).toEqual([
      ['Total', 47_368],
      ['Credit balance applied', -47_368],
      ['Amount due', 0],
    ]);
    expect(reconciles(coveredRows)).toBe(true);
  });

  it('shows the parties as they were when the invoice was issued, whatever changes later', async () => {
    const customer = await customerWithAddress('Byron');
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    const before = await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`);

    env.setNow('2026-12-31T23:30:00Z');
    await ok(env.mcp, 'update_customer', { id: customer.id, lastName: 'King', companyName: 'Lovelace Computing', timeZone: 'Pacific/Auckland' });
    await ok(env.mcp, 'create_invoice_address', { id: customer.id, street: 'Rue de Rivoli', houseNumber: '1', zip: '75001', city: 'Paris', countryCode: 'FR', default: true });
    await ok(env.mcp, 'update_organisation', { legalName: 'Renamed Seller GmbH' });

    const after = await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`);
    expect(Buffer.from(after.bytes).equals(Buffer.from(before.bytes))).toBe(true);
    const [text] = await pagesText(after.bytes);
    for (const shown of ['Ada Byron', 'Analytical Engines Ltd', 'Friedrichstraße 12a', 'VAT ID DE136695976', 'Issue date: 2026-03-20']) expect(text).toContain(shown);
    for (const later of ['King', 'Paris', 'Renamed Seller']) expect(text).not.toContain(later);

    // A new invoice shows the details as they are now.
    const next = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    const [now] = await pagesText((await fetchPdf(`${env.url}/invoices/${next.id}/pdf`)).bytes);
    for (const shown of ['Ada King', 'Lovelace Computing', '75001 Paris', 'Renamed Seller GmbH', 'Issue date: 2027-01-01']) expect(now).toContain(shown);
  });

  it('404 for an unknown invoice, 403 without invoice:read, 401 without a key', async () => {
    const missing = await env.http('GET', '/invoices/INV-2099-999999/pdf');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    const customer = await customerWithAddress();
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    const noRead = await env.newKey(env.org, ['customer:read']);
    const forbidden = await env.http('GET', `/invoices/${invoice.id}/pdf`, { token: noRead });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.detail).toContain('invoice:read');
    expect((await env.http('GET', `/invoices/${invoice.id}/pdf`, { token: null })).status).toBe(401);
    // Another organisation's invoice is unknown.
    const other = await env.newOrg();
    expect((await env.http('GET', `/invoices/${invoice.id}/pdf`, { token: other.apiKey })).status).toBe(404);
    const reader = await env.newKey(env.org, ['invoice:read']);
    expect((await fetchPdf(`${env.url}/invoices/${invoice.id}/pdf`, reader)).status).toBe(200);
  });

  it('is documented in OpenAPI as application/pdf', async () => {
    const doc = (await env.http('GET', '/openapi.json', { token: null })).body;
    const get = doc.paths['/invoices/{id}/pdf'].get;
    expect(get.operationId).toBe('get_invoice_pdf');
    expect(Object.keys(get.responses['200'].content)).toEqual(['application/pdf']);
    expect(get['x-permission']).toBe('invoice:read');
  });
});

describe('get_invoice_pdf', () => {
  it('answers a resource_link to the PDF, which the API key fetches', async () => {
    const customer = await customerWithAddress();
    const invoice = await ok(env.mcp, 'create_invoice', { customer: customer.id, lines: LINES });
    const result = (await env.mcp.callTool({ name: 'get_invoice_pdf', arguments: { id: invoice.number } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const url = `${env.url}/invoices/${invoice.id}/pdf`;
    expect(result.structuredContent).toEqual({ invoice: invoice.id, number: invoice.number, url, mimeType: 'application/pdf' });
    const link = result.content.find((c) => c.type === 'resource_link');
    expect(link).toEqual({ type: 'resource_link', uri: url, name: `${invoice.number}.pdf`, mimeType: 'application/pdf' });
    // No bytes in the model's context: the text is the summary line and the link's JSON.
    expect(JSON.stringify(result).length).toBeLessThan(1_000);
    const fetched = await fetchPdf(link!.uri as string);
    expect(fetched.status).toBe(200);
    expect(fetched.type).toBe('application/pdf');
    expect((await pagesText(fetched.bytes))[0]).toContain(`Invoice ${invoice.number}`);
  });

  it('links to BILLING_PUBLIC_URL when it is set; fails as a tool for an unknown invoice', async () => {
    const proxied = await setup({ publicUrl: 'https://billing.example.com/api' });
    try {
      const customer = await ok(proxied.mcp, 'create_customer', { lastName: 'Hopper' });
      const invoice = await ok(proxied.mcp, 'create_invoice', { customer: customer.id, status: 'draft', lines: LINES });
      const link = await ok(proxied.mcp, 'get_invoice_pdf', { id: invoice.id });
      expect(link).toEqual({ invoice: invoice.id, number: null, url: `https://billing.example.com/api/invoices/${invoice.id}/pdf`, mimeType: 'application/pdf' });
      await fails(proxied.mcp, 'get_invoice_pdf', { id: 'INV-2099-000001' }, 404);
    } finally {
      await proxied.close();
    }
  });
});

describe('the base URL of links', () => {
  it('is BILLING_PUBLIC_URL (trailing slash dropped), else where the server listens, else BILLING_HOST:BILLING_PORT', () => {
    expect(loadConfig({ BILLING_PUBLIC_URL: 'https://billing.example.com/api/' }).publicUrl).toBe('https://billing.example.com/api');
    for (const bad of ['ftp://billing.example.com', 'billing.example.com', 'https://billing.example.com/?a=1', 'https://user:pw@billing.example.com']) {
      expect(() => loadConfig({ BILLING_PUBLIC_URL: bad }), bad).toThrow(/BILLING_PUBLIC_URL/);
    }
    const stdio = new PublicUrl(loadConfig({ BILLING_HOST: '0.0.0.0', BILLING_PORT: '9090' }));
    expect(stdio.value).toBe('http://localhost:9090');
    stdio.listen('http://127.0.0.1:41234');
    expect(stdio.value).toBe('http://127.0.0.1:41234');
    expect(new PublicUrl(loadConfig({ BILLING_HOST: '::1' })).value).toBe('http://[::1]:8080');
    const configured = new PublicUrl(loadConfig({ BILLING_PUBLIC_URL: 'https://b.example.com' }));
    configured.listen('http://127.0.0.1:41234');
    expect(configured.value).toBe('https://b.example.com');
  });
});

describe('renderInvoicePdf', () => {
  const at = '2026-03-01T00:00:00.000Z';
  const base: InvoiceDocument = {
    invoice: {
      id: 'inv',
      number: 'INV-2026-000009',
      customer: 'cus',
      subscription: null,
      status: 'open',
      currencyCode: 'INR',
      lines: [
        // The decimal shapes of a parallel change: quantity a decimal string, unitAmountDecimal preferred.
        { description: 'Metered calls 😀', quantity: '1500.500000', unitAmount: null, unitAmountDecimal: '0.15', netAmount: 225, taxRate: 18, periodStart: at, periodEnd: '2026-04-01T00:00:00.000Z' },
        { description: 'Plan\nline two', quantity: 2, unitAmount: 123_456, netAmount: 246_912, taxRate: 18, periodStart: null, periodEnd: null },
      ],
      taxes: [{ rate: 18, netAmount: 247_137, taxAmount: 44_485 }],
      netAmount: 247_137,
      taxAmount: 44_485,
      grossAmount: 291_622,
      amountPaid: 0,
      amountCredited: 0,
      creditApplied: 0,
      amountDue: 291_622,
      issuedAt: at,
      dueAt: '2026-03-15T00:00:00.000Z',
      originalDueAt: '2026-03-15T00:00:00.000Z',
      paidAt: null,
      voidedAt: null,
      dunningPaused: false,
      dunningOf: null,
      payments: [],
      createdAt: at,
      updatedAt: at,
    },
    customer: {
      id: 'cus',
      customerNumber: 'CUS-1',
      timeZone: 'Asia/Kolkata',
      paymentTermDays: null,
      creditBalance: 0,
      customFields: {},
      firstName: null,
      lastName: 'Raman',
      currencyCode: 'INR',
      companyName: null,
      datevId: null,
      status: 'STATUS_ACTIVE',
      createdAt: at,
      updatedAt: at,
    },
    subscription: null,
    address: null,
    seller: { name: 'Seller & Co' },
    reverseChargeNotes: [],
  };

  it('shows decimal quantities and unit prices, and a currency symbol the standard fonts lack as its code', async () => {
    const text = (await pagesText(await renderInvoicePdf(base)))[0]!;
    expect(text).toContain('1500.5');
    expect(text).toContain('INR 0.0015');
    expect(text).toContain('INR 1,234.56');
    expect(text).toContain('INR 2,916.22');
    expect(text).toContain('Metered calls ?');
    expect(text).toContain('Plan line two');
    // A line whose description does not name its period gets it printed below: the days in Kolkata.
    expect(text).toContain('Metered calls ? 2026-03-01 to 2026-03-31');
    expect(text).toContain('Raman');
  });

  it('gives the same bytes for the same invoice', async () => {
    const a = await renderInvoicePdf(base);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await renderInvoicePdf(base)).equals(a)).toBe(true);
  });
});
