import { AppError } from '../errors.js';
import { isReservedKey, RESERVED_KEYS } from '../registry/inputGuard.js';
import type { JsonSchemaProperties } from './types.js';

/**
 * Query parameters to input fields: numbers and booleans by the field's JSON Schema type,
 * `order[createdAt]=desc` to `{ order: { createdAt: 'desc' } }`. A value that does not convert stays a
 * string, so validation names the parameter.
 *
 * The objects built here have no prototype (nothing a parameter name can reach or replace), and a
 * reserved name (`__proto__`, `constructor`, `prototype`) in any part of a parameter's name is a 400
 * naming the parameter, as is a name used both as a value and as `name[…]`.
 */
export function queryToInput(search: URLSearchParams, properties: JsonSchemaProperties): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  const nestedNames = new Set<string>();
  for (const [key, value] of search) {
    const nested = /^(\w+)\[(\w+)\]$/.exec(key);
    if (nested) {
      const [, outer, inner] = nested as unknown as [string, string, string];
      if (isReservedKey(outer) || isReservedKey(inner)) throw reservedParameter(key);
      if (!nestedNames.has(outer)) {
        if (Object.hasOwn(out, outer)) throw mixedParameter(outer);
        nestedNames.add(outer);
        out[outer] = Object.create(null);
      }
      (out[outer] as Record<string, unknown>)[inner] = value;
      continue;
    }
    if (isReservedKey(key)) throw reservedParameter(key);
    if (nestedNames.has(key)) throw mixedParameter(key);
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    out[key] = coerce(value, property?.type);
  }
  return out;
}

function reservedParameter(name: string): AppError {
  const message = `The query parameter '${name}' is not allowed: ${[...RESERVED_KEYS].join(', ')} are reserved names`;
  return new AppError('bad_request', message, [{ propertyPath: name, message, code: 'reserved_key' }]);
}

function mixedParameter(name: string): AppError {
  const message = `The query parameter '${name}' is given both as a value and as ${name}[…]; send one of them`;
  return new AppError('bad_request', message, [{ propertyPath: name, message, code: 'invalid_type' }]);
}

function coerce(value: string, type: unknown): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}
