import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueJobs } from '../src/jobs/runner.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { ownFields } from './schemaWalk.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

/** An MCP client of a fresh organisation, so counters and lists start empty. */
async function freshOrg(): Promise<Client> {
  const org = await env.newOrg();
  return env.mcpFor(org.apiKey);
}

describe('customers', () => {
  it('creates with defaults and numbers CUS-000001, CUS-000002, … skipping numbers already taken', async () => {
    const mcp = await freshOrg();
    const first = await ok(mcp, 'create_customer', { lastName: 'Lovelace' });
    expect(first).toEqual({
      id: expect.any(String),
      customerNumber: 'CUS-000001',
      timeZone: 'Europe/Berlin',
      firstName: null,
      lastName: 'Lovelace',
      currencyCode: 'EUR',
      companyName: null,
      datevId: null,
      status: 'STATUS_ACTIVE',
      paymentTermDays: null,
      creditBalance: 0,
      customFields: {},
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await ok(mcp, 'create_customer', { companyName: 'Acme' })).customerNumber).toBe('CUS-000002');
    expect((await ok(mcp, 'create_customer', { companyName: 'Manual', customerNumber: 'CUS-000004' })).customerNumber).toBe(
      'CUS-000004',
    );
    expect((await ok(mcp, 'create_customer', { companyName: 'C' })).customerNumber).toBe('CUS-000003');
    expect((await ok(mcp, 'create_customer', { companyName: 'D' })).customerNumber).toBe('CUS-000005');
    expect(await ok(mcp, 'get_customer', { id: first.id })).toEqual(first);
  });

  it('keeps the values given instead of the defaults', async () => {
    const c = await ok(env.mcp, 'create_customer', {
      firstName: 'Grace',
      lastName: 'Hopper',
      companyName: 'Navy',
      datevId: 'D-1',
      timeZone: 'America/New_York',
      currencyCode: 'USD',
      status: 'STATUS_INACTIVE',
    });
    expect(c).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
      companyName: 'Navy',
      datevId: 'D-1',
      timeZone: 'America/New_York',
      currencyCode: 'USD',
      status: 'STATUS_INACTIVE',
    });
    expect((await ok(env.mcp, 'create_customer', { lastName: 'Utc', timeZone: 'UTC' })).timeZone).toBe('UTC');
  });

  it('rejects a customerNumber another customer of the organisation has, on create and on update', async () => {
    const a = await ok(env.mcp, 'create_customer', { lastName: 'A', customerNumber: 'K-1' });
    const b = await ok(env.mcp, 'create_customer', { lastName: 'B', customerNumber: 'K-2' });
    const dup = await fails(env.mcp, 'create_customer', { lastName: 'C', customerNumber: 'K-1' }, 422);
    expect(paths(dup)).toEqual(['customerNumber']);
    expect(dup.violations[0].message).toContain('unique');
    expect(paths(await fails(env.mcp, 'update_customer', { id: b.id, customerNumber: 'K-1' }, 422))).toEqual(['customerNumber']);
    expect((await ok(env.mcp, 'update_customer', { id: a.id, customerNumber: 'K-1' })).customerNumber).toBe('K-1');
    expect((await ok(await freshOrg(), 'create_customer', { lastName: 'C', customerNumber: 'K-1' })).customerNumber).toBe('K-1');
  });

  it.each(['Asia/Kolkata', 'Europe/Kyiv', 'Asia/Kathmandu', 'America/Nuuk', 'America/Argentina/Buenos_Aires', 'Etc/UTC', 'GMT', 'Etc/GMT+5', 'US/Eastern'])(
    'accepts the time zone %s, canonical or a link of the runtime database, and keeps it as given',
    async (timeZone) => {
      const c = await ok(env.mcp, 'create_customer', { lastName: 'Zone', timeZone });
      expect(c.timeZone).toBe(timeZone);
      const other = await ok(env.mcp, 'create_customer', { lastName: 'Zone' });
      expect((await ok(env.mcp, 'update_customer', { id: other.id, timeZone })).timeZone).toBe(timeZone);
      expect((await ok(env.mcp, 'get_customer', { id: other.id })).timeZone).toBe(timeZone);
    },
  );

  it.each([
    ['timeZone', 'Mars/Olympus_Mons'],
    ['timeZone', 'europe/berlin'],
    ['timeZone', 'utc'],
    ['timeZone', '+01:00'],
    ['currencyCode', 'XYZ'],
    ['currencyCode', 'eur'],
    ['status', 'STATUS_DELETED'],
  ])('rejects %s %s, naming the field', async (field, value) => {
    const p = await fails(env.mcp, 'create_customer', { lastName: 'X', [field]: value }, 422);
    expect(paths(p)).toEqual([field]);
    const c = await ok(env.mcp, 'create_customer', { lastName: 'X' });
    expect(paths(await fails(env.mcp, 'update_customer', { id: c.id, [field]: value }, 422))).toEqual([field]);
  });

  it('requires lastName or companyName, on create and after an update', async () => {
    for (const input of [{}, { firstName: 'Ada' }, { lastName: '', companyName: null }, { lastName: '  ' }]) {
      const p = await fails(env.mcp, 'create_customer', input, 422);
      expect(paths(p)).toEqual(['lastName']);
      expect(p.violations[0].message).toMatch(/lastName.*companyName/);
    }
    const company = await ok(env.mcp, 'create_customer', { companyName: 'Only Company' });
    const p = await fails(env.mcp, 'update_customer', { id: company.id, companyName: null }, 422);
    expect(paths(p)).toEqual(['lastName']);
    expect((await ok(env.mcp, 'get_customer', { id: company.id })).companyName).toBe('Only Company');
    const swapped = await ok(env.mcp, 'update_customer', { id: company.id, companyName: null, lastName: 'Person' });
    expect(swapped).toMatchObject({ companyName: null, lastName: 'Person' });
  });

  it('update keeps omitted fields and null clears a nullable field', async () => {
    const c = await ok(env.mcp, 'create_customer', {
      firstName: 'Alan',
      lastName: 'Turing',
      companyName: 'Bletchley',
      datevId: 'D-7',
      currencyCode: 'GBP',
      timeZone: 'Europe/London',
    });
    const u = await ok(env.mcp, 'update_customer', { id: c.id, firstName: null, datevId: null, status: 'STATUS_INACTIVE' });
    expect(u).toEqual({
      ...c,
      firstName: null,
      datevId: null,
      status: 'STATUS_INACTIVE',
      updatedAt: expect.any(String),
    });
    expect(await ok(env.mcp, 'get_customer', { id: c.id })).toEqual(u);
    const put = await env.http('PUT', `/customers/${c.id}`, { body: { timeZone: 'UTC', companyName: null } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ timeZone: 'UTC', companyName: null, lastName: 'Turing', currencyCode: 'GBP', firstName: null });
  });

  it.each(['customerNumber', 'firstName', 'lastName', 'companyName', 'datevId'])(
    'rejects %s over 255 characters and accepts 255',
    async (field) => {
      const base = { lastName: 'Name', companyName: 'Company' };
      expect(paths(await fails(env.mcp, 'create_customer', { ...base, [field]: 'x'.repeat(256) }, 422))).toEqual([field]);
      const c = await ok(env.mcp, 'create_customer', { ...base, [field]: field.charAt(0).repeat(255) });
      expect(c[field]).toHaveLength(255);
      expect(paths(await fails(env.mcp, 'update_customer', { id: c.id, [field]: 'y'.repeat(256) }, 422))).toEqual([field]);
    },
  );

  it('rejects an empty customerNumber', async () => {
    expect(paths(await fails(env.mcp, 'create_customer', { lastName: 'X', customerNumber: '' }, 422))).toEqual(['customerNumber']);
  });

  it.each(['   ', ' K-9', 'K-9 ', '\tK-9'])('rejects the customerNumber %j, blank or with surrounding whitespace, on create and update', async (customerNumber) => {
    const p = await fails(env.mcp, 'create_customer', { lastName: 'X', customerNumber }, 422);
    expect(p.violations).toEqual([
      { propertyPath: 'customerNumber', code: 'custom', message: 'customerNumber must not be blank or begin or end with whitespace: it is matched exactly' },
    ]);
    const c = await ok(env.mcp, 'create_customer', { lastName: 'X' });
    expect(paths(await fails(env.mcp, 'update_customer', { id: c.id, customerNumber }, 422))).toEqual(['customerNumber']);
  });

  it("rejects a customerNumber in the form of an id, which would shadow another customer's id", async () => {
    const a = await ok(env.mcp, 'create_customer', { lastName: 'A' });
    for (const customerNumber of [a.id, a.id.toUpperCase(), '00000000-0000-4000-8000-000000000000']) {
      const p = await fails(env.mcp, 'create_customer', { lastName: 'B', customerNumber }, 422);
      expect(paths(p)).toEqual(['customerNumber']);
      expect(p.violations[0].message).toBe('customerNumber must not have the form of an id (a UUID): every input naming a customer takes its id or its number');
      expect(paths(await fails(env.mcp, 'update_customer', { id: a.id, customerNumber }, 422))).toEqual(['customerNumber']);
    }
    expect(await ok(env.mcp, 'get_customer', { id: a.id })).toEqual(a);
  });

  it('filters the list by status, over MCP and HTTP', async () => {
    const org = await env.newOrg();
    const mcp = await env.mcpFor(org.apiKey);
    const active = await ok(mcp, 'create_customer', { lastName: 'Active' });
    const inactive = await ok(mcp, 'create_customer', { lastName: 'Inactive', status: 'STATUS_INACTIVE' });
    const all = await ok(mcp, 'list_customers', {});
    expect(all.data.map((c: { id: string }) => c.id)).toEqual([active.id, inactive.id]);
    const only = await ok(mcp, 'list_customers', { status: 'STATUS_INACTIVE' });
    expect(only.data.map((c: { id: string }) => c.id)).toEqual([inactive.id]);
    expect(only.meta.pagination.totalItems).toBe(1);
    const res = await env.http('GET', '/customers?status=STATUS_ACTIVE', { token: org.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([active.id]);
    const bad = await env.http('GET', '/customers?status=deleted', { token: org.apiKey });
    expect(bad.status).toBe(400);
    expect(paths(bad.body)).toEqual(['status']);
  });

  it('serves customers over HTTP with 201 and Location', async () => {
    const res = await env.http('POST', '/customers', { body: { companyName: 'Rest GmbH' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/customers/${res.body.id}`);
    expect((await env.http('GET', res.headers.get('location')!)).body).toEqual(res.body);
    const bad = await env.http('POST', '/customers', { body: { firstName: 'No' } });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['lastName']);
  });
});

describe("a customer's time zone while subscriptions bill in it", () => {
  /** A customer of a fresh organisation in Berlin and a monthly plan paid in advance. */
  async function berlinCustomer() {
    const mcp = await freshOrg();
    const customer = await ok(mcp, 'create_customer', { lastName: 'Berlin', timeZone: 'Europe/Berlin' });
    const product = await ok(mcp, 'create_product', { name: 'Seat' });
    const price = await ok(mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 10 }, billingInterval: '1M' });
    const plan = await ok(mcp, 'create_plan', { code: 'seat', name: 'Seat', charges: [{ product: product.id, pricePlan: price.id }] });
    const subscribe = (activate: boolean) =>
      ok(mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate });
    return { mcp, customer, subscribe };
  }

  it('is fixed while a subscription is active or paused: 409 naming the field and the subscriptions, nothing changed', async () => {
    const { mcp, customer, subscribe } = await berlinCustomer();
    const subscriptions = [];
    for (let i = 0; i < 4; i++) subscriptions.push(await subscribe(true));
    const numbers = subscriptions.map((s) => s.number);
    const p = await fails(mcp, 'update_customer', { id: customer.id, timeZone: 'America/Los_Angeles' }, 409);
    expect(p.detail).toBe(
      `The timeZone of customer ${customer.customerNumber} is fixed at Europe/Berlin: subscription(s) ${numbers.slice(0, 3).join(', ')} and 1 more are billed in it, and another zone would move their billing days. Create a new customer to bill in another time zone`,
    );
    for (const s of subscriptions.slice(1)) await ok(mcp, 'terminate_subscription', { id: s.id });
    await ok(mcp, 'pause_subscription', { id: subscriptions[0].id });
    const paused = await fails(mcp, 'update_customer', { id: customer.id, timeZone: 'Europe/London', lastName: 'Moved' }, 409);
    expect(paused.detail).toContain(`subscription(s) ${numbers[0]}`);
    expect(await ok(mcp, 'get_customer', { id: customer.id })).toEqual(customer);
    // The same zone again is no change; other fields still change.
    expect((await ok(mcp, 'update_customer', { id: customer.id, timeZone: 'Europe/Berlin', lastName: 'Same' })).lastName).toBe('Same');
  });

  it('is free while the subscriptions are drafts, and again once an ended one is billed to its end', async () => {
    const { mcp, customer, subscribe } = await berlinCustomer();
    await subscribe(false);
    expect((await ok(mcp, 'update_customer', { id: customer.id, timeZone: 'Europe/London' })).timeZone).toBe('Europe/London');
    const ended = await subscribe(true);
    await ok(mcp, 'terminate_subscription', { id: ended.id });
    // Its final period is not billed yet: that invoice is still to come in the customer's zone.
    expect((await fails(mcp, 'update_customer', { id: customer.id, timeZone: 'Europe/Berlin' }, 409)).detail).toContain(`subscription(s) ${ended.number} are billed`);
    await runDueJobs(env.app, new Date());
    expect((await ok(mcp, 'update_customer', { id: customer.id, timeZone: 'Europe/Berlin' })).timeZone).toBe('Europe/Berlin');
  });
});

describe('customer e-mail addresses', () => {
  let customer: { id: string };
  beforeAll(async () => {
    customer = await ok(env.mcp, 'create_customer', { companyName: 'Mail AG' });
  });

  it('creates, gets and lists addresses, flags defaulting to false', async () => {
    const e = await ok(env.mcp, 'create_customer_email_address', { id: customer.id, email: 'billing@mail.example' });
    expect(e).toEqual({
      id: expect.any(String),
      customer: customer.id,
      email: 'billing@mail.example',
      receiverName: null,
      isInvoiceEmail: false,
      isDunningEmail: false,
      default: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const f = await ok(env.mcp, 'create_customer_email_address', {
      id: customer.id,
      email: 'dunning@mail.example',
      receiverName: 'Accounts',
      isInvoiceEmail: true,
      isDunningEmail: true,
    });
    expect(f).toMatchObject({ receiverName: 'Accounts', isInvoiceEmail: true, isDunningEmail: true, default: false });
    expect(await ok(env.mcp, 'get_customer_email_address', { id: e.id })).toEqual(e);
    const list = await ok(env.mcp, 'list_customer_email_addresses', { id: customer.id });
    expect(list.data).toEqual([e, f]);
    const other = await ok(env.mcp, 'create_customer', { lastName: 'Other' });
    expect((await ok(env.mcp, 'list_customer_email_addresses', { id: other.id })).data).toEqual([]);
  });

  it('keeps a single default: a new default clears the previous one, a non-default leaves it', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Defaults' });
    const first = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'one@x.example', default: true });
    expect(first.default).toBe(true);
    await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'plain@x.example' });
    expect((await ok(env.mcp, 'get_customer_email_address', { id: first.id })).default).toBe(true);
    const second = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'two@x.example', default: true });
    expect(second.default).toBe(true);
    expect((await ok(env.mcp, 'get_customer_email_address', { id: first.id })).default).toBe(false);
    const list = await ok(env.mcp, 'list_customer_email_addresses', { id: c.id });
    expect(list.data.filter((e: { default: boolean }) => e.default).map((e: { id: string }) => e.id)).toEqual([second.id]);
    const otherCustomer = await ok(env.mcp, 'create_customer', { lastName: 'Untouched' });
    const own = await ok(env.mcp, 'create_customer_email_address', { id: otherCustomer.id, email: 'own@x.example', default: true });
    await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'three@x.example', default: true });
    expect((await ok(env.mcp, 'get_customer_email_address', { id: own.id })).default).toBe(true);
  });

  it('rejects an invalid address, and address or receiverName over 255 characters', async () => {
    for (const email of ['not-an-address', 'a@b', '', 'a'.repeat(244) + '@example.com']) {
      const p = await fails(env.mcp, 'create_customer_email_address', { id: customer.id, email }, 422);
      expect(new Set(paths(p))).toEqual(new Set(['email']));
    }
    expect(paths(await fails(env.mcp, 'create_customer_email_address', { id: customer.id }, 422))).toEqual(['email']);
    const p = await fails(
      env.mcp,
      'create_customer_email_address',
      { id: customer.id, email: 'ok@example.com', receiverName: 'r'.repeat(256) },
      422,
    );
    expect(paths(p)).toEqual(['receiverName']);
    const longest = await ok(env.mcp, 'create_customer_email_address', {
      id: customer.id,
      email: 'a'.repeat(243) + '@example.com',
      receiverName: 'r'.repeat(255),
    });
    expect(longest.email).toHaveLength(255);
  });

  it('refuses an address the customer already has, in any case, on create and update; other customers may have it', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Twice' });
    const first = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'AP@twice.example' });
    for (const email of ['AP@twice.example', 'ap@TWICE.example']) {
      const p = await fails(env.mcp, 'create_customer_email_address', { id: c.id, email, isInvoiceEmail: true }, 422);
      expect(p.violations).toEqual([
        { propertyPath: 'email', code: 'unique', message: `email must be unique per customer: the customer already has the address '${email}' (in any case); update that one instead` },
      ]);
    }
    const res = await env.http('POST', `/customers/${c.id}/email-addresses`, { body: { email: 'ap@twice.example' } });
    expect([res.status, paths(res.body)]).toEqual([422, ['email']]);
    const second = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'billing@twice.example' });
    expect(paths(await fails(env.mcp, 'update_customer_email_address', { id: second.id, email: 'Ap@Twice.example' }, 422))).toEqual(['email']);
    expect((await ok(env.mcp, 'update_customer_email_address', { id: first.id, email: 'ap@twice.example' })).email).toBe('ap@twice.example');
    const other = await ok(env.mcp, 'create_customer', { lastName: 'Other' });
    expect((await ok(env.mcp, 'create_customer_email_address', { id: other.id, email: 'ap@twice.example' })).email).toBe('ap@twice.example');
    expect((await ok(env.mcp, 'list_customer_email_addresses', { id: c.id })).meta.pagination.totalItems).toBe(2);
  });

  it('updates an address: omitted fields stay, null clears receiverName, default true takes over from the old default', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Changes' });
    const old = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'old@changes.example', default: true });
    const e = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'ap@changes.example', receiverName: 'Accounts' });
    const renamed = await ok(env.mcp, 'update_customer_email_address', { id: e.id, receiverName: 'Ada Lovelace', isInvoiceEmail: true });
    expect(renamed).toEqual({ ...e, receiverName: 'Ada Lovelace', isInvoiceEmail: true, updatedAt: expect.any(String) });
    const made = await ok(env.mcp, 'update_customer_email_address', { id: e.id, default: true, receiverName: null });
    expect(made).toMatchObject({ email: 'ap@changes.example', receiverName: null, isInvoiceEmail: true, isDunningEmail: false, default: true });
    expect((await ok(env.mcp, 'get_customer_email_address', { id: old.id })).default).toBe(false);
    expect(await ok(env.mcp, 'update_customer_email_address', { id: e.id, default: true })).toMatchObject({ default: true });
    const put = await env.http('PUT', `/customer-email-addresses/${e.id}`, { body: { default: false, isDunningEmail: true } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id: e.id, default: false, isDunningEmail: true, isInvoiceEmail: true });
    const list = await ok(env.mcp, 'list_customer_email_addresses', { id: c.id });
    expect(list.data.filter((x: { default: boolean }) => x.default)).toEqual([]);
    expect(paths(await fails(env.mcp, 'update_customer_email_address', { id: e.id, email: 'nope' }, 422))).toEqual(['email']);
    expect(paths(await fails(env.mcp, 'update_customer_email_address', { id: e.id, customer: c.id }, 422))).toEqual(['customer']);
    await fails(env.mcp, 'update_customer_email_address', { id: 'no-such-id', isInvoiceEmail: true }, 404);
  });

  it('deletes an address: 204 over HTTP, { id, deleted } over MCP, then 404; no other address becomes default', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Removes' });
    const main = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'main@removes.example', default: true });
    const spare = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'spare@removes.example' });
    expect(await ok(env.mcp, 'delete_customer_email_address', { id: main.id })).toEqual({ id: main.id, deleted: true });
    await fails(env.mcp, 'get_customer_email_address', { id: main.id }, 404);
    await fails(env.mcp, 'delete_customer_email_address', { id: main.id }, 404);
    expect((await ok(env.mcp, 'list_customer_email_addresses', { id: c.id })).data).toEqual([spare]);
    const res = await env.http('DELETE', `/customer-email-addresses/${spare.id}`);
    expect([res.status, res.body]).toEqual([204, undefined]);
    expect((await env.http('DELETE', `/customer-email-addresses/${spare.id}`)).status).toBe(404);
    expect((await ok(env.mcp, 'list_customer_email_addresses', { id: c.id })).data).toEqual([]);
    // The address may be added again.
    expect((await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'main@removes.example' })).email).toBe('main@removes.example');
  });

  it('declares update as idempotent and delete as destructive and idempotent', async () => {
    const { tools } = await env.mcp.listTools();
    const hints = (name: string) => tools.find((t) => t.name === name)?.annotations;
    expect(hints('update_customer_email_address')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(hints('delete_customer_email_address')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
  });

  it('answers 201 with Location /customer-email-addresses/{id} over HTTP', async () => {
    const res = await env.http('POST', `/customers/${customer.id}/email-addresses`, {
      body: { email: 'rest@mail.example', isInvoiceEmail: true },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/customer-email-addresses/${res.body.id}`);
    const got = await env.http('GET', res.headers.get('location')!);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const list = await env.http('GET', `/customers/${customer.id}/email-addresses?limit=1`);
    expect(list.status).toBe(200);
    expect(list.body.meta.pagination).toMatchObject({ itemsPerPage: 1, pageTotalItems: 1 });
  });
});

describe('isolation and permissions', () => {
  it('answers 404 for unknown ids', async () => {
    await fails(env.mcp, 'get_customer', { id: 'no-such-id' }, 404);
    await fails(env.mcp, 'update_customer', { id: 'no-such-id', lastName: 'X' }, 404);
    await fails(env.mcp, 'create_customer_email_address', { id: 'no-such-id', email: 'a@b.example' }, 404);
    await fails(env.mcp, 'list_customer_email_addresses', { id: 'no-such-id' }, 404);
    await fails(env.mcp, 'get_customer_email_address', { id: 'no-such-id' }, 404);
    await fails(env.mcp, 'update_customer_email_address', { id: 'no-such-id', default: true }, 404);
    await fails(env.mcp, 'delete_customer_email_address', { id: 'no-such-id' }, 404);
    expect((await env.http('GET', '/customer-email-addresses/no-such-id')).status).toBe(404);
  });

  it("answers 404 for another organisation's customer and e-mail address", async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Mine' });
    const e = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'mine@x.example', default: true });
    const org = await env.newOrg();
    const other = await env.mcpFor(org.apiKey);
    await fails(other, 'get_customer', { id: c.id }, 404);
    await fails(other, 'update_customer', { id: c.id, lastName: 'Theirs' }, 404);
    await fails(other, 'create_customer_email_address', { id: c.id, email: 'theirs@x.example', default: true }, 404);
    await fails(other, 'list_customer_email_addresses', { id: c.id }, 404);
    await fails(other, 'get_customer_email_address', { id: e.id }, 404);
    await fails(other, 'update_customer_email_address', { id: e.id, email: 'theirs@x.example' }, 404);
    await fails(other, 'delete_customer_email_address', { id: e.id }, 404);
    expect((await env.http('DELETE', `/customer-email-addresses/${e.id}`, { token: org.apiKey })).status).toBe(404);
    expect((await env.http('GET', `/customers/${c.id}`, { token: org.apiKey })).status).toBe(404);
    expect(await ok(env.mcp, 'get_customer', { id: c.id })).toEqual(c);
    expect(await ok(env.mcp, 'get_customer_email_address', { id: e.id })).toEqual(e);
    expect((await ok(other, 'list_customers', {})).data).toEqual([]);
  });

  it('answers 403 to a key without customer permissions and hides the tools from it', async () => {
    const c = await ok(env.mcp, 'create_customer', { lastName: 'Guarded' });
    const key = await env.newKey(env.org, ['measurement:read']);
    const mcp = await env.mcpFor(key);
    await fails(mcp, 'create_customer', { lastName: 'X' }, 403);
    await fails(mcp, 'list_customers', {}, 403);
    await fails(mcp, 'get_customer', { id: c.id }, 403);
    await fails(mcp, 'update_customer', { id: c.id, lastName: 'X' }, 403);
    await fails(mcp, 'create_customer_email_address', { id: c.id, email: 'a@b.example' }, 403);
    await fails(mcp, 'list_customer_email_addresses', { id: c.id }, 403);
    const e = await ok(env.mcp, 'create_customer_email_address', { id: c.id, email: 'guarded@x.example' });
    await fails(mcp, 'update_customer_email_address', { id: e.id, default: true }, 403);
    await fails(mcp, 'delete_customer_email_address', { id: e.id }, 403);
    const { tools } = await mcp.listTools();
    // Only the token refresh, which the refresh token itself authorizes, remains (authenticate_customer needs customer:write).
    expect(tools.filter((t) => t.name.includes('customer')).map((t) => t.name).sort()).toEqual(['refresh_customer_token']);
    expect((await env.http('GET', `/customers/${c.id}`, { token: key })).status).toBe(403);
    const reader = await env.mcpFor(await env.newKey(env.org, ['customer:read']));
    expect((await ok(reader, 'get_customer', { id: c.id })).id).toBe(c.id);
    await fails(reader, 'update_customer', { id: c.id, lastName: 'X' }, 403);
    await fails(reader, 'update_customer_email_address', { id: e.id, default: true }, 403);
    await fails(reader, 'delete_customer_email_address', { id: e.id }, 403);
    expect(await ok(env.mcp, 'get_customer_email_address', { id: e.id })).toEqual(e);
  });

  it("answers e-mail, address and payment fields sent with the customer with the tool that adds each, and nothing is created", async () => {
    const mcp = await freshOrg();
    const refused = await fails(mcp, 'create_customer', { lastName: 'Hopper', email: 'grace@example.com', invoiceAddress: { city: 'Arlington' }, iban: 'DE89370400440532013000' }, 422);
    expect(refused.violations).toEqual([
      { propertyPath: 'email', code: 'unrecognized_keys', message: "'email' is not a field of the input; e-mail addresses are added with create_customer_email_address once the customer exists" },
      { propertyPath: 'invoiceAddress', code: 'unrecognized_keys', message: "'invoiceAddress' is not a field of the input; addresses are added with create_invoice_address once the customer exists" },
      { propertyPath: 'iban', code: 'unrecognized_keys', message: "'iban' is not a field of the input; payment methods are added with create_payment_method once the customer exists" },
    ]);
    expect((await ok(mcp, 'list_customers', {})).data).toEqual([]);
    const c = await ok(mcp, 'create_customer', { lastName: 'Hopper' });
    const rest = await env.http('PUT', `/customers/${c.id}`, { body: { email_address: 'grace@example.com', paymentTermDay: 14 } });
    expect(rest.status).toBe(422);
    expect(rest.body.violations.map((v: any) => v.message)).toEqual([
      "'email_address' is not a field of the input; e-mail addresses are added with create_customer_email_address once the customer exists",
      "'paymentTermDay' is not a field of the input; did you mean 'paymentTermDays'?",
    ]);
  });

  it('describes every input field of the customer tools', async () => {
    const { tools } = await env.mcp.listTools();
    const names = [
      'create_customer',
      'list_customers',
      'get_customer',
      'update_customer',
      'create_customer_email_address',
      'list_customer_email_addresses',
      'get_customer_email_address',
      'update_customer_email_address',
      'delete_customer_email_address',
    ];
    for (const name of names) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.outputSchema, name).toBeDefined();
      for (const [field, schema] of ownFields(tool?.inputSchema)) {
        expect((schema as { description?: string }).description, `${name}.${field}`).toBeTruthy();
      }
    }
  });
});

describe('customer custom fields (issue 17)', () => {
  it('are validated against the configuration on create and update: unknown key, wrong type, missing required are 422 at the field', async () => {
    const mcp = await freshOrg();
    await ok(mcp, 'create_custom_field', { key: 'tier', entity: 'customer', type: 'select', options: ['gold', 'silver'], required: true });
    await ok(mcp, 'create_custom_field', { key: 'since', entity: 'customer', type: 'date' });
    await ok(mcp, 'create_custom_field', { key: 'poRef', entity: 'subscription', type: 'string' });
    const missing = await fails(mcp, 'create_customer', { lastName: 'A' }, 422);
    expect(paths(missing)).toEqual(['customFields.tier']);
    expect(missing.violations[0].message).toBe('customFields.tier is required: every customer needs a value for this select custom field');
    const wrong = await fails(mcp, 'create_customer', { lastName: 'A', customFields: { tier: 'bronze', since: '2026-02-30', poRef: 'x' } }, 422);
    expect(paths(wrong)).toEqual(['customFields.tier', 'customFields.since', 'customFields.poRef']);
    expect(wrong.violations[2].message).toBe('customFields.poRef is not a custom field of customers: the configured customer keys are tier, since (create_custom_field adds one)');
    const c = await ok(mcp, 'create_customer', { lastName: 'A', customFields: { tier: 'gold', since: '2026-01-31' } });
    expect(c.customFields).toEqual({ tier: 'gold', since: '2026-01-31' });
    expect((await ok(mcp, 'update_customer', { id: c.id, lastName: 'B' })).customFields).toEqual({ tier: 'gold', since: '2026-01-31' });
    expect(paths(await fails(mcp, 'update_customer', { id: c.id, customFields: { since: '2026-02-01' } }, 422))).toEqual(['customFields.tier']);
    expect(paths(await fails(mcp, 'update_customer', { id: c.id, customFields: { tier: 1 } }, 422))).toEqual(['customFields.tier']);
    expect((await ok(mcp, 'update_customer', { id: c.id, customFields: { tier: 'silver' } })).customFields).toEqual({ tier: 'silver' });
    expect((await ok(mcp, 'get_customer', { id: c.id })).customFields).toEqual({ tier: 'silver' });
    expect((await ok(mcp, 'list_customers', {})).data).toHaveLength(1);
  });

  it('a required string field is not satisfied by blank text', async () => {
    const mcp = await freshOrg();
    await ok(mcp, 'create_custom_field', { key: 'costCentre', entity: 'customer', type: 'string', required: true });
    for (const blank of ['', '   ', '\t\n']) {
      const p = await fails(mcp, 'create_customer', { lastName: 'A', customFields: { costCentre: blank } }, 422);
      expect(p.violations).toEqual([
        {
          propertyPath: 'customFields.costCentre',
          code: 'custom_field_required',
          message: 'customFields.costCentre is required: every customer needs a value for this string custom field (blank text is no value)',
        },
      ]);
    }
    const c = await ok(mcp, 'create_customer', { lastName: 'A', customFields: { costCentre: ' CC-1 ' } });
    expect(paths(await fails(mcp, 'update_customer', { id: c.id, customFields: { costCentre: '' } }, 422))).toEqual(['customFields.costCentre']);
    await ok(mcp, 'create_custom_field', { key: 'note', entity: 'customer', type: 'string' });
    expect((await ok(mcp, 'update_customer', { id: c.id, customFields: { costCentre: 'CC-2', note: '' } })).customFields).toEqual({ costCentre: 'CC-2', note: '' });
  });

  it('over REST: created, read back, listed', async () => {
    await ok(env.mcp, 'create_custom_field', { key: 'segment', entity: 'customer', type: 'string' });
    const created = await env.http('POST', '/customers', { body: { companyName: 'Rest GmbH', customFields: { segment: 'SMB' } } });
    expect([created.status, created.body.customFields]).toEqual([201, { segment: 'SMB' }]);
    expect((await env.http('GET', `/customers/${created.body.id}`)).body.customFields).toEqual({ segment: 'SMB' });
    const bad = await env.http('PUT', `/customers/${created.body.id}`, { body: { customFields: { segment: 5 } } });
    expect([bad.status, bad.body.violations[0].propertyPath]).toEqual([422, 'customFields.segment']);
    const listed = (await env.http('GET', '/customers?limit=100')).body.data.find((x: any) => x.id === created.body.id);
    expect(listed.customFields).toEqual({ segment: 'SMB' });
  });
});
