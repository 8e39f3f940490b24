import type { IncomingMessage } from 'node:http';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors.js';

/** Host names that all mean this machine when the server listens on a loopback address. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Request headers a browser page at an allowed origin may send to `/mcp` (CORS preflight). */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID';

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

function isLoopbackAddress(address: string): boolean {
  return address === '::1' || address.startsWith('127.');
}

/** Whether `hostname` (as `URL.hostname` writes it, IPv6 in brackets) names the address the connection came in on. */
function namesListener(hostname: string, localAddress: string | undefined): boolean {
  if (!localAddress) return false;
  const local = localAddress.startsWith('::ffff:') && localAddress.includes('.') ? localAddress.slice(7) : localAddress;
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (bare === local.toLowerCase()) return true;
  return isLoopbackAddress(local) && LOOPBACK_NAMES.has(hostname);
}

/**
 * Which browser origins may call `/mcp` (DNS-rebinding protection, MCP transports § security): the
 * configured ones, and the server's own, `http://` + the `Host` header, when that host names the
 * address the server listens on. For a loopback listener `localhost`, `127.0.0.1` and `[::1]` are
 * interchangeable (same port). A page whose DNS name was rebound to this machine sends its own name in
 * `Host` and `Origin`, which names no listener address, so it is refused.
 */
export class OriginPolicy {
  private readonly configured: ReadonlySet<string>;

  constructor(configured: readonly string[]) {
    this.configured = new Set(configured);
  }

  allows(origin: string, req: IncomingMessage): boolean {
    return this.configured.has(origin) || isOwnOrigin(origin, req);
  }
}

function isOwnOrigin(origin: string, req: IncomingMessage): boolean {
  const host = req.headers.host;
  const from = parseUrl(origin);
  const self = host ? parseUrl(`http://${host}`) : undefined;
  if (!from || !self || from.protocol !== 'http:' || from.origin !== origin.toLowerCase()) return false;
  if (!namesListener(self.hostname, req.socket.localAddress)) return false;
  if (from.host === self.host) return true;
  return from.port === self.port && LOOPBACK_NAMES.has(from.hostname) && LOOPBACK_NAMES.has(self.hostname);
}

/** Headers that let a page at an allowed origin read the answer. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
}

/** The answer headers of a CORS preflight from an allowed origin. */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'Access-Control-Allow-Methods': 'POST',
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': '600',
  };
}

/**
 * A 400 for an `MCP-Protocol-Version` header the SDK does not speak; undefined when it does or the
 * header is absent (then the specification has the server assume 2025-03-26).
 */
export function protocolVersionError(header: string | string[] | undefined): AppError | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if ((SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(value)) return undefined;
  return new AppError(
    'bad_request',
    `Unsupported MCP-Protocol-Version ${JSON.stringify(value)}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')} ` +
      `(without the header ${DEFAULT_NEGOTIATED_PROTOCOL_VERSION} is assumed)`,
  );
}
