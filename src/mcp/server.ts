import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Principal } from '../auth/keys.js';
import type { Config } from '../config.js';
import { AppError, toAppError, type Problem, type Violation } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Catalog, ToolsetSelection } from '../registry/catalog.js';
import type { Executor } from '../registry/executor.js';
import { faultViolation, findInputFault } from '../registry/inputGuard.js';
import { INPUT_CONVENTIONS, OUTPUT_CONVENTIONS } from '../registry/jsonSchema.js';
import { checkIdempotencyKey, inputError } from '../registry/validation.js';
import { DISCOVERY_TOOLS, ToolsetSession } from './discovery.js';
import { toolResult } from './results.js';

export type RequestExtra = { authInfo?: { extra?: Record<string, unknown> } };

export const SERVER_INFO = { name: 'billing-mcp', version: '0.1.0' };

const INSTRUCTIONS =
  'Subscription billing back office for one organisation. Money fields say their unit: integer minor units (cents) or decimal major units. ' +
  'Date-times need an offset (2026-01-31T12:00:00Z). Lists answer summary rows a page at a time; get_ tools give the details. ' +
  `${INPUT_CONVENTIONS} ${OUTPUT_CONVENTIONS} Creates and actions accept idempotencyKey: reuse it when retrying the same call. ` +
  'A failed call returns isError with a one-line summary and a problem JSON whose violations name each field to fix.';
const DISCOVERY_INSTRUCTIONS = ' Only the everyday toolsets are listed at first: list_toolsets shows the others, enable_toolsets adds them.';

/** What is wrong with the params of a tools/call, in a sentence that names the field, or undefined. */
function toolsCallParamsProblem(params: unknown): string | undefined {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    return 'tools/call needs params: { "name": "<tool name>", "arguments": { ... } }';
  }
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return "params.name must be the tool's name as a string (tools/list names them)";
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    return "params.arguments must be an object of the tool's input fields";
  }
  return undefined;
}

/**
 * tools/call registered by its method only: the SDK's Server then checks the params itself and
 * answers malformed ones with -32602 (registered with CallToolRequestSchema, the parse before that
 * check fails first and answers -32603).
 */
const ToolsCallEnvelope = z.object({ method: z.literal('tools/call') }).passthrough();

export interface McpDeps {
  catalog: Catalog;
  executor: Executor;
  logger: Logger;
  /**
   * Resolved on every request, so a revoked key stops working at once (stdio included). Over HTTP
   * the principal authenticated for the request arrives with the message (`extra.authInfo`).
   */
  principal: (extra: RequestExtra) => Promise<Principal>;
  /**
   * The toolsets shown: 'discovery' starts with the default ones and adds list_toolsets and
   * enable_toolsets (one stdio session); otherwise fixed, or chosen per request (HTTP).
   */
  toolsets: 'discovery' | ToolsetSelection | ((extra: RequestExtra) => ToolsetSelection);
}

/**
 * A JSON-RPC error answered with its message as given: the SDK's McpError prefixes its message with
 * `MCP error <code>: `, and the client's McpError adds that prefix once more.
 */
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A problem as an MCP error carries it (`mcpProblem`). */
type McpProblem = Omit<Problem, 'title' | 'detail' | 'violations'> & { violations?: Array<Omit<Violation, 'message'> & { message?: string }> };

/**
 * The problem JSON of an MCP error, without what its summary line (`Title: detail`) says: no `title`
 * or `detail`, and a lone violation without its message when that is the detail. Each violation
 * keeps its path and code. The REST body is the whole problem (RFC 9457).
 */
function mcpProblem(error: AppError): McpProblem {
  const { title: _title, detail, violations, ...problem } = error.toProblem();
  if (!violations) return problem;
  if (violations.length === 1 && violations[0]!.message === detail) {
    const [{ message: _message, ...lone }] = violations as [Violation];
    return { ...problem, violations: [lone] };
  }
  return { ...problem, violations };
}

export function errorResult(err: unknown, logger: Logger, tool: string): CallToolResult {
  const appError = toAppError(err);
  if (appError.kind === 'internal' && !(err instanceof AppError)) logger.error({ err, tool }, 'tool failed');
  return {
    isError: true,
    content: [{ type: 'text', text: `${appError.summary()}\n${JSON.stringify(mcpProblem(appError))}` }],
  };
}

/** How stdio shows tools for a configured `toolsets`: none named means discovery on demand. */
export function stdioToolsets(toolsets: Config['toolsets']): McpDeps['toolsets'] {
  if (toolsets === undefined) return 'discovery';
  return toolsets === 'all' ? 'all' : new Set(toolsets);
}

/**
 * An MCP server over the catalog, built on the low-level Server so that tool schemas are the
 * precomputed ones (no zod conversion per request) and errors keep the problem shape.
 */
export function createMcpServer(deps: McpDeps): Server {
  const session = deps.toolsets === 'discovery' ? new ToolsetSession(deps.catalog) : undefined;
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: session !== undefined }, logging: {} }, instructions: session ? INSTRUCTIONS + DISCOVERY_INSTRUCTIONS : INSTRUCTIONS });
  const shown = (extra: RequestExtra): ToolsetSelection => {
    if (session) return session.enabled;
    return typeof deps.toolsets === 'function' ? deps.toolsets(extra) : (deps.toolsets as ToolsetSelection);
  };
  /** How a toolset that is not shown gets enabled: in this session, per HTTP request, or at start-up. */
  const enableHint = (toolset: string): string => {
    if (session) return `call enable_toolsets { "toolsets": ["${toolset}"] } first`;
    if (typeof deps.toolsets === 'function') return `this request chose its toolsets; add '${toolset}' to ?toolsets= or the MCP-Toolsets header, or leave both out for every toolset`;
    return 'this server was started without it';
  };
  const callable = (principal: Principal) => (name: string) => {
    const op = deps.catalog.find(name);
    return op !== undefined && deps.catalog.hidden(op, 'all') === undefined && deps.catalog.allows(op, principal);
  };

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    let principal: Principal;
    try {
      principal = await deps.principal(extra);
    } catch (err) {
      throw new JsonRpcError(ErrorCode.InvalidRequest, toAppError(err).summary());
    }
    const tools = deps.catalog.tools(principal, shown(extra));
    return { tools: session ? [DISCOVERY_TOOLS.list_toolsets, DISCOVERY_TOOLS.enable_toolsets, ...tools] : tools };
  });

  server.setRequestHandler(ToolsCallEnvelope, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = (request as unknown as CallToolRequest).params;
    const op = deps.catalog.find(name);
    if (!op && !(session && name in DISCOVERY_TOOLS)) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool '${name}'; tools/list names the tools this token can use`);
    }
    try {
      const principal = await deps.principal(extra);
      if (!op) return await discoveryCall(name, args, principal);
      const hidden = deps.catalog.hidden(op, shown(extra));
      if (hidden === 'read_only') throw deps.catalog.readOnlyRefusal(op)!;
      if (hidden === 'toolset') throw new AppError('forbidden', `${name} belongs to the toolset '${op.toolset}', which is not enabled: ${enableHint(op.toolset)}`);
      const { idempotencyKey, ...input } = args as Record<string, unknown>;
      const outcome = await deps.executor.execute(op, principal, input, checkIdempotencyKey(idempotencyKey));
      return toolResult(op, outcome.body, outcome.replayed);
    } catch (err) {
      return errorResult(err, deps.logger, name);
    }
  });

  /**
   * The SDK parses every message with zod before a handler runs, and that parse silently drops a
   * `__proto__` key; so each message is inspected (`findInputFault`, the executor's guard) as the
   * transport delivers it, before the SDK sees it. Reserved keys, too deep nesting or too many values
   * in a tool's arguments answer a tool error (a 422 problem, like any other invalid argument); in the
   * rest of a request, a JSON-RPC error; a notification or response with one is dropped.
   */
  function screen(message: JSONRPCMessage): JSONRPCMessage | null | undefined {
    const m = message as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    const isRequest = typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number');
    const args = m.method === 'tools/call' && m.params !== null && typeof m.params === 'object' ? m.params.arguments : undefined;
    const id = m.id as string | number;
    const malformed = isRequest && m.method === 'tools/call' ? toolsCallParamsProblem(m.params) : undefined;
    if (malformed) return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${malformed}` } } as JSONRPCMessage;
    if (isRequest && args !== null && typeof args === 'object') {
      const fault = findInputFault(args);
      if (fault) {
        const result = errorResult(new AppError('validation', fault.message, [faultViolation(fault)]), deps.logger, String(m.params?.name));
        return { jsonrpc: '2.0', id, result } as JSONRPCMessage;
      }
    }
    const fault = findInputFault(message, args);
    if (!fault) return undefined;
    if (!isRequest) return null;
    const code = fault.path[0] === 'params' ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
    return { jsonrpc: '2.0', id, error: { code, message: `${code === ErrorCode.InvalidParams ? 'Invalid params' : 'Invalid Request'}: ${fault.message}` } } as JSONRPCMessage;
  }

  const connect = server.connect.bind(server);
  server.connect = async (transport: Transport) => {
    // The SDK installs its message handler and then starts the transport: the screen goes in between,
    // so that no message (not even one queued before the start) reaches the SDK unscreened.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const answer = screen(message);
        if (answer === undefined) deliver?.(message, extra);
        else if (answer !== null) transport.send(answer).catch((err: unknown) => deps.logger.error({ err }, 'sending a refusal failed'));
      };
      await start();
    };
    await connect(transport);
  };

  async function discoveryCall(name: string, args: unknown, principal: Principal): Promise<CallToolResult> {
    const visible = callable(principal);
    if (name === 'list_toolsets') {
      // Like a list: a summary line and a table, each toolset once; the tool names only in structuredContent.
      const result = session!.list(visible);
      const enabled = result.toolsets.filter((t) => t.enabled).length;
      const head = `${result.toolsets.length} toolsets, ${enabled} enabled; enable_toolsets adds one and names the tools it adds.`;
      const rows = result.toolsets.map((t) => `${t.name} | ${t.enabled} | ${t.tools.length} | ${t.purpose}`);
      return { content: [{ type: 'text', text: [head, 'name | enabled | tools | purpose', ...rows].join('\n') }], structuredContent: result };
    }
    const result = session!.enable(args, visible);
    if (result instanceof z.ZodError) throw inputError(result, 'validation');
    if (result.added.length) await server.sendToolListChanged();
    const text = `Enabled: ${result.enabled.join(', ')}; tools added: ${result.added.length ? result.added.join(', ') : 'none'}`;
    return { content: [{ type: 'text', text }], structuredContent: result };
  }

  return server;
}
