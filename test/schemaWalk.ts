import { CONVENTION_FIELDS } from '../src/schemas/common.js';
/** A JSON Schema node as tools/list shows it. */
export type SchemaNode = Record<string, unknown>;

/**
 * Calls `visit` with every schema below `root` (through properties, items and anyOf branches) and its
 * path (`products[].periods`), without recursion.
 */
export function eachSchema(root: unknown, at: string, visit: (node: SchemaNode, path: string) => void): void {
  const stack: Array<[unknown, string]> = [[root, at]];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (!node || typeof node !== 'object' || Array.isArray(node)) continue;
    const s = node as SchemaNode;
    visit(s, path);
    for (const [name, property] of Object.entries((s.properties ?? {}) as SchemaNode)) stack.push([property, `${path}.${name}`]);
    if (s.items) stack.push([s.items, `${path}[]`]);
    for (const branch of (s.anyOf ?? []) as unknown[]) stack.push([branch, path]);
  }
}

/**
 * The top-level input fields a tool describes itself: all but a list's page, limit and order, which
 * the server instructions describe once (CONVENTION_FIELDS).
 */
export function ownFields(inputSchema: { properties?: Record<string, unknown> } | undefined): Array<[string, unknown]> {
  return Object.entries(inputSchema?.properties ?? {}).filter(([name]) => !CONVENTION_FIELDS.has(name));
}
