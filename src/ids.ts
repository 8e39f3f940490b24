import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const pool = Buffer.alloc(10 * 256);
let poolOffset = pool.length;

/** 10 random bytes from a pool refilled 256 ids at a time (one system call instead of one per id). */
function randomTen(): Buffer {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.subarray(poolOffset - 10, poolOffset);
}

let lastMs = 0;
let sequence = 0;

/**
 * Time-ordered UUIDv7 (RFC 9562), monotonic within the process: 48 bits of Unix milliseconds, a
 * 12-bit sequence in rand_a (started at a random value below 2^11 each millisecond, so it can count
 * up; on overflow the timestamp moves on by one millisecond), 62 random bits. Keeps unique indexes
 * append-mostly.
 */
export function newId(): string {
  const r = randomTen();
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = ((r[0]! << 8) | r[1]!) & 0x7ff;
  } else if (++sequence > 0xfff) {
    lastMs += 1;
    sequence = 0;
  }
  const b = Buffer.allocUnsafe(16);
  b.writeUIntBE(lastMs, 0, 6);
  b[6] = 0x70 | (sequence >> 8);
  b[7] = sequence & 0xff;
  b[8] = 0x80 | (r[2]! & 0x3f);
  r.copy(b, 9, 3, 10);
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The ulid package's random source, drawn from the same pool (its default asks the system for each character). */
const ulidFactory = monotonicFactory(() => randomTen()[0]! / 256);

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
