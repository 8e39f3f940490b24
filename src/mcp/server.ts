import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/keys.js';
import { AppError, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Catalog } from '../registry/catalog.js';
import type { Executor } from '../registry/executor.js';

export type RequestExtra = { authInfo?: { extra?: Record<string, unknown> } };

export const SERVER_INFO = { name: 'billing-mcp', version: '0.1.0' };

const INSTRUCTIONS =
  'Subscription billing back office for one organisation. Amounts are integer cents unless a field says major units; ' +
  'date-times need an offset (e.g. 2026-01-31T12:00:00Z). List tools take page and limit (0-100). ' +
  'Creates and actions accept idempotencyKey: reuse it when retrying the same call. ' +
  'A failed call returns isError with a one-line summary and a problem JSON whose violations name each field to fix.';

export interface McpDeps {
  catalog: Catalog;
  executor: Executor;
  logger: Logger;
  /**
   * Resolved on every request, so a revoked key stops working at once (stdio included). Over HTTP
   * the principal authenticated for the request arrives with the message (`extra.authInfo`).
   */
  principal: (extra: RequestExtra) => Promise<Principal>;
}

export function errorResult(err: unknown, logger: Logger, tool: string): CallToolResult {
  const appError = toAppError(err);
  if (appError.kind === 'internal' && !(err instanceof AppError)) logger.error({ err, tool }, 'tool failed');
  return {
    isError: true,
    content: [{ type: 'text', text: `${appError.summary()}\n${JSON.stringify(appError.toProblem())}` }],
  };
}

/**
 * An MCP server over the catalog, built on the low-level Server so that tool schemas are the
 * precomputed ones (no zod conversion per request) and errors keep the problem shape.
 */
export function createMcpServer(deps: McpDeps): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    try {
      return { tools: deps.catalog.tools(await deps.principal(extra)) };
    } catch (err) {
      const e = toAppError(err);
      throw new McpError(ErrorCode.InvalidRequest, e.summary());
    }
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    try {
      const principal = await deps.principal(extra);
      const op = deps.catalog.find(name);
      if (!op || !deps.catalog.exposed(op)) {
        throw new AppError('not_found', `Unknown tool '${name}'; call tools/list for the tools this token can use`);
      }
      const { idempotencyKey, ...input } = args as Record<string, unknown>;
      if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string') {
        throw new AppError('validation', 'idempotencyKey must be a string of 1 to 255 characters', [
          { propertyPath: 'idempotencyKey', message: 'idempotencyKey must be a string of 1 to 255 characters', code: 'invalid_type' },
        ]);
      }
      const outcome = await deps.executor.execute(op, principal, input, idempotencyKey);
      const body = outcome.body as Record<string, unknown>;
      return {
        content: [{ type: 'text', text: op.text ? op.text(body) : JSON.stringify(body) }],
        structuredContent: body,
      };
    } catch (err) {
      return errorResult(err, deps.logger, name);
    }
  });

  return server;
}
