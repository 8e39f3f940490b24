import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildFixture, type Fixture } from './fixtures.js';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';

let env: TestEnv;
let f: Fixture;
const NOW = '2026-01-15T10:00:00.000Z';
const VALID_UNTIL = '2026-02-15T00:00:00.000Z';
const yearly = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];
const address = { street: 'Friedrichstraße', houseNumber: '12', zip: '10117', city: 'Berlin', countryCode: 'DE' };

beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  f = await buildFixture(env.mcp, '-offers');
});
afterAll(() => env.close());
beforeEach(() => env.setNow(NOW));

const recipients = [
  { email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' },
  { email: 'john@example.com', firstName: 'John', lastName: 'Roe' },
];

/** A customer of the fixture's currency, with an invoice address when asked for. */
async function customer(withAddress: boolean): Promise<any> {
  const c = await ok(env.mcp, 'create_customer', { companyName: 'ACME' });
  if (withAddress) await ok(env.mcp, 'create_invoice_address', { id: c.id, ...address });
  return c;
}

function offerArgs(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customer: f.customer.id,
    acceptanceMode: 'esignature',
    name: 'Pro for ACME',
    recipients,
    validUntil: VALID_UNTIL,
    subscription: { plan: f.plan.id, periods: yearly },
    ...extra,
  };
}

/**
 * The offer as REST answers it (sections rendered, each recipient's signed document), its customer
 * as the reference MCP shows: what the tools' compact answers stand for (test/offerTools.test.ts
 * checks those).
 */
async function full(id: string, token?: string): Promise<any> {
  const body = (await env.http('GET', `/offers/${id}`, token === undefined ? {} : { token })).body;
  const { id: customerId, customerNumber, companyName, firstName, lastName } = body.customer;
  return { ...body, customer: { id: customerId, customerNumber, companyName, firstName, lastName } };
}

const offer = async (extra: Record<string, unknown> = {}, client: Client = env.mcp, token?: string) =>
  full((await ok(client, 'create_offer', offerArgs(extra))).id, token);
const accept = async (o: any, recipient = 0) => {
  await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[recipient].id });
  return full(o.id);
};
const subscriptionOf = (o: any) => ok(env.mcp, 'get_subscription', { id: o.subscription.id });

/** An offer brought into `status` the allowed way. */
async function inStatus(status: string, extra: Record<string, unknown> = {}): Promise<any> {
  if (status === 'awaiting_invoice_details') {
    const o = await offer({ acceptanceMode: 'click', customer: (await customer(false)).id, ...extra });
    return accept(o);
  }
  const o = await offer(extra);
  if (status === 'signing') return accept(o);
  if (status === 'signed') {
    await accept(o);
    return accept(o, 1);
  }
  if (status === 'archived') return ok(env.mcp, 'archive_offer', { id: o.id }).then(() => full(o.id));
  return o;
}

describe('create_offer', () => {
  it('creates an open offer numbered OFF-000001… with the proposed subscription in status offer', async () => {
    const org = await env.newOrg();
    const client = await env.mcpFor(org.apiKey);
    const g = await buildFixture(client, '-fresh');
    const o = await offer(
      {
        customer: g.customer.id,
        subscription: { plan: g.plan.id, periods: yearly, name: 'ACME Pro' },
        sections: [
          { title: 'Scope', content: 'Everything in Pro.' },
          { title: 'Terms', content: '12 months.' },
        ],
        customVariables: { discount: 10, region: 'EU', priority: true },
        description: 'Our proposal',
        locale: 'de-DE',
        crmDealId: 'deal-42',
        contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example' },
      },
      client,
      org.apiKey,
    );
    expect(o).toEqual({
      id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
      number: 'OFF-000001',
      status: 'open',
      expired: false,
      acceptanceMode: 'esignature',
      dealType: 'new_business',
      subscription: {
        id: expect.any(String),
        number: expect.stringMatching(/^SUB-/),
        name: 'ACME Pro',
        status: 'offer',
        plan: { id: g.plan.id, code: g.plan.code, name: g.plan.name },
        startDate: null,
        activatedAt: null,
      },
      customer: {
        id: g.customer.id,
        customerNumber: g.customer.customerNumber,
        companyName: g.customer.companyName,
        firstName: g.customer.firstName,
        lastName: g.customer.lastName,
      },
      name: 'Pro for ACME',
      description: 'Our proposal',
      locale: 'de-DE',
      sections: [
        { id: expect.any(String), title: 'Scope', content: 'Everything in Pro.', rendered: { title: 'Scope', content: 'Everything in Pro.' } },
        { id: expect.any(String), title: 'Terms', content: '12 months.', rendered: { title: 'Terms', content: '12 months.' } },
      ],
      customVariables: { discount: 10, region: 'EU', priority: true },
      validUntil: VALID_UNTIL,
      recipients: recipients.map((r) => ({
        ...r,
        id: expect.any(String),
        createdAt: NOW,
        signingStatus: 'not_started',
        signingLog: [],
        signedAt: null,
        signedDocument: null,
        link: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/pages\/offers\/[\w-]+\.[\w-]{43}$/),
      })),
      auditLogDocument: null,
      signedDocument: null,
      signedAt: null,
      autoActivateSubscription: true,
      crmDealId: 'deal-42',
      contactPerson: { id: expect.any(String), firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example', avatar: null },
      createdAt: NOW,
      updatedAt: NOW,
    });
    const tokens = await env.app.pageTokens();
    for (const r of o.recipients) {
      expect(r.link.startsWith(`${env.url}/pages/offers/`)).toBe(true);
      expect(tokens.verify('offer-recipient', r.link.slice(r.link.lastIndexOf('/') + 1))).toEqual({ org: org.organisationId, id: r.id });
    }
    expect((await ok(client, 'get_subscription', { id: o.subscription.id })).status).toBe('offer');
    expect((await offer({ customer: g.customer.id, subscription: { plan: g.plan.id, periods: yearly } }, client, org.apiKey)).number).toBe('OFF-000002');
    expect(await full(o.id, org.apiKey)).toEqual(o);
    const rest = await env.http('GET', `/offers/${o.id}`, { token: org.apiKey });
    expect(rest.body).toEqual({ ...o, customer: g.customer });
  });

  it('takes the defaults: dealType new_business, locale en, no sections or variables, autoActivateSubscription true', async () => {
    const o = await offer({ acceptanceMode: 'print' });
    expect(o).toMatchObject({
      dealType: 'new_business',
      locale: 'en',
      sections: [],
      customVariables: {},
      autoActivateSubscription: true,
      description: null,
      crmDealId: null,
      contactPerson: null,
    });
  });

  it.each([
    ['an unknown customer', { customer: 'nope' }, ['customer']],
    ['validUntil now', { validUntil: NOW }, ['validUntil']],
    ['validUntil in the past', { validUntil: '2026-01-01T00:00:00Z' }, ['validUntil']],
    ['validUntil without offset', { validUntil: '2026-03-01T00:00:00' }, ['validUntil']],
    ['no recipients', { recipients: [] }, ['recipients']],
    ['a recipient twice', { recipients: [...recipients, { ...recipients[0], email: 'JANE@example.com' }] }, ['recipients[2].email']],
    ['a recipient without e-mail', { recipients: [{ firstName: 'A', lastName: 'B' }] }, ['recipients[0].email']],
    ['an unknown acceptance mode', { acceptanceMode: 'fax' }, ['acceptanceMode']],
    ['an unknown deal type', { dealType: 'upsell' }, ['dealType']],
    ['a nested custom variable', { customVariables: { a: { b: 1 } } }, ['customVariables.a']],
    ['a custom variable name with a space', { customVariables: { 'a b': 1 } }, ['customVariables.a b']],
    ['a section without title', { sections: [{ content: 'x' }] }, ['sections[0].title']],
    ['a malformed locale', { locale: 'english' }, ['locale']],
    ['an unknown plan', { subscription: { plan: 'nope', periods: yearly } }, ['subscription.plan']],
    ['no periods', { subscription: { plan: 'x', periods: [] } }, ['subscription.periods']],
    ['activate inside subscription (unknown field)', { subscription: { plan: 'x', periods: yearly, activate: true } }, ['subscription.activate']],
  ])('rejects %s (422)', async (_, extra, expected) => {
    const problem = await fails(env.mcp, 'create_offer', offerArgs(extra), 422);
    expect(paths(problem)).toEqual(expected);
  });

  it('names what create_subscription rejects at subscription.<field>, and creates nothing', async () => {
    const before = (await ok(env.mcp, 'list_subscriptions', { limit: 0 })).meta.pagination.totalItems;
    const offersBefore = (await ok(env.mcp, 'list_offers', { limit: 0 })).meta.pagination.totalItems;
    const problem = await fails(
      env.mcp,
      'create_offer',
      offerArgs({ subscription: { plan: f.plan.id, periods: yearly, addons: [{ product: f.product.id, pricePlan: f.pricePlan.id }] } }),
      422,
    );
    expect(paths(problem)).toEqual(['subscription.addons[0]']);
    expect(problem.violations[0].message).toMatch(/^subscription\.addons\[0\]/);
    const usd = await ok(env.mcp, 'create_customer', { lastName: 'Dollar', currencyCode: 'USD' });
    expect(paths(await fails(env.mcp, 'create_offer', offerArgs({ customer: usd.id }), 422))).toEqual(['subscription.plan']);
    expect((await ok(env.mcp, 'list_subscriptions', { limit: 0 })).meta.pagination.totalItems).toBe(before);
    expect((await ok(env.mcp, 'list_offers', { limit: 0 })).meta.pagination.totalItems).toBe(offersBefore);
  });

  it('answers 201 with Location over HTTP', async () => {
    const res = await env.http('POST', '/offers', { body: offerArgs() });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/offers/${res.body.id}`);
    expect((await env.http('GET', `/offers/${res.body.id}`)).body).toEqual(res.body);
  });
});

describe('list_offers', () => {
  it('shows sections as their ids, oldest first, filtered by customer and status', async () => {
    const c = await customer(false);
    const a = await offer({ customer: c.id, sections: [{ title: 'One', content: '1' }, { title: 'Two', content: '2' }] });
    const b = await offer({ customer: c.id });
    await ok(env.mcp, 'archive_offer', { id: b.id });
    const list = await ok(env.mcp, 'list_offers', { customer: c.id });
    expect(list.data.map((o: any) => o.id)).toEqual([a.id, b.id]);
    expect(list.data[0]).toEqual({
      id: a.id,
      number: a.number,
      name: a.name,
      status: 'open',
      expired: false,
      acceptanceMode: 'esignature',
      validUntil: VALID_UNTIL,
      signedAt: null,
      customer: a.customer,
      subscription: { id: a.subscription.id, number: a.subscription.number, status: 'offer' },
    });
    expect(a.customer).toEqual({ id: c.id, customerNumber: c.customerNumber, companyName: 'ACME', firstName: null, lastName: null });
    const full = (await env.http('GET', `/offers/${a.id}`)).body;
    expect(full.customer).toEqual(c);
    const restList = await env.http('GET', `/offers?customer=${c.id}`);
    expect(restList.body.data[0]).toEqual({ ...full, sections: a.sections.map((s: any) => s.id) });
    expect(list.meta.pagination).toEqual({ totalItems: 2, itemsPerPage: 30, currentPage: 1, lastPage: 1, pageTotalItems: 2 });
    expect((await ok(env.mcp, 'list_offers', { customer: c.id, status: 'archived' })).data.map((o: any) => o.id)).toEqual([b.id]);
    expect((await ok(env.mcp, 'list_offers', { customer: c.id, limit: 1, page: 2 })).data.map((o: any) => o.id)).toEqual([b.id]);
    const res = await env.http('GET', `/offers?customer=${c.id}&order[createdAt]=desc`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: any) => o.id)).toEqual([b.id, a.id]);
    expect((await env.http('GET', '/offers?status=pending')).status).toBe(400);
  });
});

describe('accept_offer per acceptance mode', () => {
  it('esignature: signing after the first recipient, signed when every recipient has signed; the subscription goes live', async () => {
    const o = await offer();
    env.setNow('2026-01-16T09:00:00.000Z');
    const signing = await accept(o, 1);
    expect(signing).toMatchObject({ status: 'signing', signedAt: null });
    expect(signing.recipients.map((r: any) => [r.signingStatus, r.signingLog, r.signedAt])).toEqual([
      ['not_started', [], null],
      ['signed', ['2026-01-16T09:00:00.000Z signed (esignature)'], '2026-01-16T09:00:00.000Z'],
    ]);
    expect((await subscriptionOf(o)).status).toBe('offer');
    const again = await fails(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[1].id }, 409);
    expect(again.detail).toContain('already signed');
    expect(again.detail).toContain('jane@example.com');
    env.setNow('2026-01-17T09:00:00.000Z');
    const signed = await accept(o, 0);
    expect(signed).toMatchObject({ status: 'signed', signedAt: '2026-01-17T09:00:00.000Z', updatedAt: '2026-01-17T09:00:00.000Z' });
    expect(signed.recipients.every((r: any) => r.signingStatus === 'signed')).toBe(true);
    expect(signed.subscription).toMatchObject({ status: 'active', activatedAt: '2026-01-17T09:00:00.000Z', startDate: '2026-01-17T09:00:00.000Z' });
    const s = await subscriptionOf(o);
    expect(s.status).toBe('active');
    expect(s.nextBillingDate).not.toBeNull();
    expect(await full(o.id)).toEqual(signed);
  });

  it('esignature with one recipient: signed at once', async () => {
    const o = await offer({ recipients: [recipients[0]] });
    expect((await accept(o)).status).toBe('signed');
  });

  it('click by a customer with an invoice address: signed at once', async () => {
    const c = await customer(true);
    const o = await offer({ acceptanceMode: 'click', customer: c.id });
    const signed = await accept(o, 1);
    expect(signed).toMatchObject({ status: 'signed', signedAt: NOW, subscription: { status: 'active' } });
    expect(signed.recipients[1].signingLog).toEqual([`${NOW} accepted (click)`]);
    expect(signed.recipients[0].signingStatus).toBe('not_started');
  });

  it('click by a customer without an invoice address: awaiting_invoice_details, then invoice-details signs it', async () => {
    const c = await customer(false);
    const o = await offer({ acceptanceMode: 'click', customer: c.id });
    const waiting = await accept(o);
    expect(waiting).toMatchObject({ status: 'awaiting_invoice_details', signedAt: null, subscription: { status: 'offer' } });
    expect(waiting.recipients[0].signingStatus).toBe('signed');
    env.setNow('2026-01-16T00:00:00.000Z');
    const signed = await ok(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: { ...address, companyName: 'ACME' } });
    expect(signed).toMatchObject({ status: 'signed', signedAt: '2026-01-16T00:00:00.000Z', subscription: { status: 'active' } });
    const addresses = await ok(env.mcp, 'list_invoice_addresses', { id: c.id });
    expect(addresses.data).toEqual([expect.objectContaining({ ...address, companyName: 'ACME', default: true })]);
    const rest = await env.http('GET', `/customers/${c.id}/invoice-addresses`);
    expect(rest.body.data).toEqual([expect.objectContaining({ ...address, companyName: 'ACME', default: true, customer: c.id })]);
  });

  it('submit_offer_invoice_details makes the new address the default over an older one, and validates it (422)', async () => {
    const c = await customer(false);
    const o = await offer({ acceptanceMode: 'click', customer: c.id });
    await accept(o);
    const bad = await fails(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: { ...address, countryCode: 'de', zip: ' ' } }, 422);
    expect(paths(bad).sort()).toEqual(['invoiceAddress.countryCode', 'invoiceAddress.zip']);
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).status).toBe('awaiting_invoice_details');
    const older = await ok(env.mcp, 'create_invoice_address', { id: c.id, ...address, city: 'Hamburg' });
    expect(older.default).toBe(true);
    await ok(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: { ...address, city: 'Munich' } });
    const defaults = (await ok(env.mcp, 'list_invoice_addresses', { id: c.id })).data.map((a: any) => [a.city, a.default]);
    expect(defaults).toEqual([
      ['Hamburg', false],
      ['Munich', true],
    ]);
  });

  it('print: the seller records the paper signed by one recipient, and the offer is signed', async () => {
    const o = await offer({ acceptanceMode: 'print' });
    const signed = await accept(o, 1);
    expect(signed).toMatchObject({ status: 'signed', signedAt: NOW, subscription: { status: 'active' } });
    expect(signed.recipients.map((r: any) => r.signingLog)).toEqual([[], [`${NOW} signed on paper (recorded by the seller)`]]);
  });

  it.each(['click', 'esignature', 'print'])('%s with autoActivateSubscription false leaves the subscription draft', async (mode) => {
    const c = await customer(true);
    const o = await offer({ acceptanceMode: mode, customer: c.id, autoActivateSubscription: false, recipients: [recipients[0]] });
    const signed = await accept(o);
    expect(signed.status).toBe('signed');
    expect(signed.subscription).toMatchObject({ status: 'draft', activatedAt: null });
    expect((await ok(env.mcp, 'activate_subscription', { id: o.subscription.id })).status).toBe('active');
  });

  it('rejects a recipient that is not on the offer (422) and changes nothing', async () => {
    const o = await offer();
    const other = await offer();
    const problem = await fails(env.mcp, 'accept_offer', { id: o.id, recipient: other.recipients[0].id }, 422);
    expect(paths(problem)).toEqual(['recipient']);
    expect(problem.detail).toContain(o.recipients[0].id);
    expect(await full(o.id)).toEqual(o);
  });

  it('goes live with its entitlements: the signed subscription is entitled to the active features of its products', async () => {
    const feature = await ok(env.mcp, 'create_feature', { name: 'Offer seats', type: 'quantity', config: [{ value: 10, label: '10 seats' }], status: 'active' });
    await ok(env.mcp, 'create_entitlement', { id: feature.id, product: f.product.id, value: 10 });
    const o = await offer({ recipients: [recipients[0]] });
    expect((await ok(env.mcp, 'list_subscription_entitlements', { id: o.subscription.id })).data).toEqual([]);
    await accept(o);
    const { data } = await ok(env.mcp, 'list_subscription_entitlements', { id: o.subscription.id });
    expect(data.filter((e: any) => e.feature.id === feature.id).map((e: any) => [e.value, e.source])).toEqual([[10, { product: f.product.id }]]);
  });
});

describe('state machine', () => {
  it.each([
    ['signed', 'esignature'],
    ['archived', 'esignature'],
    ['awaiting_invoice_details', 'click'],
  ])('accept from %s is a 409 naming the status', async (status) => {
    const o = await inStatus(status);
    const problem = await fails(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id }, 409);
    expect(problem.detail).toContain(`its status is ${status}`);
  });

  it.each(['click', 'print'])('%s: accept is allowed only while open', async (mode) => {
    const c = await customer(true);
    const o = await offer({ acceptanceMode: mode, customer: c.id });
    await accept(o, 0);
    const problem = await fails(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[1].id }, 409);
    expect(problem.detail).toContain('its status is signed');
    expect(problem.detail).toContain(`acceptanceMode ${mode} can be accepted only while open`);
  });

  it.each(['open', 'signing'])('archive from %s terminates the proposed subscription, which is never billed', async (status) => {
    const o = await inStatus(status);
    env.setNow('2026-01-20T08:00:00.000Z');
    const archived = await ok(env.mcp, 'archive_offer', { id: o.id });
    expect(archived).toMatchObject({ status: 'archived', expired: false });
    expect(archived.subscription.status).toBe('terminated');
    const s = (await env.http('GET', `/subscriptions/${o.subscription.id}`)).body;
    expect(s).toMatchObject({ status: 'terminated', activatedAt: null, nextBillingDate: null, contractDetails: { contractEnd: '2026-01-20T08:00:00.000Z' } });
    expect((await ok(env.mcp, 'run_billing', { subscription: o.subscription.id })).invoices).toEqual([]);
    expect((await fails(env.mcp, 'activate_subscription', { id: o.subscription.id }, 409)).detail).toContain('terminated is final');
  });

  it.each(['awaiting_invoice_details', 'signed', 'archived'])('archive from %s is a 409', async (status) => {
    const o = await inStatus(status);
    const problem = await fails(env.mcp, 'archive_offer', { id: o.id }, 409);
    expect(problem.detail).toContain(`its status is ${status}; archiving is allowed only from open or signing`);
  });

  it.each(['open', 'signing', 'signed', 'archived'])('invoice details from %s is a 409', async (status) => {
    const o = await inStatus(status);
    const problem = await fails(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: address }, 409);
    expect(problem.detail).toContain(`its status is ${status}`);
  });
});

describe('expiry', () => {
  it('an open offer past validUntil shows expired and cannot be accepted; a later validUntil makes it acceptable again', async () => {
    const o = await offer({ acceptanceMode: 'print' });
    env.setNow(VALID_UNTIL);
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).expired).toBe(true);
    const listed = (await ok(env.mcp, 'list_offers', { status: 'open', limit: 100 })).data.find((x: any) => x.id === o.id);
    expect(listed.expired).toBe(true);
    const problem = await fails(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id }, 409);
    expect(problem.detail).toContain(`expired at ${VALID_UNTIL}`);
    expect(paths(await fails(env.mcp, 'update_offer', { id: o.id, validUntil: '2026-02-01T00:00:00Z' }, 422))).toEqual(['validUntil']);
    await ok(env.mcp, 'update_offer', { id: o.id, validUntil: '2026-03-01T00:00:00Z' });
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).expired).toBe(false);
    expect((await accept(o)).status).toBe('signed');
  });

  it('a signing offer past validUntil cannot be completed and can only be archived', async () => {
    const o = await inStatus('signing');
    env.setNow('2026-03-01T00:00:00Z');
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).expired).toBe(true);
    await fails(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id }, 409);
    await fails(env.mcp, 'update_offer', { id: o.id, validUntil: '2026-04-01T00:00:00Z' }, 409);
    expect((await ok(env.mcp, 'archive_offer', { id: o.id })).expired).toBe(false);
  });

  it('an offer accepted in time can get its invoice details after validUntil', async () => {
    const o = await inStatus('awaiting_invoice_details');
    env.setNow('2026-03-01T00:00:00Z');
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).expired).toBe(false);
    expect((await ok(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: address })).status).toBe('signed');
  });
});

describe('update_offer', () => {
  it('changes every field while open, partially, and answers the reduced shape', async () => {
    const o = await offer({ sections: [{ title: 'Keep', content: 'k' }, { title: 'Old', content: 'o' }], customVariables: { a: 1 } });
    env.setNow('2026-01-16T00:00:00.000Z');
    const updated = await ok(env.mcp, 'update_offer', {
      id: o.id,
      name: 'Renamed',
      acceptanceMode: 'click',
      dealType: 'renewal',
      autoActivateSubscription: false,
      validUntil: '2026-03-01T12:00:00+01:00',
      customVariables: { b: 'two' },
    });
    expect(updated).toEqual({
      id: o.id,
      status: 'open',
      acceptanceMode: 'click',
      dealType: 'renewal',
      autoActivateSubscription: false,
      name: 'Renamed',
      validUntil: '2026-03-01T11:00:00.000Z',
      customVariables: { b: 'two' },
    });
    await ok(env.mcp, 'update_offer', {
      id: o.id,
      description: 'New text',
      locale: 'fr',
      sections: [{ title: 'Keep', content: 'k' }, { title: 'New', content: 'n' }],
      crmDealId: 'crm-1',
      contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example', avatar: 'https://seller.example/sam.png' },
    });
    const got = await full(o.id);
    expect(got).toMatchObject({
      ...updated,
      description: 'New text',
      locale: 'fr',
      crmDealId: 'crm-1',
      contactPerson: { firstName: 'Sam', avatar: 'https://seller.example/sam.png' },
      updatedAt: '2026-01-16T00:00:00.000Z',
    });
    expect(got.sections[0]).toEqual(o.sections[0]);
    expect(got.sections[1]).toEqual({ id: expect.any(String), title: 'New', content: 'n', rendered: { title: 'New', content: 'n' } });
    expect(got.sections[1].id).not.toBe(o.sections[1].id);
    await ok(env.mcp, 'update_offer', { id: o.id, description: null, crmDealId: null, contactPerson: null });
    expect(await ok(env.mcp, 'get_offer', { id: o.id })).toMatchObject({ description: null, crmDealId: null, contactPerson: null, name: 'Renamed' });
  });

  it.each(['signing', 'awaiting_invoice_details', 'signed', 'archived'])('in %s only name may change; a frozen field is a 409 naming it', async (status) => {
    const o = await inStatus(status, { sections: [{ title: 'S', content: 'c' }], customVariables: { a: 1, b: true } });
    const renamed = await ok(env.mcp, 'update_offer', { id: o.id, name: 'New name' });
    expect(renamed).toMatchObject({ name: 'New name', status });
    const one = await fails(env.mcp, 'update_offer', { id: o.id, sections: [{ title: 'S', content: 'changed' }] }, 409);
    expect(one.detail).toContain(`is ${status}, so only name may change`);
    expect(one.detail).toContain('frozen field sent with a different value: sections');
    const many = await fails(env.mcp, 'update_offer', { id: o.id, name: 'Other', validUntil: '2026-04-01T00:00:00Z', autoActivateSubscription: false, locale: 'de' }, 409);
    expect(many.detail).toContain('frozen fields sent with a different value: locale, validUntil, autoActivateSubscription');
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).name).toBe('New name');
    for (const field of [
      { description: 'x' },
      { acceptanceMode: 'print' },
      { dealType: 'expansion' },
      { customVariables: { a: 2, b: true } },
      { crmDealId: 'x' },
      { contactPerson: { firstName: 'A', lastName: 'B', email: 'a@b.example' } },
    ]) {
      expect((await fails(env.mcp, 'update_offer', { id: o.id, ...field }, 409)).detail).toContain(Object.keys(field)[0]);
    }
  });

  it('accepts frozen fields sent with their current value after acceptance', async () => {
    const o = await inStatus('signed', { sections: [{ title: 'S', content: 'c' }], customVariables: { a: 1, b: true }, description: 'd' });
    const same = await ok(env.mcp, 'update_offer', {
      id: o.id,
      name: 'Same but renamed',
      sections: [{ title: 'S', content: 'c' }],
      customVariables: { b: true, a: 1 },
      validUntil: '2026-02-15T01:00:00+01:00',
      autoActivateSubscription: true,
      acceptanceMode: 'esignature',
      dealType: 'new_business',
      locale: 'en',
      description: 'd',
      crmDealId: null,
      contactPerson: null,
    });
    expect(same).toMatchObject({ name: 'Same but renamed', status: 'signed' });
  });

  it('answers 200 over HTTP PUT and 404 for an unknown offer', async () => {
    const o = await offer();
    const res = await env.http('PUT', `/offers/${o.id}`, { body: { name: 'Via HTTP' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['acceptanceMode', 'autoActivateSubscription', 'customVariables', 'dealType', 'id', 'name', 'status', 'validUntil']);
    expect((await env.http('PUT', '/offers/01JUNKNOWN0000000000000000', { body: { name: 'x' } })).status).toBe(404);
    expect((await env.http('PUT', `/offers/${o.id}`, { body: { customer: f.customer.id } })).status).toBe(422);
  });
});

describe("an offer's terms once it has left open", () => {
  const terms = (s: any) => ({ periods: s.periods.map((p: any) => [p.contractPeriod, p.cancellationPeriod]), items: s.items.map((i: any) => [i.product.id, i.quantity]) });

  it('signing: ordering products, new periods and an item quantity are 409s naming the offer; name still changes; the second signature signs the original terms', async () => {
    const o = await offer();
    const sub = await subscriptionOf(o);
    const base = sub.items.find((i: any) => i.product.id === f.product.id);
    expect((await accept(o, 0)).status).toBe('signing');

    const order = { id: sub.id, products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id, quantity: 3 }] };
    const refusals = [
      await fails(env.mcp, 'order_subscription_products', order, 409),
      await fails(env.mcp, 'update_subscription', { id: sub.id, periods: [{ contractPeriod: '24M', cancellationPeriod: '1M' }] }, 409),
      await fails(env.mcp, 'update_subscription_item', { id: base.id, quantity: 7 }, 409),
      await fails(env.mcp, 'update_subscription_item', { id: base.id, billingEnd: '2027-01-15T10:00:00Z' }, 409),
    ];
    for (const problem of refusals) {
      expect(problem.detail).toContain(`offer ${o.number}, which is signing`);
      expect(problem.detail).toContain('withdraw the offer (archive_offer) and make a new one (create_offer)');
    }
    expect(refusals[1].detail).toContain('so periods cannot change');
    expect(refusals[2].detail).toContain('quantity cannot change');
    expect(refusals[3].detail).toContain('billingEnd cannot change');
    const http = await env.http('POST', `/subscriptions/${sub.id}/products`, { body: { products: order.products } });
    expect(http.status).toBe(409);

    const renamed = await ok(env.mcp, 'update_subscription', { id: sub.id, periods: yearly, name: 'ACME Pro (renamed)' });
    expect(renamed.name).toBe('ACME Pro (renamed)');
    expect(terms(await subscriptionOf(o))).toEqual(terms(sub));

    const signed = await accept(o, 1);
    expect(signed.status).toBe('signed');
    expect(terms(await subscriptionOf(o))).toEqual(terms(sub));
    const document = await fetch(signed.signedDocument, { headers: { authorization: `Bearer ${env.org.apiKey}` } });
    const text = await pdfText(new Uint8Array(await document.arrayBuffer()));
    expect(text).toContain('Base-offers');
    expect(text).not.toContain('Support-offers');
  });

  it('open: the terms still change; archived: a change is a 409 naming the offer', async () => {
    const o = await offer();
    const sub = await subscriptionOf(o);
    const base = sub.items.find((i: any) => i.product.id === f.product.id);
    expect((await ok(env.mcp, 'update_subscription_item', { id: base.id, quantity: 2 })).quantity).toBe(2);
    await ok(env.mcp, 'update_subscription', { id: sub.id, periods: [{ contractPeriod: '24M', cancellationPeriod: '1M' }] });
    await ok(env.mcp, 'archive_offer', { id: o.id });
    const problem = await fails(env.mcp, 'update_subscription_item', { id: base.id, quantity: 5 }, 409);
    expect(problem.detail).toContain(`offer ${o.number}, which is archived`);
  });
});

describe('HTTP routes, tenancy and permissions', () => {
  it('serves the actions over HTTP with 200', async () => {
    const o = await offer({ recipients: [recipients[0]] });
    const res = await env.http('POST', `/offers/${o.id}/accept`, { body: { recipient: o.recipients[0].id } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('signed');
    const c = await customer(false);
    const w = await offer({ acceptanceMode: 'click', customer: c.id });
    await accept(w);
    const details = await env.http('POST', `/offers/${w.id}/invoice-details`, { body: { invoiceAddress: address } });
    expect(details.status).toBe(200);
    expect(details.body.status).toBe('signed');
    const a = await offer();
    const archived = await env.http('POST', `/offers/${a.id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.status).toBe('archived');
    expect((await env.http('POST', `/offers/${a.id}/archive`)).status).toBe(409);
  });

  it("answers 404 for another organisation's offer, and does not use its customers or plans", async () => {
    const o = await offer();
    const stranger = await env.mcpFor((await env.newOrg()).apiKey);
    await fails(stranger, 'get_offer', { id: o.id }, 404);
    await fails(stranger, 'update_offer', { id: o.id, name: 'x' }, 404);
    await fails(stranger, 'accept_offer', { id: o.id, recipient: o.recipients[0].id }, 404);
    await fails(stranger, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: address }, 404);
    await fails(stranger, 'archive_offer', { id: o.id }, 404);
    expect((await ok(stranger, 'list_offers', {})).data).toEqual([]);
    expect(paths(await fails(stranger, 'create_offer', offerArgs(), 422))).toEqual(['customer']);
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).status).toBe('open');
  });

  it('answers 403 to a key with offer:read only, and hides the write tools', async () => {
    const o = await offer();
    const token = await env.newKey(env.org, ['offer:read']);
    expect((await env.http('GET', `/offers/${o.id}`, { token })).status).toBe(200);
    expect((await env.http('GET', '/offers', { token })).status).toBe(200);
    expect((await env.http('POST', '/offers', { token, body: offerArgs() })).status).toBe(403);
    expect((await env.http('PUT', `/offers/${o.id}`, { token, body: { name: 'x' } })).status).toBe(403);
    expect((await env.http('POST', `/offers/${o.id}/accept`, { token, body: { recipient: o.recipients[0].id } })).status).toBe(403);
    expect((await env.http('POST', `/offers/${o.id}/archive`, { token })).status).toBe(403);
    const client = await env.mcpFor(token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_offer', 'list_offers']));
    expect(names).not.toContain('accept_offer');
    await fails(client, 'accept_offer', { id: o.id, recipient: o.recipients[0].id }, 403);
    const none = await env.newKey(env.org, ['customer:read']);
    expect((await env.http('GET', '/offers', { token: none })).status).toBe(403);
  });

  it('replays an accept with the same idempotency key without a second effect', async () => {
    const o = await offer();
    const headers = { 'idempotency-key': `accept-${o.id}` };
    const first = await env.http('POST', `/offers/${o.id}/accept`, { body: { recipient: o.recipients[0].id }, headers });
    const second = await env.http('POST', `/offers/${o.id}/accept`, { body: { recipient: o.recipients[0].id }, headers });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(first.body.status).toBe('signing');
  });
});

describe('customVariables in the sections (issue 17)', () => {
  it('fills {{ name }} placeholders in title and content on every read, keeps the text as written, and formats numbers for the locale', async () => {
    const o = await offer({
      locale: 'de-DE',
      sections: [{ title: 'Hallo {{name}}', content: 'Rabatt: {{ discount }} % auf {{seats}} Plätze, Vorrang: {{priority}}. *{{name}}*' }],
      customVariables: { name: 'ACME $& Co', discount: 12.5, seats: 1200, priority: true },
    });
    const rendered = { title: 'Hallo ACME $& Co', content: 'Rabatt: 12,5 % auf 1.200 Plätze, Vorrang: true. *ACME $& Co*' };
    expect(o.sections[0]).toMatchObject({ title: 'Hallo {{name}}', content: 'Rabatt: {{ discount }} % auf {{seats}} Plätze, Vorrang: {{priority}}. *{{name}}*', rendered });
    // MCP shows the text as written, once; REST beside it as rendered.
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).sections[0]).toEqual({ id: o.sections[0].id, title: 'Hallo {{name}}', content: o.sections[0].content });
    expect((await env.http('GET', `/offers/${o.id}`)).body.sections[0].rendered).toEqual(rendered);
    await ok(env.mcp, 'update_offer', { id: o.id, locale: 'en', customVariables: { name: 'Initech', discount: 12.5, seats: 1200, priority: false } });
    expect((await full(o.id)).sections[0].rendered).toEqual({
      title: 'Hallo Initech',
      content: 'Rabatt: 12.5 % auf 1,200 Plätze, Vorrang: false. *Initech*',
    });
  });

  it('an unknown placeholder is a 422 at create and update naming the section field and the placeholder', async () => {
    const created = await fails(env.mcp, 'create_offer', offerArgs({ sections: [{ title: 'Hi', content: 'Dear {{ company }}, {{x.y}}' }], customVariables: { name: 'A' } }), 422);
    expect(paths(created)).toEqual(['sections[0].content', 'sections[0].content']);
    expect(created.violations[0].message).toBe('sections[0].content uses the placeholder {{ company }}, but customVariables has no "company"; add it to customVariables or remove the placeholder (defined: name)');
    expect(created.violations[1].message).toMatch(/^sections\[0\]\.content contains \{\{x\.y\}\}, which is no placeholder/);
    const o = await offer({ sections: [{ title: 'Hi {{name}}', content: '' }], customVariables: { name: 'A' } });
    const sent = await fails(env.mcp, 'update_offer', { id: o.id, sections: [{ title: 'Hi {{who}}', content: '' }] }, 422);
    expect(paths(sent)).toEqual(['sections[0].title']);
    const removed = await env.http('PUT', `/offers/${o.id}`, { body: { customVariables: {} } });
    expect(removed.status).toBe(422);
    expect(removed.body.violations).toEqual([
      {
        propertyPath: 'customVariables',
        code: 'unknown_placeholder',
        message: 'sections[0].title uses the placeholder {{name}}, but customVariables has no "name"; keep it in customVariables or change the section (defined: none)',
      },
    ]);
    expect((await ok(env.mcp, 'update_offer', { id: o.id, name: 'Still fine' })).name).toBe('Still fine');
  });
});

describe('invoice details with a VAT id (issue 17)', () => {
  it('a malformed vatId is a 422 at invoiceAddress.vatId and leaves the offer waiting; a valid one is stored in one form', async () => {
    const o = await inStatus('awaiting_invoice_details');
    const bad = await fails(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: { ...address, vatId: 'DE123456789' } }, 422);
    expect(paths(bad)).toEqual(['invoiceAddress.vatId']);
    expect(bad.violations[0].message).toMatch(/^invoiceAddress\.vatId must be a VAT id of DE: DE \+ 9 digits/);
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).status).toBe('awaiting_invoice_details');
    expect((await ok(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: { ...address, vatId: 'DE 136 695 976' } })).status).toBe('signed');
    expect((await ok(env.mcp, 'list_invoice_addresses', { id: o.customer.id })).data[0].vatId).toBe('DE136695976');
  });
});

describe('prices on the offer page follow showPricePerInterval', () => {
  it('shows a flat price per the interval asked for, beside the billed amount; months against weeks keep the billed amount', async () => {
    const charges = [];
    for (const [name, amount, billingInterval, showPricePerInterval] of [
      ['Yearly licence', 120, '1Y', '1M'],
      ['Quarterly support', 100, '3M', '1M'],
      ['Weekly hosting', 7, '1W', '1M'],
      ['Monthly seat', 5, '1M', '1M'],
    ] as const) {
      const product = await ok(env.mcp, 'create_product', { name });
      const price = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount }, billingInterval, showPricePerInterval });
      charges.push({ product: product.id, pricePlan: price.id });
    }
    const plan = await ok(env.mcp, 'create_plan', { code: 'shown-per-month', name: 'Shown per month', charges });
    const o = await offer({ subscription: { plan: plan.id, periods: yearly } });
    const page = await (await fetch(o.recipients[0].link)).text();
    expect(page).toContain('€10.00 per month (€120.00 per year)');
    expect(page).toContain('€33.33 per month (€100.00 per 3 months)');
    expect(page).toContain('€7.00 per week');
    expect(page).not.toContain('per month (€7.00 per week)');
    expect(page).toContain('€5.00 per month');
    expect(page).not.toContain('(€5.00 per month)');
  });
});
