import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultInvoiceAddress,
  defaultPaymentMethod,
  getInvoiceAddress,
  getPaymentMethod,
} from '../src/domain/billingDetails.js';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

const NOW = '2026-10-15T12:00:00.000Z';
const IBAN = 'DE89370400440532013000';
const MASKED = 'DE89**************3000';
const address = { street: 'Friedrichstraße', zip: '10117', city: 'Berlin', countryCode: 'DE' };
const sepa = { type: 'sepa_debit', sepaDebit: { iban: IBAN, accountHolder: 'Ada Lovelace' } };
const card = { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2028 } };
const paypal = { type: 'paypal', paypal: { email: 'payer@example.com' } };

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
beforeEach(() => env.setNow(NOW));
afterAll(() => env.close());

async function newCustomer(client: Client = env.mcp): Promise<string> {
  return (await ok(client, 'create_customer', { companyName: 'Billing Details GmbH' })).id;
}

const defaults = (list: { data: Array<{ id: string; default: boolean }> }) =>
  list.data.filter((x) => x.default).map((x) => x.id);

describe('invoice addresses', () => {
  it('creates an address with its defaults; the first becomes the default', async () => {
    const customer = await newCustomer();
    const a = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address });
    expect(a).toEqual({
      id: expect.any(String),
      customer,
      vatId: null,
      type: 'TYPE_DEFAULT',
      default: true,
      status: 'STATUS_ACTIVE',
      city: 'Berlin',
      zip: '10117',
      street: 'Friedrichstraße',
      houseNumber: null,
      countryCode: 'DE',
      companyName: null,
      salutation: null,
      addition: null,
      costCentre: null,
      firstName: null,
      lastName: null,
      createdAt: NOW,
      updatedAt: NOW,
    });
    const full = {
      type: 'TYPE_BILLING',
      vatId: 'DE136695976',
      houseNumber: '12a',
      companyName: 'Acme',
      salutation: 'Dr',
      addition: 'c/o Accounts',
      costCentre: 'CC-7',
      firstName: 'Grace',
      lastName: 'Hopper',
    };
    const b = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address, ...full });
    expect(b).toMatchObject({ ...full, default: false, customer });
    expect((await ok(env.mcp, 'list_invoice_addresses', { id: customer })).data).toEqual([a, b]);
    expect((await env.http('GET', `/customers/${customer}/invoice-addresses`)).body.data).toEqual([a, b]);
  });

  it('makes the first address the default even when default false is sent', async () => {
    const customer = await newCustomer();
    expect((await ok(env.mcp, 'create_invoice_address', { id: customer, ...address, default: false })).default).toBe(true);
  });

  it('keeps one default: a new default clears the previous one, for this customer only', async () => {
    const customer = await newCustomer();
    const other = await newCustomer();
    const otherDefault = await ok(env.mcp, 'create_invoice_address', { id: other, ...address });
    const first = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address });
    const plain = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address, city: 'Hamburg' });
    expect(plain.default).toBe(false);
    expect(defaults(await ok(env.mcp, 'list_invoice_addresses', { id: customer }))).toEqual([first.id]);
    env.setNow('2026-10-16T08:00:00Z');
    const second = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address, city: 'Köln', default: true });
    const list = await ok(env.mcp, 'list_invoice_addresses', { id: customer });
    expect(defaults(list)).toEqual([second.id]);
    expect(list.data[0]).toMatchObject({ id: first.id, default: false });
    const rest = await env.http('GET', `/customers/${customer}/invoice-addresses`);
    expect(rest.body.data[0]).toMatchObject({ id: first.id, default: false, updatedAt: '2026-10-16T08:00:00.000Z' });
    expect(defaults(await ok(env.mcp, 'list_invoice_addresses', { id: other }))).toEqual([otherDefault.id]);
  });

  it.each(['street', 'zip', 'city', 'countryCode'])('requires %s', async (field) => {
    const customer = await newCustomer();
    const { [field]: _omitted, ...rest } = address as Record<string, string>;
    expect(paths(await fails(env.mcp, 'create_invoice_address', { id: customer, ...rest }, 422))).toEqual([field]);
  });

  it.each(['street', 'zip', 'city'])('rejects an empty or blank %s', async (field) => {
    const customer = await newCustomer();
    for (const value of ['', '   ']) {
      const p = await fails(env.mcp, 'create_invoice_address', { id: customer, ...address, [field]: value }, 422);
      expect(paths(p)).toEqual([field]);
    }
  });

  it.each(['de', 'DEU', 'UK', 'EL', 'XX', ''])('rejects countryCode %j', async (countryCode) => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_invoice_address', { id: customer, ...address, countryCode }, 422);
    expect(paths(p)).toEqual(['countryCode']);
    expect(p.violations[0].message).toContain('ISO 3166-1 alpha-2');
  });

  it.each([
    'street',
    'zip',
    'city',
    'houseNumber',
    'companyName',
    'salutation',
    'addition',
    'costCentre',
    'firstName',
    'lastName',
  ])('rejects %s over 255 characters and accepts 255', async (field) => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_invoice_address', { id: customer, ...address, [field]: 'x'.repeat(256) }, 422);
    expect(paths(p)).toEqual([field]);
    const a = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address, [field]: 'y'.repeat(255) });
    expect(a[field]).toHaveLength(255);
  });

  it('rejects an unknown type and unknown fields', async () => {
    const customer = await newCustomer();
    expect(paths(await fails(env.mcp, 'create_invoice_address', { id: customer, ...address, type: 'TYPE_SHIPPING' }, 422))).toEqual([
      'type',
    ]);
    const p = await fails(env.mcp, 'create_invoice_address', { id: customer, ...address, country: 'DE' }, 422);
    expect(p.violations[0].message).toContain("'country'");
  });

  it('answers 201 with Location over HTTP, and lists over HTTP', async () => {
    const customer = await newCustomer();
    const res = await env.http('POST', `/customers/${customer}/invoice-addresses`, { body: address });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/customers/${customer}/invoice-addresses/${res.body.id}`);
    expect(res.body).toMatchObject({ ...address, customer, default: true });
    expect(await env.http('GET', res.headers.get('location')!)).toMatchObject({ status: 200, body: res.body });
    expect(await ok(env.mcp, 'get_invoice_address', { id: customer, addressId: res.body.id })).toEqual(res.body);
    await fails(env.mcp, 'get_invoice_address', { id: await newCustomer(), addressId: res.body.id }, 404);
    const list = await env.http('GET', `/customers/${customer}/invoice-addresses?limit=1`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([res.body]);
    expect(list.body.meta.pagination).toMatchObject({ totalItems: 1, itemsPerPage: 1 });
    const bad = await env.http('POST', `/customers/${customer}/invoice-addresses`, { body: { ...address, zip: '' } });
    expect(bad.status).toBe(422);
    expect(paths(bad.body)).toEqual(['zip']);
  });
});

/** An organisation of its own that collects by SEPA direct debit (its creditor is set), and its client. */
async function sepaOrg(name = 'Direct debit GmbH'): Promise<Client> {
  const mcp = await env.mcpFor((await env.newOrg(name)).apiKey);
  await ok(mcp, 'update_sepa_creditor', { creditorIdentifier: 'DE98ZZZ09999999999', name, iban: 'DE02120300000000202051' });
  return mcp;
}

describe('payment methods: SEPA direct debit', () => {
  it('stores the IBAN normalised and shows it masked in create, list and the MCP text', async () => {
    const customer = await newCustomer();
    const r = await call(env.mcp, 'create_payment_method', {
      id: customer,
      type: 'sepa_debit',
      name: 'Company account',
      sepaDebit: {
        iban: 'de89 3704 0044 0532 0130 00',
        bic: 'COBADEFFXXX',
        accountHolder: 'Ada Lovelace',
      },
    });
    expect(r.isError).toBe(false);
    const m = r.body;
    expect(m).toEqual({
      id: expect.any(String),
      customer,
      gatewayName: 'manual',
      type: 'sepa_debit',
      default: true,
      enabled: true,
      status: 'active',
      name: 'Company account',
      creationDate: NOW,
      expirationDate: null,
      card: null,
      sepaDebit: {
        iban: MASKED,
        bic: 'COBADEFFXXX',
        mandateReference: null,
        signingDate: null,
        accountHolder: 'Ada Lovelace',
      },
      paypal: null,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(r.text).toContain(MASKED);
    expect(r.text).not.toContain(IBAN);
    expect(r.text).not.toContain('0532');

    const list = await call(env.mcp, 'list_payment_methods', { id: customer });
    expect(list.body.data).toEqual([m]);
    expect(list.body.data[0].sepaDebit.iban).toBe(MASKED);
    expect(list.text).toContain(MASKED);
    expect(list.text).not.toContain('0532');
    expect((await env.http('GET', `/customers/${customer}/payment-methods`)).body.data).toEqual([m]);

    const stored = await env.app.store.read((tx) => tx.billingDetails.sepaIban(env.org.organisationId, m.id));
    expect(stored).toBe(IBAN);
    const other = await env.newOrg();
    expect(await env.app.store.read((tx) => tx.billingDetails.sepaIban(other.organisationId, m.id))).toBeUndefined();
  });

  it('never shows the full IBAN over HTTP, in create, list or Idempotency-Key replays', async () => {
    const customer = await newCustomer();
    const body = { type: 'sepa_debit', sepaDebit: { iban: 'GB82 WEST 1234 5698 7654 32', accountHolder: 'Alan Turing' } };
    const headers = { 'idempotency-key': `sepa-${customer}` };
    const res = await env.http('POST', `/customers/${customer}/payment-methods`, { body, headers });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/customers/${customer}/payment-methods/${res.body.id}`);
    expect(res.body.sepaDebit.iban).toBe('GB82**************5432');
    expect(await env.http('GET', res.headers.get('location')!)).toMatchObject({ status: 200, body: res.body });
    await fails(env.mcp, 'get_payment_method', { id: await newCustomer(), paymentMethodId: res.body.id }, 404);
    const replay = await env.http('POST', `/customers/${customer}/payment-methods`, { body, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(res.body);
    const list = await env.http('GET', `/customers/${customer}/payment-methods`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([res.body]);
    for (const json of [res.body, replay.body, list.body].map((b) => JSON.stringify(b))) {
      expect(json).not.toContain('12345698765432');
    }
  });

  it.each([
    ['DE89370400440532013001', /mod-97/],
    ['DE8937040044053201300', /22 characters for country DE/],
    ['XX89370400440532013000', /'XX' is not one/],
    ['DEAB370400440532013000', /two check digits/],
    ['DE89_3704_0044_0532_0130_00', /only letters/],
  ])('rejects the IBAN %s at sepaDebit.iban, without repeating it', async (iban, message) => {
    const customer = await newCustomer();
    const r = await call(env.mcp, 'create_payment_method', { id: customer, type: 'sepa_debit', sepaDebit: { iban, accountHolder: 'X' } });
    expect(r.isError).toBe(true);
    expect(r.body.status).toBe(422);
    expect(paths(r.body)).toEqual(['sepaDebit.iban']);
    expect(r.body.violations[0].message).toMatch(message);
    expect(r.body.violations[0].message).toMatch(/^sepaDebit\.iban /);
    expect(r.text).not.toContain(iban.slice(4, 14));
    expect((await ok(env.mcp, 'list_payment_methods', { id: customer })).data).toEqual([]);
  });

  it.each(['COBADEFFXXX', 'COBADEFF', 'DEUTDE2H', 'NWBKGB2L123'])('accepts the BIC %s', async (bic) => {
    const customer = await newCustomer();
    const m = await ok(env.mcp, 'create_payment_method', { id: customer, ...sepa, sepaDebit: { ...sepa.sepaDebit, bic } });
    expect(m.sepaDebit.bic).toBe(bic);
  });

  it.each(['COBADEF', 'COBADEFFX', 'COBADEFFXX', 'cobadeffxxx', 'C0BADEFF', 'COBA1EFF', 'COBADEFFXXXX', 'COBADE1F', 'COBADEFO'])(
    'rejects the BIC %s',
    async (bic) => {
      const customer = await newCustomer();
      const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...sepa, sepaDebit: { ...sepa.sepaDebit, bic } }, 422);
      expect(paths(p)).toEqual(['sepaDebit.bic']);
    },
  );

  it('accepts a mandate reference of 35 SEPA characters and rejects others', async () => {
    const mcp = await sepaOrg();
    const customer = await newCustomer(mcp);
    const longest = 'A'.repeat(35);
    const signingDate = '2026-10-01';
    const m = await ok(mcp, 'create_payment_method', { id: customer, ...sepa, sepaDebit: { ...sepa.sepaDebit, mandateReference: longest, signingDate } });
    expect(m.sepaDebit.mandateReference).toBe(longest);
    for (const mandateReference of ['', 'A'.repeat(36), 'MANDAT-Ü1', 'REF_1', 'REF#1', 'REF&1', 'bad ref with spaces']) {
      const p = await fails(
        mcp,
        'create_payment_method',
        { id: customer, ...sepa, sepaDebit: { ...sepa.sepaDebit, mandateReference, signingDate } },
        422,
      );
      expect(paths(p)).toEqual(['sepaDebit.mandateReference']);
    }
  });

  it('requires an account holder and the IBAN, and takes signingDate as a calendar date', async () => {
    const customer = await newCustomer();
    const create = (sepaDebit: Record<string, unknown>) =>
      fails(env.mcp, 'create_payment_method', { id: customer, type: 'sepa_debit', sepaDebit }, 422);
    expect(paths(await create({ iban: IBAN }))).toEqual(['sepaDebit.accountHolder']);
    expect(paths(await create({ iban: IBAN, accountHolder: '  ' }))).toEqual(['sepaDebit.accountHolder']);
    expect(paths(await create({ accountHolder: 'X' }))).toEqual(['sepaDebit.iban']);
    for (const signingDate of ['2026-13-01', '2026-02-30', '2026-10-01T00:00:00Z', '01.10.2026']) {
      expect(paths(await create({ iban: IBAN, accountHolder: 'X', signingDate }))).toEqual(['sepaDebit.signingDate']);
    }
  });
});

describe('payment methods: SEPA direct debit takes IBANs of SEPA countries only', () => {
  it.each([
    ['BR1800360305000010009795493C1', 'Brazil (BR)'],
    ['TR330006100519786457841326', '(TR)'],
    ['FO6264600001631634', 'Faroe Islands (FO)'],
  ])('refuses the valid IBAN %s at sepaDebit.iban, naming its country; nothing is added', async (iban, country) => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, type: 'sepa_debit', sepaDebit: { iban, accountHolder: 'X' } }, 422);
    expect(p.violations).toEqual([
      { propertyPath: 'sepaDebit.iban', code: 'not_sepa_country', message: expect.stringMatching(/^sepaDebit\.iban is an IBAN of /) },
    ]);
    expect(p.violations[0].message).toContain(`${country}; SEPA direct debit takes IBANs of SEPA countries only`);
    expect(JSON.stringify(p)).not.toContain(iban.slice(4));
    expect((await ok(env.mcp, 'list_payment_methods', { id: customer })).data).toEqual([]);
  });

  it.each(['GB82 WEST 1234 5698 7654 32', 'CH93 0076 2011 6238 5295 7', 'GI75 NWBK 0000 0000 7099 453', 'MC58 1122 2000 0101 2345 6789 030', 'ME25 5050 0001 2345 6789 51'])(
    'takes the IBAN %s of a SEPA country or territory',
    async (iban) => {
      const customer = await newCustomer();
      await ok(env.mcp, 'create_payment_method', { id: customer, type: 'sepa_debit', sepaDebit: { iban, accountHolder: 'X' } });
    },
  );
});

describe('payment methods: the mandate of a SEPA method', () => {
  it('mandateReference and signingDate record the signed mandate, which the method shows and the collection run uses', async () => {
    const mcp = await sepaOrg('Mandate on create GmbH');
    const customer = await newCustomer(mcp);
    const sepaDebit = { ...sepa.sepaDebit, mandateReference: 'MND-ON-CREATE-1', signingDate: '2026-10-01' };
    const m = await ok(mcp, 'create_payment_method', { id: customer, type: 'sepa_debit', sepaDebit });
    expect(m.sepaDebit).toMatchObject({ mandateReference: 'MND-ON-CREATE-1', signingDate: '2026-10-01' });
    const [mandate, ...others] = (await ok(mcp, 'list_sepa_mandates', { id: customer })).data;
    expect(others).toEqual([]);
    expect(mandate).toMatchObject({
      status: 'active',
      mandateReference: 'MND-ON-CREATE-1',
      signatureDate: '2026-10-01',
      sepaType: 'core',
      bankAccount: { id: m.id, iban: MASKED },
    });
    expect((await ok(mcp, 'list_payment_methods', { id: customer })).data).toEqual([m]);
    // The same mandate recorded again with create_sepa_mandate (the two steps clients took before) answers it; another is a 409.
    const again = await ok(mcp, 'create_sepa_mandate', { id: customer, paymentMethod: m.id, mandateReference: 'MND-ON-CREATE-1', signatureDate: '2026-10-01' });
    expect(again.id).toBe(mandate.id);
    await fails(mcp, 'create_sepa_mandate', { id: customer, paymentMethod: m.id, mandateReference: 'MND-ON-CREATE-2', signatureDate: '2026-10-01' }, 409);
    // Collected under it: not "Nothing to collect".
    await ok(mcp, 'create_invoice', { customer, dueAt: NOW, lines: [{ description: 'Licence', quantity: 1, unitAmount: 1_000 }] });
    const statement = await ok(mcp, 'run_sepa_collection', {});
    expect(statement.payments.map((p: any) => p.sepaMandate.mandateReference)).toEqual(['MND-ON-CREATE-1']);
  });

  it("checks the mandate as create_sepa_mandate does, at the method's fields; nothing is added when refused", async () => {
    const mcp = await sepaOrg('Mandate checks GmbH');
    const customer = await newCustomer(mcp);
    const create = (fields: Record<string, unknown>, rest: Record<string, unknown> = {}) =>
      call(mcp, 'create_payment_method', { id: customer, type: 'sepa_debit', sepaDebit: { ...sepa.sepaDebit, ...fields }, ...rest });
    const refused = async (fields: Record<string, unknown>, status: number, rest: Record<string, unknown> = {}) => {
      const r = await create(fields, rest);
      expect(r.isError, JSON.stringify(fields)).toBe(true);
      expect(r.body.status).toBe(status);
      return r.body;
    };
    const spaces = await refused({ mandateReference: 'bad ref with spaces', signingDate: '2026-10-01' }, 422);
    // The reference takes the characters create_sepa_mandate takes: no spaces (checked with the account, src/domain/billingDetails.ts).
    expect(spaces.violations).toEqual([{ propertyPath: 'sepaDebit.mandateReference', code: 'invalid_format', message: expect.stringContaining("0-9 and + ? / - : ( ) . , '") }]);
    const future = await refused({ mandateReference: 'MND-CHECK-1', signingDate: '2030-11-01' }, 422);
    expect(future.violations).toEqual([{ propertyPath: 'sepaDebit.signingDate', code: 'future', message: expect.stringContaining('lies in the future') }]);
    expect(paths(await refused({ mandateReference: 'MND-CHECK-1' }, 422))).toEqual(['sepaDebit.signingDate']);
    expect(paths(await refused({ signingDate: '2026-10-01' }, 422))).toEqual(['sepaDebit.mandateReference']);
    expect(paths(await refused({ mandateReference: 'MND-CHECK-1', signingDate: '2026-10-01' }, 422, { enabled: false }))).toEqual(['enabled']);
    // The reference of an existing mandate of the creditor, whichever way it was recorded.
    const first = await ok(mcp, 'create_payment_method', { id: customer, ...sepa });
    await ok(mcp, 'create_sepa_mandate', { id: customer, paymentMethod: first.id, mandateReference: 'MND-TAKEN-1', signatureDate: '2026-10-01' });
    const taken = await refused({ mandateReference: 'MND-TAKEN-1', signingDate: '2026-10-02' }, 422);
    expect(taken.violations).toEqual([{ propertyPath: 'sepaDebit.mandateReference', code: 'unique', message: expect.stringContaining('already used by creditor DE98ZZZ09999999999') }]);
    expect((await ok(mcp, 'list_payment_methods', { id: customer })).data.map((m: any) => m.id)).toEqual([first.id]);
    expect((await ok(mcp, 'list_sepa_mandates', { id: customer })).data.map((m: any) => m.mandateReference)).toEqual(['MND-TAKEN-1']);
    // Without a creditor there is no one to give a mandate to.
    const other = await newCustomer();
    const r = await call(env.mcp, 'create_payment_method', { id: other, ...sepa, sepaDebit: { ...sepa.sepaDebit, mandateReference: 'MND-NO-CREDITOR', signingDate: '2026-10-01' } });
    expect(r.body.status).toBe(409);
    expect(r.body.detail).toContain('update_sepa_creditor');
    expect((await ok(env.mcp, 'list_payment_methods', { id: other })).data).toEqual([]);
  });

  it('shows the active mandate create_sepa_mandate records, and no reference once it is revoked', async () => {
    const org = await env.newOrg('Mandate later GmbH');
    const mcp = await env.mcpFor(org.apiKey);
    await ok(mcp, 'update_sepa_creditor', { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Mandate later GmbH', iban: 'DE02120300000000202051' });
    const customer = await newCustomer(mcp);
    const m = await ok(mcp, 'create_payment_method', { id: customer, ...sepa });
    expect(m.sepaDebit).toMatchObject({ mandateReference: null, signingDate: null });
    const mandate = await ok(mcp, 'create_sepa_mandate', { id: customer, paymentMethod: m.id, mandateReference: 'MND-LATER-1', signatureDate: '2026-09-30' });
    const shown = (await ok(mcp, 'list_payment_methods', { id: customer })).data[0];
    expect(shown.sepaDebit).toMatchObject({ mandateReference: 'MND-LATER-1', signingDate: '2026-09-30' });
    const renamed = await env.http('PUT', `/customers/${customer}/payment-methods/${m.id}`, { body: { name: 'Main account' }, token: org.apiKey });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Main account', sepaDebit: { mandateReference: 'MND-LATER-1', signingDate: '2026-09-30' } });
    expect((await env.http('GET', `/customers/${customer}/payment-methods`, { token: org.apiKey })).body.data).toEqual([renamed.body]);
    await ok(mcp, 'revoke_sepa_mandate', { id: customer, mandate: mandate.id });
    expect((await ok(mcp, 'list_payment_methods', { id: customer })).data[0].sepaDebit).toMatchObject({ mandateReference: null, signingDate: null });
  });
});

describe('payment methods: cards', () => {
  it('stores brand, last4 and expiry; expirationDate is the last instant of the expiry month (UTC)', async () => {
    const customer = await newCustomer();
    const m = await ok(env.mcp, 'create_payment_method', {
      id: customer,
      type: 'card',
      gatewayName: 'stripe',
      card: { brand: 'mastercard', last4: '0004', expMonth: 2, expYear: 2028, cardHolder: 'G HOPPER' },
    });
    expect(m).toMatchObject({
      type: 'card',
      gatewayName: 'stripe',
      expirationDate: '2028-02-29T23:59:59.999Z',
      card: { brand: 'mastercard', last4: '0004', expMonth: 2, expYear: 2028, cardHolder: 'G HOPPER' },
      sepaDebit: null,
      paypal: null,
    });
    const december = await ok(env.mcp, 'create_payment_method', { id: customer, ...card });
    expect(december.expirationDate).toBe('2028-12-31T23:59:59.999Z');
    expect(december.card.cardHolder).toBeNull();
  });

  it('accepts a card through the last instant of its expiry month and rejects it after', async () => {
    const customer = await newCustomer();
    const october = { id: customer, type: 'card', card: { brand: 'visa', last4: '1111', expMonth: 10, expYear: 2026 } };
    env.setNow('2026-10-31T23:59:59.999Z');
    expect((await ok(env.mcp, 'create_payment_method', october)).expirationDate).toBe('2026-10-31T23:59:59.999Z');
    env.setNow('2026-11-01T00:00:00.000Z');
    const p = await fails(env.mcp, 'create_payment_method', october, 422);
    expect(paths(p)).toEqual(['card']);
    expect(p.violations[0].message).toContain('expired');
    env.setNow(NOW);
    const lastYear = await fails(env.mcp, 'create_payment_method', { ...october, card: { ...october.card, expMonth: 12, expYear: 2025 } }, 422);
    expect(paths(lastYear)).toEqual(['card']);
  });

  it.each([
    ['number', '4242424242424242'],
    ['cardNumber', '4242 4242 4242 4242'],
    ['pan', '4242424242424242'],
  ])('rejects a full card number sent as card.%s and at the top level', async (field, value) => {
    const customer = await newCustomer();
    const nested = await fails(env.mcp, 'create_payment_method', { id: customer, ...card, card: { ...card.card, [field]: value } }, 422);
    expect(paths(nested)).toEqual([`card.${field}`]);
    expect(nested.violations[0].message).toContain('full card number, which is never accepted');
    expect(JSON.stringify(nested)).not.toContain(value);
    const top = await fails(env.mcp, 'create_payment_method', { id: customer, ...card, [field]: value }, 422);
    expect(paths(top)).toEqual([field]);
    expect(top.violations[0].message).toContain('send only card.brand and card.last4');
    const http = await env.http('POST', `/customers/${customer}/payment-methods`, { body: { ...card, [field]: value } });
    expect(http.status).toBe(422);
    expect(paths(http.body)).toEqual([field]);
    expect((await ok(env.mcp, 'list_payment_methods', { id: customer })).data).toEqual([]);
  });

  it.each(['424', '42424', '4242424242424242', 'abcd', '42 4', 4242])('rejects last4 %j', async (last4) => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...card, card: { ...card.card, last4 } }, 422);
    expect(paths(p)).toEqual(['card.last4']);
  });

  it.each([
    ['expMonth', 0],
    ['expMonth', 13],
    ['expMonth', 1.5],
    ['expYear', 28],
    ['expYear', 20280],
    ['expYear', '2028'],
    ['brand', ''],
    ['brand', 'b'.repeat(256)],
    ['cardHolder', 'c'.repeat(256)],
  ])('rejects card.%s %j', async (field, value) => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...card, card: { ...card.card, [field]: value } }, 422);
    expect(paths(p)).toEqual([`card.${field}`]);
  });

  it.each(['brand', 'last4', 'expMonth', 'expYear'])('requires card.%s', async (field) => {
    const customer = await newCustomer();
    const { [field]: _omitted, ...rest } = card.card as Record<string, unknown>;
    expect(paths(await fails(env.mcp, 'create_payment_method', { id: customer, type: 'card', card: rest }, 422))).toEqual([
      `card.${field}`,
    ]);
  });
});

describe('payment methods: PayPal', () => {
  it('stores the e-mail and billing agreement', async () => {
    const customer = await newCustomer();
    const m = await ok(env.mcp, 'create_payment_method', {
      id: customer,
      type: 'paypal',
      paypal: { email: 'payer@example.com', billingAgreementId: 'B-5YM87293DB0352043' },
    });
    expect(m).toMatchObject({
      type: 'paypal',
      expirationDate: null,
      card: null,
      sepaDebit: null,
      paypal: { email: 'payer@example.com', billingAgreementId: 'B-5YM87293DB0352043' },
    });
    expect((await ok(env.mcp, 'create_payment_method', { id: customer, ...paypal })).paypal.billingAgreementId).toBeNull();
  });

  it('rejects an invalid e-mail address', async () => {
    const customer = await newCustomer();
    for (const email of ['payer', 'a@b', 'x'.repeat(244) + '@example.com']) {
      const p = await fails(env.mcp, 'create_payment_method', { id: customer, type: 'paypal', paypal: { email } }, 422);
      expect(new Set(paths(p))).toEqual(new Set(['paypal.email']));
    }
  });
});

describe('payment methods: type and detail object', () => {
  it.each([
    ['sepa_debit', 'sepaDebit'],
    ['card', 'card'],
    ['paypal', 'paypal'],
  ])('type %s without %s is a 422 naming it', async (type, field) => {
    const customer = await newCustomer();
    for (const input of [{ type }, { type, [field]: null }]) {
      const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...input }, 422);
      expect(paths(p)).toEqual([field]);
      expect(p.violations[0].message).toContain(`${field} is required when type is ${type}`);
    }
  });

  it("rejects another type's object beside the right one, naming it", async () => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...card, sepaDebit: sepa.sepaDebit }, 422);
    expect(paths(p)).toEqual(['sepaDebit']);
    expect(p.violations[0].message).toContain('type is card');
    const q = await fails(env.mcp, 'create_payment_method', { id: customer, type: 'paypal', card: card.card }, 422);
    expect(new Set(paths(q))).toEqual(new Set(['paypal', 'card']));
    expect((await ok(env.mcp, 'list_payment_methods', { id: customer })).data).toEqual([]);
  });

  it.each([
    ['paypal', 'card', { brand: 'visa' }],
    ['paypal', 'card', {}],
    ['card', 'sepaDebit', { iban: 'not an iban', extra: 1 }],
    ['sepa_debit', 'paypal', { email: 'nope' }],
  ])('type %s with an incomplete %s names the object that does not belong, not what it lacks', async (type, field, value) => {
    const customer = await newCustomer();
    const own = { sepa_debit: sepa, card, paypal }[type]!;
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...own, [field]: value }, 422);
    expect(p.violations).toEqual([
      { propertyPath: field, code: 'type_mismatch', message: expect.stringContaining(`${field} belongs to type `) },
    ]);
    expect(p.violations[0].message).toContain(`but type is ${type}`);
    const alone = await fails(env.mcp, 'create_payment_method', { id: customer, type, [field]: value }, 422);
    expect(alone.violations.map((v: { code: string }) => v.code).sort()).toEqual(['required', 'type_mismatch']);
    expect((await ok(env.mcp, 'list_payment_methods', { id: customer })).data).toEqual([]);
  });

  it('still refuses a full card number inside a card object sent with another type', async () => {
    const customer = await newCustomer();
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...paypal, card: { number: '4242424242424242' } }, 422);
    expect(paths(p)).toEqual(['card.number']);
    expect(JSON.stringify(p)).not.toContain('4242424242424242');
  });

  it('accepts null for the objects of the other types', async () => {
    const customer = await newCustomer();
    const m = await ok(env.mcp, 'create_payment_method', { id: customer, ...paypal, card: null, sepaDebit: null });
    expect(m.type).toBe('paypal');
  });

  it('rejects an unknown type and unknown fields', async () => {
    const customer = await newCustomer();
    expect(paths(await fails(env.mcp, 'create_payment_method', { id: customer, type: 'cash' }, 422))).toEqual(['type']);
    expect(paths(await fails(env.mcp, 'create_payment_method', { id: customer, ...paypal, paypal: { ...paypal.paypal, x: 1 } }, 422))).toEqual([
      'paypal.x',
    ]);
    expect(paths(await fails(env.mcp, 'create_payment_method', { id: customer, ...paypal, gatewayName: '' }, 422))).toEqual([
      'gatewayName',
    ]);
    expect(paths(await fails(env.mcp, 'create_payment_method', { id: customer, ...paypal, name: 'n'.repeat(256) }, 422))).toEqual(['name']);
  });
});

describe('payment methods: defaults', () => {
  it('makes the first enabled method the default and switches on default true, for this customer only', async () => {
    const customer = await newCustomer();
    const other = await newCustomer();
    const otherDefault = await ok(env.mcp, 'create_payment_method', { id: other, ...paypal });
    const first = await ok(env.mcp, 'create_payment_method', { id: customer, ...sepa, default: false });
    expect(first.default).toBe(true);
    const plain = await ok(env.mcp, 'create_payment_method', { id: customer, ...card });
    expect(plain.default).toBe(false);
    env.setNow('2026-10-16T08:00:00Z');
    const second = await ok(env.mcp, 'create_payment_method', { id: customer, ...paypal, default: true });
    expect(second.default).toBe(true);
    const list = await ok(env.mcp, 'list_payment_methods', { id: customer });
    expect(defaults(list)).toEqual([second.id]);
    expect(list.data[0]).toMatchObject({ id: first.id, default: false });
    const rest = await env.http('GET', `/customers/${customer}/payment-methods`);
    expect(rest.body.data[0]).toMatchObject({ id: first.id, default: false, updatedAt: '2026-10-16T08:00:00.000Z' });
    expect(defaults(await ok(env.mcp, 'list_payment_methods', { id: other }))).toEqual([otherDefault.id]);
  });

  it('never makes a disabled method the default', async () => {
    const customer = await newCustomer();
    const disabled = await ok(env.mcp, 'create_payment_method', { id: customer, ...paypal, enabled: false });
    expect(disabled).toMatchObject({ enabled: false, default: false });
    const p = await fails(env.mcp, 'create_payment_method', { id: customer, ...card, enabled: false, default: true }, 422);
    expect(paths(p)).toEqual(['default']);
    const enabled = await ok(env.mcp, 'create_payment_method', { id: customer, ...card });
    expect(enabled.default).toBe(true);
    expect(defaults(await ok(env.mcp, 'list_payment_methods', { id: customer }))).toEqual([enabled.id]);
  });
});

describe('lookups for subscriptions', () => {
  it("get… and default… answer the customer's own resource, else undefined", async () => {
    const org = env.org.organisationId;
    const customer = await newCustomer();
    const other = await newCustomer();
    const a = await ok(env.mcp, 'create_invoice_address', { id: customer, ...address });
    const m = await ok(env.mcp, 'create_payment_method', { id: customer, ...sepa });
    const stranger = await env.newOrg();
    const found = await env.app.store.read(async (tx) => ({
      address: await getInvoiceAddress(tx, org, customer, a.id),
      method: await getPaymentMethod(tx, org, customer, m.id, new Date(NOW)),
      defaultAddress: await defaultInvoiceAddress(tx, org, customer),
      defaultMethod: await defaultPaymentMethod(tx, org, customer, new Date(NOW)),
      otherCustomer: [
        await getInvoiceAddress(tx, org, other, a.id),
        await getPaymentMethod(tx, org, other, m.id, new Date(NOW)),
        await defaultInvoiceAddress(tx, org, other),
        await defaultPaymentMethod(tx, org, other, new Date(NOW)),
      ],
      otherOrg: [
        await getInvoiceAddress(tx, stranger.organisationId, customer, a.id),
        await getPaymentMethod(tx, stranger.organisationId, customer, m.id, new Date(NOW)),
        await defaultInvoiceAddress(tx, stranger.organisationId, customer),
        await defaultPaymentMethod(tx, stranger.organisationId, customer, new Date(NOW)),
      ],
    }));
    expect(found.address).toEqual(a);
    expect(found.defaultAddress).toEqual(a);
    expect(found.method).toEqual(m);
    expect(found.defaultMethod).toEqual(m);
    expect(found.method?.sepaDebit?.iban).toBe(MASKED);
    expect(found.otherCustomer).toEqual([undefined, undefined, undefined, undefined]);
    expect(found.otherOrg).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('isolation and permissions', () => {
  const tools = [
    ['create_invoice_address', address],
    ['list_invoice_addresses', {}],
    ['create_payment_method', paypal],
    ['list_payment_methods', {}],
  ] as const;

  it.each(tools)('%s answers 404 for an unknown customer', async (tool, args) => {
    await fails(env.mcp, tool, { id: 'no-such-id', ...args }, 404);
  });

  it("answers 404 for another organisation's customer and leaves its data alone", async () => {
    const customer = await newCustomer();
    await ok(env.mcp, 'create_invoice_address', { id: customer, ...address });
    await ok(env.mcp, 'create_payment_method', { id: customer, ...sepa });
    const org = await env.newOrg();
    const other = await env.mcpFor(org.apiKey);
    for (const [tool, args] of tools) await fails(other, tool, { id: customer, ...args }, 404);
    for (const path of ['invoice-addresses', 'payment-methods']) {
      expect((await env.http('GET', `/customers/${customer}/${path}`, { token: org.apiKey })).status).toBe(404);
    }
    expect((await env.http('POST', `/customers/${customer}/payment-methods`, { token: org.apiKey, body: sepa })).status).toBe(404);
    expect((await ok(env.mcp, 'list_invoice_addresses', { id: customer })).data).toHaveLength(1);
    expect((await ok(env.mcp, 'list_payment_methods', { id: customer })).data).toHaveLength(1);
  });

  it('answers 403 without customer permissions, lets customer:read list but not create', async () => {
    const customer = await newCustomer();
    const none = await env.mcpFor(await env.newKey(env.org, ['measurement:read']));
    for (const [tool, args] of tools) await fails(none, tool, { id: customer, ...args }, 403);
    const { tools: visible } = await none.listTools();
    expect(visible.map((t) => t.name).filter((n) => /invoice_address|payment_method/.test(n))).toEqual([]);
    const readerKey = await env.newKey(env.org, ['customer:read']);
    const reader = await env.mcpFor(readerKey);
    expect((await ok(reader, 'list_invoice_addresses', { id: customer })).data).toEqual([]);
    expect((await ok(reader, 'list_payment_methods', { id: customer })).data).toEqual([]);
    await fails(reader, 'create_invoice_address', { id: customer, ...address }, 403);
    await fails(reader, 'create_payment_method', { id: customer, ...paypal }, 403);
    const res = await env.http('POST', `/customers/${customer}/payment-methods`, { token: readerKey, body: paypal });
    expect(res.status).toBe(403);
  });
});
