import { pino, type Logger } from 'pino';

/** Logs always go to stderr: in stdio mode stdout belongs to JSON-RPC. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'billing-mcp' } }, pino.destination({ fd: 2, sync: false }));
}

export type { Logger };
