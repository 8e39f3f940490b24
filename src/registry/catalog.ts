import { z } from 'zod';
import { can, type Principal } from '../auth/keys.js';
import type { Toolset } from '../config.js';
import { acceptsIdempotencyKey, annotationsOf, isReadOnly, type Annotations, type Operation } from './operation.js';

type JsonSchema = Record<string, unknown>;

export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: Annotations & { title: string };
}

export interface SurfaceFilter {
  readOnly: boolean;
  toolsets: readonly Toolset[] | undefined;
}

export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const IDEMPOTENCY_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'Optional. Reusing a key with the same input within 24 h replays the first result instead of acting twice; with different input it is rejected. Use one fresh key per intended effect.',
};

/**
 * The operations with their JSON Schemas, converted once at start-up: listing tools and serving
 * `/mcp` never convert a zod schema again.
 */
export class Catalog {
  readonly operations: readonly Operation[];
  private readonly byName = new Map<string, { op: Operation; tool: ToolDescriptor }>();
  private readonly listCache = new Map<string, ToolDescriptor[]>();

  constructor(operations: readonly Operation[], private readonly filter: SurfaceFilter) {
    this.operations = operations;
    for (const op of operations) {
      const input = toJsonSchema(op.input, 'input') as ToolDescriptor['inputSchema'];
      if (acceptsIdempotencyKey(op)) {
        input.properties = { ...(input.properties as JsonSchema), idempotencyKey: IDEMPOTENCY_PROPERTY };
      }
      const tool: ToolDescriptor = {
        name: op.name,
        title: op.title,
        description: op.description,
        inputSchema: input,
        outputSchema: toJsonSchema(op.output, 'output') as ToolDescriptor['outputSchema'],
        annotations: { title: op.title, ...annotationsOf(op) },
      };
      this.byName.set(op.name, { op, tool });
    }
  }

  /** Read-only mode and toolsets come from each operation's own metadata. */
  exposed(op: Operation): boolean {
    if (this.filter.readOnly && !isReadOnly(op)) return false;
    if (this.filter.toolsets && !this.filter.toolsets.includes(op.toolset)) return false;
    return true;
  }

  /** Whether this principal may ever call the operation (tools it never can are not listed). */
  visibleTo(op: Operation, principal: Principal): boolean {
    if (!this.exposed(op)) return false;
    if (principal.kind === 'customer') {
      return op.customerAccess !== undefined && principal.permissions.includes(op.customerAccess.permission);
    }
    if (principal.kind === 'anonymous') return op.authentication === 'none';
    return op.permission === null || can(principal, op.permission);
  }

  tools(principal: Principal): ToolDescriptor[] {
    const cacheKey = `${principal.kind}:${principal.permissions.join(',')}`;
    let list = this.listCache.get(cacheKey);
    if (!list) {
      list = [...this.byName.values()].filter(({ op }) => this.visibleTo(op, principal)).map(({ tool }) => tool);
      this.listCache.set(cacheKey, list);
    }
    return list;
  }

  find(name: string): Operation | undefined {
    return this.byName.get(name)?.op;
  }

  descriptor(name: string): ToolDescriptor | undefined {
    return this.byName.get(name)?.tool;
  }
}
