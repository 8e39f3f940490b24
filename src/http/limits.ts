import type { Principal } from '../auth/keys.js';
import { AppError } from '../errors.js';

/** Seconds a caller refused for concurrency is told to wait (`Retry-After`): requests here take milliseconds. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * Requests in flight per credential, so that one API key (or one customer, whatever tokens it holds)
 * cannot occupy the server's queue at the expense of every other caller. A slot is taken once the
 * caller is authenticated, before its body is read (a slow body holds a slot), and given back when
 * the request has been answered.
 */
export class KeyConcurrency {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Whose allowance a request uses: the API key, or the customer a customer token belongs to. */
  static keyOf(principal: Principal): string | undefined {
    if (principal.kind === 'api_key') return `key:${principal.keyId}`;
    if (principal.kind === 'customer') return `customer:${principal.organisationId}:${principal.customerId}`;
    return undefined;
  }

  /**
   * Takes `count` slots of `key` at once, or throws the 429 when they are not all free. Returns the
   * function that gives them back (once; later calls do nothing).
   */
  acquire(key: string | undefined, count = 1): () => void {
    if (key === undefined || count <= 0) return () => undefined;
    const current = this.inFlight.get(key) ?? 0;
    if (current + count > this.limit) {
      const what = count > 1 ? `these ${count} requests` : 'this request';
      throw new AppError(
        'rate_limited',
        `Too many concurrent requests for this credential: at most ${this.limit} may be in flight at once and ${current} are; retry ${what} after ${RETRY_AFTER_SECONDS} s (Retry-After)`,
      );
    }
    this.inFlight.set(key, current + count);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? count) - count;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** Slots in use for `key` (for tests and diagnostics). */
  inUse(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }
}
