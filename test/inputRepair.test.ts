import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, type Fixture } from './fixtures.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let f: Fixture;
let other: any;
const NOW = '2026-03-01T12:00:00Z';
const monthly = [{ contractPeriod: '1M', cancellationPeriod: '0D' }];
const line = { description: 'Consulting', quantity: 1, unitAmount: 4900, taxRate: 19 };

beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  f = await buildFixture(env.mcp);
  other = await ok(env.mcp, 'create_customer', { lastName: 'Neighbour' });
});
afterAll(() => env.close());

/** The messages of a problem's violations. */
const messages = (problem: { violations?: Array<{ message: string }> }) => (problem.violations ?? []).map((v) => v.message);

const subscribe = (customer: string, extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'create_subscription', { customer, plan: f.plan.id, periods: monthly, ...extra });

describe('an unknown input field names what was meant', () => {
  it('suggests the field that differs only in case or spelling, over MCP and REST', async () => {
    const p = await fails(env.mcp, 'create_customer', { lastname: 'Lovelace' }, 422);
    expect(p.violations).toEqual([
      { propertyPath: 'lastname', message: "'lastname' is not a field of the input; did you mean 'lastName'?", code: 'unrecognized_keys' },
    ]);
    expect(p.detail).toBe("'lastname' is not a field of the input; did you mean 'lastName'?");
    expect(messages(await fails(env.mcp, 'create_customer', { lastName: 'L', customer_number: 'C-1' }, 422))).toEqual([
      "'customer_number' is not a field of the input; did you mean 'customerNumber'?",
    ]);
    expect(messages(await fails(env.mcp, 'create_customer', { lastName: 'L', compnyName: 'ACME' }, 422))).toEqual([
      "'compnyName' is not a field of the input; did you mean 'companyName'?",
    ]);
    const rest = await env.http('POST', '/customers', { body: { lastname: 'Lovelace' } });
    expect(rest.status).toBe(422);
    expect(messages(rest.body)).toEqual(["'lastname' is not a field of the input; did you mean 'lastName'?"]);
  });

  it('names the nested object the unknown field is in', async () => {
    const typo = await fails(env.mcp, 'create_invoice', { customer: f.customer.id, lines: [{ description: 'x', quantity: 1, unitAmmount: 5 }] }, 422);
    expect(messages(typo)).toContain("'unitAmmount' is not a field of lines[0]; did you mean 'unitAmount'?");
    const unknown = await fails(env.mcp, 'create_invoice', { customer: f.customer.id, lines: [{ ...line, colour: 'red' }] }, 422);
    expect(paths(unknown)).toEqual(['lines[0].colour']);
    expect(messages(unknown)).toEqual(["'colour' is not a field of lines[0]; allowed: description, quantity, unitAmount, unitAmountDecimal, taxRate"]);
  });

  it('lists the allowed fields when none is close, or points to the schema when there are many', async () => {
    const few = await fails(env.mcp, 'create_customer', { lastName: 'L', colour: 'red' }, 422);
    expect(messages(few)).toEqual([
      "'colour' is not a field of the input; allowed: customerNumber, firstName, lastName, companyName, datevId, timeZone, currencyCode, status, paymentTermDays, customFields",
    ]);
    const many = await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: monthly, colour: 'red' }, 422);
    expect(messages(many)).toEqual(["'colour' is not a field of the input; see the input schema for the allowed fields"]);
  });

  it('names each unknown field of a call on its own, also in query parameters (400)', async () => {
    const p = await fails(env.mcp, 'create_customer', { lastname: 'L', compnyName: 'ACME' }, 422);
    expect(messages(p)).toEqual([
      "'lastname' is not a field of the input; did you mean 'lastName'?",
      "'compnyName' is not a field of the input; did you mean 'companyName'?",
    ]);
    expect(paths(p)).toEqual(['lastname', 'compnyName']);
    const query = await env.http('GET', '/invoices?cstomer=x');
    expect(query.status).toBe(400);
    expect(messages(query.body)).toEqual(["'cstomer' is not a field of the input; did you mean 'customer'?"]);
    expect(paths(query.body)).toEqual(['cstomer']);
    const rest = await env.http('POST', '/customers', { body: { fristName: 'Ada', lastName: 'Lovelace' } });
    expect([rest.status, paths(rest.body)]).toEqual([422, ['fristName']]);
    expect(paths((await env.http('GET', '/customers?foo=bar')).body)).toEqual(['foo']);
    expect(paths(await fails(env.mcp, 'list_customers', { foo: 'bar' }, 400))).toEqual(['foo']);
  });

  it('leaves out a required field reported missing when the unknown field beside it names it', async () => {
    const p = await fails(env.mcp, 'create_unit', { nme: 'Seat' }, 422);
    expect(p.violations).toEqual([{ propertyPath: 'nme', message: "'nme' is not a field of the input; did you mean 'name'?", code: 'unrecognized_keys' }]);
    const unrelated = await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, colour: 'red' }, 422);
    expect(paths(unrelated).sort()).toEqual(['colour', 'periods']);
  });

  it('says where a flattened field of a nested object belongs, one or two levels down', async () => {
    const sepa = { id: f.customer.id, type: 'sepa_debit', iban: 'DE89370400440532013000', sepaDebit: { accountHolder: 'Jane Doe' } };
    const p = await fails(env.mcp, 'create_payment_method', sepa, 422);
    expect(messages(p)).toContain("'iban' belongs inside 'sepaDebit': send sepaDebit: { iban, ... }");
    const rest = await env.http('POST', `/customers/${f.customer.id}/payment-methods`, { body: { type: 'sepa_debit', iban: 'DE89370400440532013000' } });
    expect(rest.status).toBe(422);
    expect(messages(rest.body)).toContain("'iban' belongs inside 'sepaDebit': send sepaDebit: { iban, ... }");

    const flatPrice = await fails(env.mcp, 'create_price_plan', { id: f.product.id, type: 'flat_fee', currencyCode: 'EUR', billingInterval: '1M', amount: 49 }, 422);
    expect(messages(flatPrice)).toContain("'amount' belongs inside 'price': send price: { amount, ... }");
    const flatPeriod = await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: monthly, contractPeriod: '12M' }, 422);
    expect(messages(flatPeriod)).toEqual(["'contractPeriod' belongs inside 'periods': send periods: [{ contractPeriod, ... }]"]);
    const twoDown = await fails(env.mcp, 'create_offer', { customer: f.customer.id, contractPeriod: '12M' }, 422);
    expect(messages(twoDown)).toContain(
      "'contractPeriod' belongs inside 'subscription.periods': send subscription: { periods: [{ contractPeriod, ... }] }",
    );
  });
});

describe('customers by number', () => {
  it('get, update and the nested resources take the customer number, over MCP and REST; an unknown one is a 404', async () => {
    const number = f.customer.customerNumber;
    expect(number).toMatch(/^CUS-\d{6}$/);
    expect((await ok(env.mcp, 'get_customer', { id: number })).id).toBe(f.customer.id);
    const rest = await env.http('GET', `/customers/${number}`);
    expect(rest.status).toBe(200);
    expect(rest.body.id).toBe(f.customer.id);
    expect(await ok(env.mcp, 'update_customer', { id: number, firstName: 'Jane', customerNumber: number })).toMatchObject({
      id: f.customer.id,
      firstName: 'Jane',
    });

    const email = await ok(env.mcp, 'create_customer_email_address', { id: number, email: 'jane@example.com' });
    expect(email.customer).toBe(f.customer.id);
    expect((await ok(env.mcp, 'list_customer_email_addresses', { id: number })).data.map((e: any) => e.id)).toEqual([email.id]);
    const address = await env.http('POST', `/customers/${number}/invoice-addresses`, {
      body: { street: 'Main', zip: '10117', city: 'Berlin', countryCode: 'DE' },
    });
    expect(address.status).toBe(201);
    expect(address.body.customer).toBe(f.customer.id);
    expect(address.headers.get('location')).toBe(`/customers/${f.customer.id}/invoice-addresses/${address.body.id}`);
    expect((await ok(env.mcp, 'list_invoice_addresses', { id: number })).data.map((a: any) => a.id)).toEqual([address.body.id]);
    expect((await ok(env.mcp, 'list_payment_methods', { id: number })).data.map((m: any) => m.id)).toEqual([f.paymentMethod.id]);
    expect((await env.http('POST', `/customers/${number}/authenticate`)).status).toBe(200);

    await fails(env.mcp, 'get_customer', { id: 'CUS-999999' }, 404);
    expect((await env.http('GET', '/customers/CUS-999999/payment-methods')).status).toBe(404);
  });

  it('body references and list filters take the customer number; an unknown one is a 422 or matches nothing', async () => {
    const key = (await env.newOrg('Numbers')).apiKey;
    const mcp = await env.mcpFor(key);
    const g = await buildFixture(mcp, '-n');
    const neighbour = await ok(mcp, 'create_customer', { lastName: 'Neighbour' });
    const number = g.customer.customerNumber;

    const s = await ok(mcp, 'create_subscription', { customer: number, plan: g.plan.id, periods: monthly });
    expect(s.customer.id).toBe(g.customer.id);
    await ok(mcp, 'create_subscription', { customer: neighbour.id, plan: g.plan.id, periods: monthly });
    const invoice = await ok(mcp, 'create_invoice', { customer: number, lines: [line] });
    expect(invoice.customer).toBe(g.customer.id);
    await ok(mcp, 'create_invoice', { customer: neighbour.customerNumber, lines: [line] });
    const offer = await ok(mcp, 'create_offer', {
      customer: number,
      acceptanceMode: 'print',
      name: 'Pro',
      recipients: [{ email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' }],
      validUntil: '2026-04-01T00:00:00Z',
      subscription: { plan: g.plan.id, periods: monthly },
    });
    expect(offer.customer.id).toBe(g.customer.id);

    const ids = (page: { data: Array<{ id: string }> }) => page.data.map((r) => r.id);
    expect(ids(await ok(mcp, 'list_subscriptions', { customer: number }))).toEqual([s.id, offer.subscription.id]);
    expect(ids(await ok(mcp, 'list_invoices', { customer: number }))).toEqual([invoice.id]);
    expect(ids(await ok(mcp, 'list_offers', { customer: number }))).toEqual([offer.id]);
    expect((await env.http('GET', `/subscriptions?customer=${number}`, { token: key })).body.data.map((r: any) => r.id)).toEqual([
      s.id,
      offer.subscription.id,
    ]);

    expect(paths(await fails(mcp, 'create_subscription', { customer: 'CUS-999999', plan: g.plan.id, periods: monthly }, 422))).toEqual(['customer']);
    const unknown = await fails(mcp, 'create_invoice', { customer: 'CUS-999999', lines: [line] }, 422);
    expect(unknown.detail).toContain('use the id or number of an existing customer');
    expect((await fails(mcp, 'list_invoices', { customer: 'CUS-999999' }, 404)).detail).toBe('Customer CUS-999999 was not found; list_customers shows the ids');
  });


  it("another organisation's customer number is not found", async () => {
    const elsewhere = await env.mcpFor((await env.newOrg('Elsewhere')).apiKey);
    const stranger = await ok(elsewhere, 'create_customer', { lastName: 'Stranger', customerNumber: 'STRANGER-1' });
    expect(stranger.customerNumber).toBe('STRANGER-1');
    await fails(env.mcp, 'get_customer', { id: 'STRANGER-1' }, 404);
    expect((await ok(elsewhere, 'get_customer', { id: 'STRANGER-1' })).id).toBe(stranger.id);
  });
});

describe('subscriptions by number', () => {
  it('every /subscriptions/{id} operation takes the subscription number, over MCP and REST; an unknown one is a 404', async () => {
    const s = await subscribe(f.customer.id);
    const { number } = s;
    expect(number).toMatch(/^SUB-\d{6}$/);
    expect((await ok(env.mcp, 'get_subscription', { id: number })).id).toBe(s.id);
    const rest = await env.http('GET', `/subscriptions/${number}`);
    expect(rest.status).toBe(200);
    expect(rest.body.id).toBe(s.id);
    expect((await ok(env.mcp, 'update_subscription', { id: number, periods: monthly, poNumber: 'PO-7' })).poNumber).toBe('PO-7');
    expect((await env.http('PUT', `/subscriptions/${number}/activate`)).body.status).toBe('active');
    expect((await ok(env.mcp, 'pause_subscription', { id: number })).status).toBe('paused');
    const resumed = await ok(env.mcp, 'resume_subscription', { id: number, nextBillingDate: '2026-03-15T00:00:00Z' });
    expect(resumed.status).toBe('active');
    expect(resumed.nextBillingDate).toBe('2026-03-15T00:00:00.000Z');
    const ordered = await ok(env.mcp, 'order_subscription_products', { id: number, products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] });
    expect(ordered.id).toBe(s.id);
    expect((await ok(env.mcp, 'get_estimated_invoice', { id: number })).subscription).toBe(s.id);
    expect((await env.http('GET', `/subscriptions/${number}/estimated-invoice`)).status).toBe(200);
    expect((await ok(env.mcp, 'get_subscription_usage', { id: number })).data.length).toBeGreaterThan(0);
    expect((await ok(env.mcp, 'list_subscription_entitlements', { id: number })).data).toEqual([]);
    expect((await ok(env.mcp, 'cancel_subscription', { id: number })).isCancellationPending).toBe(true);
    expect((await ok(env.mcp, 'revoke_subscription_cancellation', { id: number })).isCancellationPending).toBe(false);
    expect((await ok(env.mcp, 'terminate_subscription', { id: number })).status).toBe('terminated');

    await fails(env.mcp, 'get_subscription', { id: 'SUB-999999' }, 404);
    expect((await env.http('PUT', '/subscriptions/SUB-999999/activate')).status).toBe(404);
  });

  it('invoices take the subscription number in the body and the filter; an unknown one is a 422', async () => {
    const s = await subscribe(f.customer.id);
    const invoice = await ok(env.mcp, 'create_invoice', { customer: f.customer.id, subscription: s.number, lines: [line] });
    expect(invoice.subscription).toBe(s.id);
    expect((await ok(env.mcp, 'list_invoices', { subscription: s.number })).data.map((i: any) => i.id)).toEqual([invoice.id]);
    const rest = await env.http('GET', `/invoices?subscription=${s.number}`);
    expect(rest.body.data.map((i: any) => i.id)).toEqual([invoice.id]);

    const p = await fails(env.mcp, 'create_invoice', { customer: f.customer.id, subscription: 'SUB-999999', lines: [line] }, 422);
    expect(paths(p)).toEqual(['subscription']);
    expect(p.detail).toContain("'SUB-999999' is neither the id nor the number of a subscription");
  });
});

describe('invoices by number', () => {
  it('read, pay, void and payment plans take the invoice number, over MCP and REST; an unknown one is a 404 or 422', async () => {
    const invoice = await ok(env.mcp, 'create_invoice', { customer: f.customer.id, lines: [line] });
    const { number } = invoice;
    expect(number).toMatch(/^INV-2026-\d{6}$/);
    expect((await ok(env.mcp, 'get_invoice', { id: number })).id).toBe(invoice.id);
    expect((await env.http('GET', `/invoices/${number}`)).body.id).toBe(invoice.id);
    const paid = await env.http('POST', `/invoices/${number}/payments`, { body: { amount: 100 } });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id: invoice.id, amountPaid: 100 });

    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: number, installmentCount: 2, firstDueAt: '2026-04-01', interval: '1M' });
    expect(plan.invoiceId).toBe(invoice.id);
    expect((await ok(env.mcp, 'list_payment_plans', { invoice: number })).data.map((p: any) => p.id)).toEqual([plan.id]);
    const covered = await fails(env.mcp, 'void_invoice', { id: number }, 409);
    expect(covered.detail).toContain(`active payment plan ${plan.id}`);
    expect((await fails(env.mcp, 'record_invoice_payment', { id: number, amount: 100 }, 409)).detail).toContain(plan.id);
    await ok(env.mcp, 'cancel_payment_plan', { id: plan.id });
    expect((await ok(env.mcp, 'void_invoice', { id: number })).status).toBe('void');

    await fails(env.mcp, 'get_invoice', { id: 'INV-2026-999999' }, 404);
    expect((await env.http('POST', '/invoices/INV-2026-999999/finalize')).status).toBe(404);
    const p = await fails(env.mcp, 'create_payment_plan', { invoice: 'INV-2026-999999', installmentCount: 2, firstDueAt: '2026-04-01', interval: '1M' }, 422);
    expect(paths(p)).toEqual(['invoice']);
  });
});

describe('a customer token and numbers', () => {
  let token: string;
  let customerMcp: Client;
  let own: any;
  let theirs: any;
  beforeAll(async () => {
    own = await subscribe(f.customer.id);
    theirs = await subscribe(other.id);
    token = (await env.http('POST', `/customers/${f.customer.id}/authenticate`)).body.data.accessToken;
    customerMcp = await env.mcpFor(token);
  });

  it("over MCP: its own customer's number works, another customer's is a 404", async () => {
    const mine = f.customer.customerNumber;
    const notMine = other.customerNumber;
    expect((await ok(customerMcp, 'get_customer', { id: mine })).id).toBe(f.customer.id);
    await fails(customerMcp, 'get_customer', { id: notMine }, 404);
    const subscriptions = await ok(customerMcp, 'list_subscriptions', { customer: mine });
    expect(subscriptions.data.map((s: any) => s.id)).toContain(own.id);
    expect(subscriptions.data.every((s: any) => s.customer.id === f.customer.id)).toBe(true);
    await fails(customerMcp, 'list_subscriptions', { customer: notMine }, 404);
    expect((await ok(customerMcp, 'list_payment_methods', { id: mine })).data.map((m: any) => m.id)).toContain(f.paymentMethod.id);
    await fails(customerMcp, 'list_payment_methods', { id: notMine }, 404);
    const paypal = { type: 'paypal', paypal: { email: 'jane@example.com' } };
    expect((await ok(customerMcp, 'create_payment_method', { id: mine, ...paypal })).customer).toBe(f.customer.id);
    await fails(customerMcp, 'create_payment_method', { id: notMine, ...paypal }, 404);
    expect((await ok(customerMcp, 'get_subscription', { id: own.number })).id).toBe(own.id);
    await fails(customerMcp, 'get_subscription', { id: theirs.number }, 404);
  });

  it("over REST: its own customer's number works, another customer's is a 404", async () => {
    const mine = await env.http('GET', `/customers/${f.customer.customerNumber}`, { token });
    expect(mine.status).toBe(200);
    expect(mine.body.id).toBe(f.customer.id);
    expect((await env.http('GET', `/customers/${other.customerNumber}`, { token })).status).toBe(404);
    const listed = await env.http('GET', `/subscriptions?customer=${f.customer.customerNumber}`, { token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: any) => s.id)).toContain(own.id);
    expect(listed.body.data.every((s: any) => s.customer.id === f.customer.id)).toBe(true);
    expect((await env.http('GET', `/subscriptions?customer=${other.customerNumber}`, { token })).status).toBe(404);
  });
});

describe('money fields name their unit', () => {
  type Schema = { properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; description?: string };
  const MONEY = /^(amount|price|creditBalance|amountInCents)$|Amount$|^amount[A-Z]/;

  function moneyFields(schema: Schema | undefined, at: string, out: Array<{ path: string; description: string }>): void {
    if (!schema) return;
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const path = `${at}.${name}`;
      if (MONEY.test(name)) out.push({ path, description: prop.description ?? '' });
      moneyFields(prop, path, out);
    }
    moneyFields(schema.items, `${at}[]`, out);
    for (const variant of schema.anyOf ?? []) moneyFields(variant, at, out);
  }

  let tools: Awaited<ReturnType<Client['listTools']>>['tools'];
  beforeAll(async () => {
    tools = (await env.mcp.listTools()).tools;
  });

  it("every money field's description says minor units or major units, in input and output schemas", () => {
    const fields: Array<{ path: string; description: string }> = [];
    for (const tool of tools) {
      moneyFields(tool.inputSchema as Schema, `${tool.name} input`, fields);
      moneyFields(tool.outputSchema as Schema, `${tool.name} output`, fields);
    }
    expect(fields.length).toBeGreaterThan(100);
    const names = new Set(fields.map((f) => f.path.slice(f.path.lastIndexOf('.') + 1)));
    for (const name of ['amount', 'price', 'unitAmount', 'netAmount', 'taxAmount', 'grossAmount', 'amountDue', 'amountPaid', 'fixedAmount', 'totalAmount']) {
      expect(names, name).toContain(name);
    }
    expect(fields.filter((f) => !/(minor|major) units/.test(f.description)).map((f) => f.path)).toEqual([]);
  });

  it('create_invoice spells out that unitAmount is minor units, with an example', () => {
    const tool = tools.find((t) => t.name === 'create_invoice')!;
    const lines = (tool.inputSchema as any).properties.lines.items.properties;
    expect(lines.unitAmount.description).toContain('integer, minor units (cents): 4900 = 49.00 EUR');
    expect(tool.description).toContain('unitAmount is an integer of minor units (cents): 4900 = 49.00 EUR');
  });
});
