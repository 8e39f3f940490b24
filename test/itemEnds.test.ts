/**
 * Ending one item of a running subscription (`update_subscription_item` billingEnd), through the real
 * server: the date is a term end of the item's own periods, or of the subscription's when it inherits
 * them, with notice; its children end with it; billing cuts its last period as a cancellation does;
 * null takes the end back. The customer is in UTC, so the dates read as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billAt, fails, ok, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
let customer: any;
let n = 0;

beforeAll(async () => {
  env = await setup();
  env.setNow('2027-05-01T00:00:00Z');
  customer = await ok(env.mcp, 'create_customer', { lastName: 'Ender', timeZone: 'UTC' });
});
afterAll(() => env.close());

/** A product with a monthly price plan of 31.00 EUR (1.00 a day in a 31-day month). */
async function monthly(name: string, price: Record<string, unknown> = {}): Promise<{ product: string; pricePlan: string }> {
  const product = await ok(env.mcp, 'create_product', { name });
  const pricePlan = await ok(env.mcp, 'create_price_plan', { id: product.id, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 31 }, billingInterval: '1M', payInAdvance: true, proRata: true, ...price });
  return { product: product.id, pricePlan: pricePlan.id };
}

/** An active subscription started now on a plan of one monthly fee paid in advance; monthly terms without notice unless given. */
async function subscribe(periods = [{ contractPeriod: '1M', cancellationPeriod: '0D' }], activate = true): Promise<any> {
  n += 1;
  const base = await monthly(`Base ${n}`);
  const plan = await ok(env.mcp, 'create_plan', { code: `end-${n}`, name: `End ${n}`, charges: [base] });
  const s = await ok(env.mcp, 'create_subscription', { customer: customer.id, plan: plan.id, periods, activate });
  return { ...s, family: plan.family.id };
}

/** Orders `entries` on the subscription now; the items of the answer that were not there before. */
async function order(s: any, entries: unknown[]): Promise<any[]> {
  const before = new Set((await ok(env.mcp, 'get_subscription', { id: s.id })).items.map((i: any) => i.id));
  const ordered = await ok(env.mcp, 'order_subscription_products', { id: s.id, products: entries });
  return ordered.items.filter((i: any) => !before.has(i.id));
}

const lines = (invoices: Array<Array<[string, number, string, string]>>, prefix: string) => invoices.flat().filter((l) => l[0].startsWith(prefix));

describe('ending an item of a running subscription', () => {
  it("with periods of its own: at a term end of those, counted from the item's start, with their notice; the last period billed is the one ending then", async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe();
    env.setNow('2027-05-10T00:00:00Z');
    const [addon] = await order(s, [{ ...(await monthly(`Support ${n}`)), periods: [{ contractPeriod: '3M', cancellationPeriod: '1M' }] }]);
    expect(addon).toMatchObject({ inheritedPeriod: false, startDate: '2027-05-10T00:00:00.000Z', billingEnd: null });

    env.setNow('2027-06-20T00:00:00Z');
    const refused = await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-07-10T00:00:00Z' }, 422);
    expect(refused.violations).toEqual([
      expect.objectContaining({
        propertyPath: 'billingEnd',
        code: 'not_possible',
        message: expect.stringContaining("of the item's own periods (counted from its startDate) that the cancellation period still allows; the next possible dates are 2027-08-10T00:00:00.000Z, 2027-11-10T00:00:00.000Z, 2028-02-10T00:00:00.000Z"),
      }),
    ]);
    // The first term ends 10 August; its notice of a month ran out on 10 July.
    env.setNow('2027-07-11T00:00:00Z');
    const late = await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-08-10T00:00:00Z' }, 422);
    expect(late.detail).toContain('the next possible dates are 2027-11-10T00:00:00.000Z, 2028-02-10T00:00:00.000Z, 2028-05-10T00:00:00.000Z');
    env.setNow('2027-07-10T00:00:00Z');
    const ended = await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-08-10T00:00:00Z' });
    expect(ended).toMatchObject({ billingEnd: '2027-08-10T00:00:00.000Z', status: 'active' });

    const billed = await billAt(env, '2027-10-01T00:00:00Z', s.id);
    expect(lines(billed, 'Support').map((l) => [l[1], l[2], l[3]])).toEqual([
      [3100, '2027-05-10T00:00:00.000Z', '2027-06-10T00:00:00.000Z'],
      [3100, '2027-06-10T00:00:00.000Z', '2027-07-10T00:00:00.000Z'],
      [3100, '2027-07-10T00:00:00.000Z', '2027-08-10T00:00:00.000Z'],
    ]);
    expect(lines(billed, 'Base')).toHaveLength(6);
    const after = await ok(env.mcp, 'get_subscription_item', { id: addon.id });
    expect(after).toMatchObject({ status: 'ended', billing: { nextBillingAt: null } });
    // A model reads the ended item as a reference; REST keeps it in full among the items.
    const read = await ok(env.mcp, 'get_subscription', { id: s.id });
    expect(read.items.map((i: any) => i.id)).toEqual([s.items[0].id]);
    expect(read.endedItems).toEqual([{ id: addon.id, name: `Support ${n}`, billingEnd: '2027-08-10T00:00:00.000Z' }]);
    const rest = (await env.http('GET', `/subscriptions/${s.id}`)).body;
    expect(rest.items.find((i: any) => i.id === addon.id)).toMatchObject({ status: 'ended', pricePlan: { id: expect.any(String) } });
    expect(rest.endedItems).toBeUndefined();
    expect((await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: null }, 409)).detail).toMatch(/ended at 2027-08-10T00:00:00.000Z/);
  });

  it("inheriting the subscription's periods: at a date cancel_subscription would take; a period paid in advance that the end cuts short is billed pro rata up to it", async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe();
    env.setNow('2027-05-10T00:00:00Z');
    const [addon] = await order(s, [await monthly(`Support ${n}`)]);
    expect(addon.inheritedPeriod).toBe(true);
    env.setNow('2027-05-20T00:00:00Z');
    const refused = await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-06-10T00:00:00Z' }, 422);
    expect(refused.detail).toContain('of the subscription (the item inherits its periods) that the cancellation period still allows; the next possible dates are 2027-06-01T00:00:00.000Z, 2027-07-01T00:00:00.000Z, 2027-08-01T00:00:00.000Z');
    await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-07-01T00:00:00Z' });
    const billed = await billAt(env, '2027-08-01T00:00:00Z', s.id);
    // 10 June to 1 July: 21 of the period's 30 days of 31.00.
    expect(lines(billed, 'Support')).toEqual([
      [`Support ${n} (2027-05-10 to 2027-06-09)`, 3100, '2027-05-10T00:00:00.000Z', '2027-06-10T00:00:00.000Z'],
      [`Support ${n} (pro rata 21/30 days, 2027-06-10 to 2027-06-30)`, 2170, '2027-06-10T00:00:00.000Z', '2027-07-01T00:00:00.000Z'],
    ]);
  });

  it('null takes a pending end back: a period it cut short and that was billed bills its rest as a period of its own', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe();
    env.setNow('2027-05-10T00:00:00Z');
    const [addon] = await order(s, [await monthly(`Support ${n}`)]);
    await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-07-01T00:00:00Z' });
    await billAt(env, '2027-06-15T00:00:00Z', s.id);
    const kept = await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: null });
    expect(kept).toMatchObject({ billingEnd: null, billing: { nextBillingAt: '2027-07-01T00:00:00.000Z' } });
    const billed = await billAt(env, '2027-07-15T00:00:00Z', s.id);
    // 1 to 10 July: the 9 days of the period 10 June - 10 July the end had cut off.
    expect(lines(billed, 'Support').map((l) => [l[1], l[2], l[3]])).toEqual([
      [930, '2027-07-01T00:00:00.000Z', '2027-07-10T00:00:00.000Z'],
      [3100, '2027-07-10T00:00:00.000Z', '2027-08-10T00:00:00.000Z'],
    ]);
  });

  it('its children end with it (a later end of their own is shortened), and take the end back with it', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe();
    const [parent, child] = await order(s, [{ ...(await monthly(`Bundle ${n}`)), children: [await monthly(`Part ${n}`)] }]);
    expect(child.parent).toBe(parent.id);
    await ok(env.mcp, 'update_subscription_item', { id: parent.id, billingEnd: '2027-08-01T00:00:00Z' });
    expect(await ok(env.mcp, 'get_subscription_item', { id: child.id })).toMatchObject({ billingEnd: '2027-08-01T00:00:00.000Z' });
    // The child alone ends earlier; ending the parent later again leaves the child's earlier end.
    await ok(env.mcp, 'update_subscription_item', { id: child.id, billingEnd: '2027-06-01T00:00:00Z' });
    await ok(env.mcp, 'update_subscription_item', { id: parent.id, billingEnd: '2027-09-01T00:00:00Z' });
    expect(await ok(env.mcp, 'get_subscription_item', { id: child.id })).toMatchObject({ billingEnd: '2027-06-01T00:00:00.000Z' });
    await ok(env.mcp, 'update_subscription_item', { id: child.id, billingEnd: '2027-09-01T00:00:00Z' });
    await ok(env.mcp, 'update_subscription_item', { id: parent.id, billingEnd: null });
    expect(await ok(env.mcp, 'get_subscription_item', { id: child.id })).toMatchObject({ billingEnd: null });
  });

  it('is refused when nothing would be left to bill, after the subscription ends, for a plan charge a pending plan change ends, and on a final subscription', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe();
    const base = s.items[0];
    const only = await fails(env.mcp, 'update_subscription_item', { id: base.id, billingEnd: '2027-06-01T00:00:00Z' }, 409);
    expect(only.detail).toContain(`would leave subscription ${s.number} nothing to bill after it; cancel_subscription ends the whole subscription`);

    const [addon] = await order(s, [await monthly(`Extra ${n}`)]);
    await ok(env.mcp, 'cancel_subscription', { id: s.id, cancellationDate: '2027-07-01T00:00:00Z' });
    const after = await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-08-01T00:00:00Z' }, 422);
    expect(after.violations[0]).toMatchObject({ propertyPath: 'billingEnd', code: 'after_subscription_end' });
    // At the subscription's own end: nothing changes in what is billed, and it is not "nothing left".
    await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-07-01T00:00:00Z' });
    await ok(env.mcp, 'revoke_subscription_cancellation', { id: s.id });

    const other = await ok(env.mcp, 'create_plan', { code: `end-other-${n}`, name: 'Other', family: s.family, charges: [await monthly(`Other ${n}`)] });
    await ok(env.mcp, 'change_subscription_plan', { id: s.id, plan: other.id, applyAt: 'end_of_period' });
    expect((await fails(env.mcp, 'update_subscription_item', { id: base.id, billingEnd: '2027-08-01T00:00:00Z' }, 409)).detail).toContain('revoke_subscription_plan_change first');
    await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: null });

    await ok(env.mcp, 'terminate_subscription', { id: s.id });
    expect((await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-08-01T00:00:00Z' }, 409)).detail).toContain('final');
  });

  it('before activation, any date after the item starts; then terms apply', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe(undefined, false);
    const [addon] = await order(s, [await monthly(`Trial ${n}`)]);
    expect((await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-04-01T00:00:00Z' }, 422)).violations[0]).toMatchObject({ code: 'in_the_past' });
    expect(await ok(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-05-17T00:00:00Z' })).toMatchObject({ billingEnd: '2027-05-17T00:00:00.000Z' });
    await ok(env.mcp, 'activate_subscription', { id: s.id });
    const running = await fails(env.mcp, 'update_subscription_item', { id: addon.id, billingEnd: '2027-05-20T00:00:00Z' }, 422);
    expect(running.detail).toContain('the next possible dates are 2027-06-01T00:00:00.000Z');
    const billed = await billAt(env, '2027-06-01T00:00:00Z', s.id);
    expect(lines(billed, 'Trial').map((l) => [l[1], l[2], l[3]])).toEqual([[1600, '2027-05-01T00:00:00.000Z', '2027-05-17T00:00:00.000Z']]);
  });

  it('over REST as a merge patch, a bad date named at its field and nothing changed', async () => {
    env.setNow('2027-05-01T00:00:00Z');
    const s = await subscribe();
    const [addon] = await order(s, [await monthly(`Rest ${n}`)]);
    const bad = await env.http('PATCH', `/subscription-items/${addon.id}`, { body: { billingEnd: 'next month', name: 'Renamed' }, contentType: 'application/merge-patch+json' });
    expect(bad.status).toBe(422);
    expect(bad.body.violations[0].propertyPath).toBe('billingEnd');
    // Every operation's path parameters are named apart from the fields its body takes.
    const unknown = await env.http('PATCH', `/subscription-items/${addon.id}`, { body: { endDate: '2027-06-01T00:00:00Z' }, contentType: 'application/merge-patch+json' });
    expect(unknown.body.violations[0].message).toBe(
      "'endDate' is not a field of the input; allowed: quantity, name, description, furtherInformation, billingEnd, besides the path parameter id",
    );
    const patched = await env.http('PATCH', `/subscription-items/${addon.id}`, { body: { billingEnd: '2027-06-01T00:00:00Z' }, contentType: 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: `Rest ${n}`, billingEnd: '2027-06-01T00:00:00.000Z' });
  });
});
