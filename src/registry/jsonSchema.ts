import { z } from 'zod';
import { CONVENTION, REST_ONLY } from '../schemas/common.js';

export type JsonSchema = Record<string, unknown>;

/** Formats that clients and model providers understand without the pattern zod spells out beside them. */
const SELF_DESCRIBING_FORMATS = new Set(['date-time', 'date', 'email', 'uri']);

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/** Calls `visit` on every schema object below `root`, without recursion (no input can overflow the stack). */
function walk(root: JsonSchema, visit: (schema: JsonSchema) => void): JsonSchema {
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!node || typeof node !== 'object') continue;
    const schema = node as JsonSchema;
    visit(schema);
    for (const [key, value] of Object.entries(schema)) {
      if (!DATA_KEYWORDS.has(key) && value && typeof value === 'object') stack.push(value);
    }
  }
  return root;
}

/**
 * Rewrites a JSON Schema so that it says each thing once and reads the same in every client:
 * - a `pattern` beside a well-known `format` goes (zod inlines a 305-character regex per date-time);
 * - the safe-integer bounds zod adds to every integer go;
 * - `type: ["string", "null"]` becomes `anyOf` branches with one type each (clients that read `type`
 *   as a single string reject or mis-read the array form);
 * - an `anyOf` nested as a branch of another (a nullable union) is lifted, so every branch has a type.
 */
export function portable(root: JsonSchema): JsonSchema {
  return walk(root, (schema) => {
    if (typeof schema.format === 'string' && SELF_DESCRIBING_FORMATS.has(schema.format)) delete schema.pattern;
    if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
    if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
    if (Array.isArray(schema.type)) splitTypeUnion(schema);
    if (Array.isArray(schema.anyOf)) schema.anyOf = flatten(schema.anyOf as JsonSchema[]);
  });
}

function flatten(branches: JsonSchema[]): JsonSchema[] {
  return branches.flatMap((b) => (Array.isArray(b.anyOf) && Object.keys(b).length === 1 ? flatten(b.anyOf as JsonSchema[]) : [b]));
}

/** Keywords that describe the value as a whole and stay beside the `anyOf`. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'deprecated', 'readOnly', 'examples']);

function splitTypeUnion(schema: JsonSchema): void {
  const types = schema.type as string[];
  delete schema.type;
  const shared: JsonSchema = {};
  const constraints: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) shared[key] = value;
    else constraints[key] = value;
    delete schema[key];
  }
  const branches = types.map((type) => (type === 'null' ? { type } : { type, ...constraintsFor(type, constraints) }));
  Object.assign(schema, { anyOf: branches, ...shared });
}

function constraintsFor(type: string, constraints: JsonSchema): JsonSchema {
  if (!('enum' in constraints)) return constraints;
  const { enum: values, ...rest } = constraints;
  return { ...rest, enum: (values as unknown[]).filter((v) => v !== null && typeof v === (type === 'integer' ? 'number' : type)) };
}

/** The JSON Schema of a zod schema, in its portable form. */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json.$schema;
  return portable(json);
}

/** Conventions of every tool input, said once (in the server instructions) instead of on each field. */
export const INPUT_CONVENTIONS =
  'Text fields take at most 255 characters unless a field says otherwise; unknown fields are rejected. ' +
  'Lists take page (from 1), limit (0-100, default 30; 0 answers only the counts) and order { createdAt: asc|desc } (by creation time, then id; default asc).';

/**
 * A tool's input schema for a model: the JSON Schema without what INPUT_CONVENTIONS says once
 * (`maxLength: 255`, `additionalProperties: false`, the descriptions of the fields marked CONVENTION:
 * a list's page, limit and order), without the REST-only aliases, and an object that repeats the fields of one
 * before it (order entries and their children) said once. The server still validates all of it.
 */
export function toToolInputSchema(schema: z.ZodType): JsonSchema {
  const json = walk(toJsonSchema(schema, 'input'), (s) => {
    if (s.maxLength === 255) delete s.maxLength;
    if (s.additionalProperties === false) delete s.additionalProperties;
    const properties = s.properties as Record<string, JsonSchema> | undefined;
    for (const [name, property] of Object.entries(properties ?? {})) {
      if (property[REST_ONLY] === true) delete properties![name];
      if (property[CONVENTION] === true) {
        delete property[CONVENTION];
        walk(property, (inner) => delete inner.description);
      }
    }
  });
  return sayRepeatedObjectsOnce(json);
}

/**
 * Breadth first, so that an object is met before those nested in it: an object with at least three
 * fields, all of them fields of an earlier object (same name, same schema), becomes a pointer to it.
 */
function sayRepeatedObjectsOnce(root: JsonSchema): JsonSchema {
  const seen: Array<{ path: string; fields: Map<string, string> }> = [];
  const queue: Array<[JsonSchema, string]> = [[root, '']];
  for (let next = queue.shift(); next; next = queue.shift()) {
    const [schema, path] = next;
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    if (properties && Object.keys(properties).length >= 3) {
      const fields = new Map(Object.entries(properties).map(([k, v]) => [k, JSON.stringify(v)]));
      const earlier = seen.find((o) => [...fields].every(([k, v]) => o.fields.get(k) === v));
      if (earlier) {
        const left = [...earlier.fields.keys()].filter((k) => !fields.has(k));
        const said = `Same fields as ${earlier.path}${left.length ? ` without ${left.join(', ')}` : ''}.`;
        for (const key of Object.keys(schema)) if (key !== 'description') delete schema[key];
        Object.assign(schema, { type: 'object', description: schema.description ? `${String(schema.description)} ${said}` : said });
        continue;
      }
      seen.push({ path: path || 'the input', fields });
    }
    for (const [name, child] of Object.entries(properties ?? {})) queue.push([child, path ? `${path}.${name}` : name]);
    if (schema.items && typeof schema.items === 'object') queue.push([schema.items as JsonSchema, `${path}[]`]);
    for (const branch of (schema.anyOf ?? []) as JsonSchema[]) queue.push([branch, path]);
  }
  return root;
}

/**
 * A tool's output schema: without `additionalProperties: false`, which tells a model nothing (a
 * result carries exactly the fields its view declares; the scenario test holds results to that), and,
 * below the top level, without a `required` list that names every property: a nested object always
 * carries every field (null when empty), which OUTPUT_CONVENTIONS says once. The top level keeps its
 * list, so a client still rejects a result of the wrong shape; a nested object with optional fields
 * keeps its list too.
 */
export function toToolOutputSchema(schema: z.ZodType): JsonSchema {
  const root = toJsonSchema(schema, 'output');
  const required = root.required;
  walk(root, (s) => {
    if (s.additionalProperties === false) delete s.additionalProperties;
    const properties = s.properties as Record<string, unknown> | undefined;
    if (Array.isArray(s.required) && properties && s.required.length === Object.keys(properties).length) delete s.required;
  });
  if (required !== undefined) root.required = required;
  return root;
}

/** What every tool result has in common, said once in the server instructions. */
export const OUTPUT_CONVENTIONS =
  'Objects in results carry every field of their output schema (null when empty). Date-times are UTC; createdAt and updatedAt say when a resource was created and last changed.';
