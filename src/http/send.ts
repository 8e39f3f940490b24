import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, gzip, gzipSync } from 'node:zlib';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** Smaller bodies go out as they are: the gzip header and the work would outweigh the saving. */
export const GZIP_MIN_BYTES = 1024;
/**
 * Up to this size a body is gzipped on the spot at the fastest level (about 50 µs for 5 KiB, a
 * fraction of the work of an async call, which sets up a stream and a thread-pool hop); larger
 * bodies are gzipped on the thread pool so that the event loop never stalls for milliseconds.
 */
const GZIP_SYNC_MAX_BYTES = 64 * 1024;
const GZIP_OPTIONS = { level: constants.Z_BEST_SPEED };

/**
 * Whether an `Accept-Encoding` value admits gzip: `gzip` (or `x-gzip`) with a non-zero q, or `*` with a
 * non-zero q when gzip is not listed itself.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  const value = header.toLowerCase();
  if (!value.includes('gzip') && !value.includes('*')) return false;
  let wildcard = false;
  for (const part of value.split(',')) {
    const [coding = '', ...params] = part.split(';');
    const name = coding.trim();
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (name !== '*') return accepted;
    wildcard = accepted;
  }
  return wildcard;
}

/** A body serialized once, whose gzip form is made on first demand and kept (`/openapi.json`). */
export class StaticBody {
  private compressed: Buffer | undefined;

  constructor(readonly text: string) {}

  gzipped(): Buffer {
    this.compressed ??= gzipSync(this.text);
    return this.compressed;
  }
}

function withVary(headers: Record<string, string>): Record<string, string> {
  const vary = headers.Vary ? `${headers.Vary}, Accept-Encoding` : 'Accept-Encoding';
  return { ...headers, Vary: vary };
}

/**
 * Writes a serialized body. From `GZIP_MIN_BYTES` on, the response carries `Vary: Accept-Encoding`
 * and is gzipped when the request accepts it.
 */
export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string | StaticBody,
  headers: Record<string, string> = {},
  contentType = JSON_TYPE,
): void {
  const text = typeof body === 'string' ? body : body.text;
  const size = Buffer.byteLength(text);
  if (size < GZIP_MIN_BYTES) {
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': size, ...headers });
    res.end(text);
    return;
  }
  const varied = { 'Content-Type': contentType, ...withVary(headers) };
  if (!acceptsGzip(req.headers['accept-encoding'])) {
    res.writeHead(status, { ...varied, 'Content-Length': size });
    res.end(text);
    return;
  }
  const write = (compressed: Buffer) => {
    res.writeHead(status, { ...varied, 'Content-Encoding': 'gzip', 'Content-Length': compressed.length });
    res.end(compressed);
  };
  if (typeof body !== 'string') return write(body.gzipped());
  if (size <= GZIP_SYNC_MAX_BYTES) return write(gzipSync(text, GZIP_OPTIONS));
  gzip(text, GZIP_OPTIONS, (err, compressed) => {
    if (!err) return write(compressed);
    res.writeHead(status, { ...varied, 'Content-Length': size });
    res.end(text);
  });
}

/** A document (a PDF) as it is: its streams are compressed already, so it is never gzipped again. */
export function sendBytes(res: ServerResponse, status: number, body: Uint8Array, contentType: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': body.byteLength, ...headers });
  res.end(body);
}
