import type { JsonSchemaProperties } from './types.js';

/**
 * Query parameters to input fields: numbers and booleans by the field's JSON Schema type,
 * `order[createdAt]=desc` to `{ order: { createdAt: 'desc' } }`. A value that does not convert stays a
 * string, so validation names the parameter.
 */
export function queryToInput(search: URLSearchParams, properties: JsonSchemaProperties): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of search) {
    const nested = /^(\w+)\[(\w+)\]$/.exec(key);
    if (nested) {
      const [, outer, inner] = nested as unknown as [string, string, string];
      const obj = (out[outer] ??= {}) as Record<string, unknown>;
      obj[inner] = value;
      continue;
    }
    out[key] = coerce(value, properties[key]?.type);
  }
  return out;
}

function coerce(value: string, type: unknown): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}
