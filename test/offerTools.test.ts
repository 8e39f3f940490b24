/**
 * The offer tools as a model meets them: errors that say what is allowed, compact results (REST keeps
 * the full offer), and a contact person's picture that can only be an https URL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildFixture, type Fixture } from './fixtures.js';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let f: Fixture;
const NOW = '2026-01-15T10:00:00.000Z';
const VALID_UNTIL = '2026-02-15T00:00:00.000Z';
const address = { street: 'Friedrichstraße', houseNumber: '12', zip: '10117', city: 'Berlin', countryCode: 'DE' };
const recipients = [
  { email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' },
  { email: 'john@example.com', firstName: 'John', lastName: 'Roe' },
];

beforeAll(async () => {
  env = await setup();
  env.setNow(NOW);
  f = await buildFixture(env.mcp, '-offer-tools');
  // The client validates each structuredContent against the outputSchema it has listed.
  const tools = (await env.mcp.listTools()).tools.filter((t) => t.name.endsWith('_offer') || t.name === 'submit_offer_invoice_details');
  expect(tools.every((t) => t.outputSchema !== undefined)).toBe(true);
});
afterAll(() => env.close());
beforeEach(() => env.setNow(NOW));

function offerArgs(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customer: f.customer.id,
    acceptanceMode: 'esignature',
    name: 'Pro for ACME',
    recipients,
    validUntil: VALID_UNTIL,
    subscription: { plan: f.plan.id, periods: [{ contractPeriod: '12M', cancellationPeriod: '3M' }] },
    ...extra,
  };
}

/** The one violation of a 422 from create_offer with these fields: [path, message]. */
async function violation(extra: Record<string, unknown>): Promise<[string, string]> {
  const problem = await fails(env.mcp, 'create_offer', offerArgs(extra), 422);
  expect(problem.violations).toHaveLength(1);
  return [problem.violations[0].propertyPath, problem.violations[0].message];
}

describe('errors that say what is allowed', () => {
  const VALUE = 'must be a string of at most 1000 characters, a number or a boolean; not an object, array or null';
  const NAME = 'is not a valid variable name: use 1 to 64 of A-Z, a-z, 0-9 and _, not starting with a digit, e.g. seat_count';

  it.each([
    ['an object', { b: 1 }],
    ['null', null],
    ['an array', [1]],
  ])('a customVariables value that is %s names the value types', async (_, value) => {
    expect(await violation({ customVariables: { a: value } })).toEqual(['customVariables.a', `customVariables.a ${VALUE}`]);
  });

  it('a too long customVariables string names its limit', async () => {
    expect(await violation({ customVariables: { a: 'x'.repeat(1001) } })).toEqual(['customVariables.a', 'customVariables.a must be at most 1000 characters']);
  });

  it.each(['1a', 'a b', 'x'.repeat(65)])('a customVariables name %s names the rule for names', async (key) => {
    expect(await violation({ customVariables: { [key]: 'x' } })).toEqual([`customVariables.${key}`, `customVariables.${key} ${NAME}`]);
  });

  it('says the same on update_offer and over REST', async () => {
    const o = await ok(env.mcp, 'create_offer', offerArgs());
    const updated = await fails(env.mcp, 'update_offer', { id: o.id, customVariables: { '2x': 1, ok: { no: true } } }, 422);
    expect(updated.violations.map((v: any) => v.message).sort()).toEqual([`customVariables.2x ${NAME}`, `customVariables.ok ${VALUE}`]);
    const rest = await env.http('POST', '/offers', { body: offerArgs({ customVariables: { a: null } }) });
    expect(rest.status).toBe(422);
    expect(rest.body.violations).toEqual([{ propertyPath: 'customVariables.a', message: `customVariables.a ${VALUE}`, code: 'invalid_union' }]);
  });

  it.each([
    ['300 characters long', 'r'.repeat(300)],
    ['empty', ''],
  ])('an accept_offer recipient %s says it must be a recipient id of the offer', async (_, recipient) => {
    const o = await ok(env.mcp, 'create_offer', offerArgs());
    const problem = await fails(env.mcp, 'accept_offer', { id: o.id, recipient }, 422);
    expect(paths(problem)).toEqual(['recipient']);
    expect(problem.violations[0].message).toBe("recipient must be the id of one of the offer's recipients (its recipients[].id): 1 to 255 characters");
  });
});

describe("the contact person's avatar", () => {
  const HTTPS = 'contactPerson.avatar must be an https URL of a picture, e.g. https://example.com/sam.png';
  const person = (avatar: string) => ({ contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example', avatar } });

  it.each(['javascript:alert(1)', 'data:image/png;base64,iVBORw0KGgo=', 'http://seller.example/sam.png', 'https:seller.example/sam.png', 'ftp://seller.example/sam.png', 'sam.png'])(
    'refuses %s (422 saying https)',
    async (avatar) => {
      expect(await violation(person(avatar))).toEqual(['contactPerson.avatar', HTTPS]);
    },
  );

  it('shows the rule in the input schema of create_offer and update_offer: a pattern, no format beside it', async () => {
    const { tools } = await env.mcp.listTools();
    for (const name of ['create_offer', 'update_offer']) {
      const contactPerson = (tools.find((t) => t.name === name)!.inputSchema.properties as any).contactPerson;
      const avatar = contactPerson.anyOf.find((b: any) => b.type === 'object').properties.avatar;
      expect(avatar.anyOf.find((b: any) => b.type === 'string')).toEqual({ type: 'string', maxLength: 2048, pattern: '^https:\\/\\/' });
    }
  });

  it('takes an https URL, and update_offer and REST refuse another scheme as create_offer does', async () => {
    const o = await ok(env.mcp, 'create_offer', offerArgs(person('https://seller.example/sam.png')));
    expect((await ok(env.mcp, 'get_offer', { id: o.id })).contactPerson.avatar).toBe('https://seller.example/sam.png');
    const updated = await fails(env.mcp, 'update_offer', { id: o.id, ...person('javascript:alert(1)') }, 422);
    expect(updated.violations).toEqual([{ propertyPath: 'contactPerson.avatar', message: HTTPS, code: 'invalid_format' }]);
    const rest = await env.http('POST', '/offers', { body: offerArgs(person('JavaScript:alert(1)')) });
    expect(rest.status).toBe(422);
    expect(rest.body.violations).toEqual([{ propertyPath: 'contactPerson.avatar', message: HTTPS, code: 'invalid_format' }]);
    expect((await env.http('GET', `/offers/${o.id}`)).body.contactPerson.avatar).toBe('https://seller.example/sam.png');
  });
});

describe('compact offer results', () => {
  /** Two sections of 8,000 characters each, with a placeholder. */
  const long = {
    sections: [
      { title: 'Scope for {{company}}', content: `Scope for {{company}}. ${'a'.repeat(8000)}` },
      { title: 'Terms', content: 'b'.repeat(8000) },
    ],
    customVariables: { company: 'ACME' },
  };
  const customerRef = () => ({ id: f.customer.id, customerNumber: f.customer.customerNumber, companyName: f.customer.companyName, firstName: f.customer.firstName, lastName: f.customer.lastName });
  /** What the model reads of a call: the text content (summary line and JSON). */
  const size = async (name: string, args: Record<string, unknown>) => (await call(env.mcp, name, args)).text.length;

  it('create_offer answers the offer by reference: recipients with id and page, sections by title, no text echoed', async () => {
    const o = await ok(env.mcp, 'create_offer', offerArgs({ ...long, acceptanceMode: 'click' }));
    expect(o).toEqual({
      id: expect.any(String),
      number: expect.stringMatching(/^OFF-\d{6}$/),
      name: 'Pro for ACME',
      status: 'open',
      expired: false,
      acceptanceMode: 'click',
      validUntil: VALID_UNTIL,
      signedAt: null,
      customer: customerRef(),
      subscription: { id: expect.any(String), number: expect.stringMatching(/^SUB-/), status: 'offer' },
      dealType: 'new_business',
      locale: 'en',
      autoActivateSubscription: true,
      recipients: recipients.map((r) => ({ id: expect.any(String), ...r, link: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/pages\/offers\//) })),
      sections: [
        { id: expect.any(String), title: 'Scope for {{company}}' },
        { id: expect.any(String), title: 'Terms' },
      ],
    });
    expect(await size('create_offer', offerArgs(long))).toBeLessThan(2_000);
  });

  it('get_offer shows each section once, as written, and recipients without the derivable signedDocument; REST keeps the full offer', async () => {
    const o = await ok(env.mcp, 'create_offer', offerArgs({ ...long, recipients: [recipients[0]] }));
    await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id });
    const got = await ok(env.mcp, 'get_offer', { id: o.id });
    expect(got.sections).toEqual(long.sections.map((s, i) => ({ id: o.sections[i].id, ...s })));
    expect(got.recipients).toEqual([
      {
        ...o.recipients[0],
        createdAt: NOW,
        signingStatus: 'signed',
        signingLog: [`${NOW} signed (esignature)`],
        signedAt: NOW,
      },
    ]);
    expect(got).toMatchObject({ status: 'signed', customVariables: { company: 'ACME' }, signedDocument: `${env.url}/offers/${o.id}/signed-document` });
    expect(await size('get_offer', { id: o.id })).toBeLessThan(16_000 + 3_000);

    const rest = (await env.http('GET', `/offers/${o.id}`)).body;
    expect(rest.sections[0].rendered).toEqual({ title: 'Scope for ACME', content: `Scope for ACME. ${'a'.repeat(8000)}` });
    expect(rest.recipients[0].signedDocument).toBe(`${o.recipients[0].link}/signed.pdf`);
    expect(rest.customer).toEqual(f.customer);
  });

  it('accept_offer answers the state: status, the subscription, each recipient signing status, the signed PDF', async () => {
    const o = await ok(env.mcp, 'create_offer', offerArgs(long));
    env.setNow('2026-01-16T09:00:00.000Z');
    const signing = await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[1].id });
    const state = {
      id: o.id,
      number: o.number,
      name: 'Pro for ACME',
      expired: false,
      acceptanceMode: 'esignature',
      validUntil: VALID_UNTIL,
      customer: customerRef(),
    };
    expect(signing).toEqual({
      ...state,
      status: 'signing',
      signedAt: null,
      subscription: { ...o.subscription, startDate: null, activatedAt: null },
      recipients: [
        { id: o.recipients[0].id, email: 'jane@example.com', signingStatus: 'not_started', signedAt: null },
        { id: o.recipients[1].id, email: 'john@example.com', signingStatus: 'signed', signedAt: '2026-01-16T09:00:00.000Z' },
      ],
      signedDocument: null,
    });
    env.setNow('2026-01-17T09:00:00.000Z');
    const text = (await call(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id })).text;
    expect(text.length).toBeLessThan(1_500);
    const signed = JSON.parse(text.slice(text.indexOf('\n') + 1));
    expect(signed).toMatchObject({
      ...state,
      status: 'signed',
      signedAt: '2026-01-17T09:00:00.000Z',
      subscription: { status: 'active', startDate: '2026-01-17T09:00:00.000Z', activatedAt: '2026-01-17T09:00:00.000Z' },
      signedDocument: `${env.url}/offers/${o.id}/signed-document`,
    });
    expect(signed.recipients.map((r: any) => r.signingStatus)).toEqual(['signed', 'signed']);
    const rest = (await env.http('GET', `/offers/${o.id}`)).body;
    expect(rest.sections).toHaveLength(2);
    expect(rest.sections[1]).toMatchObject({ content: 'b'.repeat(8000), rendered: { content: 'b'.repeat(8000) } });
  });

  it('submit_offer_invoice_details and archive_offer answer the same state; REST answers the full offer', async () => {
    const c = await ok(env.mcp, 'create_customer', { companyName: 'No address yet' });
    const o = await ok(env.mcp, 'create_offer', offerArgs({ ...long, customer: c.id, acceptanceMode: 'click' }));
    expect((await ok(env.mcp, 'accept_offer', { id: o.id, recipient: o.recipients[0].id })).status).toBe('awaiting_invoice_details');
    const details = await call(env.mcp, 'submit_offer_invoice_details', { id: o.id, invoiceAddress: address });
    expect(details.text.length).toBeLessThan(1_500);
    expect(Object.keys(details.body).sort()).toEqual(
      ['acceptanceMode', 'customer', 'expired', 'id', 'name', 'number', 'recipients', 'signedAt', 'signedDocument', 'status', 'subscription', 'validUntil'],
    );
    expect(details.body).toMatchObject({ status: 'signed', subscription: { status: 'active' }, recipients: [{ signingStatus: 'signed' }, { signingStatus: 'not_started' }] });

    const other = await ok(env.mcp, 'create_offer', offerArgs(long));
    const archived = await call(env.mcp, 'archive_offer', { id: other.id });
    expect(archived.text.length).toBeLessThan(1_500);
    expect(archived.body).toEqual({
      id: other.id,
      number: other.number,
      name: 'Pro for ACME',
      status: 'archived',
      expired: false,
      acceptanceMode: 'esignature',
      validUntil: VALID_UNTIL,
      signedAt: null,
      customer: customerRef(),
      subscription: { ...other.subscription, status: 'terminated', startDate: null, activatedAt: null },
      recipients: other.recipients.map((r: any) => ({ id: r.id, email: r.email, signingStatus: 'not_started', signedAt: null })),
      signedDocument: null,
    });

    const third = await ok(env.mcp, 'create_offer', offerArgs(long));
    const rest = await env.http('POST', `/offers/${third.id}/archive`);
    expect(rest.body.sections.map((s: any) => s.rendered.title)).toEqual(['Scope for ACME', 'Terms']);
    expect(rest.body.recipients[0]).toHaveProperty('signingLog');
  });
});

describe('an offer named by its number', () => {
  it('every offer tool and route takes the number (OFF-…) where it takes the id', async () => {
    const created = await ok(env.mcp, 'create_offer', offerArgs({ acceptanceMode: 'click', recipients: [recipients[0]] }));
    expect((await ok(env.mcp, 'get_offer', { id: created.number })).id).toBe(created.id);
    expect((await ok(env.mcp, 'update_offer', { id: created.number, name: 'By number' })).name).toBe('By number');
    expect((await env.http('GET', `/offers/${created.number}`)).body.id).toBe(created.id);
    expect((await ok(env.mcp, 'accept_offer', { id: created.number, recipient: created.recipients[0].id })).status).toBe('awaiting_invoice_details');
    expect((await ok(env.mcp, 'submit_offer_invoice_details', { id: created.number, invoiceAddress: address })).status).toBe('signed');
    const document = await ok(env.mcp, 'get_offer_signed_document', { id: created.number });
    expect(document).toMatchObject({ offer: created.id, number: created.number });
    expect((await fails(env.mcp, 'get_offer', { id: 'OFF-999999' }, 404)).detail).toBe('Offer OFF-999999 was not found; list_offers shows the ids');
  });
});
