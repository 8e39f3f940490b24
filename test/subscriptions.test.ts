import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toResources } from '../src/domain/subscriptions/readModel.js';
import { runDueJobs } from '../src/jobs/runner.js';
import { buildFixture, type Fixture } from './fixtures.js';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;

let f: Fixture;
const yearly = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];

beforeAll(async () => {
  env = await setup();
  env.setNow('2026-01-15T10:00:00Z');
  f = await buildFixture(env.mcp);
});
afterAll(() => env.close());

const subscribe = (extra: Record<string, unknown> = {}) =>
  ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, ...extra });

describe('create_subscription', () => {
  it('creates a draft from the plan: items from charges, number generated, name from the plan, defaults computed', async () => {
    const s = await subscribe();
    expect(s).toMatchObject({
      status: 'draft',
      number: expect.stringMatching(/^SUB-\d{6}$/),
      name: 'Pro',
      defaultPaymentMethod: true,
      defaultInvoiceAddress: true,
      paymentMethod: null,
      isCancellationPending: false,
      nextBillingDate: null,
      nextPossibleCancellationDate: null,
      customer: { id: f.customer.id },
      plan: { id: f.plan.id },
    });
    expect(s.items.map((i: any) => [i.type, i.product.id, i.inheritedPeriod])).toEqual([
      ['charge', f.product.id, true],
      ['charge', f.meteredProduct.id, true],
    ]);
    expect(s.customer).toEqual({
      id: f.customer.id,
      customerNumber: f.customer.customerNumber,
      companyName: f.customer.companyName,
      firstName: f.customer.firstName,
      lastName: f.customer.lastName,
    });
    expect(s.plan).toEqual({ id: f.plan.id, code: f.plan.code, name: f.plan.name });
    expect(s.periods).toEqual([{ contractPeriod: '12M', cancellationPeriod: '3M' }]);
    const full = (await env.http('GET', `/subscriptions/${s.id}`)).body;
    expect(full.periods[0]).toMatchObject({ contractPeriod: '12M', cancellationPeriod: '3M', contractPeriodCount: 12 });
    expect(full.customer).toMatchObject({ id: f.customer.id, currencyCode: f.customer.currencyCode });
    const second = await subscribe();
    expect(Number(second.number.slice(4))).toBe(Number(s.number.slice(4)) + 1);
  });

  it('adds addons only when asked for, and only the plan addons', async () => {
    const s = await subscribe({ addons: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] });
    expect(s.items.filter((i: any) => i.type === 'addon').map((i: any) => i.product.id)).toEqual([f.addonProduct.id]);
    const p = await fails(env.mcp, 'create_subscription', {
      customer: f.customer.id,
      plan: f.plan.id,
      periods: yearly,
      addons: [{ product: f.product.id, pricePlan: f.pricePlan.id }],
    }, 422);
    expect(paths(p)).toEqual(['addons[0]']);
  });

  it('rejects unknown references, a duplicate number, bad periods and too long fields, naming each field', async () => {
    const base = { customer: f.customer.id, plan: f.plan.id, periods: yearly };
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, customer: 'nope' }, 422))).toEqual(['customer']);
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, plan: 'nope' }, 422))).toEqual(['plan']);
    const retired = await ok(env.mcp, 'create_plan', { code: 'retired', name: 'Retired', charges: [{ product: f.product.id, pricePlan: f.pricePlan.id }] });
    await ok(env.mcp, 'update_plan', { id: retired.id, status: 'archived' });
    const archived = await fails(env.mcp, 'create_subscription', { ...base, plan: retired.id }, 422);
    expect(archived.violations).toEqual([
      { propertyPath: 'plan', code: 'archived', message: 'plan retired is archived; subscribe to an active plan (list_plans with status active), or set this one active with update_plan' },
    ]);
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, billingGroup: '01J00000000000000000000000' }, 422))).toEqual(['billingGroup']);
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, paymentMethod: 'nope', invoiceAddress: 'nope' }, 422)).sort()).toEqual([
      'invoiceAddress',
      'paymentMethod',
    ]);
    await subscribe({ number: 'CUSTOM-1' });
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, number: 'CUSTOM-1' }, 422))).toEqual(['number']);
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, periods: [] }, 422))).toEqual(['periods']);
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, periods: [{ contractPeriod: '12', cancellationPeriod: '3M' }] }, 422))).toEqual([
      'periods[0].contractPeriod',
    ]);
    for (const field of ['name', 'externalId', 'poNumber', 'number']) {
      expect(paths(await fails(env.mcp, 'create_subscription', { ...base, [field]: 'x'.repeat(256) }, 422))).toEqual([field]);
    }
    await subscribe({ name: 'x'.repeat(255), externalId: 'e'.repeat(255) });
    expect(paths(await fails(env.mcp, 'create_subscription', { ...base, startDate: '2026-02-01T00:00:00' }, 422))).toEqual(['startDate']);
  });

  it('refuses a disabled payment method and one that has expired (422 at paymentMethod, naming why)', async () => {
    const disabled = await ok(env.mcp, 'create_payment_method', { id: f.customer.id, type: 'paypal', paypal: { email: 'off@example.com' }, enabled: false });
    const off = await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, paymentMethod: disabled.id }, 422);
    expect(off.violations).toMatchObject([{ propertyPath: 'paymentMethod', code: 'disabled' }]);
    const card = await ok(env.mcp, 'create_payment_method', { id: f.customer.id, type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 2, expYear: 2026 } });
    expect((await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, paymentMethod: card.id })).paymentMethod.id).toBe(card.id);
    env.setNow('2026-03-02T00:00:00Z');
    try {
      const expired = await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, paymentMethod: card.id }, 422);
      expect(expired.violations).toMatchObject([{ propertyPath: 'paymentMethod', code: 'expired' }]);
    } finally {
      env.setNow('2026-01-15T10:00:00Z');
    }
  });

  it("refuses another customer's payment method and a plan in another currency", async () => {
    const other = await ok(env.mcp, 'create_customer', { lastName: 'Other', currencyCode: 'EUR' });
    const pm = await ok(env.mcp, 'create_payment_method', { id: other.id, type: 'paypal', paypal: { email: 'o@example.com' } });
    expect(paths(await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, paymentMethod: pm.id }, 422))).toEqual([
      'paymentMethod',
    ]);
    const usd = await ok(env.mcp, 'create_customer', { lastName: 'Dollar', currencyCode: 'USD' });
    const p = await fails(env.mcp, 'create_subscription', { customer: usd.id, plan: f.plan.id, periods: yearly }, 422);
    expect(p.detail).toContain('billed in USD');
  });

  it('takes an explicit payment method of the customer: defaultPaymentMethod is then false', async () => {
    const s = await subscribe({ paymentMethod: f.paymentMethod.id });
    expect(s.defaultPaymentMethod).toBe(false);
    expect(s.paymentMethod).toEqual({ id: f.paymentMethod.id, type: 'sepa_debit' });
    const full = (await env.http('GET', `/subscriptions/${s.id}`)).body;
    expect(full.paymentMethod.sepaDebit.iban).toBe('DE89**************3000');
  });

  it('validates custom fields against the configuration', async () => {
    await ok(env.mcp, 'create_custom_field', { key: 'region', entity: 'subscription', type: 'select', options: ['north', 'south'] });
    const s = await subscribe({ customFields: { region: 'north' } });
    expect(s.customFields).toEqual({ region: 'north' });
    expect(paths(await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, customFields: { region: 'east' } }, 422))).toEqual([
      'customFields.region',
    ]);
    expect(paths(await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, customFields: { colour: 'red' } }, 422))).toEqual([
      'customFields.colour',
    ]);
  });

  it('lists by externalId, over MCP and REST (the id another system gave the subscription)', async () => {
    const tagged = await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, externalId: 'crm-4711' });
    await ok(env.mcp, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly, externalId: 'crm-4712' });
    const listed = await ok(env.mcp, 'list_subscriptions', { externalId: 'crm-4711' });
    expect(listed.data.map((r: any) => r.id)).toEqual([tagged.id]);
    const rest = await env.http('GET', '/subscriptions?externalId=crm-4711');
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((r: any) => r.id)).toEqual([tagged.id]);
    expect((await ok(env.mcp, 'list_subscriptions', { externalId: 'nobody' })).data).toEqual([]);
  });

  it('serves REST: 201 with Location, list filters by customer and status', async () => {
    const res = await env.http('POST', '/subscriptions', { body: { customer: f.customer.id, plan: f.plan.id, periods: yearly, activate: true } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/subscriptions/${res.body.id}`);
    expect(res.body.status).toBe('active');
    const active = await env.http('GET', `/subscriptions?status=active&customer=${f.customer.id}`);
    expect(active.body.data.every((s: any) => s.status === 'active' && s.customer.id === f.customer.id)).toBe(true);
    expect(active.body.data.map((s: any) => s.id)).toContain(res.body.id);
    expect((await env.http('GET', '/subscriptions?status=sleeping')).status).toBe(400);
  });
});

describe('state machine', () => {
  it('activate starts the contract and the billing of every item (in advance: at the start; in arrears: at the period end)', async () => {
    const s = await subscribe({ addons: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] });
    const a = await ok(env.mcp, 'activate_subscription', { id: s.id });
    expect(a).toMatchObject({ status: 'active', activatedAt: '2026-01-15T10:00:00.000Z', startDate: '2026-01-15T10:00:00.000Z' });
    const base = a.items.find((i: any) => i.product.id === f.product.id);
    const addon = a.items.find((i: any) => i.product.id === f.addonProduct.id);
    expect(base.billing).toMatchObject({ nextBillingAt: '2026-01-15T10:00:00.000Z' });
    expect((await ok(env.mcp, 'get_subscription_item', { id: base.id })).billing).toMatchObject({
      nextBillingAt: '2026-01-15T10:00:00.000Z',
      billingInterval: '1M',
    });
    expect(addon.billing.nextBillingAt).toBe('2026-02-15T10:00:00.000Z');
    expect(a.nextBillingDate).toBe('2026-01-15T10:00:00.000Z');
    expect(a.contractDetails).toEqual({ contractStart: '2026-01-15T10:00:00.000Z', contractEnd: '2027-01-15T10:00:00.000Z' });
    expect(a.nextPossibleCancellationDate).toEqual(['2027-01-15T10:00:00.000Z', '2028-01-15T10:00:00.000Z', '2029-01-15T10:00:00.000Z']);
    expect(a.items.every((i: any) => i.status === 'active')).toBe(true);
  });

  it('aligns billing to month ends in the customer time zone with an end_of_month billing group', async () => {
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Month ends', type: 'end_of_month' });
    const s = await subscribe({ billingGroup: group.id, addons: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }], activate: true });
    expect(s.billingGroup.id).toBe(group.id);
    const addon = s.items.find((i: any) => i.product.id === f.addonProduct.id);
    expect(addon.billing.nextBillingAt).toBe('2026-01-31T23:00:00.000Z');
  });

  it('pause and resume without a date keep the item billing dates (missed periods are billed)', async () => {
    const s = await subscribe({ activate: true });
    const before = s.items.map((i: any) => i.billing.nextBillingAt);
    env.setNow('2026-02-01T00:00:00Z');
    const paused = await ok(env.mcp, 'pause_subscription', { id: s.id });
    expect(paused).toMatchObject({ status: 'paused', nextBillingDate: null, pausedAt: '2026-02-01T00:00:00.000Z' });
    env.setNow('2026-04-01T00:00:00Z');
    const resumed = await ok(env.mcp, 'resume_subscription', { id: s.id });
    expect(resumed.status).toBe('active');
    expect(resumed.items.map((i: any) => i.billing.nextBillingAt)).toEqual(before);
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('resume with nextBillingDate makes it the next billing date of every item (what each owes from before the pause is billed on it); a date before the pause is rejected', async () => {
    const s = await subscribe({ activate: true });
    env.setNow('2026-02-01T00:00:00Z');
    await ok(env.mcp, 'pause_subscription', { id: s.id });
    env.setNow('2026-04-01T00:00:00Z');
    expect(paths(await fails(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2026-01-20T00:00:00Z' }, 422))).toEqual(['nextBillingDate']);
    const resumed = await ok(env.mcp, 'resume_subscription', { id: s.id, nextBillingDate: '2026-04-10T00:00:00+02:00' });
    expect(resumed.items.map((i: any) => i.billing.nextBillingAt)).toEqual(['2026-04-09T22:00:00.000Z', '2026-04-09T22:00:00.000Z']);
    expect(resumed).toMatchObject({ nextBillingDate: '2026-04-09T22:00:00.000Z', pausedAt: null });
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('cancel schedules at the next possible term end, pending until then; revoke undoes it; the jobs run cancels it when due', async () => {
    const s = await subscribe({ activate: true });
    const c = await ok(env.mcp, 'cancel_subscription', { id: s.id, reason: { code: 'too_expensive' } });
    expect(c).toMatchObject({
      status: 'active',
      cancellationDate: '2027-01-15T10:00:00.000Z',
      isCancellationPending: true,
      nextPossibleCancellationDate: null,
      cancellationReason: { code: 'too_expensive', name: 'too_expensive' },
    });
    expect(c.contractDetails.contractEnd).toBe('2027-01-15T10:00:00.000Z');
    expect((await fails(env.mcp, 'cancel_subscription', { id: s.id }, 409)).detail).toMatch(/already scheduled/);
    const r = await ok(env.mcp, 'revoke_subscription_cancellation', { id: s.id });
    expect(r).toMatchObject({ cancellationDate: null, isCancellationPending: false, cancellationReason: null });
    await fails(env.mcp, 'revoke_subscription_cancellation', { id: s.id }, 409);

    await ok(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2027-01-15T10:00:00Z' });
    const summary = await runDueJobs(env.app, new Date('2027-01-15T10:00:00Z'));
    expect(summary.jobs.dueCancellations!.cancelled).toBeGreaterThanOrEqual(1);
    env.setNow('2027-01-16T00:00:00Z');
    const done = await ok(env.mcp, 'get_subscription', { id: s.id });
    expect(done).toMatchObject({ status: 'cancelled', cancelledAt: '2027-01-15T10:00:00.000Z', isCancellationPending: false, nextBillingDate: null });
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('a cancellation date must respect the cancellation period and fall on a term end', async () => {
    const s = await subscribe({ activate: true });
    env.setNow('2026-11-01T00:00:00Z');
    const got = await ok(env.mcp, 'get_subscription', { id: s.id });
    expect(got.nextPossibleCancellationDate[0]).toBe('2028-01-15T10:00:00.000Z');
    const p = await fails(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2027-01-15T10:00:00Z' }, 422);
    expect(paths(p)).toEqual(['cancellationDate']);
    expect(p.detail).toContain('2028-01-15T10:00:00.000Z');
    expect(paths(await fails(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2028-03-01T00:00:00Z' }, 422))).toEqual(['cancellationDate']);
    const later = await ok(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2029-01-15T11:00:00+01:00' });
    expect(later.cancellationDate).toBe('2029-01-15T10:00:00.000Z');
    env.setNow('2026-01-15T10:00:00Z');
  });

  it('terminate ends draft, active and paused subscriptions at once; cancelled and terminated are final', async () => {
    const draft = await subscribe();
    expect((await ok(env.mcp, 'terminate_subscription', { id: draft.id })).status).toBe('terminated');
    const paused = await subscribe({ activate: true });
    await ok(env.mcp, 'pause_subscription', { id: paused.id });
    const t = await ok(env.mcp, 'terminate_subscription', { id: paused.id });
    expect(t).toMatchObject({ status: 'terminated', terminatedAt: '2026-01-15T10:00:00.000Z', contractDetails: { contractEnd: '2026-01-15T10:00:00.000Z' } });
    for (const tool of ['activate_subscription', 'pause_subscription', 'resume_subscription', 'cancel_subscription', 'terminate_subscription']) {
      const p = await fails(env.mcp, tool, { id: t.id }, 409);
      expect(p.detail).toMatch(/its status is terminated \(terminated is final\)/);
    }
    expect((await fails(env.mcp, 'update_subscription', { id: t.id, periods: yearly }, 409)).detail).toMatch(/final/);
  });

  it.each([
    ['activate_subscription', 'active', 'draft'],
    ['pause_subscription', 'draft', 'active'],
    ['pause_subscription', 'paused', 'active'],
    ['resume_subscription', 'active', 'paused'],
    ['resume_subscription', 'draft', 'paused'],
    ['cancel_subscription', 'draft', 'active or paused'],
    ['revoke_subscription_cancellation', 'draft', 'active or paused'],
  ])('%s from %s is a 409 naming the status and the allowed ones', async (tool, from, allowed) => {
    const s = await subscribe({ activate: from !== 'draft' });
    if (from === 'paused') await ok(env.mcp, 'pause_subscription', { id: s.id });
    const p = await fails(env.mcp, tool, { id: s.id }, 409);
    expect(p.detail).toContain(`its status is ${from}`);
    expect(p.detail).toContain(`allowed only from ${allowed}`);
  });

  it('actions are routes too: PUT /subscriptions/{id}/pause', async () => {
    const s = await subscribe({ activate: true });
    const res = await env.http('PUT', `/subscriptions/${s.id}/pause`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('paused');
    expect((await env.http('PUT', `/subscriptions/${s.id}/pause`)).status).toBe(409);
  });
});

describe('update_subscription', () => {
  it('requires periods, keeps omitted fields, clears with null; startDate only while draft', async () => {
    const s = await subscribe({ poNumber: 'PO-1', externalId: 'ext-1' });
    const missing = await fails(env.mcp, 'update_subscription', { id: s.id, name: 'x' }, 422);
    expect(paths(missing)).toEqual(['periods']);
    const u = await ok(env.mcp, 'update_subscription', {
      id: s.id,
      periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }],
      poNumber: null,
      startDate: '2026-02-01T00:00:00Z',
    });
    expect(u).toMatchObject({ poNumber: null, externalId: 'ext-1', startDate: '2026-02-01T00:00:00.000Z', name: 'Pro' });
    expect(u.periods).toHaveLength(1);
    expect(u.periods[0].contractPeriod).toBe('1M');
    await ok(env.mcp, 'activate_subscription', { id: s.id });
    const p = await fails(env.mcp, 'update_subscription', { id: s.id, periods: yearly, startDate: '2026-03-01T00:00:00Z' }, 409);
    expect(p.detail).toMatch(/startDate .* frozen/);
    await ok(env.mcp, 'update_subscription', { id: s.id, periods: yearly, startDate: '2026-02-01T00:00:00Z', name: 'Renamed' });
  });

  it('checks number uniqueness, billing groups (ULID or UUID form, or null) and custom fields', async () => {
    const a = await subscribe({ number: 'UNIQ-A' });
    const b = await subscribe();
    expect(paths(await fails(env.mcp, 'update_subscription', { id: b.id, periods: yearly, number: 'UNIQ-A' }, 422))).toEqual(['number']);
    await ok(env.mcp, 'update_subscription', { id: a.id, periods: yearly, number: 'UNIQ-A' });
    const group = await ok(env.mcp, 'create_billing_group', { name: 'Group', type: 'end_of_month' });
    const { ulidToUuid } = await import('../src/ids.js');
    const withUuid = await ok(env.mcp, 'update_subscription', { id: b.id, periods: yearly, billingGroup: ulidToUuid(group.id) });
    expect(withUuid.billingGroup.id).toBe(group.id);
    const cleared = await ok(env.mcp, 'update_subscription', { id: b.id, periods: yearly, billingGroup: null });
    expect(cleared.billingGroup).toBeNull();
    expect(paths(await fails(env.mcp, 'update_subscription', { id: b.id, periods: yearly, customFields: { region: 7 } }, 422))).toEqual([
      'customFields.region',
    ]);
  });
});

describe('order_subscription_products and items', () => {
  it('orders products with a price plan or a custom price plan, children, discounts and dates', async () => {
    const s = await subscribe({ activate: true });
    await ok(env.mcp, 'create_coupon', { code: 'WELCOME', name: 'Welcome', type: 'percentage', frequency: 'once', percentage: 10 });
    const ordered = await ok(env.mcp, 'order_subscription_products', {
      id: s.id,
      startDate: '2026-02-01T00:00:00Z',
      endDate: '2027-02-01T00:00:00Z',
      products: [
        {
          product: f.addonProduct.id,
          pricePlan: f.addonPricePlan.id,
          quantity: 2,
          customName: 'Premium support',
          discount: { coupon: 'WELCOME' },
          periods: [{ contractPeriod: '1M', cancellationPeriod: '0D' }],
          children: [
            {
              product: f.product.id,
              customPricePlan: { type: 'flat_fee', currencyCode: 'EUR', price: { amount: 5 }, billingInterval: '1M' },
              discount: { type: 'fixed_amount', fixedAmount: { amount: 1, currency: 'EUR' }, frequency: 'limited', frequencyInterval: 3 },
            },
          ],
        },
      ],
    });
    const parent = ordered.items.find((i: any) => i.name === 'Premium support');
    expect(parent).toMatchObject({ type: 'addon', quantity: 2, parent: null, inheritedPeriod: false, startDate: '2026-02-01T00:00:00.000Z', billingEnd: '2027-02-01T00:00:00.000Z' });
    const parentItem = await ok(env.mcp, 'get_subscription_item', { id: parent.id });
    expect(parentItem.appliedDiscounts[0]).toMatchObject({ coupon: { code: 'WELCOME' }, discount: null, status: 'active', appliedIntervals: 0 });
    expect(parent.appliedDiscounts).toEqual([{ id: parentItem.appliedDiscounts[0].id, status: 'active', appliedIntervals: 0 }]);
    expect(parent.billing.nextBillingAt).toBe('2026-03-01T00:00:00.000Z');
    const child = ordered.items.find((i: any) => i.parent === parent.id);
    expect(child.pricePlan).toMatchObject({ type: 'flat_fee', currencyCode: 'EUR', billingInterval: '1M', price: { amount: 5 } });
    expect(child.product).toEqual({ id: f.product.id, name: f.product.name });
    const childItem = await ok(env.mcp, 'get_subscription_item', { id: child.id });
    expect(childItem.pricePlan).toMatchObject({ id: child.pricePlan.id, custom: true, price: { amount: 5 }, product: f.product.id });
    expect(childItem.appliedDiscounts[0].discount).toMatchObject({ type: 'fixed_amount', fixedAmount: { amount: 1, currency: 'EUR' }, frequencyInterval: 3 });
    expect((await ok(env.mcp, 'get_price_plan', { id: f.addonPricePlan.id })).inUse).toBe(true);
  });

  it('rejects each bad entry at its path and writes nothing', async () => {
    const s = await subscribe();
    const before = (await ok(env.mcp, 'get_subscription', { id: s.id })).items.length;
    const usd = await ok(env.mcp, 'create_price_plan', { id: f.addonProduct.id, type: 'flat_fee', currencyCode: 'USD', price: { amount: 1 }, billingInterval: '1M' });
    const p = await fails(env.mcp, 'order_subscription_products', {
      id: s.id,
      products: [
        { product: f.addonProduct.id },
        { product: f.addonProduct.id, pricePlan: f.pricePlan.id },
        { product: f.addonProduct.id, pricePlan: usd.id },
        { product: 'nope', pricePlan: f.pricePlan.id },
        { product: f.meteredProduct.id, pricePlan: f.meteredPricePlan.id, quantity: 5 },
        { product: f.addonProduct.id, pricePlan: f.addonPricePlan.id, discount: { coupon: 'NOPE' } },
        { product: f.addonProduct.id, pricePlan: f.addonPricePlan.id, discount: { type: 'percentage' } },
        {
          product: f.addonProduct.id,
          customPricePlan: { type: 'flat_fee', currencyCode: 'CHF', price: { amount: 1 }, billingInterval: '1M' },
        },
      ],
    }, 422);
    expect(paths(p)).toEqual([
      'products[0]',
      'products[1].pricePlan',
      'products[2].pricePlan',
      'products[3].product',
      'products[4].quantity',
      'products[5].discount.coupon',
      'products[6].discount.percentage',
      'products[7].customPricePlan.currencyCode',
    ]);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items.length).toBe(before);
  });

  it("refuses a startDate before the subscription's start, at startDate naming it, and writes nothing", async () => {
    const s = await subscribe({ activate: true });
    const early = await fails(env.mcp, 'order_subscription_products', { id: s.id, startDate: '2026-01-01T00:00:00Z', products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] }, 422);
    expect(paths(early)).toEqual(['startDate']);
    expect(early.detail).toContain("before the subscription's start 2026-01-15T10:00:00.000Z");
    const draft = await subscribe({ startDate: '2026-03-01T00:00:00Z' });
    expect(paths(await fails(env.mcp, 'order_subscription_products', { id: draft.id, startDate: '2026-02-28T23:59:59Z', products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] }, 422))).toEqual(['startDate']);
    expect((await ok(env.mcp, 'get_subscription', { id: s.id })).items).toHaveLength(s.items.length);
    const onTime = await ok(env.mcp, 'order_subscription_products', { id: draft.id, startDate: '2026-03-01T00:00:00Z', products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] });
    expect(onTime.items).toHaveLength(draft.items.length + 1);
  });

  it('refuses a quantity and price whose charge a period exceeds what an invoice may total, at the field, wherever an item gets them', async () => {
    const s = await subscribe({ activate: true });
    const dear = await ok(env.mcp, 'create_price_plan', { id: f.addonProduct.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 9999999999999.99 }, billingInterval: '1M' });
    const ordered = await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: f.addonProduct.id, pricePlan: dear.id, quantity: 1000.5 }] }, 422);
    expect(paths(ordered)).toEqual(['products[0].quantity']);
    expect(ordered.violations[0]).toMatchObject({ code: 'too_large' });
    expect(ordered.detail).toContain('more than the 9999999999.99 EUR an invoice may total');
    expect(paths(await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: f.addonProduct.id, pricePlan: dear.id }] }, 422))).toEqual(['products[0].pricePlan']);
    const custom = { type: 'per_unit', currencyCode: 'EUR', price: { amount: 5000000000 }, billingInterval: '1M' };
    expect(paths(await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: f.addonProduct.id, customPricePlan: custom, quantity: 3 }] }, 422))).toEqual(['products[0].quantity']);

    const top = await ok(env.mcp, 'create_price_plan', { id: f.addonProduct.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 9999999999.99 }, billingInterval: '1M' });
    const item = (await ok(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: f.addonProduct.id, pricePlan: top.id }] })).items.find((i: any) => i.pricePlan.id === top.id);
    const patched = await fails(env.mcp, 'update_subscription_item', { id: item.id, quantity: 2 }, 422);
    expect(paths(patched)).toEqual(['quantity']);
    expect((await ok(env.mcp, 'get_subscription_item', { id: item.id })).quantity).toBe(1);
    // Each charge fits; together with the others on one invoice they do not: the estimate says so (409), as the run will.
    expect((await fails(env.mcp, 'get_estimated_invoice', { id: s.id }, 409)).detail).toMatch(/cannot be billed on .*: its total comes to more than the €9,999,999,999\.99 an invoice may total/);

    const plan = await ok(env.mcp, 'create_plan', { code: 'too-dear', name: 'Too dear', charges: [{ product: f.addonProduct.id, pricePlan: top.id, quantity: 2 }] });
    const created = await fails(env.mcp, 'create_subscription', { customer: f.customer.id, plan: plan.id, periods: yearly }, 422);
    expect(paths(created)).toEqual(['plan']);
    expect(created.detail).toContain(`plan too-dear, charge ${f.addonProduct.name}: at quantity 2 it costs 19999999999.98 EUR a period`);
  });

  it('is refused for final subscriptions', async () => {
    const s = await subscribe();
    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    await fails(env.mcp, 'order_subscription_products', { id: s.id, products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] }, 409);
  });

  it('updates quantity, name and description by merge patch; a metered item quantity is a 422 that says why', async () => {
    const s = await subscribe({ activate: true });
    const base = s.items.find((i: any) => i.product.id === f.product.id);
    const metered = s.items.find((i: any) => i.product.id === f.meteredProduct.id);
    const u = await ok(env.mcp, 'update_subscription_item', { id: base.id, quantity: 3, description: 'Three seats' });
    expect(u).toMatchObject({ quantity: 3, description: 'Three seats', name: 'Base' });
    const cleared = await ok(env.mcp, 'update_subscription_item', { id: base.id, description: null, name: 'Seats' });
    expect(cleared).toMatchObject({ description: null, name: 'Seats', quantity: 3 });
    const p = await fails(env.mcp, 'update_subscription_item', { id: metered.id, quantity: 10 }, 422);
    expect(paths(p)).toEqual(['quantity']);
    expect(p.detail).toContain('usage drives the quantity');
    await ok(env.mcp, 'update_subscription_item', { id: metered.id, name: 'API usage' });
    const res = await env.http('PATCH', `/subscription-items/${base.id}`, { body: { quantity: 4 }, contentType: 'application/merge-patch+json' });
    expect(res.status).toBe(200);
    expect(res.body.quantity).toBe(4);
    expect((await env.http('PATCH', `/subscription-items/${base.id}`, { body: { quantity: 4 } })).status).toBe(415);
    expect((await env.http('GET', `/subscription-items/${base.id}`)).body.quantity).toBe(4);
  });
});

describe('access', () => {
  it("another organisation's subscriptions and items are 404 on every route", async () => {
    const s = await subscribe();
    const other = await env.newOrg('Subscription isolation');
    const client = await env.mcpFor(other.apiKey);
    for (const tool of ['get_subscription', 'activate_subscription', 'pause_subscription', 'terminate_subscription', 'revoke_subscription_cancellation']) {
      await fails(client, tool, { id: s.id }, 404);
    }
    await fails(client, 'update_subscription', { id: s.id, periods: yearly }, 404);
    await fails(client, 'resume_subscription', { id: s.id }, 404);
    await fails(client, 'cancel_subscription', { id: s.id }, 404);
    await fails(client, 'order_subscription_products', { id: s.id, products: [{ product: f.addonProduct.id, pricePlan: f.addonPricePlan.id }] }, 404);
    await fails(client, 'get_subscription_item', { id: s.items[0].id }, 404);
    await fails(client, 'update_subscription_item', { id: s.items[0].id, name: 'x' }, 404);
    expect((await ok(client, 'list_subscriptions')).data).toEqual([]);
    expect(paths(await fails(client, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly }, 422))).toEqual(['customer']);
    expect((await env.http('GET', `/subscriptions/${s.id}`, { token: other.apiKey })).status).toBe(404);
  });

  it('needs subscription permissions', async () => {
    const reader = await env.mcpFor(await env.newKey(env.org, ['subscription:read']));
    const names = (await reader.listTools()).tools.map((t) => t.name);
    expect(names).toContain('get_subscription');
    expect(names).not.toContain('create_subscription');
    await fails(reader, 'create_subscription', { customer: f.customer.id, plan: f.plan.id, periods: yearly }, 403);
    const none = await env.newKey(env.org, ['customer:read']);
    expect((await env.http('GET', '/subscriptions', { token: none })).status).toBe(403);
    const r = await call(reader, 'list_subscriptions', { customer: f.customer.id, limit: 1 });
    expect(r.isError).toBe(false);
  });
});

describe('reading a page of subscriptions', () => {
  it('reads each product and price plan once, for the plan and for the items alike', async () => {
    const subscriptions = [await subscribe(), await subscribe(), await subscribe()];
    const org = env.org.organisationId;
    const reads = { products: 0, pricePlans: 0 };
    const resources = await env.app.store.read(async (tx) => {
      const products = new Proxy(tx.products, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key === 'get') return (...args: unknown[]) => (reads.products++, value.apply(target, args));
          if (key === 'getPricePlan') return (...args: unknown[]) => (reads.pricePlans++, value.apply(target, args));
          return value;
        },
      });
      const records = [];
      for (const s of subscriptions) records.push((await tx.subscriptions.get(org, s.id))!);
      return toResources({ ...tx, products }, org, records, new Date('2026-01-15T10:00:00Z'));
    });
    const plan = resources[0]!.plan;
    const distinct = (ids: string[]) => new Set(ids).size;
    expect(reads.products).toBe(distinct([...plan.charges, ...plan.addons].map((c) => c.product.id)));
    expect(reads.pricePlans).toBe(distinct([...plan.charges, ...plan.addons].map((c) => c.pricePlan.id)));
    expect(resources.map((r) => r.items.map((i) => i.product.id))).toEqual(subscriptions.map((s) => s.items.map((i: any) => i.product.id)));
  });
});
