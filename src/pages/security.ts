import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { PageTokens } from '../auth/pageTokens.js';
import { AppError } from '../errors.js';
import { mediaType, readBody, type BodyRate } from '../http/body.js';

/**
 * Headers of every page answer: no script at all, styles and images only from the server itself,
 * forms post only to it, never framed, no referrer (the URL carries the access token), nothing cached.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** Form bodies are small: a signature, an address, an IBAN. */
const FORM_LIMIT = 16 * 1024;

/** A posted `application/x-www-form-urlencoded` form; anything else is a 415. */
export async function readForm(req: IncomingMessage, rate: BodyRate): Promise<URLSearchParams> {
  const type = mediaType(req);
  if (type !== 'application/x-www-form-urlencoded') {
    throw new AppError('unsupported_media_type', `Content-Type must be application/x-www-form-urlencoded${type ? ` (got ${type})` : ''}`);
  }
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > FORM_LIMIT) throw new AppError('payload_too_large', `A form may hold at most ${FORM_LIMIT} bytes`);
  const body = await readBody(req, rate);
  if (body.byteLength > FORM_LIMIT) throw new AppError('payload_too_large', `A form may hold at most ${FORM_LIMIT} bytes`);
  const form = new URLSearchParams(body.toString('utf8'));
  for (const [name, value] of form) {
    if (name.includes('\u0000') || value.includes('\u0000')) {
      throw new AppError('validation', `The form field ${JSON.stringify(name.replace(/\u0000/g, ''))} contains the character U+0000 (NUL), which no field accepts`);
    }
  }
  return form;
}

/** The host (and port) of an Origin header; undefined when it is no URL. */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/** The hidden `csrf` field of the forms of the page opened by `token`. */
export function csrfToken(tokens: PageTokens, token: string): string {
  return tokens.derive('csrf', token);
}

/**
 * A POST must come from the page itself: its `csrf` field matches the page token's (compared in
 * constant time), and a browser that says where the request comes from (Sec-Fetch-Site, Origin)
 * says the same origin.
 */
export function checkCsrf(req: IncomingMessage, form: URLSearchParams, tokens: PageTokens, token: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null' && hostOf(origin) !== req.headers.host) return false;
  const given = Buffer.from(form.get('csrf') ?? '');
  const expected = Buffer.from(csrfToken(tokens, token));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Requests to token pages per client address and minute (`BILLING_PAGES_RATE_LIMIT_PER_MINUTE`). */
export class PageRateLimit {
  private readonly limiter: RateLimiterMemory;

  constructor(perMinute: number) {
    this.limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
  }

  /** Seconds until the client may try again, or 0 when this request is within its limit. */
  async take(address: string): Promise<number> {
    try {
      await this.limiter.consume(address);
      return 0;
    } catch (refusal) {
      if (refusal instanceof Error) throw refusal;
      return Math.max(1, Math.ceil((refusal as { msBeforeNext: number }).msBeforeNext / 1000));
    }
  }
}
