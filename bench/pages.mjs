// The link pages of issue 18 (offer, hosted invoice, customer portal) against the REST read of the same
// resource, on `billing-mcp serve`: latency of one request at a time (the time a page takes to render
// and arrive) and the bytes of one page load (the HTML and the stylesheet it links).
// Targets: each page under 200 ms and under 100 KB.
import { median, report, startServer, tempDb } from './lib.mjs';

const REQUESTS = Number(process.env.BENCH_PAGE_REQUESTS ?? 300);

/** Calls a tool through stateless POST /mcp and answers its structured result. */
function toolClient(server) {
  const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  let id = 0;
  return async (name, args) => {
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
    });
    const answer = await res.json();
    if (answer.error || answer.result.isError) throw new Error(`${name}: ${JSON.stringify(answer.error ?? answer.result.content)}`);
    return answer.result.structuredContent;
  };
}

/** Milliseconds of `count` sequential GETs (body read): median and p99. */
async function timeGets(url, headers = {}) {
  const times = [];
  for (let i = 0; i < REQUESTS; i++) {
    const start = process.hrtime.bigint();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: Number(median(times).toFixed(2)), p99: Number(times[Math.floor(times.length * 0.99)].toFixed(2)) };
}

async function weight(url) {
  const page = await fetch(url);
  const html = Buffer.from(await page.arrayBuffer()).byteLength;
  const css = Buffer.from(await (await fetch(new URL('/pages/style.css', url))).arrayBuffer()).byteLength;
  return html + css;
}

export async function benchPages() {
  const server = await startServer(tempDb('pages'), { BILLING_PAGES_RATE_LIMIT_PER_MINUTE: '1000000' });
  try {
    const call = toolClient(server);
    const auth = { authorization: `Bearer ${server.apiKey}` };
    const customer = await call('create_customer', { companyName: 'ACME GmbH', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
    await call('create_invoice_address', { id: customer.id, street: 'Hauptstraße', houseNumber: '1', zip: '10115', city: 'Berlin', countryCode: 'DE' });
    await call('create_payment_method', { id: customer.id, type: 'sepa_debit', sepaDebit: { iban: 'DE89370400440532013000', accountHolder: 'ACME GmbH' } });
    const products = [];
    for (const [name, amount] of [['Pro', 49.9], ['Support', 10], ['Storage', 5]]) {
      const product = await call('create_product', { name });
      const pricePlan = await call('create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount }, billingInterval: '1M' });
      products.push({ product: product.id, pricePlan: pricePlan.id });
    }
    const plan = await call('create_plan', { code: 'pro', name: 'Pro', charges: products });
    const section = { title: 'Scope', content: '## What you get\n\n- **Pro** features for the whole team\n- Support on workdays\n- 50 GB storage\n\nSee [our terms](https://example.com/terms).' };
    const offer = await call('create_offer', {
      customer: customer.id,
      acceptanceMode: 'esignature',
      name: 'Pro for ACME',
      recipients: [
        { email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' },
        { email: 'john@example.com', firstName: 'John', lastName: 'Roe' },
      ],
      sections: [section, { ...section, title: 'Terms' }],
      validUntil: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      subscription: { plan: plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }] },
    });
    const invoice = await call('create_invoice', {
      customer: customer.id,
      lines: Array.from({ length: 10 }, (_, i) => ({ description: `Line ${i + 1}`, quantity: i + 1, unitAmount: 1_999, taxRate: 19 })),
    });
    const portal = await call('create_portal_session', { id: customer.id });
    const pages = [
      { name: 'offer page', url: offer.recipients[0].link, rest: `${server.url}/offers/${offer.id}` },
      { name: 'hosted invoice page', url: invoice.hostedUrl, rest: `${server.url}/invoices/${invoice.id}` },
      { name: 'portal overview', url: portal.url, rest: `${server.url}/customers/${customer.id}` },
    ];
    const figures = {};
    for (const p of pages) {
      await timeGets(p.url);
      const page = await timeGets(p.url);
      const rest = await timeGets(p.rest, auth);
      figures[p.name] = {
        page,
        rest,
        ratio: Number((page.median / rest.median).toFixed(2)),
        bytes: await weight(p.url),
        target: '< 200 ms, < 100 KB',
      };
    }
    report(`pages: ${REQUESTS} sequential GETs each, against the REST read of the same resource`, figures);
    return figures;
  } finally {
    server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPages();
