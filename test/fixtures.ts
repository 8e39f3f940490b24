import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ok } from './helpers.js';

export interface Fixture {
  customer: any;
  paymentMethod: any;
  product: any;
  pricePlan: any;
  addonProduct: any;
  addonPricePlan: any;
  meteredProduct: any;
  meteredPricePlan: any;
  plan: any;
}

/** A catalogue and a customer with a SEPA payment method, built through the tools like a model would. */
export async function buildFixture(mcp: Client, suffix = ''): Promise<Fixture> {
  const customer = await ok(mcp, 'create_customer', { lastName: `Doe${suffix}`, timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  const paymentMethod = await ok(mcp, 'create_payment_method', {
    id: customer.id,
    type: 'sepa_debit',
    sepaDebit: { iban: 'DE89370400440532013000', accountHolder: 'Jane Doe' },
  });
  const product = await ok(mcp, 'create_product', { name: `Base${suffix}` });
  const pricePlan = await ok(mcp, 'create_price_plan', {
    id: product.id,
    type: 'flat_fee',
    currencyCode: 'EUR',
    price: { amount: 49.9 },
    billingInterval: '1M',
  });
  const addonProduct = await ok(mcp, 'create_product', { name: `Support${suffix}` });
  const addonPricePlan = await ok(mcp, 'create_price_plan', {
    id: addonProduct.id,
    type: 'flat_fee',
    currencyCode: 'EUR',
    price: { amount: 10 },
    billingInterval: '1M',
    payInAdvance: false,
  });
  await ok(mcp, 'create_unit', { name: `call${suffix}` }).catch(() => undefined);
  const measurement = await ok(mcp, 'create_measurement', {
    unit: `call${suffix}`,
    code: `api_calls${suffix}`,
    aggregationType: 'sum',
    type: 'metered',
  });
  const meteredProduct = await ok(mcp, 'create_product', { name: `API${suffix}`, measurement: measurement.id });
  const meteredPricePlan = await ok(mcp, 'create_price_plan', {
    id: meteredProduct.id,
    type: 'per_unit',
    currencyCode: 'EUR',
    price: { amount: 0.01 },
    billingInterval: '1M',
    payInAdvance: false,
  });
  const plan = await ok(mcp, 'create_plan', {
    code: `pro${suffix}`,
    name: `Pro${suffix}`,
    charges: [
      { product: product.id, pricePlan: pricePlan.id },
      { product: meteredProduct.id, pricePlan: meteredPricePlan.id },
    ],
    addons: [{ product: addonProduct.id, pricePlan: addonPricePlan.id }],
  });
  return { customer, paymentMethod, product, pricePlan, addonProduct, addonPricePlan, meteredProduct, meteredPricePlan, plan };
}
