import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

describe('units', () => {
  it('creates and lists units; a name is unique', async () => {
    const unit = await ok(env.mcp, 'create_unit', { name: 'GB' });
    expect(unit).toMatchObject({ name: 'GB' });
    const dup = await fails(env.mcp, 'create_unit', { name: 'GB' }, 422);
    expect(paths(dup)).toEqual(['name']);
    const list = await ok(env.mcp, 'list_units', {});
    expect(list.data.map((u: { name: string }) => u.name)).toContain('GB');
  });
});

describe('a unit by id or name', () => {
  it('get_unit answers the Location of create_unit, and takes the name as measurements do', async () => {
    const res = await env.http('POST', '/catalogue/units', { body: { name: 'API request' } });
    expect(res.status).toBe(201);
    const got = await env.http('GET', res.headers.get('location')!);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(await ok(env.mcp, 'get_unit', { id: 'API request' })).toEqual(res.body);
    expect((await env.http('GET', `/catalogue/units/${encodeURIComponent('API request')}`)).body).toEqual(res.body);
    await fails(env.mcp, 'get_unit', { id: 'api request' }, 404);
    const { tools } = await env.mcp.listTools();
    expect(tools.find((t) => t.name === 'get_unit')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('refuses a name that differs from an existing one only in case or surrounding spaces, and surrounding whitespace', async () => {
    const unit = await ok(env.mcp, 'create_unit', { name: 'Seat' });
    for (const name of ['seat', 'SEAT']) {
      const dup = await fails(env.mcp, 'create_unit', { name }, 422);
      expect(dup.violations).toEqual([expect.objectContaining({ propertyPath: 'name', code: 'unique', message: expect.stringContaining(unit.id) })]);
    }
    for (const name of [' Seat', 'Seat ', '\tKilowatt hour', 'Kilowatt hour\n']) {
      const spaced = await fails(env.mcp, 'create_unit', { name }, 422);
      expect(spaced.violations).toEqual([expect.objectContaining({ propertyPath: 'name', code: 'surrounding_whitespace' })]);
    }
    expect(await ok(env.mcp, 'create_unit', { name: 'Seat hour' })).toMatchObject({ name: 'Seat hour' });
  });
});

describe('measurements', () => {
  beforeAll(async () => {
    await ok(env.mcp, 'create_unit', { name: 'call' });
  });

  const base = { unit: 'call', aggregationType: 'sum', type: 'metered', fairBilling: false };

  it('creates a measurement referring to the unit by name or id, with the unit object in the response', async () => {
    const m = await ok(env.mcp, 'create_measurement', { ...base, code: 'calls', description: 'API calls' });
    expect(m).toMatchObject({ code: 'calls', description: 'API calls', aggregationType: 'sum', type: 'metered', fairBilling: false });
    expect(m.unit).toEqual({ id: expect.any(String), name: 'call' });
    const byId = await ok(env.mcp, 'create_measurement', { ...base, unit: m.unit.id, code: 'calls-2' });
    expect(byId.unit.id).toBe(m.unit.id);
    expect(await ok(env.mcp, 'get_measurement', { id: m.id })).toEqual(m);
  });

  it('rejects a duplicate code, an unknown unit, and code or description out of bounds', async () => {
    await ok(env.mcp, 'create_measurement', { ...base, code: 'dup' });
    expect(paths(await fails(env.mcp, 'create_measurement', { ...base, code: 'dup' }, 422))).toEqual(['code']);
    expect(paths(await fails(env.mcp, 'create_measurement', { ...base, code: 'x', unit: 'nope' }, 422))).toEqual(['unit']);
    expect(paths(await fails(env.mcp, 'create_measurement', { ...base, code: '' }, 422))).toEqual(['code']);
    expect(paths(await fails(env.mcp, 'create_measurement', { ...base, code: 'c'.repeat(256) }, 422))).toEqual(['code']);
    await ok(env.mcp, 'create_measurement', { ...base, code: 'c'.repeat(255) });
    expect(paths(await fails(env.mcp, 'create_measurement', { ...base, code: 'd', description: 'd'.repeat(256) }, 422))).toEqual([
      'description',
    ]);
  });

  it('rejects enum values outside the allowed sets, naming them', async () => {
    const p = await fails(env.mcp, 'create_measurement', { ...base, code: 'e', aggregationType: 'median' }, 422);
    expect(paths(p)).toEqual(['aggregationType']);
    expect(p.violations[0].message).toContain('count_unique');
    expect(paths(await fails(env.mcp, 'create_measurement', { ...base, code: 'e', type: 'hourly' }, 422))).toEqual(['type']);
  });

  it.each(['recurring', 'instant_metered'])('requires last_value for type %s', async (type) => {
    const p = await fails(env.mcp, 'create_measurement', { ...base, code: `t-${type}`, type, aggregationType: 'max' }, 422);
    expect(p.detail).toBe(`aggregationType must be last_value when type is ${type} (got max); use type metered for other aggregations`);
    const m = await ok(env.mcp, 'create_measurement', { ...base, code: `t-${type}`, type, aggregationType: 'last_value' });
    expect(m.type).toBe(type);
  });

  it('updates code, description, unit and fairBilling, keeps omitted fields, and refuses to change aggregationType or type', async () => {
    await ok(env.mcp, 'create_unit', { name: 'request' });
    const m = await ok(env.mcp, 'create_measurement', { ...base, code: 'upd', description: 'before' });
    const u = await ok(env.mcp, 'update_measurement', { id: m.id, description: 'after', fairBilling: true, unit: 'request' });
    expect(u).toMatchObject({ code: 'upd', description: 'after', fairBilling: true, unit: { name: 'request' }, aggregationType: 'sum' });
    await ok(env.mcp, 'update_measurement', { id: m.id, aggregationType: 'sum', type: 'metered' });
    const p = await fails(env.mcp, 'update_measurement', { id: m.id, aggregationType: 'max', type: 'recurring' }, 422);
    expect(paths(p).sort()).toEqual(['aggregationType', 'type']);
    expect((await ok(env.mcp, 'get_measurement', { id: m.id })).aggregationType).toBe('sum');
    expect(paths(await fails(env.mcp, 'update_measurement', { id: m.id, code: 'calls' }, 422))).toEqual(['code']);
    await fails(env.mcp, 'update_measurement', { id: 'no-such-id', code: 'zzz' }, 404);
  });

  it('is deprecated on every surface: headers over HTTP and "Deprecated:" in the tool description', async () => {
    const res = await env.http('GET', '/catalogue/measurements');
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(res.headers.get('sunset')).toMatch(/GMT$/);
    const { tools } = await env.mcp.listTools();
    for (const name of ['create_measurement', 'list_measurements', 'get_measurement', 'update_measurement']) {
      expect(tools.find((t) => t.name === name)?.description).toMatch(/^Deprecated:/);
    }
    expect((await env.http('GET', '/catalogue/units')).headers.get('deprecation')).toBeNull();
  });

  it('serves the same resources over REST with 201 and Location', async () => {
    const res = await env.http('POST', '/catalogue/measurements', { body: { ...base, code: 'rest' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/catalogue/measurements/${res.body.id}`);
    const got = await env.http('GET', res.headers.get('location')!);
    expect(got.body).toEqual(res.body);
    const put = await env.http('PUT', `/catalogue/measurements/${res.body.id}`, { body: { type: 'recurring' } });
    expect(put.status).toBe(422);
    expect(put.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('a tool call without required fields names each missing field', async () => {
    const r = await call(env.mcp, 'create_measurement', {});
    expect(r.isError).toBe(true);
    expect(r.text.split('\n')[0]).toMatch(/^Validation failed: /);
    expect(paths(r.body).sort()).toEqual(['aggregationType', 'code', 'type', 'unit']);
  });
});
