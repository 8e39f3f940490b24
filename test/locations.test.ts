import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

describe('every Location of a catalogue create answers a GET', () => {
  it.each([
    ['billing group', '/billing-groups', { name: 'Month end', type: 'end_of_month' }],
    ['coupon', '/coupons', { code: 'LOC10', name: 'Ten', type: 'percentage', frequency: 'once', percentage: 10 }],
    ['custom field', '/custom-fields', { key: 'region', entity: 'customer', type: 'string' }],
  ])('%s', async (_, path, body) => {
    const created = await env.http('POST', path, { body });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toBe(`${path}/${created.body.id}`);
    const got = await env.http('GET', location);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    const other = await env.newOrg(`Location ${path}`);
    expect((await env.http('GET', location, { token: other.apiKey })).status).toBe(404);
  });

  it('price plan, and a coupon also by its code', async () => {
    const product = await env.http('POST', '/catalogue/products', { body: { name: 'Thing' } });
    const created = await env.http('POST', `/catalogue/products/${product.body.id}/price-plans`, {
      body: { type: 'flat_fee', currencyCode: 'EUR', price: { amount: 5 }, billingInterval: '1M' },
    });
    expect(created.headers.get('location')).toBe(`/catalogue/price-plans/${created.body.id}`);
    // get_price_plan adds the price history to the resource the create answered.
    const got = (await env.http('GET', created.headers.get('location')!)).body;
    expect(got).toEqual({ ...created.body, priceHistory: [{ amount: 5, validFrom: created.body.createdAt }] });
    expect((await env.http('GET', '/catalogue/price-plans/nope')).status).toBe(404);
    expect((await env.http('GET', '/coupons/LOC10')).body.code).toBe('LOC10');
  });
});
