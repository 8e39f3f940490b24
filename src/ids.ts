import { v7 as uuidv7 } from 'uuid';
import { monotonicFactory } from 'ulid';

/** Time-ordered UUIDv7: keeps unique indexes append-mostly. */
export function newId(): string {
  return uuidv7();
}

const ulidFactory = monotonicFactory();

export function newUlid(): string {
  return ulidFactory();
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The same 128 bits of a ULID written as a UUID (the interface names billing groups both ways). */
export function ulidToUuid(ulid: string): string {
  let n = 0n;
  for (const c of ulid.toUpperCase()) n = n * 32n + BigInt(CROCKFORD.indexOf(c));
  const hex = n.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function uuidToUlid(uuid: string): string {
  let n = BigInt(`0x${uuid.replace(/-/g, '')}`);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = CROCKFORD[Number(n % 32n)] + out;
    n /= 32n;
  }
  return out;
}

export const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
