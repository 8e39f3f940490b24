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
 * A JSON body serialized as the pieces it is written in: `JSON.stringify(body)` split so that a list
 * envelope's rows are serialized one by one (`pieces.join('')` is exactly `JSON.stringify(body)`).
 * V8 builds the string of a whole large answer as a rope, and making it flat (for its byte length
 * or its write) copies it into a fresh large-object allocation: 0.6-0.7 ms for a page of 30
 * subscriptions (165 KB), a tenth of the page's CPU in the server. Rows of a few KB each stay cheap.
 */
export function jsonPieces(body: unknown): string[] {
  if (!isListEnvelope(body)) return [JSON.stringify(body)];
  const pieces: string[] = [];
  let separator = '{';
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (key === 'data') {
      pieces.push(`${separator}"data":[`);
      (value as unknown[]).forEach((row, i) => pieces.push((i === 0 ? '' : ',') + (JSON.stringify(row) ?? 'null')));
      pieces.push(']');
    } else {
      const json = JSON.stringify(value);
      if (json === undefined) continue;
      pieces.push(`${separator}${JSON.stringify(key)}:${json}`);
    }
    separator = ',';
  }
  pieces.push('}');
  return pieces;
}

/** A plain object with a `data` array of more than one row (a list's answer), which `jsonPieces` splits. */
function isListEnvelope(body: unknown): body is Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Object.getPrototypeOf(body) !== Object.prototype) return false;
  const { data, toJSON } = body as { data?: unknown; toJSON?: unknown };
  return toJSON === undefined && Array.isArray(data) && data.length > 1 && (data as { toJSON?: unknown }).toJSON === undefined;
}

/**
 * Writes a serialized body, whole or as pieces (`jsonPieces`): pieces go out in one write of the
 * corked socket without being joined. From `GZIP_MIN_BYTES` on, the response carries
 * `Vary: Accept-Encoding` and is gzipped (joined first) when the request accepts it.
 */
export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string | string[] | StaticBody,
  headers: Record<string, string> = {},
  contentType = JSON_TYPE,
): void {
  const pieces = typeof body === 'string' ? [body] : Array.isArray(body) ? body : [body.text];
  let size = 0;
  for (const piece of pieces) size += Buffer.byteLength(piece);
  const plain = size < GZIP_MIN_BYTES;
  const varied = plain ? { 'Content-Type': contentType, ...headers } : { 'Content-Type': contentType, ...withVary(headers) };
  if (plain || !acceptsGzip(req.headers['accept-encoding'])) {
    res.writeHead(status, { ...varied, 'Content-Length': size });
    if (pieces.length === 1) return void res.end(pieces[0]);
    res.cork();
    for (const piece of pieces) res.write(piece);
    res.end();
    return;
  }
  const text = pieces.length === 1 ? (pieces[0] as string) : pieces.join('');
  const write = (compressed: Buffer) => {
    res.writeHead(status, { ...varied, 'Content-Encoding': 'gzip', 'Content-Length': compressed.length });
    res.end(compressed);
  };
  if (body instanceof StaticBody) return write(body.gzipped());
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
