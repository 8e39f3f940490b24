import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * The stdio transport, ended the way MCP clients end it: a client shuts a stdio server down by
 * closing its stdin, which the SDK's transport does not notice. At the end of stdin the requests
 * already received are answered first (a request the client cancelled gets no answer, so it is not
 * waited for); then the transport closes, as after a read error, and `onclose` (the server's)
 * lets the process release what it holds.
 */
export class EndingStdioTransport extends StdioServerTransport {
  /** Ids of the requests received and not answered yet. */
  private readonly unanswered = new Set<RequestId>();
  private ended = false;
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    output: Writable = process.stdout,
  ) {
    super(input, output);
  }

  override async start(): Promise<void> {
    const deliver = this.onmessage;
    this.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCRequest(message)) this.unanswered.add(message.id);
      else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
        const cancelled = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (cancelled !== undefined) this.unanswered.delete(cancelled);
      }
      deliver?.(message);
      this.closeWhenDone();
    };
    this.input.once('end', () => {
      this.ended = true;
      this.closeWhenDone();
    });
    await super.start();
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    await super.send(message);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      if (message.id !== undefined) this.unanswered.delete(message.id);
      this.closeWhenDone();
    }
  }

  /** Closes once; `onclose` runs once whether stdin ended, a read failed or the server closed it. */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await super.close();
  }

  private closeWhenDone(): void {
    if (this.ended && this.unanswered.size === 0) void this.close();
  }
}
