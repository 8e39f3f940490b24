import type { Operation } from '../registry/operation.js';
import { customerOperations } from './customers.js';
import { measurementOperations } from './measurements.js';
import { taxGroupOperations } from './taxGroups.js';
import { webhookOperations } from './webhooks.js';

/** The one list of every operation; MCP tools, REST routes and OpenAPI are all generated from it. */
export const OPERATIONS: Operation[] = [...measurementOperations, ...customerOperations, ...taxGroupOperations, ...webhookOperations];

/** Every permission any operation needs, with both halves of each resource. */
export const ALL_PERMISSIONS: string[] = [
  ...new Set(
    OPERATIONS.flatMap((op) => {
      if (!op.permission) return [];
      const resource = op.permission.slice(0, op.permission.lastIndexOf(':'));
      return [`${resource}:read`, `${resource}:write`];
    }),
  ),
].sort();
