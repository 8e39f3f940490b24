import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/store.js';

/** What a page token opens; a token made for one purpose never opens another. */
export type PagePurpose = 'offer-recipient' | 'invoice';

/** The subject a page token names: a resource of one organisation. */
export interface PageSubject {
  org: string;
  id: string;
}

const SEPARATOR = '\n';

/**
 * Tokens of the page links (issue 18): `<payload>.<mac>`, the payload the base64url of the
 * organisation and resource id, the MAC an HMAC-SHA256 (256 bits) of purpose and payload under the
 * installation's secret. Nobody without the secret can produce one; nothing about a token is stored,
 * so every read of an offer or invoice can show its link again. Verified in constant time.
 */
export class PageTokens {
  constructor(private readonly secret: Buffer) {}

  /**
   * The installation's token secret (every instance on the database shares it): made by migration 25,
   * so reading it never waits for the write lock; written here only if it is missing.
   */
  static async load(store: Store, now: Date): Promise<PageTokens> {
    const value =
      (await store.read((tx) => tx.system.getSecret('pages'))) ??
      (await store.transaction((tx) => tx.system.ensureSecret('pages', randomBytes(32).toString('hex'), now.toISOString())));
    return new PageTokens(Buffer.from(value, 'hex'));
  }

  private mac(purpose: PagePurpose, payload: string): Buffer {
    return createHmac('sha256', this.secret).update(`${purpose}${SEPARATOR}${payload}`).digest();
  }

  issue(purpose: PagePurpose, subject: PageSubject): string {
    const payload = Buffer.from(`${subject.org}${SEPARATOR}${subject.id}`).toString('base64url');
    return `${payload}.${this.mac(purpose, payload).toString('base64url')}`;
  }

  /** The subject of a genuine token of this purpose; undefined for anything else. */
  verify(purpose: PagePurpose, token: string): PageSubject | undefined {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 512) return undefined;
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.mac(purpose, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const [org, id, ...rest] = Buffer.from(payload, 'base64url').toString('utf8').split(SEPARATOR);
    if (!org || !id || rest.length) return undefined;
    return { org, id };
  }

  /** A token bound to another one (the CSRF token of a page's forms): the MAC of its purpose and the page token. */
  derive(purpose: string, token: string): string {
    return createHmac('sha256', this.secret).update(`${purpose}${SEPARATOR}${token}`).digest('base64url');
  }
}
