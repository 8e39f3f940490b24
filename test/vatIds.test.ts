/**
 * VAT ids (issue 17): checked per country with stdnum, and the one thing they decide, reverse charge:
 * 0 % only for a business (a well-formed VAT id) in another EU country than the organisation's.
 * Hand-computed: 100.00 EUR a month, DE 19 %, FR 20 %.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let n = 0;

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-15T10:00:00Z');
});
afterAll(() => env.close());

const sellerIn = (countryCode: string | null) =>
  ok(env.mcp, 'update_organisation', { address: countryCode ? { street: 'Allee', zip: '10115', city: 'Berlin', countryCode } : null });

/** The tax rate and amounts of the first invoice of a monthly 100 EUR plan billed to a new customer at that address. */
async function billedTo(reverseChargeType: string, address: { countryCode: string; vatId?: string | null }) {
  n += 1;
  const group = await ok(env.mcp, 'create_tax_group', {
    internalDescription: `Group ${n}`,
    reverseChargeType,
    taxes: [
      { code: 'DE19', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' },
      { code: 'FR20', rate: 20, countryCode: 'FR', validFrom: '2021-01-01' },
    ],
  });
  const product = await ok(env.mcp, 'create_product', { name: `Service ${n}`, taxGroup: group.id });
  const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 100 }, billingInterval: '1M' });
  const plan = await ok(env.mcp, 'create_plan', { code: `vat-${n}`, name: `VAT ${n}`, charges: [{ product: product.id, pricePlan: pricePlan.id }] });
  const buyer = await ok(env.mcp, 'create_customer', { companyName: `Buyer ${n}` });
  await ok(env.mcp, 'create_invoice_address', { id: buyer.id, street: 'Rue', zip: '75001', city: 'Paris', ...address });
  const s = await ok(env.mcp, 'create_subscription', { customer: buyer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
  const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
  const invoice = (await env.http('GET', `/invoices/${run.invoices[0]}`)).body;
  return [invoice.lines[0].taxRate, invoice.netAmount, invoice.taxAmount, invoice.grossAmount];
}

describe('VAT ids are checked with their country’s format and check digit', () => {
  it('an invoice address: a malformed id is a 422 at vatId naming the format; a valid one is stored in one form; other countries keep it as given (255 characters at most)', async () => {
    const c = await ok(env.mcp, 'create_customer', { companyName: 'Checked SARL' });
    const address = { id: c.id, street: 'Rue', zip: '75001', city: 'Paris', countryCode: 'FR' };
    const bad = await fails(env.mcp, 'create_invoice_address', { ...address, vatId: 'not a vat id !!' }, 422);
    expect(paths(bad)).toEqual(['vatId']);
    expect(bad.violations[0].message).toMatch(/^vatId must be a VAT id of FR: FR \+ 2 check characters and the 9-digit SIREN, with a valid check digit/);
    const wrongDigit = await fails(env.mcp, 'create_invoice_address', { ...address, vatId: 'FR40303265046' }, 422);
    expect(wrongDigit.violations[0].message).toMatch(/check digit is invalid/);
    const germanIdInFrance = await fails(env.mcp, 'create_invoice_address', { ...address, vatId: 'DE136695976' }, 422);
    expect(paths(germanIdInFrance)).toEqual(['vatId']);
    expect((await ok(env.mcp, 'create_invoice_address', { ...address, vatId: 'fr 403 032 650 45' })).vatId).toBe('FR40303265045');
    const greek = await env.http('POST', `/customers/${c.id}/invoice-addresses`, { body: { ...address, countryCode: 'GR', vatId: '094259216' } });
    expect([greek.status, greek.body.vatId]).toEqual([201, 'EL094259216']);
    const rest = await env.http('POST', `/customers/${c.id}/invoice-addresses`, { body: { ...address, countryCode: 'DE', vatId: 'DE123456789' } });
    expect(rest.status).toBe(422);
    expect(rest.body.violations[0]).toMatchObject({ propertyPath: 'vatId', code: 'invalid_vat_id' });
    expect(rest.body.violations[0].message).toContain('DE + 9 digits');
    expect((await ok(env.mcp, 'create_invoice_address', { ...address, countryCode: 'GB', vatId: '980 7806 84' })).vatId).toBe('GB980780684');
    expect(paths(await fails(env.mcp, 'create_invoice_address', { ...address, countryCode: 'NO', vatId: '995525829' }, 422))).toEqual(['vatId']);
    expect((await ok(env.mcp, 'create_invoice_address', { ...address, countryCode: 'US', vatId: ' 12-3456789 ' })).vatId).toBe('12-3456789');
    expect(paths(await fails(env.mcp, 'create_invoice_address', { ...address, countryCode: 'US', vatId: 'x'.repeat(256) }, 422))).toEqual(['vatId']);
    expect((await ok(env.mcp, 'create_invoice_address', { ...address, countryCode: 'US', vatId: 'y'.repeat(255) })).vatId).toHaveLength(255);
  });

  it("the organisation's vatId: checked against its address's country, else the id's prefix", async () => {
    await sellerIn('DE');
    expect(paths(await fails(env.mcp, 'update_organisation', { vatId: 'DE123456789' }, 422))).toEqual(['vatId']);
    expect(paths(await fails(env.mcp, 'update_organisation', { vatId: 'ATU13585627' }, 422))).toEqual(['vatId']);
    expect((await ok(env.mcp, 'update_organisation', { vatId: 'de136695976' })).vatId).toBe('DE136695976');
    await sellerIn(null);
    expect((await ok(env.mcp, 'update_organisation', { vatId: 'ATU13585627' })).vatId).toBe('ATU13585627');
    expect(paths(await fails(env.mcp, 'update_organisation', { vatId: 'ATU13585628' }, 422))).toEqual(['vatId']);
    expect((await ok(env.mcp, 'update_organisation', { vatId: null })).vatId).toBeNull();
  });
});

describe('reverse charge only for a business in another EU country than the organisation', () => {
  it('German consumer without VAT id: 19 % whatever the group says', async () => {
    await sellerIn('DE');
    expect(await billedTo('REVERSE_CHARGE', { countryCode: 'DE' })).toEqual([19, 10000, 1900, 11900]);
    expect(await billedTo('REVERSE_CHARGE_INTRA_EU_SUPPLY', { countryCode: 'DE' })).toEqual([19, 10000, 1900, 11900]);
  });

  it('French business with a valid FR VAT id, organisation in DE: 0 % with either reverse-charge type, 20 % without one', async () => {
    await sellerIn('DE');
    expect(await billedTo('REVERSE_CHARGE_INTRA_EU_SUPPLY', { countryCode: 'FR', vatId: 'FR40303265045' })).toEqual([0, 10000, 0, 10000]);
    expect(await billedTo('REVERSE_CHARGE', { countryCode: 'FR', vatId: 'FR40303265045' })).toEqual([0, 10000, 0, 10000]);
    expect(await billedTo('REVERSE_CHARGE_DEACTIVATED', { countryCode: 'FR', vatId: 'FR40303265045' })).toEqual([20, 10000, 2000, 12000]);
  });

  it("the same business with the organisation's country unset: the normal rate, never reverse charge", async () => {
    await sellerIn(null);
    expect(await billedTo('REVERSE_CHARGE_INTRA_EU_SUPPLY', { countryCode: 'FR', vatId: 'FR40303265045' })).toEqual([20, 10000, 2000, 12000]);
  });

  it('a business in the organisation’s own country: 19 %', async () => {
    await sellerIn('DE');
    expect(await billedTo('REVERSE_CHARGE_INTRA_EU_SUPPLY', { countryCode: 'DE', vatId: 'DE136695976' })).toEqual([19, 10000, 1900, 11900]);
  });

  it('a malformed VAT id stored before the check is shown as stored and counts as none: the normal rate', async () => {
    await sellerIn('DE');
    const group = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Stored before',
      reverseChargeType: 'REVERSE_CHARGE_INTRA_EU_SUPPLY',
      taxes: [{ code: 'FR20', rate: 20, countryCode: 'FR', validFrom: '2021-01-01' }],
    });
    const product = await ok(env.mcp, 'create_product', { name: 'Old data', taxGroup: group.id });
    const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 100 }, billingInterval: '1M' });
    const plan = await ok(env.mcp, 'create_plan', { code: 'old-data', name: 'Old data', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
    const buyer = await ok(env.mcp, 'create_customer', { companyName: 'Old SARL' });
    const address = await ok(env.mcp, 'create_invoice_address', { id: buyer.id, street: 'Rue', zip: '75001', city: 'Paris', countryCode: 'FR', vatId: 'FR40303265045' });
    await env.sql.run("UPDATE invoice_addresses SET vat_id = 'not a vat id !!' WHERE id = ?", address.id);
    expect((await ok(env.mcp, 'list_invoice_addresses', { id: buyer.id })).data[0].vatId).toBe('not a vat id !!');
    const s = await ok(env.mcp, 'create_subscription', { customer: buyer.id, plan: plan.id, periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate: true });
    const run = await ok(env.mcp, 'run_billing', { subscription: s.id });
    expect((await env.http('GET', `/invoices/${run.invoices[0]}`)).body).toMatchObject({ netAmount: 10000, taxAmount: 2000, grossAmount: 12000 });
  });
});
