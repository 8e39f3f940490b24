import { distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { AppError, type Violation } from '../errors.js';

/** `periods[0].contractPeriod` from a zod path. */
export function propertyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

type Schema = z.core.$ZodType;
type Shape = Record<string, Schema>;

/** The schema itself without the wrappers that do not change its shape (optional, default, pipe, …). */
function unwrap(schema: Schema): Schema {
  let current = schema;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: Schema; in?: Schema; getter?: () => Schema };
    if (def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else if (def.type === 'lazy' && def.getter) current = def.getter();
    else return current;
  }
}

/** The properties of an object schema that take a value (not those typed unknown only to reject one, such as `pan`). */
function shapeOf(schema: Schema): Shape | undefined {
  const def = unwrap(schema)._zod.def as { type: string; shape?: Shape };
  if (def.type !== 'object' || !def.shape) return undefined;
  return Object.fromEntries(Object.entries(def.shape).filter(([, property]) => unwrap(property)._zod.def.type !== 'unknown'));
}

/** The object a property holds, also inside arrays: its shape and how many array levels wrap it. */
function nestedOf(schema: Schema): { shape: Shape; arrays: number } | undefined {
  let current = unwrap(schema);
  let arrays = 0;
  for (;;) {
    const def = current._zod.def as { type: string; element?: Schema };
    if (def.type !== 'array' || !def.element) break;
    arrays += 1;
    current = unwrap(def.element);
  }
  const shape = shapeOf(current);
  return shape && { shape, arrays };
}

/** The schema at a zod issue path, unwrapped: properties by name, array elements and record values by index or key. */
function schemaAt(schema: Schema, path: readonly PropertyKey[]): Schema | undefined {
  let current: Schema | undefined = schema;
  for (const seg of path) {
    if (!current) return undefined;
    const def = unwrap(current)._zod.def as { type: string; shape?: Shape; element?: Schema; valueType?: Schema };
    if (def.type === 'object' && typeof seg === 'string') current = def.shape?.[seg];
    else if (def.type === 'array' && typeof seg === 'number') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else return undefined;
  }
  return current && unwrap(current);
}

/** Where the values of keys an object schema does not take go instead (`elsewhere`), by object schema. */
const ELSEWHERE = new WeakMap<Schema, (key: string) => string | undefined>();

/**
 * `schema`, whose unknown keys `where` may answer with where such a value goes: `email` on
 * create_customer is "add it with create_customer_email_address". `where` gets the key normalised
 * (lower case, without `_` and `-`) and answers undefined for the keys it knows nothing about.
 */
export function elsewhere<S extends Schema>(schema: S, where: (key: string) => string | undefined): S {
  ELSEWHERE.set(schema, where);
  return schema;
}

/** The fields of an operation's input that its REST route takes from the path, by input schema. */
const IN_PATH = new WeakMap<Schema, readonly string[]>();

/**
 * Marks `names` of the input `schema` as path parameters: an unknown key is told the fields a body
 * takes and, apart from them, the path parameters (over REST they are not body fields).
 */
export function inPath<S extends Schema>(schema: S, names: readonly string[]): S {
  IN_PATH.set(schema, names);
  return schema;
}

/** Case, `_` and `-` do not tell field names apart for a suggestion: `customer_number` is `customerNumber`. */
const normalise = (key: string) => key.toLowerCase().replace(/[_-]/g, '');

/** Properties of the nested objects of `shape`, one and two levels down, with how to send them. */
function nestedHomes(shape: Shape, key: string): Array<{ at: string; example: string }> {
  const wanted = normalise(key);
  const levels: Array<Array<{ at: string; example: string }>> = [[], []];
  const open = (arrays: number, body: string) => `${'['.repeat(arrays)}{ ${body} }${']'.repeat(arrays)}`;
  for (const [outer, outerSchema] of Object.entries(shape)) {
    const first = nestedOf(outerSchema);
    if (!first) continue;
    const direct = Object.keys(first.shape).find((k) => normalise(k) === wanted);
    if (direct) levels[0]!.push({ at: outer, example: `${outer}: ${open(first.arrays, `${direct}, ...`)}` });
    for (const [inner, innerSchema] of Object.entries(first.shape)) {
      const second = nestedOf(innerSchema);
      const deep = second && Object.keys(second.shape).find((k) => normalise(k) === wanted);
      if (second && deep) {
        const body = `${inner}: ${open(second.arrays, `${deep}, ...`)}`;
        levels[1]!.push({ at: `${outer}.${inner}`, example: `${outer}: ${open(first.arrays, body)}` });
      }
    }
  }
  return levels.find((found) => found.length > 0) ?? [];
}

/** The allowed key a mistyped one most likely meant, when it is a close edit of it. */
function closest(key: string, allowed: string[]): string | undefined {
  const wanted = normalise(key);
  let best: { key: string; cost: number } | undefined;
  for (const k of allowed) {
    const cost = distance(wanted, normalise(k));
    if (!best || cost < best.cost) best = { key: k, cost };
  }
  const tolerance = Math.max(1, Math.floor(Math.max(wanted.length, 3) / 4));
  return best && best.cost <= tolerance ? best.key : undefined;
}

const MAX_LISTED = 12;

/** The fields an object takes, its path parameters (`inPath`) named apart: "allowed: reasonCode, besides the path parameter id". */
function takes(allowed: string[], inPath: readonly string[]): string {
  if (!inPath.length) return `allowed: ${allowed.join(', ')}`;
  const fields = allowed.filter((k) => !inPath.includes(k));
  const path = `the path parameter${inPath.length > 1 ? 's' : ''} ${inPath.join(', ')}`;
  return fields.length ? `allowed: ${fields.join(', ')}, besides ${path}` : `it takes no fields besides ${path}`;
}

/**
 * Why `key` is not accepted in the object at `at`, and what to send instead; `names` are the fields
 * of that object the message names (the one it most likely meant, or the allowed ones).
 */
function unknownKey(key: string, at: string, object: Schema | undefined): { message: string; names: string[] } {
  const where = at || 'the input';
  const head = `'${key}' is not a field of ${where}`;
  const shape = object && shapeOf(object);
  if (!shape) return { message: `${head}; remove it (see the input schema for the allowed fields)`, names: [] };
  const allowed = Object.keys(shape);
  const same = allowed.find((k) => normalise(k) === normalise(key));
  if (same) return { message: `${head}; did you mean '${same}'?`, names: [same] };
  const homes = nestedHomes(shape, key);
  if (homes.length) {
    const inside = homes.map((h) => `'${at ? `${at}.` : ''}${h.at}'`).join(' or ');
    return { message: `'${key}' belongs inside ${inside}: send ${homes[0]!.example}`, names: [] };
  }
  const suggestion = closest(key, allowed);
  if (suggestion) return { message: `${head}; did you mean '${suggestion}'?`, names: [suggestion] };
  const instead = ELSEWHERE.get(object!)?.(normalise(key));
  if (instead) return { message: `${head}; ${instead}`, names: [] };
  if (allowed.length <= MAX_LISTED) return { message: `${head}; ${takes(allowed, IN_PATH.get(object!) ?? [])}`, names: allowed };
  return { message: `${head}; see the input schema for the allowed fields`, names: [] };
}

/**
 * Whether an issue may only say that its property is absent: a required value missing, or an enum's
 * (zod reports an absent enum value as an invalid one, not telling the two apart).
 */
function mayBeAbsent(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_value' || (issue.code === 'invalid_type' && issue.message.endsWith('received undefined'));
}

function message(issue: z.core.$ZodIssue, at: string): string {
  const where = at || 'the input';
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `${where} is required (expected ${issue.expected})`;
  }
  if (issue.code === 'invalid_type' && issue.expected === 'boolean') return `${where} must be true or false`;
  if (issue.code === 'invalid_value') {
    return `${where} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  const text = issue.message.replace(/^Invalid input: /, '');
  return `${where} ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

/**
 * One violation per problem. An unknown field is named at its own path with the field it most likely
 * meant, the nested object it belongs in, or the allowed fields, read from `schema` (the operation's
 * input). A property of the same object that may only be absent is left out when that message names
 * it already: `order: { name }` is one violation at `order.name` ("allowed: createdAt"), not a second
 * one saying `order.createdAt` must be asc or desc.
 */
export function violationsOf(error: { issues: readonly z.core.$ZodIssue[] }, schema?: Schema): Violation[] {
  /** The violations of each unknown-keys issue, and the fields their messages name, by object path. */
  const unknown = new Map<z.core.$ZodIssue, Violation[]>();
  const named = new Map<string, Set<string>>();
  for (const issue of error.issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const at = propertyPath(issue.path);
    const object = schema && schemaAt(schema, issue.path);
    const names = named.get(at) ?? new Set<string>();
    named.set(at, names);
    const violations = issue.keys.map((key) => {
      const found = unknownKey(key, at, object);
      for (const name of found.names) names.add(name);
      return { propertyPath: propertyPath([...issue.path, key]), message: found.message, code: issue.code };
    });
    unknown.set(issue, violations);
  }
  return error.issues.flatMap((issue): Violation[] => {
    const violations = unknown.get(issue);
    if (violations) return violations;
    const at = propertyPath(issue.path);
    const last = issue.path.at(-1);
    if (typeof last === 'string' && mayBeAbsent(issue) && named.get(propertyPath(issue.path.slice(0, -1)))?.has(last)) return [];
    return [{ propertyPath: at, message: message(issue, at), code: issue.code }];
  });
}

/** At most this many violations in one answer: enough to fix a call, never a flood. */
export const MAX_VIOLATIONS = 20;

/** Query parameters are a 400, body fields a 422 (CONTRACT section 2). */
export function inputError(error: z.ZodError, kind: 'bad_request' | 'validation', schema?: Schema): AppError {
  const shown = error.issues.slice(0, MAX_VIOLATIONS);
  const violations = violationsOf({ issues: shown }, schema);
  const more = error.issues.length - shown.length;
  const detail = violations.map((v) => v.message).join('; ') + (more > 0 ? `; and ${more} more of the same kind (fix these first)` : '');
  return new AppError(kind, detail, violations);
}

/** The longest idempotency key (CONTRACT section 2). */
const MAX_IDEMPOTENCY_KEY = 255;

/**
 * An idempotency key as sent (the `Idempotency-Key` header, the `idempotencyKey` argument): a string
 * of 1 to 255 characters, or absent (undefined); anything else is a 422 at `idempotencyKey` saying
 * what is wrong with it.
 */
export function checkIdempotencyKey(key: unknown): string | undefined {
  if (key === undefined) return undefined;
  const fault =
    typeof key !== 'string'
      ? { code: 'invalid_type', message: `The idempotency key must be a string of 1 to ${MAX_IDEMPOTENCY_KEY} characters` }
      : key.length === 0
        ? { code: 'too_short', message: `The idempotency key is empty; send 1 to ${MAX_IDEMPOTENCY_KEY} characters, or no key` }
        : key.length > MAX_IDEMPOTENCY_KEY
          ? { code: 'too_long', message: `The idempotency key must be at most ${MAX_IDEMPOTENCY_KEY} characters (got ${key.length})` }
          : undefined;
  if (!fault) return key as string;
  throw new AppError('validation', fault.message, [{ propertyPath: 'idempotencyKey', ...fault }]);
}
