import { z } from 'zod';

/**
 * What MCP answers when it differs from the REST body: a compact form for a model's context (summary
 * rows, nested resources as references, batches as counts). `output` is the tool's outputSchema;
 * `from` builds the result, by default the projection of the REST body onto `output`.
 */
export interface McpView<T = unknown> {
  output: z.ZodType;
  from?: (result: T) => unknown;
}

/**
 * Copies from `value` exactly what `schema` describes: the keys of each object schema, recursively
 * through nullable, optional, array and record wrappers. A view schema that picks fields of a resource
 * and narrows its nested resources to references therefore needs no hand-written mapping.
 */
export function project(schema: z.ZodType, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (schema instanceof z.ZodNullable || schema instanceof z.ZodOptional) return project(schema.unwrap() as z.ZodType, value);
  if (schema instanceof z.ZodArray) return (value as unknown[]).map((v) => project(schema.element as z.ZodType, v));
  if (schema instanceof z.ZodObject) {
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      if (key in source) out[key] = project(field, source[key]);
    }
    return out;
  }
  return value;
}

/** The MCP result of an operation with a view: its own `from`, or the projection onto its output. */
export function viewOf(view: McpView, result: unknown): unknown {
  return view.from ? view.from(result) : project(view.output, result);
}

/** A reference to another resource: its id and the fields a model recognises it by. */
export function reference<S extends z.ZodObject, K extends keyof S['shape'] & string>(schema: S, ...label: K[]) {
  const mask = Object.fromEntries(['id', ...label].map((k) => [k, true])) as Record<'id' | K, true>;
  return schema.pick(mask as never) as z.ZodObject<Pick<S['shape'], 'id' | K>>;
}
