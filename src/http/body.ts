import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';

export const BODY_LIMIT = 1024 * 1024;

/** The media type of the request body, lower case, without parameters (`''` when absent). */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Reads at most 1 MiB; anything larger is a 413 before it is all read. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > BODY_LIMIT) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw tooLarge();
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

function tooLarge(): AppError {
  return new AppError('payload_too_large', `The request body exceeds the limit of ${BODY_LIMIT} bytes (1 MiB)`);
}

/**
 * The JSON object of a request body. An empty body is `{}` (actions without input); otherwise the
 * media type must be the expected one (415) and the text a JSON object (400).
 */
export async function readJsonObject(req: IncomingMessage, expected: string): Promise<Record<string, unknown>> {
  const raw = await readBody(req);
  if (raw.length === 0) return {};
  const type = mediaType(req);
  if (type !== expected) {
    throw new AppError(
      'unsupported_media_type',
      `Content-Type must be ${expected}${type ? ` (got ${type})` : ''}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new AppError('bad_request', `The body is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('bad_request', 'The body must be a JSON object');
  }
  return value as Record<string, unknown>;
}
