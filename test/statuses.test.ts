/**
 * Statuses that have their effect (issue 17): draft plans, inactive price plans, inactive customers,
 * disabled and expired payment methods are refused for anything new, while what exists keeps
 * billing; and the update operations of price plans (a new price for future periods), coupons and
 * payment methods. Customers are in Europe/Berlin; products have no tax group, so net = gross.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let n = 0;
const periods = [{ contractPeriod: '12M', cancellationPeriod: '1M' }];
const T0 = '2026-01-15T10:00:00Z';

beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());
beforeEach(() => env.setNow(T0));

const customer = async () => ok(env.mcp, 'create_customer', { companyName: `Customer ${++n}` });

/** A product with a monthly flat fee price plan. */
async function priced(price: Record<string, unknown> = {}): Promise<{ product: any; pricePlan: any }> {
  const product = await ok(env.mcp, 'create_product', { name: `Product ${++n}` });
  const pricePlan = await ok(env.mcp, 'create_price_plan', {
    id: product.id,
    type: 'flat_fee',
    currencyCode: 'EUR',
    price: { amount: 10 },
    billingInterval: '1M',
    ...price,
  });
  return { product, pricePlan };
}

async function planOf(charge: { product: any; pricePlan: any }, extra: Record<string, unknown> = {}): Promise<any> {
  return ok(env.mcp, 'create_plan', { code: `plan-${++n}`, name: `Plan ${n}`, charges: [{ product: charge.product.id, pricePlan: charge.pricePlan.id }], ...extra });
}

async function bill(subscription: string): Promise<any[]> {
  const run = await ok(env.mcp, 'run_billing', { subscription });
  const invoices = [];
  for (const id of run.invoices) invoices.push((await env.http('GET', `/invoices/${id}`)).body);
  return invoices;
}

const lines = (invoice: any) => invoice.lines.map((l: any) => [l.netAmount, l.periodStart, l.periodEnd]);

/** An offer proposing a subscription of `plan` to `customer`. */
const offerFor = (customer: string, plan: string) => ({
  customer,
  acceptanceMode: 'click',
  name: 'Offer',
  recipients: [{ email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' }],
  validUntil: '2026-03-01T00:00:00Z',
  subscription: { plan, periods },
});

describe('update_price_plan', () => {
  it('bills a price changed mid-period from the next period on: 10.00 for the current period, 12.00 for the next (hand-computed)', async () => {
    const charge = await priced({ payInAdvance: false });
    const s = await ok(env.mcp, 'create_subscription', { customer: (await customer()).id, plan: (await planOf(charge)).id, periods, activate: true });

    env.setNow('2026-02-01T09:00:00Z');
    const changed = await ok(env.mcp, 'update_price_plan', { id: charge.pricePlan.id, price: { amount: 12 } });
    expect(changed).toMatchObject({ id: charge.pricePlan.id, price: { amount: 12 }, status: 'active', updatedAt: '2026-02-01T09:00:00.000Z' });
    // The current period (15 January to 15 February, in arrears) started before the change.
    expect((await ok(env.mcp, 'get_estimated_invoice', { id: s.id })).netAmount).toBe(1000);

    env.setNow('2026-03-20T00:00:00Z');
    const invoices = await bill(s.id);
    expect(invoices.map(lines)).toEqual([
      [[1000, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z']],
      [[1200, '2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z']],
    ]);
    expect((await ok(env.mcp, 'get_estimated_invoice', { id: s.id })).netAmount).toBe(1200);
  });

  it('keeps the price an in-advance period was billed at; the next period and the estimate take the new one', async () => {
    const charge = await priced();
    const s = await ok(env.mcp, 'create_subscription', { customer: (await customer()).id, plan: (await planOf(charge)).id, periods, activate: true });
    expect((await bill(s.id)).map(lines)).toEqual([[[1000, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z']]]);

    env.setNow('2026-02-01T09:00:00Z');
    await ok(env.mcp, 'update_price_plan', { id: charge.pricePlan.id, price: { amount: 12.5 } });
    await ok(env.mcp, 'update_price_plan', { id: charge.pricePlan.id, price: { amount: 12 } });
    expect(await bill(s.id)).toEqual([]);
    expect((await ok(env.mcp, 'get_estimated_invoice', { id: s.id })).netAmount).toBe(1200);

    env.setNow('2026-02-15T10:00:00Z');
    expect((await bill(s.id)).map(lines)).toEqual([[[1200, '2026-02-15T10:00:00.000Z', '2026-03-15T10:00:00.000Z']]]);
  });

  it('changes status and internalName over REST; omitted fields stay; the same price again records nothing', async () => {
    const { pricePlan } = await priced({ internalName: 'Old' });
    const res = await env.http('PUT', `/catalogue/price-plans/${pricePlan.id}`, { body: { status: 'inactive', internalName: 'Retired' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'inactive', internalName: 'Retired', price: { amount: 10 }, billingInterval: '1M' });
    expect(await ok(env.mcp, 'update_price_plan', { id: pricePlan.id, price: { amount: 10 } })).toMatchObject({ status: 'inactive', internalName: 'Retired' });
    expect(await env.sql.get('SELECT count(*) AS n FROM price_plan_price_changes WHERE price_plan_id = ?', pricePlan.id)).toEqual({ n: 0 });
  });

  it('refuses a price on tiered plans, too many digits, an unknown status; 404 for an unknown id', async () => {
    const product = await ok(env.mcp, 'create_product', { name: 'Tiered' });
    const tiered = await ok(env.mcp, 'create_price_plan', {
      id: product.id,
      type: 'graduated',
      currencyCode: 'EUR',
      tiers: [{ upTo: null, unitAmount: 1 }],
      billingInterval: '1M',
    });
    const p = await fails(env.mcp, 'update_price_plan', { id: tiered.id, price: { amount: 5 } }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'price', code: 'price_not_allowed' })]);
    expect(p.detail).toContain('create a new price plan');
    const { pricePlan } = await priced();
    expect(paths(await fails(env.mcp, 'update_price_plan', { id: pricePlan.id, price: { amount: 1.234 } }, 422))).toEqual(['price.amount']);
    expect(paths(await fails(env.mcp, 'update_price_plan', { id: pricePlan.id, status: 'gone' }, 422))).toEqual(['status']);
    await fails(env.mcp, 'update_price_plan', { id: '0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69', status: 'active' }, 404);
    expect((await ok(env.mcp, 'get_price_plan', { id: pricePlan.id })).price.amount).toBe(10);
  });
});

describe('plan, price plan and customer statuses', () => {
  it('refuses to subscribe a draft plan (422 at plan), also through an offer; an active plan is the default', async () => {
    const charge = await priced();
    const draft = await planOf(charge, { status: 'draft' });
    const c = await customer();
    const p = await fails(env.mcp, 'create_subscription', { customer: c.id, plan: draft.id, periods }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'plan', code: 'draft' })]);
    expect(p.detail).toContain('update_plan');
    const offer = await fails(env.mcp, 'create_offer', offerFor(c.id, draft.id), 422);
    expect(paths(offer)).toEqual(['subscription.plan']);
    expect((await ok(env.mcp, 'list_subscriptions', { customer: c.id })).data).toEqual([]);
    expect((await planOf(charge)).status).toBe('active');
  });

  it('refuses to activate a subscription whose plan is draft (409), changing nothing', async () => {
    const charge = await priced();
    const plan = await planOf(charge);
    const s = await ok(env.mcp, 'create_subscription', { customer: (await customer()).id, plan: plan.id, periods });
    // A subscription of a draft plan exists only in a database written before issue 17.
    await env.sql.run("UPDATE plans SET status = 'draft' WHERE id = ?", plan.id);
    const p = await fails(env.mcp, 'activate_subscription', { id: s.id }, 409);
    expect(p.detail).toMatch(/plan .* is draft; set its status active with update_plan first/);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).status).toBe('draft');
  });

  it('refuses an inactive price plan for new items (create_subscription, order products); existing items keep billing', async () => {
    const charge = await priced();
    const plan = await planOf(charge);
    const c = await customer();
    const s = await ok(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods, activate: true });
    await ok(env.mcp, 'update_price_plan', { id: charge.pricePlan.id, status: 'inactive' });

    const p = await fails(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'plan', code: 'inactive' })]);
    expect(p.detail).toContain('update_price_plan');
    const order = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: charge.product.id, pricePlan: charge.pricePlan.id }] }, 422);
    expect(order.violations).toEqual([expect.objectContaining({ propertyPath: 'products[0].pricePlan', code: 'inactive' })]);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items).toHaveLength(1);

    expect((await bill(s.id)).map(lines)).toEqual([[[1000, '2026-01-15T10:00:00.000Z', '2026-02-15T10:00:00.000Z']]]);
    await ok(env.mcp, 'update_price_plan', { id: charge.pricePlan.id, status: 'active' });
    await ok(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods });
  });

  it('gives an inactive customer no new subscription (422), offer (422) or activation (409); reactivated, it does', async () => {
    const plan = await planOf(await priced());
    const c = await customer();
    const draft = await ok(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods });
    await ok(env.mcp, 'update_customer', { id: c.id, status: 'STATUS_INACTIVE' });

    const p = await fails(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods, activate: true }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'customer', code: 'inactive' })]);
    expect(p.detail).toContain('STATUS_INACTIVE');
    const offer = await fails(env.mcp, 'create_offer', offerFor(c.id, plan.id), 422);
    expect(paths(offer)).toEqual(['customer']);
    const activation = await fails(env.mcp, 'activate_subscription', { id: draft.id }, 409);
    expect(activation.detail).toContain('update_customer');
    expect((await ok(env.mcp, 'get_subscription', { id: draft.id })).status).toBe('draft');

    await ok(env.mcp, 'update_customer', { id: c.id, status: 'STATUS_ACTIVE' });
    expect((await ok(env.mcp, 'activate_subscription', { id: draft.id })).status).toBe('active');
  });

  it('gives an inactive customer no payment plan (409)', async () => {
    const c = await customer();
    const invoice = await ok(env.mcp, 'create_invoice', { customer: c.id, lines: [{ description: 'Licence', quantity: 1, unitAmount: 9000 }] });
    await ok(env.mcp, 'update_customer', { id: c.id, status: 'STATUS_INACTIVE' });
    const p = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, installmentCount: 3, firstDueAt: '2026-02-01', interval: '1M' }, 409);
    expect(p.detail).toContain('STATUS_INACTIVE');
    expect((await ok(env.mcp, 'list_payment_plans', {})).data.filter((x: any) => x.invoiceId === invoice.id)).toEqual([]);
  });
});

describe('payment methods', () => {
  const card = (expYear: number, expMonth = 12) => ({ type: 'card', card: { brand: 'visa', last4: '4242', expMonth, expYear } });

  it('shows status disabled once disabled; the default passes to the oldest active method; enabling and default: true work', async () => {
    const c = await customer();
    const first = await ok(env.mcp, 'create_payment_method', { id: c.id, ...card(2030) });
    const second = await ok(env.mcp, 'create_payment_method', { id: c.id, type: 'paypal', paypal: { email: 'payer@example.com' } });
    expect([first.status, first.default, second.default]).toEqual(['active', true, false]);

    const disabled = await ok(env.mcp, 'update_payment_method', { id: c.id, paymentMethodId: first.id, enabled: false, name: 'Old card' });
    expect(disabled).toMatchObject({ id: first.id, enabled: false, status: 'disabled', default: false, name: 'Old card' });
    const listed = (await env.http('GET', `/customers/${c.id}/payment-methods`)).body.data;
    expect(listed.map((m: any) => [m.id, m.status, m.default])).toEqual([
      [first.id, 'disabled', false],
      [second.id, 'active', true],
    ]);

    const p = await fails(env.mcp, 'update_payment_method', { id: c.id, paymentMethodId: first.id, default: true }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'default', code: 'disabled_default' })]);
    const res = await env.http('PUT', `/customers/${c.id}/payment-methods/${first.id}`, { body: { enabled: true, default: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'active', default: true });
    expect((await env.http('GET', `/customers/${c.id}/payment-methods`)).body.data.map((m: any) => m.default)).toEqual([true, false]);

    const other = await customer();
    await fails(env.mcp, 'update_payment_method', { id: other.id, paymentMethodId: first.id, enabled: false }, 404);
  });

  it('refuses a disabled method for subscriptions and payment plans (422 at paymentMethod)', async () => {
    const c = await customer();
    const method = await ok(env.mcp, 'create_payment_method', { id: c.id, ...card(2030) });
    await ok(env.mcp, 'update_payment_method', { id: c.id, paymentMethodId: method.id, enabled: false });
    const plan = await planOf(await priced());
    const s = await fails(env.mcp, 'create_subscription', { customer: c.id, plan: plan.id, periods, paymentMethod: method.id }, 422);
    expect(s.violations).toEqual([expect.objectContaining({ propertyPath: 'paymentMethod', code: 'disabled' })]);
    const invoice = await ok(env.mcp, 'create_invoice', { customer: c.id, lines: [{ description: 'Licence', quantity: 1, unitAmount: 9000 }] });
    const p = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, paymentMethod: method.id, installmentCount: 2, firstDueAt: '2026-02-01', interval: '1M' }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'paymentMethod', code: 'disabled' })]);
    const stranger = await ok(env.mcp, 'create_payment_method', { id: (await customer()).id, ...card(2030) });
    const q = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, paymentMethod: stranger.id, installmentCount: 2, firstDueAt: '2026-02-01', interval: '1M' }, 422);
    expect(q.violations).toEqual([expect.objectContaining({ propertyPath: 'paymentMethod', code: 'not_found' })]);
  });

  it('shows status expired once the card expiry month is over, and refuses it for payment plans', async () => {
    const c = await customer();
    const method = await ok(env.mcp, 'create_payment_method', { id: c.id, ...card(2026, 1) });
    expect(method).toMatchObject({ status: 'active', expirationDate: '2026-01-31T23:59:59.999Z' });
    const invoice = await ok(env.mcp, 'create_invoice', { customer: c.id, lines: [{ description: 'Licence', quantity: 1, unitAmount: 9000 }] });

    env.setNow('2026-02-01T00:00:00Z');
    expect((await ok(env.mcp, 'list_payment_methods', { id: c.id })).data.map((m: any) => m.status)).toEqual(['expired']);
    const p = await fails(env.mcp, 'create_payment_plan', { invoice: invoice.id, paymentMethod: method.id, installmentCount: 2, firstDueAt: '2026-02-01', interval: '1M' }, 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'paymentMethod', code: 'expired' })]);
    const def = await fails(env.mcp, 'update_payment_method', { id: c.id, paymentMethodId: method.id, default: true }, 422);
    expect(def.violations).toEqual([expect.objectContaining({ propertyPath: 'default', code: 'expired_default' })]);
  });
});

describe('update_coupon', () => {
  it('disables a coupon: it cannot be newly applied, a discount it already gives keeps running', async () => {
    const coupon = await ok(env.mcp, 'create_coupon', { code: `TEN${++n}`, name: 'Ten', type: 'percentage', frequency: 'limited', frequencyInterval: 2, percentage: 10 });
    const s = await ok(env.mcp, 'create_subscription', { customer: (await customer()).id, plan: (await planOf(await priced())).id, periods, activate: true });
    const addon = await priced();
    await ok(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: addon.product.id, pricePlan: addon.pricePlan.id, discount: { coupon: coupon.code } }] });

    env.setNow('2026-01-16T00:00:00Z');
    const disabled = await ok(env.mcp, 'update_coupon', { id: coupon.code, isEnabled: false, name: 'Ten percent' });
    expect(disabled).toMatchObject({ id: coupon.id, code: coupon.code, name: 'Ten percent', isEnabled: false, updatedAt: '2026-01-16T00:00:00.000Z' });
    expect(await ok(env.mcp, 'get_coupon', { id: coupon.id })).toEqual(disabled);
    const p = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: addon.product.id, pricePlan: addon.pricePlan.id, discount: { coupon: coupon.id } }] }, 422);
    expect(paths(p)).toEqual(['products[0].discount.coupon']);

    const [invoice] = await bill(s.id);
    expect(invoice.lines.map((l: any) => l.netAmount)).toEqual([1000, 1000, -100]);

    const res = await env.http('PUT', `/coupons/${coupon.id}`, { body: { isEnabled: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ isEnabled: true, name: 'Ten percent' });
    await fails(env.mcp, 'update_coupon', { id: 'NO-SUCH-COUPON', isEnabled: true }, 404);
  });
});
