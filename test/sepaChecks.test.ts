/**
 * SEPA input checks: every violation of a call in one answer, signature dates that would make a
 * mandate expired at once, what a method whose mandate ended can do, the customer filter of the
 * collections, reason codes, and what an unknown body field is told over REST.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

const CREDITOR = { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing & Co. GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };
const DEBTOR_IBAN = 'DE02120300000000202051';

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
});
afterAll(async () => {
  await env.close();
});

/** An organisation of its own with the creditor set: its API key and MCP client. */
async function creditorOrg(name: string): Promise<{ token: string; mcp: Client }> {
  const org = await env.newOrg(name);
  const mcp = await env.mcpFor(org.apiKey);
  await ok(mcp, 'update_sepa_creditor', CREDITOR);
  return { token: org.apiKey, mcp };
}

/** A customer with a sepa_debit payment method (`sepaDebit` adds fields, e.g. the mandate). */
async function sepaCustomer(mcp: Client, name: string, sepaDebit: Record<string, unknown> = {}) {
  const customer = await ok(mcp, 'create_customer', { companyName: name });
  const method = await ok(mcp, 'create_payment_method', {
    id: customer.id,
    type: 'sepa_debit',
    default: true,
    sepaDebit: { iban: DEBTOR_IBAN, accountHolder: name, ...sepaDebit },
  });
  return { customer, method };
}

describe('every violation of a call at once', () => {
  it('update_sepa_creditor reports the name, the BIC and both check digits together', async () => {
    const org = await env.newOrg('All At Once');
    const put = await env.http('PUT', '/sepa-creditor', {
      token: org.apiKey,
      body: { creditorIdentifier: 'DE97ZZZ09999999999', name: '', iban: 'DE89370400440532013001', bic: 'nope' },
    });
    expect(put.status).toBe(422);
    expect(paths(put.body).sort()).toEqual(['bic', 'creditorIdentifier', 'iban', 'name']);
    expect(put.body.violations.find((v: any) => v.propertyPath === 'creditorIdentifier').message).toMatch(/^creditorIdentifier fails the ISO 7064 mod-97 check/);
    expect(put.body.violations.find((v: any) => v.propertyPath === 'iban').message).toMatch(/^iban fails the ISO 13616 mod-97 checksum/);
    const abroad = await env.http('PUT', '/sepa-creditor', { token: org.apiKey, body: { ...CREDITOR, name: '', iban: 'BR1800360305000010009795493C1' } });
    expect(paths(abroad.body).sort()).toEqual(['iban', 'name']);
    expect(abroad.body.detail).toContain('iban is an IBAN of Brazil (BR)');
  });

  it('create_sepa_mandate reports a bad reference with a future signature date', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    const { mcp } = await creditorOrg('Reference And Date');
    const { customer, method } = await sepaCustomer(mcp, 'Reference And Date');
    const p = await fails(mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: method.id, mandateReference: 'bad ref', signatureDate: '2027-03-02' }, 422);
    expect(p.violations).toEqual([
      { propertyPath: 'mandateReference', code: 'invalid_mandate_reference', message: expect.stringContaining('(no spaces)') },
      { propertyPath: 'signatureDate', code: 'future', message: expect.stringContaining('lies in the future') },
    ]);
  });
});

describe('a mandate is never expired when it is recorded', () => {
  it('refuses a signature date 36 months back or more, naming the earliest date, on both ways of recording one', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    const { mcp } = await creditorOrg('Old Mandates');
    const { customer, method } = await sepaCustomer(mcp, 'Old Mandates');
    const mandate = (signatureDate: string) => ({ id: customer.id, paymentMethod: method.id, mandateReference: 'MND-OLD-1', signatureDate });
    const typo = await fails(mcp, 'create_sepa_mandate', mandate('1999-01-01'), 422);
    expect(typo.violations).toEqual([
      { propertyPath: 'signatureDate', code: 'expired', message: expect.stringContaining('the earliest signature date accepted today is 2024-03-02') },
    ]);
    expect(paths(await fails(mcp, 'create_sepa_mandate', mandate('2024-03-01'), 422))).toEqual(['signatureDate']);
    expect(await ok(mcp, 'create_sepa_mandate', mandate('2024-03-02'))).toMatchObject({ status: 'active', signatureDate: '2024-03-02' });

    const viaMethod = await fails(
      mcp,
      'create_payment_method',
      { id: customer.id, type: 'sepa_debit', sepaDebit: { iban: DEBTOR_IBAN, accountHolder: 'Old Mandates', mandateReference: 'MND-OLD-2', signingDate: '1999-01-01' } },
      422,
    );
    expect(viaMethod.violations).toEqual([{ propertyPath: 'sepaDebit.signingDate', code: 'expired', message: expect.stringContaining('2024-03-02') }]);
    expect((await ok(mcp, 'list_payment_methods', { id: customer.id })).data).toHaveLength(1);
  });

  it('a second mandate on a method whose mandate was revoked or expired is told to use a new payment method', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    const { mcp } = await creditorOrg('Ended Mandates');
    const revoked = await sepaCustomer(mcp, 'Revoked GmbH', { mandateReference: 'MND-REVOKED-1', signingDate: '2027-02-01' });
    const [first] = (await ok(mcp, 'list_sepa_mandates', { id: revoked.customer.id })).data;
    await ok(mcp, 'revoke_sepa_mandate', { id: revoked.customer.id, mandate: first.id });
    const again = await fails(mcp, 'create_sepa_mandate', { id: revoked.customer.id, paymentMethod: revoked.method.id, mandateReference: 'MND-REVOKED-2', signatureDate: '2027-03-01' }, 409);
    expect(again.detail).toMatch(/mandate MND-REVOKED-1, revoked at 2027-03-01T09:00:00.000Z/);
    expect(again.detail).toContain('create_payment_method');

    const expiring = await sepaCustomer(mcp, 'Expired GmbH', { mandateReference: 'MND-EXPIRED-1', signingDate: '2024-03-02' });
    env.setNow('2027-03-02T09:00:00Z');
    const expired = await fails(mcp, 'create_sepa_mandate', { id: expiring.customer.id, paymentMethod: expiring.method.id, mandateReference: 'MND-EXPIRED-2', signatureDate: '2027-03-02' }, 409);
    expect(expired.detail).toMatch(/mandate MND-EXPIRED-1, expired: no collection was presented under it for 36 months/);
    expect(expired.detail).toContain('create_payment_method');
    const active = await sepaCustomer(mcp, 'Active GmbH', { mandateReference: 'MND-ACTIVE-1', signingDate: '2027-03-01' });
    const second = await fails(mcp, 'create_sepa_mandate', { id: active.customer.id, paymentMethod: active.method.id, mandateReference: 'MND-ACTIVE-2', signatureDate: '2027-03-01' }, 409);
    expect(second.detail).toContain('already has the active SEPA mandate MND-ACTIVE-1');
  });
});

describe('list_sepa_xml_payments', () => {
  it('filters by customer, by id or number, over REST and MCP; an unknown customer is a 404', async () => {
    env.setNow('2027-05-03T09:00:00Z');
    const { token, mcp } = await creditorOrg('Two Debtors');
    const a = await sepaCustomer(mcp, 'Debtor A', { mandateReference: 'MND-A', signingDate: '2027-05-01' });
    const b = await sepaCustomer(mcp, 'Debtor B', { mandateReference: 'MND-B', signingDate: '2027-05-01' });
    for (const c of [a, b, a]) {
      await ok(mcp, 'create_invoice', { customer: c.customer.id, dueAt: '2027-05-04T00:00:00Z', lines: [{ description: 'Licence', quantity: 1, unitAmount: 1_000 }] });
    }
    expect((await ok(mcp, 'run_sepa_collection', {})).numberOfTransactions).toBe(3);
    const rest = await env.http('GET', `/sepa-xml-payments?customer=${a.customer.customerNumber}`, { token });
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((p: any) => p.customer)).toEqual([a.customer.id, a.customer.id]);
    expect((await ok(mcp, 'list_sepa_xml_payments', { customer: b.customer.id })).data).toHaveLength(1);
    expect((await fails(mcp, 'list_sepa_xml_payments', { customer: 'CUS-999999' }, 404)).detail).toBe('Customer CUS-999999 was not found; list_customers shows the ids');
  });
});

describe('returns', () => {
  it('take a reason code of SEPA direct debit R-transactions only', async () => {
    env.setNow('2027-05-03T09:00:00Z');
    const { token, mcp } = await creditorOrg('Reason Codes');
    const { customer } = await sepaCustomer(mcp, 'Reason Codes', { mandateReference: 'MND-REASON', signingDate: '2027-05-01' });
    await ok(mcp, 'create_invoice', { customer: customer.id, dueAt: '2027-05-04T00:00:00Z', lines: [{ description: 'Licence', quantity: 1, unitAmount: 1_000 }] });
    const [payment] = (await ok(mcp, 'run_sepa_collection', {})).payments;
    const unknown = await fails(mcp, 'return_sepa_xml_payment', { id: payment.id, reasonCode: 'ZZZZ' }, 422);
    expect(unknown.violations).toEqual([{ propertyPath: 'reasonCode', code: 'custom', message: expect.stringContaining('use one of AC01, AC04') }]);
    const rest = await env.http('POST', '/sepa-returns', { token, body: { endToEndId: payment.endToEndId, reasonCode: 'ZZZZ' } });
    expect([rest.status, paths(rest.body)]).toEqual([422, ['reasonCode']]);
    expect((await ok(mcp, 'return_sepa_xml_payment', { id: payment.id, reasonCode: 'SL01' })).returnReasonCode).toBe('SL01');
  });
});

describe('unknown body fields over REST', () => {
  it('are told what the body takes, not the path parameters', async () => {
    env.setNow('2027-05-03T09:00:00Z');
    const { token, mcp } = await creditorOrg('Path Parameters');
    const { customer } = await sepaCustomer(mcp, 'Path Parameters', { mandateReference: 'MND-PATH', signingDate: '2027-05-01' });
    const [mandate] = (await ok(mcp, 'list_sepa_mandates', { id: customer.id })).data;
    const revoke = await env.http('POST', `/customers/${customer.id}/sepa-mandates/${mandate.id}/revoke`, { token, body: { reason: 'moved away' } });
    expect(revoke.status).toBe(422);
    expect(revoke.body.violations).toEqual([
      { propertyPath: 'reason', code: 'unrecognized_keys', message: "'reason' is not a field of the input; it takes no fields besides the path parameters id, mandate" },
    ]);
    const collection = await env.http('POST', '/sepa-returns', { token, body: { endToEndId: 'x', reasonCode: 'AM04', note: 'x' } });
    expect(collection.body.violations[0].message).toBe("'note' is not a field of the input; allowed: endToEndId, reasonCode, returnedAt");
    const returned = await env.http('POST', '/sepa-xml-payments/some-id/return', { token, body: { reasonCode: 'AM04', note: 'x' } });
    expect(returned.body.violations[0].message).toBe("'note' is not a field of the input; allowed: reasonCode, returnedAt, besides the path parameter id");
  });
});
