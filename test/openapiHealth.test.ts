/**
 * The health checks in the OpenAPI document (`GET /openapi.json`): listed without a bearer token,
 * each with the schema of what it really answers; the document stays valid OpenAPI 3.1.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup, type TestEnv } from './helpers.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setup();
});
afterAll(() => env.close());

/** Whether `value` fits a health answer's schema: an object with exactly the properties it declares, each its `const`. */
function fits(schema: { properties: Record<string, { const: unknown }>; required: string[] }, value: Record<string, unknown>): boolean {
  const names = Object.keys(schema.properties);
  return Object.keys(value).every((k) => names.includes(k)) && schema.required.every((k) => k in value) && names.every((k) => value[k] === schema.properties[k]!.const);
}

describe('OpenAPI health checks', () => {
  it('lists /healthz and /readyz without a bearer token, with the schemas of their answers; the document is valid', async () => {
    const doc = (await env.http('GET', '/openapi.json', { token: null })).body;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const path of ['/healthz', '/readyz']) {
      const get = doc.paths[path].get;
      expect(Object.keys(doc.paths[path]), path).toEqual(['get']);
      expect(get.security, path).toEqual([]);
      const schema = get.responses['200'].content['application/json'].schema;
      const answer = await env.http('GET', path, { token: null });
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type'), path).toBe('application/json; charset=utf-8');
      expect(fits(schema, answer.body), `${path} ${JSON.stringify(answer.body)}`).toBe(true);
    }
    expect(doc.paths['/healthz'].get.responses['200'].content['application/json'].schema.properties.status.const).toBe('ok');
    expect(doc.paths['/readyz'].get.responses['200'].content['application/json'].schema.properties.status.const).toBe('ready');
  });

  it('documents the 503 that /readyz answers while the database is gone', async () => {
    const down = await setup();
    try {
      await down.app.store.close();
      const res = await fetch(`${down.url}/readyz`);
      expect([res.status, res.headers.get('content-type'), res.headers.get('retry-after')]).toEqual([503, 'application/problem+json; charset=utf-8', '5']);
      const problem = (await res.json()) as Record<string, unknown>;
      const doc = (await env.http('GET', '/openapi.json', { token: null })).body;
      expect(doc.paths['/readyz'].get.responses['503']).toMatchObject({
        headers: { 'Retry-After': { schema: { type: 'integer' } } },
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      });
      const problemSchema = doc.components.schemas.Problem;
      expect(Object.keys(problem).every((k) => k in problemSchema.properties)).toBe(true);
      expect(problemSchema.required.every((k: string) => k in problem)).toBe(true);
    } finally {
      await down.close().catch(() => undefined);
    }
  });
});
