import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';

export const BODY_LIMIT = 1024 * 1024;

/** The media type of the request body, lower case, without parameters (`''` when absent). */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The slowest a body may arrive: at least `minBytesPerSecond` over every `windowMs` until it is complete. */
export interface BodyRate {
  minBytesPerSecond: number;
  windowMs: number;
}

/** No rate check (tests and callers that read a body already in memory). */
export const NO_BODY_RATE: BodyRate = { minBytesPerSecond: 0, windowMs: 1000 };

/**
 * Reads at most 1 MiB; anything larger is a 413 before it is all read. A body that arrives slower
 * than `rate` (fewer than minBytesPerSecond × windowMs bytes in a window, counted from the start of
 * the read) is a 408: the caller answers it with `Connection: close` (see `closesConnection`), and
 * what the client still sends is read and discarded, not left in the socket.
 */
export function readBody(req: IncomingMessage, rate: BodyRate = NO_BODY_RATE): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > BODY_LIMIT) return Promise.reject(tooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let inWindow = 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: Error | undefined, body?: Buffer) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) {
        req.resume();
        reject(err);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      inWindow += chunk.length;
      if (size > BODY_LIMIT) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    const onError = (err: Error) => finish(err);
    const onClose = () => finish(new AppError('bad_request', 'The client closed the connection before the body was complete'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
    if (rate.minBytesPerSecond > 0) {
      const needed = (rate.minBytesPerSecond * rate.windowMs) / 1000;
      timer = setInterval(() => {
        // Decided after the poll phase, so that bytes already waiting in the socket are counted.
        setImmediate(() => {
          if (settled || req.complete) return;
          if (inWindow < needed) {
            finish(
              new AppError(
                'request_timeout',
                `The request body arrived slower than ${rate.minBytesPerSecond} bytes per second over ${rate.windowMs} ms (${inWindow} bytes); the connection is closed`,
              ),
            );
          }
          inWindow = 0;
        });
      }, rate.windowMs);
    }
  });
}

/** A problem after which the connection must not be reused: the rest of a body cut short is still in it. */
export function closesConnection(err: AppError): boolean {
  return err.kind === 'request_timeout' || err.kind === 'payload_too_large';
}

function tooLarge(): AppError {
  return new AppError('payload_too_large', `The request body exceeds the limit of ${BODY_LIMIT} bytes (1 MiB)`);
}

/**
 * The JSON value of a request body and its media type, which must be one of `accepted` (415
 * otherwise); an empty body is `{}` (actions without input), text that is not JSON a 400.
 */
export async function readJsonBody(req: IncomingMessage, accepted: readonly string[], rate: BodyRate = NO_BODY_RATE): Promise<{ value: unknown; type: string }> {
  const raw = await readBody(req, rate);
  const type = mediaType(req);
  if (raw.length === 0) return { value: {}, type };
  if (!accepted.includes(type)) {
    throw new AppError(
      'unsupported_media_type',
      `Content-Type must be ${accepted.join(' or ')}${type ? ` (got ${type})` : ''}`,
    );
  }
  try {
    return { value: JSON.parse(raw.toString('utf8')) as unknown, type };
  } catch (err) {
    throw new AppError('bad_request', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The JSON object of a request body (`readJsonBody` with one media type); anything but an object is a 400. */
export async function readJsonObject(req: IncomingMessage, expected: string, rate: BodyRate = NO_BODY_RATE): Promise<Record<string, unknown>> {
  const { value } = await readJsonBody(req, [expected], rate);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('bad_request', 'The body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * The text of a request body that is a document of `expected` media type (`text/xml` is taken for
 * `application/xml`, RFC 7303): another media type is a 415, text that is not UTF-8 a 400.
 */
export async function readText(req: IncomingMessage, expected: 'application/xml', rate: BodyRate = NO_BODY_RATE): Promise<string> {
  const raw = await readBody(req, rate);
  const type = mediaType(req);
  if (type !== expected && type !== 'text/xml') {
    throw new AppError('unsupported_media_type', `Content-Type must be ${expected}${type ? ` (got ${type})` : ''}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new AppError('bad_request', 'The body is not valid UTF-8 text');
  }
}
