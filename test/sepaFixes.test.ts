/**
 * create_payment_method checks a SEPA account as a whole: the IBAN, the BIC, the mandate reference and
 * the signing date are reported in one answer, in the order of the fields, over MCP and REST; the
 * input schema still describes the BIC and the reference by their patterns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fails, ok, setup, type TestEnv } from './helpers.js';

const CREDITOR = { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing & Co. GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };

let env: TestEnv;

beforeAll(async () => {
  env = await setup();
});
afterAll(async () => {
  await env.close();
});

describe('create_payment_method with sepaDebit', () => {
  it('reports the IBAN, BIC, mandate reference and signing date together, in the order of the fields; nothing is added', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    const org = await env.newOrg('Whole Account');
    const mcp = await env.mcpFor(org.apiKey);
    await ok(mcp, 'update_sepa_creditor', CREDITOR);
    const customer = await ok(mcp, 'create_customer', { companyName: 'Whole Account' });
    const sepaDebit = { iban: 'DE89370400440532013001', bic: 'nope', accountHolder: 'Ada', mandateReference: 'bad ref', signingDate: '2027-03-02' };
    const p = await fails(mcp, 'create_payment_method', { id: customer.id, type: 'sepa_debit', sepaDebit }, 422);
    expect(p.violations).toEqual([
      { propertyPath: 'sepaDebit.iban', code: 'invalid_iban', message: expect.stringMatching(/^sepaDebit\.iban fails the ISO 13616 mod-97 checksum/) },
      { propertyPath: 'sepaDebit.bic', code: 'invalid_format', message: expect.stringMatching(/^sepaDebit\.bic must be a BIC of 8 or 11/) },
      { propertyPath: 'sepaDebit.mandateReference', code: 'invalid_format', message: expect.stringContaining("0-9 and + ? / - : ( ) . , '") },
      { propertyPath: 'sepaDebit.signingDate', code: 'future', message: expect.stringContaining('lies in the future') },
    ]);
    expect(JSON.stringify(p)).not.toContain('0532013001');

    // Over REST, an IBAN outside SEPA and a signature too old for a mandate, with the BIC between them.
    const rest = await env.http('POST', `/customers/${customer.id}/payment-methods`, {
      token: org.apiKey,
      body: { type: 'sepa_debit', sepaDebit: { ...sepaDebit, iban: 'BR1800360305000010009795493C1', mandateReference: 'MND-OLD-1', signingDate: '1999-01-01' } },
    });
    expect(rest.status).toBe(422);
    expect(rest.body.violations.map((v: any) => [v.propertyPath, v.code])).toEqual([
      ['sepaDebit.iban', 'not_sepa_country'],
      ['sepaDebit.bic', 'invalid_format'],
      ['sepaDebit.signingDate', 'expired'],
    ]);
    expect((await ok(mcp, 'list_payment_methods', { id: customer.id })).data).toEqual([]);
    expect((await ok(mcp, 'list_sepa_mandates', { id: customer.id })).data).toEqual([]);

    // Every field right: the method and its mandate.
    const method = await ok(mcp, 'create_payment_method', {
      id: customer.id,
      type: 'sepa_debit',
      sepaDebit: { ...sepaDebit, iban: 'DE02120300000000202051', bic: 'BYLADEM1001', mandateReference: 'MND-WHOLE-1', signingDate: '2027-03-01' },
    });
    expect(method.sepaDebit).toMatchObject({ bic: 'BYLADEM1001', mandateReference: 'MND-WHOLE-1', signingDate: '2027-03-01' });
  });

  it('the input schema describes the BIC and the mandate reference by their patterns', async () => {
    const { tools } = await env.mcp.listTools();
    const sepaDebit = (tools.find((t) => t.name === 'create_payment_method')!.inputSchema.properties as any).sepaDebit.anyOf[0].properties;
    expect(sepaDebit.bic.anyOf[0]).toEqual({ type: 'string', pattern: '^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$' });
    expect(sepaDebit.mandateReference.anyOf[0]).toEqual({ type: 'string', pattern: "^[A-Za-z0-9+?/\\-:().,']{1,35}$" });
  });
});
