import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const vat = (countryCode: string, rate: number, validFrom = '2026-01-01') => ({
  code: `VAT-${countryCode}-${rate}`,
  rate,
  countryCode,
  validFrom,
});

describe('creating and reading tax groups', () => {
  it('creates a group with its rates, fills the defaults, and gets back exactly the same', async () => {
    const g = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Standard VAT',
      taxes: [
        { ...vat('DE', 19), description: 'Umsatzsteuer' },
        vat('DE', 7, '2026-07-01'),
        vat('CH', 8.1),
        vat('FR', 5.5),
        vat('AX', 0.0001),
        vat('GB', 100),
      ],
    });
    expect(g).toMatchObject({ internalDescription: 'Standard VAT', reverseChargeType: 'REVERSE_CHARGE_DEACTIVATED', type: 'standard' });
    expect(g.id).toMatch(UUID);
    expect(g.taxes.map((t: { rate: number }) => t.rate)).toEqual([19, 7, 8.1, 5.5, 0.0001, 100]);
    expect(g.taxes[0]).toEqual({
      id: expect.stringMatching(UUID),
      code: 'VAT-DE-19',
      rate: 19,
      countryCode: 'DE',
      description: 'Umsatzsteuer',
      validFrom: '2026-01-01',
    });
    expect(g.taxes[1].description).toBeNull();
    expect(new Set(g.taxes.map((t: { id: string }) => t.id)).size).toBe(6);
    expect(await ok(env.mcp, 'get_tax_group', { id: g.id })).toEqual(g);
  });

  it('keeps the given reverseChargeType and type, and allows a group without rates', async () => {
    const g = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Intra-EU',
      reverseChargeType: 'REVERSE_CHARGE_INTRA_EU_SUPPLY',
      type: 'reduced',
    });
    expect(g).toMatchObject({ reverseChargeType: 'REVERSE_CHARGE_INTRA_EU_SUPPLY', type: 'reduced', taxes: [] });
    expect(await ok(env.mcp, 'get_tax_group', { id: g.id })).toEqual(g);
  });

  it('serves the same over REST: 201 with Location, then GET returns the same body with exact rates', async () => {
    const res = await env.http('POST', '/tax-groups', {
      body: { internalDescription: 'REST VAT', reverseChargeType: 'REVERSE_CHARGE', taxes: [vat('DE', 19), vat('CH', 8.1)] },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/tax-groups/${res.body.id}`);
    expect(res.body.taxes.map((t: { rate: number }) => t.rate)).toEqual([19, 8.1]);
    const got = await env.http('GET', res.headers.get('location')!);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('lists the groups of the organisation page by page, oldest first', async () => {
    const other = await env.newOrg('Paged organisation');
    const client = await env.mcpFor(other.apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      env.setNow(new Date(Date.UTC(2026, 9, 1, 10, i)));
      ids.push((await ok(client, 'create_tax_group', { internalDescription: `Group ${i}`, taxes: [vat('DE', 19)] })).id);
    }
    const page2 = await ok(client, 'list_tax_groups', { page: 2, limit: 2 });
    expect(page2.data.map((g: { id: string }) => g.id)).toEqual(ids.slice(2, 4));
    expect(page2.data[0].taxes.map((t: { rate: number }) => t.rate)).toEqual([19]);
    expect(page2.meta.pagination).toEqual({ totalItems: 5, itemsPerPage: 2, currentPage: 2, lastPage: 3, pageTotalItems: 2 });

    const res = await env.http('GET', '/tax-groups?page=3&limit=2', { token: other.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((g: { id: string }) => g.id)).toEqual(ids.slice(4));
    expect(res.body.meta.pagination).toMatchObject({ totalItems: 5, lastPage: 3, pageTotalItems: 1 });

    const desc = await env.http('GET', '/tax-groups?order[createdAt]=desc&limit=1', { token: other.apiKey });
    expect(desc.body.data.map((g: { id: string }) => g.id)).toEqual([ids[4]]);
    const counts = await ok(client, 'list_tax_groups', { limit: 0 });
    expect(counts.data).toEqual([]);
    expect(counts.meta.pagination).toMatchObject({ totalItems: 5, lastPage: 1 });
    expect((await env.http('GET', '/tax-groups?limit=101', { token: other.apiKey })).status).toBe(400);
  });
});

describe('updating tax groups', () => {
  it('replaces the whole list of rates, keeps omitted fields, and keeps the id of a rate with the same (country, validFrom)', async () => {
    const g = await ok(env.mcp, 'create_tax_group', {
      internalDescription: 'Replace me',
      reverseChargeType: 'REVERSE_CHARGE',
      type: 'reduced',
      taxes: [vat('DE', 7), vat('AT', 10), vat('FR', 5.5)],
    });
    const u = await ok(env.mcp, 'update_tax_group', { id: g.id, taxes: [vat('DE', 7.5), vat('IT', 10, '2026-03-01')] });
    expect(u).toMatchObject({ internalDescription: 'Replace me', reverseChargeType: 'REVERSE_CHARGE', type: 'reduced' });
    expect(u.taxes.map((t: { countryCode: string; rate: number }) => [t.countryCode, t.rate])).toEqual([
      ['DE', 7.5],
      ['IT', 10],
    ]);
    expect(u.taxes[0].id).toBe(g.taxes[0].id);
    expect(g.taxes.map((t: { id: string }) => t.id)).not.toContain(u.taxes[1].id);
    expect(await ok(env.mcp, 'get_tax_group', { id: g.id })).toEqual(u);

    const renamed = await ok(env.mcp, 'update_tax_group', { id: g.id, internalDescription: 'Renamed', type: 'standard' });
    expect(renamed).toMatchObject({ internalDescription: 'Renamed', type: 'standard', reverseChargeType: 'REVERSE_CHARGE' });
    expect(renamed.taxes).toEqual(u.taxes);

    const cleared = await ok(env.mcp, 'update_tax_group', { id: g.id, taxes: [] });
    expect(cleared.taxes).toEqual([]);
    expect((await ok(env.mcp, 'get_tax_group', { id: g.id })).taxes).toEqual([]);
  });

  it('updates over REST with PUT and rejects a duplicate rate without changing the group', async () => {
    const created = await env.http('POST', '/tax-groups', { body: { internalDescription: 'PUT me', taxes: [vat('DE', 19)] } });
    const path = `/tax-groups/${created.body.id}`;
    const put = await env.http('PUT', path, { body: { reverseChargeType: 'REVERSE_CHARGE', taxes: [vat('CH', 8.1)] } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ internalDescription: 'PUT me', reverseChargeType: 'REVERSE_CHARGE' });
    expect(put.body.taxes.map((t: { rate: number }) => t.rate)).toEqual([8.1]);

    const dup = await env.http('PUT', path, { body: { internalDescription: 'Changed', taxes: [vat('CH', 8.1), vat('CH', 2.6)] } });
    expect(dup.status).toBe(422);
    expect(dup.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(paths(dup.body)).toEqual(['taxes[1].validFrom']);
    expect((await env.http('GET', path)).body).toEqual(put.body);
  });
});

describe('rejected input', () => {
  const create = (overrides: Record<string, unknown>) =>
    fails(env.mcp, 'create_tax_group', { internalDescription: 'Rejected', ...overrides }, 422);
  const withTax = (tax: Record<string, unknown>) => create({ taxes: [vat('DE', 19, '2025-01-01'), { ...vat('DE', 19), ...tax }] });

  it.each([-1, 100.5, 19.12345, 0.00001])('rejects the rate %s', async (rate) => {
    const p = await withTax({ rate });
    expect(paths(p)).toEqual(['taxes[1].rate']);
  });

  it('names the precision rule and accepts exactly 4 fractional digits', async () => {
    const p = await withTax({ rate: 19.12345 });
    expect(p.detail).toBe('taxes[1].rate must have at most 4 fractional digits (got 19.12345), e.g. 19, 8.1 or 5.5');
    const g = await ok(env.mcp, 'create_tax_group', { internalDescription: 'Four digits', taxes: [vat('DE', 19.1234), vat('AT', 0)] });
    expect(g.taxes.map((t: { rate: number }) => t.rate)).toEqual([19.1234, 0]);
  });

  it('rejects a rate sent as a string', async () => {
    expect(paths(await withTax({ rate: '19' }))).toEqual(['taxes[1].rate']);
  });

  it.each(['XX', 'UK', 'EL', 'de', 'DEU', 'D'])('rejects the countryCode %s', async (countryCode) => {
    const p = await withTax({ countryCode });
    expect(paths(p)).toEqual(['taxes[1].countryCode']);
  });

  it.each(['2026-02-30', '2026-1-01', '2026-01-01T00:00:00Z', '01.01.2026', ''])('rejects the validFrom %j', async (validFrom) => {
    expect(paths(await withTax({ validFrom }))).toEqual(['taxes[1].validFrom']);
  });

  it('rejects a second rate for the same (countryCode, validFrom), naming the earlier entry', async () => {
    const p = await create({
      taxes: [vat('DE', 19), vat('AT', 20), vat('DE', 7, '2026-07-01'), vat('DE', 7), vat('AT', 10, '2026-01-01')],
    });
    expect(paths(p)).toEqual(['taxes[3].validFrom', 'taxes[4].validFrom']);
    expect(p.violations[0].message).toBe(
      'taxes[3].validFrom collides with taxes[0]: both set the DE rate from 2026-01-01; a tax group holds one rate per (countryCode, validFrom)',
    );
    expect(p.violations[1].message).toContain('collides with taxes[1]');
  });

  it('reports every rule a rate breaks at once', async () => {
    const p = await create({ taxes: [vat('DE', 19), { ...vat('XX', 1.23456), validFrom: '2026-01-01' }, vat('DE', 16)] });
    expect(paths(p)).toEqual(['taxes[1].rate', 'taxes[1].countryCode', 'taxes[2].validFrom']);
  });

  it('bounds internalDescription to 1..255 characters and requires it', async () => {
    expect(paths(await create({ internalDescription: 'd'.repeat(256) }))).toEqual(['internalDescription']);
    expect(paths(await create({ internalDescription: '' }))).toEqual(['internalDescription']);
    const r = await call(env.mcp, 'create_tax_group', {});
    expect(r.isError).toBe(true);
    expect(r.text.split('\n')[0]).toMatch(/^Validation failed: internalDescription is required/);
    expect((await ok(env.mcp, 'create_tax_group', { internalDescription: 'd'.repeat(255) })).internalDescription).toHaveLength(255);
  });

  it('rejects a reverseChargeType or type outside the allowed values, naming them', async () => {
    const p = await create({ reverseChargeType: 'REVERSE_CHARGE_EXPORT' });
    expect(paths(p)).toEqual(['reverseChargeType']);
    expect(p.violations[0].message).toContain('REVERSE_CHARGE_INTRA_EU_SUPPLY');
    expect(paths(await create({ type: 'zero' }))).toEqual(['type']);
  });

  it('rejects tax fields out of bounds and an id on a rate', async () => {
    expect(paths(await withTax({ code: '' }))).toEqual(['taxes[1].code']);
    expect(paths(await withTax({ code: 'c'.repeat(256) }))).toEqual(['taxes[1].code']);
    expect(paths(await withTax({ description: 'd'.repeat(256) }))).toEqual(['taxes[1].description']);
    expect(paths(await withTax({ id: '0190b0c0-0000-7000-8000-000000000000' }))).toEqual(['taxes[1].id']);
  });

  it('applies the same rules on update and over REST', async () => {
    const g = await ok(env.mcp, 'create_tax_group', { internalDescription: 'Rules on update' });
    const p = await fails(env.mcp, 'update_tax_group', { id: g.id, taxes: [vat('XX', 19)] }, 422);
    expect(paths(p)).toEqual(['taxes[0].countryCode']);
    expect(paths(await fails(env.mcp, 'update_tax_group', { id: g.id, internalDescription: 'd'.repeat(256) }, 422))).toEqual([
      'internalDescription',
    ]);
    const res = await env.http('POST', '/tax-groups', { body: { internalDescription: 'REST', taxes: [vat('de', 19.12345)] } });
    expect(res.status).toBe(422);
    expect(paths(res.body)).toEqual(['taxes[0].countryCode']);
    const rate = await env.http('POST', '/tax-groups', { body: { internalDescription: 'REST', taxes: [vat('DE', 19.12345)] } });
    expect(rate.status).toBe(422);
    expect(paths(rate.body)).toEqual(['taxes[0].rate']);
  });
});

describe('not found and permissions', () => {
  let groupId: string;
  beforeAll(async () => {
    groupId = (await ok(env.mcp, 'create_tax_group', { internalDescription: 'Private', taxes: [vat('DE', 19)] })).id;
  });

  it('answers 404 for an unknown id', async () => {
    const unknown = '0190b0c0-0000-7000-8000-000000000000';
    await fails(env.mcp, 'get_tax_group', { id: unknown }, 404);
    await fails(env.mcp, 'update_tax_group', { id: unknown, internalDescription: 'x' }, 404);
    expect((await env.http('GET', `/tax-groups/${unknown}`)).status).toBe(404);
    expect((await env.http('PUT', `/tax-groups/${unknown}`, { body: { type: 'reduced' } })).status).toBe(404);
  });

  it("answers 404 for another organisation's id and never lists or changes it", async () => {
    const other = await env.newOrg();
    const client = await env.mcpFor(other.apiKey);
    const p = await fails(client, 'get_tax_group', { id: groupId }, 404);
    expect(p.type).toBe('/problems/not-found');
    await fails(client, 'update_tax_group', { id: groupId, internalDescription: 'Hijacked' }, 404);
    expect((await env.http('GET', `/tax-groups/${groupId}`, { token: other.apiKey })).status).toBe(404);
    expect((await env.http('PUT', `/tax-groups/${groupId}`, { token: other.apiKey, body: { taxes: [] } })).status).toBe(404);
    expect((await ok(client, 'list_tax_groups', {})).data.map((g: { id: string }) => g.id)).not.toContain(groupId);
    const mine = await ok(env.mcp, 'get_tax_group', { id: groupId });
    expect(mine).toMatchObject({ internalDescription: 'Private', taxes: [{ countryCode: 'DE', rate: 19 }] });
  });

  it('answers 403 over HTTP and MCP to a key without tax-group permissions, and hides the tools', async () => {
    const key = await env.newKey(env.org, ['measurement:read']);
    const body = { internalDescription: 'Forbidden' };
    expect((await env.http('GET', '/tax-groups', { token: key })).status).toBe(403);
    expect((await env.http('GET', `/tax-groups/${groupId}`, { token: key })).status).toBe(403);
    expect((await env.http('POST', '/tax-groups', { token: key, body })).status).toBe(403);
    expect((await env.http('PUT', `/tax-groups/${groupId}`, { token: key, body })).status).toBe(403);
    const client = await env.mcpFor(key);
    await fails(client, 'list_tax_groups', {}, 403);
    await fails(client, 'get_tax_group', { id: groupId }, 403);
    await fails(client, 'create_tax_group', body, 403);
    await fails(client, 'update_tax_group', { id: groupId, ...body }, 403);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => n.includes('tax_group'))).toEqual([]);
    expect((await ok(env.mcp, 'get_tax_group', { id: groupId })).internalDescription).toBe('Private');
  });

  it('tax-group:read reads but cannot write; tax-group:write implies read', async () => {
    const reader = await env.newKey(env.org, ['tax-group:read']);
    expect((await env.http('GET', `/tax-groups/${groupId}`, { token: reader })).status).toBe(200);
    expect((await env.http('POST', '/tax-groups', { token: reader, body: { internalDescription: 'No' } })).status).toBe(403);

    const writer = await env.newKey(env.org, ['tax-group:write']);
    expect((await env.http('GET', `/tax-groups/${groupId}`, { token: writer })).status).toBe(200);
    expect((await env.http('GET', '/tax-groups', { token: writer })).status).toBe(200);
    const client = await env.mcpFor(writer);
    expect((await ok(client, 'get_tax_group', { id: groupId })).id).toBe(groupId);
    expect((await ok(client, 'list_tax_groups', {})).meta.pagination.totalItems).toBeGreaterThan(0);
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => !n.includes('customer_token') && n !== 'authenticate_customer').sort();
    expect(names).toEqual(['create_tax_group', 'get_tax_group', 'list_tax_groups', 'update_tax_group']);
  });
});

describe('tool metadata', () => {
  it('lists the four tools with annotations, output schemas and described input fields', async () => {
    const { tools } = await env.mcp.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('get_tax_group')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('update_tax_group')?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    const create = byName.get('create_tax_group')!;
    expect(create.outputSchema).toBeDefined();
    const props = create.inputSchema.properties as Record<string, { description?: string; items?: { properties: Record<string, { description?: string }> } }>;
    for (const field of ['internalDescription', 'reverseChargeType', 'type', 'taxes']) expect(props[field]?.description).toBeTruthy();
    for (const field of ['code', 'rate', 'countryCode', 'description', 'validFrom']) {
      expect(props.taxes?.items?.properties[field]?.description).toBeTruthy();
    }
  });
});
