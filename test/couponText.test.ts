/**
 * Coupon codes and names: a code is matched exactly wherever a coupon is named, so it may not be
 * blank, carry whitespace around it or have the form of an id; a name may not be blank (it is shown
 * on invoices).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

const coupon = (fields: Record<string, unknown>) => ({ code: 'WELCOME', name: 'Welcome', type: 'percentage', frequency: 'once', percentage: 10, ...fields });

describe('coupon code and name', () => {
  it.each(['   ', ' WELCOME10', 'WELCOME10 ', 'WELCOME10\n'])('refuses the code %j, blank or with surrounding whitespace', async (code) => {
    const p = await fails(env.mcp, 'create_coupon', coupon({ code }), 422);
    expect(p.violations).toEqual([{ propertyPath: 'code', code: 'custom', message: 'code must not be blank or begin or end with whitespace: it is matched exactly' }]);
    const res = await env.http('POST', '/coupons', { body: coupon({ code }) });
    expect([res.status, paths(res.body)]).toEqual([422, ['code']]);
  });

  it.each(['   ', '\t'])('refuses the blank name %j on create and update', async (name) => {
    const p = await fails(env.mcp, 'create_coupon', coupon({ code: 'BLANK-NAME', name }), 422);
    expect(p.violations).toEqual([{ propertyPath: 'name', code: 'custom', message: 'name must not be blank' }]);
    const c = await ok(env.mcp, 'create_coupon', coupon({ code: `NAMED-${name.length}` }));
    expect(paths(await fails(env.mcp, 'update_coupon', { id: c.id, name }, 422))).toEqual(['name']);
    expect((await ok(env.mcp, 'get_coupon', { id: c.code })).name).toBe('Welcome');
  });

  it('refuses a code of the form of an id, which get_coupon and discounts would take for an id', async () => {
    const p = await fails(env.mcp, 'create_coupon', coupon({ code: '0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69' }), 422);
    expect(p.violations).toEqual([{ propertyPath: 'code', code: 'custom', message: 'code must not have the form of an id (a UUID): every input naming a coupon takes its id or its code' }]);
  });

  it('keeps an empty code or name a single violation, and accepts inner spaces', async () => {
    expect(paths(await fails(env.mcp, 'create_coupon', coupon({ code: '' }), 422))).toEqual(['code']);
    expect(paths(await fails(env.mcp, 'create_coupon', coupon({ code: 'EMPTY', name: '' }), 422))).toEqual(['name']);
    const c = await ok(env.mcp, 'create_coupon', coupon({ code: 'SPRING 2026', name: ' Spring sale ' }));
    expect(c).toMatchObject({ code: 'SPRING 2026', name: ' Spring sale ' });
    expect((await ok(env.mcp, 'get_coupon', { id: 'SPRING 2026' })).id).toBe(c.id);
  });
});
