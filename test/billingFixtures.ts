import { ok, setup, type TestEnv } from './helpers.js';

/**
 * The billing tests' store as of 15 January 2026, 10:00 UTC: a tax group charging 19 % in DE and the
 * customer (`names`) billed, with an invoice address in Berlin (`street` 1).
 */
export async function setupBilling(names: { lastName: string; companyName: string }, street: string): Promise<{ env: TestEnv; tax: any; customer: any }> {
  const env = await setup();
  env.setNow('2026-01-15T10:00:00Z');
  const tax = await ok(env.mcp, 'create_tax_group', { internalDescription: 'Standard', taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }] });
  const customer = await ok(env.mcp, 'create_customer', names);
  await ok(env.mcp, 'create_invoice_address', { id: customer.id, street, houseNumber: '1', zip: '10117', city: 'Berlin', countryCode: 'DE' });
  return { env, tax, customer };
}
