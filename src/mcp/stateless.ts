import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/keys.js';
import type { ToolsetSelection } from '../registry/catalog.js';

/**
 * Serves stateless Streamable HTTP (JSON responses) from one long-lived MCP Server instead of
 * building a server per request (which costs about 0.35 ms of setup each).
 *
 * Isolation between callers does not rely on the JSON-RPC ids they chose: every request is given a
 * fresh internal id before the server sees it and its answer goes back only to the HTTP request that
 * carried it; the caller's principal travels with the message (`authInfo`), never in server state;
 * client notifications that could name another caller's request (cancellation, progress) are dropped.
 */
export class StatelessMcpEndpoint implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private nextId = 0;
  private readonly pending = new Map<number, { callerId: RequestId; resolve: (m: JSONRPCMessage) => void }>();

  static async attach(server: Server): Promise<StatelessMcpEndpoint> {
    const endpoint = new StatelessMcpEndpoint();
    await server.connect(endpoint);
    return endpoint;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || typeof message.id !== 'number' || isJSONRPCRequest(message)) return;
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    waiting.resolve({ ...message, id: waiting.callerId } as JSONRPCMessage);
  }

  /**
   * Handles one JSON-RPC message of one caller. Resolves to the response of a request, or undefined
   * for a notification (HTTP 202). Throws on a body that is not a JSON-RPC message.
   */
  handle(body: unknown, principal: Principal, toolsets: ToolsetSelection = 'all'): Promise<JSONRPCMessage | undefined> {
    const parsed = JSONRPCMessageSchema.safeParse(body);
    if (!parsed.success) {
      return Promise.resolve({
        jsonrpc: '2.0',
        id: (body as { id?: RequestId } | null)?.id ?? null,
        error: { code: -32600, message: 'Invalid Request: the body must be one JSON-RPC 2.0 request or notification' },
      } as unknown as JSONRPCMessage);
    }
    const message = parsed.data;
    const extra: MessageExtraInfo = { authInfo: { token: '', clientId: principal.keyId, scopes: [], extra: { principal, toolsets } } };
    if (!isJSONRPCRequest(message)) {
      if ('method' in message && message.method === 'notifications/initialized') this.onmessage?.(message, extra);
      return Promise.resolve(undefined);
    }
    const internalId = ++this.nextId;
    return new Promise((resolve) => {
      this.pending.set(internalId, { callerId: message.id, resolve });
      // The message as sent, not the parsed copy: the parse drops `__proto__` keys, which the server
      // refuses (createMcpServer screens every message) rather than ignores.
      this.onmessage?.({ ...(body as JSONRPCMessage), id: internalId }, extra);
    });
  }
}

export function principalFromExtra(extra: { authInfo?: { extra?: Record<string, unknown> } }): Principal | undefined {
  return extra.authInfo?.extra?.principal as Principal | undefined;
}

/** The toolsets the HTTP request chose (`?toolsets=` or the `MCP-Toolsets` header). */
export function toolsetsFromExtra(extra: { authInfo?: { extra?: Record<string, unknown> } }): ToolsetSelection {
  return (extra.authInfo?.extra?.toolsets as ToolsetSelection | undefined) ?? 'all';
}
