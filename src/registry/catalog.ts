import { can, type Principal } from '../auth/keys.js';
import { AppError } from '../errors.js';
import type { Toolset } from '../config.js';
import { toJsonSchema, toToolInputSchema, toToolOutputSchema, type JsonSchema } from './jsonSchema.js';
import { acceptsIdempotencyKey, annotationsOf, isReadOnly, type Annotations, type Operation } from './operation.js';

export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: Annotations & { title: string };
}

/** The toolsets a list shows: every one, or the named ones. */
export type ToolsetSelection = 'all' | ReadonlySet<Toolset>;

const IDEMPOTENCY_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'Retry key (24 h): the same key and input replay the first result.',
};

/**
 * The operations with their JSON Schemas, converted once at start-up: listing tools and serving
 * `/mcp` never convert a zod schema again.
 */
export class Catalog {
  readonly operations: readonly Operation[];
  private readonly byName = new Map<string, { op: Operation; tool: ToolDescriptor; input: JsonSchema }>();
  private readonly listCache = new Map<string, ToolDescriptor[]>();

  constructor(operations: readonly Operation[], private readonly options: { readOnly: boolean }) {
    this.operations = operations;
    for (const op of operations) {
      const full = toJsonSchema(op.input, 'input');
      const input = toToolInputSchema(op.input) as ToolDescriptor['inputSchema'];
      if (acceptsIdempotencyKey(op)) {
        input.properties = { ...(input.properties as JsonSchema), idempotencyKey: IDEMPOTENCY_PROPERTY };
      }
      const tool: ToolDescriptor = {
        name: op.name,
        title: op.title,
        description: op.description,
        inputSchema: input,
        outputSchema: toToolOutputSchema(op.mcp?.output ?? op.output) as ToolDescriptor['outputSchema'],
        annotations: { title: op.title, ...annotationsOf(op) },
      };
      this.byName.set(op.name, { op, tool, input: full });
    }
  }

  /**
   * Why a known operation cannot be called as a tool here, or undefined when it can: read-only mode
   * (from each operation's own hints) and the toolsets shown.
   */
  hidden(op: Operation, toolsets: ToolsetSelection): 'read_only' | 'toolset' | undefined {
    if (this.options.readOnly && !isReadOnly(op)) return 'read_only';
    if (toolsets !== 'all' && !toolsets.has(op.toolset)) return 'toolset';
    return undefined;
  }

  /** The 403 of a write in read-only mode, the same on every surface; undefined when the operation may run. */
  readOnlyRefusal(op: Operation): AppError | undefined {
    if (!this.options.readOnly || isReadOnly(op)) return undefined;
    return new AppError('forbidden', `The server runs in read-only mode; ${op.name} changes data and is disabled`);
  }

  /** Whether this principal may ever call the operation (tools it never can are not listed). */
  allows(op: Operation, principal: Principal): boolean {
    if (principal.kind === 'customer') {
      return op.customerAccess !== undefined && principal.permissions.includes(op.customerAccess.permission);
    }
    if (principal.kind === 'anonymous') return op.authentication === 'none';
    return op.permission === null || can(principal, op.permission);
  }

  tools(principal: Principal, toolsets: ToolsetSelection): ToolDescriptor[] {
    const shown = toolsets === 'all' ? 'all' : [...toolsets].sort().join(',');
    const cacheKey = `${principal.kind}:${principal.permissions.join(',')}:${shown}`;
    let list = this.listCache.get(cacheKey);
    if (!list) {
      list = [...this.byName.values()]
        .filter(({ op }) => !this.hidden(op, toolsets) && this.allows(op, principal))
        .map(({ tool }) => tool);
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

  /** The whole input JSON Schema of an operation, REST-only aliases included (query coercion, OpenAPI). */
  restInputSchema(name: string): JsonSchema {
    return this.byName.get(name)!.input;
  }
}
