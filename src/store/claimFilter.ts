/**
 * A blocked Bloom filter over the event ids of one closed claim bucket (migration 033): it answers
 * "certainly not claimed here" without reading the claims table, so a new id costs no random page
 * read however many ids are stored. Each id sets K bits inside one 512-bit block (a cache line), so
 * a probe is one memory access per filter, and an id is hashed once (`hashId`) for all the filters
 * it is probed against; no Bloom filter package offers that, which is why this one is written here.
 * With 24 bits an id the share of false "maybe" answers is about 1 in 20,000 (test/claimFilter.test.ts);
 * a "maybe" is settled by one lookup in the bucket's rows.
 */

/** Bits of filter per id. */
export const BITS_PER_ID = 24;
/** Bits set per id, all in one block. */
const K = 12;
/** 32-bit words per block: 512 bits. */
const BLOCK_WORDS = 16;

/** Two independent 32-bit hashes of an id: one picks the block, the other the bits in it. */
export interface IdHash {
  block: number;
  bits: number;
}

/** murmur3's finaliser: every input bit flips about half of the output bits. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FNV-1a over the id's UTF-16 code units with two different primes, each finalised by `fmix`. */
export function hashId(id: string): IdHash {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return { block: fmix(a), bits: fmix(b) };
}

/**
 * The next state of a xorshift32 sequence seeded by the id's second hash: its top 9 bits pick a bit
 * of the block. (Bits in arithmetic progression, from two 9-bit numbers, left only 2^17 patterns per
 * block and let 1 probe in 1,250 through.)
 */
function next(x: number): number {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

export class ClaimFilter {
  /** Blocks of 512 bits. */
  private readonly blocks: number;

  private constructor(private readonly words: Uint32Array) {
    this.blocks = words.length / BLOCK_WORDS;
  }

  /** The first word of the id's block: its hash scaled to the blocks (a multiply, where `%` on a double would divide). */
  private base(h: IdHash): number {
    return Math.floor((h.block * this.blocks) / 4294967296) * BLOCK_WORDS;
  }

  /** An empty filter sized for `count` ids. */
  static sized(count: number): ClaimFilter {
    const blocks = Math.max(1, Math.ceil((count * BITS_PER_ID) / 512));
    return new ClaimFilter(new Uint32Array(blocks * BLOCK_WORDS));
  }

  /** A filter as `bytes()` stored it. */
  static of(bytes: Uint8Array): ClaimFilter {
    if (bytes.byteLength === 0 || bytes.byteLength % (BLOCK_WORDS * 4) !== 0) throw new Error(`a claim filter of ${bytes.byteLength} bytes`);
    // A copy: the driver's buffer need not be aligned for 32-bit words.
    return new ClaimFilter(new Uint32Array(new Uint8Array(bytes).buffer));
  }

  /** Adds the ids whose hashes `HashList.bytes` stored; answers how many. */
  addStored(bytes: Uint8Array): number {
    const words = new Uint32Array(new Uint8Array(bytes).buffer);
    for (let i = 0; i < words.length; i += 2) this.add({ block: words[i]!, bits: words[i + 1]! });
    return words.length / 2;
  }

  /** The words in the platform's byte order (little-endian wherever Node runs the store). */
  bytes(): Buffer {
    return Buffer.from(this.words.buffer, this.words.byteOffset, this.words.byteLength);
  }

  add(h: IdHash): void {
    const base = this.base(h);
    let x = h.bits || 1;
    for (let i = 0; i < K; i++) {
      x = next(x);
      const bit = x >>> 23;
      this.words[base + (bit >>> 5)]! |= 1 << (bit & 31);
    }
  }

  /** False: the id was never added. True: it may have been. */
  mayHave(h: IdHash): boolean {
    const base = this.base(h);
    let x = h.bits || 1;
    for (let i = 0; i < K; i++) {
      x = next(x);
      const bit = x >>> 23;
      if ((this.words[base + (bit >>> 5)]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/**
 * The filter of a segment: closed buckets `firstBucket` to `lastBucket` of an organisation, `claims`
 * ids in all, in a filter sized for `capacity` ids. A bucket that closes joins the last segment while
 * that has room, else opens the next one, sized for as many ids as all the segments before it: an id
 * is probed against one filter per doubling of the stored ids, then one per `maxSegment` ids (7 at
 * 10,000,000 with the default sizes).
 */
export interface Segment {
  segment: number;
  firstBucket: number;
  lastBucket: number;
  claims: number;
  capacity: number;
  filter: ClaimFilter;
  /**
   * Sealed: full, its filter stored once (`usage_event_claim_filters`). The last segment is open
   * until then: its buckets store their ids' hashes (`usage_event_claim_hashes`), which each store
   * adds to a filter of its own, so that a bucket that closes never rewrites a filter.
   */
  sealed: boolean;
}

/** A closed bucket of the open segment as stored: its ids' hashes. */
export interface BucketHashes {
  bucket: number;
  segment: number;
  capacity: number;
  hashes: Uint8Array;
}

/**
 * Ids' hashes in a row, each id's block and bits hash as two 32-bit words: how a bucket's hashes are
 * noted, added up and stored (in the platform's byte order), without an object per id.
 */
export class HashList {
  private words = new Uint32Array(64);
  length = 0;

  static of(hashes: readonly IdHash[]): HashList {
    const list = new HashList();
    for (const h of hashes) list.push(h);
    return list;
  }

  push(h: IdHash): void {
    if (2 * this.length === this.words.length) {
      const grown = new Uint32Array(2 * this.words.length);
      grown.set(this.words);
      this.words = grown;
    }
    this.words[2 * this.length] = h.block;
    this.words[2 * this.length + 1] = h.bits;
    this.length += 1;
  }

  /** The hashes as stored: 8 bytes per id. */
  bytes(): Buffer {
    return Buffer.from(this.words.buffer, this.words.byteOffset, 8 * this.length);
  }
}

/** The sizes of claim buckets and segments. */
export interface ClaimSizes {
  /** The arrival numbers an open bucket spans before it closes. */
  bucketSpan: number;
  /** The most ids a new segment is sized for. */
  maxSegment: number;
}

/**
 * Buckets of 65,536 arrival numbers: the open bucket, where a unit's new ids land, stays a small,
 * hot stretch of the claim index whatever is stored (a larger one made each unit write more of its
 * pages), and closing one reads at most that many ids. Segments of at most 4,194,304 ids (a 12 MiB
 * filter, stored once when sealed; until then a store that starts adds up its buckets' hashes).
 */
export const DEFAULT_CLAIM_SIZES: ClaimSizes = { bucketSpan: 65_536, maxSegment: 4_194_304 };

/**
 * The segments' filters, per organisation, for one store (shared by its connections): the sealed
 * ones loaded from `usage_event_claim_filters`, the open one added up from its buckets' hashes, as
 * buckets close. Only what a unit read from the database enters it,
 * never what the unit itself wrote; a store whose group transaction failed to commit calls `clear`
 * (what it read may have been that group's).
 *
 * Beside them, the hashes of the ids this process claimed in each organisation's open bucket, so
 * that closing it need not read and hash the bucket's ids again: used only while they are all of the
 * bucket's claims (`pendingOf`: this store's units took every arrival number the bucket spans), and
 * forgotten whenever a unit of the store does not commit (`forgetPending`), so that they never hold a
 * claim that was undone.
 */
export class ClaimFilterCache {
  private readonly orgs = new Map<string, { segments: Segment[]; below: number }>();
  private readonly pending = new Map<string, { bucket: number; numbers: number; hashes: HashList }>();

  constructor(readonly sizes: ClaimSizes = DEFAULT_CLAIM_SIZES) {}

  /**
   * The organisation's segments, covering every bucket below `open` (the open bucket's number).
   * `load(bucket, segment)` answers the sealed segments from `segment` on and the stored buckets
   * from `bucket` on, in order; a sealed segment takes the place of the open one it was.
   */
  async below(org: string, open: number, load: (bucket: number, segment: number) => Promise<{ sealed: Segment[]; buckets: BucketHashes[] }>): Promise<Segment[]> {
    let entry = this.orgs.get(org);
    if (!entry || entry.below > open) {
      // The open bucket went back: what was loaded came from a transaction that did not commit.
      entry = { segments: [], below: 0 };
      this.orgs.set(org, entry);
    }
    if (entry.below < open) {
      const segments = entry.segments;
      const unsealed = segments.find((known) => !known.sealed);
      const { sealed, buckets } = await load(entry.below, unsealed?.segment ?? (segments.length ? segments[segments.length - 1]!.segment + 1 : 0));
      for (const s of sealed) {
        const i = segments.findIndex((known) => known.segment === s.segment);
        if (i >= 0) segments[i] = s;
        else segments.push(s);
      }
      for (const b of buckets) {
        if (b.bucket >= open) break;
        let s = segments.find((known) => known.segment === b.segment);
        if (s?.sealed) continue;
        if (!s) {
          s = { segment: b.segment, firstBucket: b.bucket, lastBucket: b.bucket, claims: 0, capacity: b.capacity, filter: ClaimFilter.sized(b.capacity), sealed: false };
          segments.push(s);
        }
        s.claims += s.filter.addStored(b.hashes);
        s.lastBucket = b.bucket;
      }
      entry.below = open;
    }
    return entry.segments;
  }

  /**
   * The capacity of a new segment: as many ids as the segments before it hold, at least four buckets
   * and at most `maxSegment`, and never less than the bucket that opens it (migration 033's bucket 0
   * holds every id stored before it).
   */
  capacityAfter(closedClaims: number, bucketClaims: number): number {
    return Math.max(4 * this.sizes.bucketSpan, Math.min(this.sizes.maxSegment, closedClaims), bucketClaims);
  }

  /** Notes that a unit of this store took `count` arrival numbers of the organisation's open bucket `bucket`. */
  reserved(org: string, bucket: number, count: number): void {
    this.pendingIn(org, bucket).numbers += count;
  }

  /** Notes ids claimed in the organisation's open bucket `bucket` by a unit of this store. */
  claimed(org: string, bucket: number, hashes: readonly IdHash[]): void {
    const p = this.pendingIn(org, bucket);
    for (const h of hashes) p.hashes.push(h);
  }

  private pendingIn(org: string, bucket: number) {
    let p = this.pending.get(org);
    if (!p || p.bucket !== bucket) this.pending.set(org, (p = { bucket, numbers: 0, hashes: new HashList() }));
    return p;
  }

  /**
   * The hashes of every id claimed in the organisation's bucket `bucket`, which spans `numbers`
   * arrival numbers, when this store's units took all of them since it last forgot what it noted
   * (so no other store or instance claimed any); otherwise undefined.
   */
  pendingOf(org: string, bucket: number, numbers: number): HashList | undefined {
    const p = this.pending.get(org);
    return p?.bucket === bucket && p.numbers === numbers ? p.hashes : undefined;
  }

  /** A unit did not commit: what it noted may have been undone. */
  forgetPending(): void {
    this.pending.clear();
  }

  clear(): void {
    this.orgs.clear();
    this.pending.clear();
  }
}
