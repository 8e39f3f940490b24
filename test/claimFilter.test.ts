/** The Bloom filter of closed claim buckets (src/store/claimFilter.ts): no id added is ever missed, few others pass. */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClaimFilter, ClaimFilterCache, HashList, hashId, type Segment } from '../src/store/claimFilter.js';

describe('ClaimFilter', () => {
  it('answers "may have" for every id added, also after a round trip through its bytes', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 255, unit: 'binary' }), { minLength: 1, maxLength: 300 }), (ids) => {
        const filter = ClaimFilter.sized(ids.length);
        for (const id of ids) filter.add(hashId(id));
        const copy = ClaimFilter.of(filter.bytes());
        return ids.every((id) => filter.mayHave(hashId(id)) && copy.mayHave(hashId(id)));
      }),
    );
  });

  it('lets about 1 id in 20,000 that was never added through', () => {
    const filter = ClaimFilter.sized(65_536);
    for (let i = 0; i < 65_536; i++) filter.add(hashId(randomUUID()));
    let passed = 0;
    for (let i = 0; i < 400_000; i++) if (filter.mayHave(hashId(randomUUID()))) passed += 1;
    // Expected about 20 (5e-5); 80 would be 2e-4.
    expect(passed).toBeLessThan(80);
  });

  it('refuses bytes that are not whole blocks', () => {
    expect(() => ClaimFilter.of(new Uint8Array(10))).toThrow('a claim filter of 10 bytes');
  });
});

describe('HashList', () => {
  it('keeps every hash pushed, in order, as two 32-bit words each, past its first allocation', () => {
    const hashes = Array.from({ length: 1000 }, (_, i) => hashId(`id-${i}`));
    const bytes = HashList.of(hashes).bytes();
    expect(bytes.length).toBe(8000);
    const words = new Uint32Array(new Uint8Array(bytes).buffer);
    expect(hashes.every((h, i) => words[2 * i] === h.block && words[2 * i + 1] === h.bits)).toBe(true);
    const filter = ClaimFilter.sized(1000);
    expect(filter.addStored(bytes)).toBe(1000);
    expect(hashes.every((h) => filter.mayHave(h))).toBe(true);
  });
});

describe('ClaimFilterCache', () => {
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const bucket = (n: number, segment: number, capacity: number, of: string[]) => ({ bucket: n, segment, capacity, hashes: HashList.of(of.map(hashId)).bytes() });
  const sealedOf = (segment: number, firstBucket: number, lastBucket: number, of: string[]) => {
    const filter = ClaimFilter.sized(of.length);
    for (const id of of) filter.add(hashId(id));
    return { segment, firstBucket, lastBucket, claims: of.length, capacity: of.length, filter, sealed: true };
  };

  it('adds up the open segment from its buckets, takes a sealed segment in its place, reloads only what it lacks, and starts over when the open bucket went back', async () => {
    const cache = new ClaimFilterCache({ bucketSpan: 10, maxSegment: 80 });
    const loads: number[] = [];
    let stored = { sealed: [sealedOf(0, 0, 1, ids('a', 20))], buckets: [bucket(2, 1, 40, ids('b', 10)), bucket(3, 1, 40, ids('c', 10))] };
    const load = async (from: number, segment: number) => {
      loads.push(from, segment);
      return { sealed: stored.sealed.filter((s) => s.segment >= segment), buckets: stored.buckets.filter((b) => b.bucket >= from) };
    };
    const shape = (segments: Segment[]) => segments.map((s) => `${s.segment}:${s.firstBucket}-${s.lastBucket} ${s.claims}${s.sealed ? ' sealed' : ''}`);
    // Bucket 3 is the open bucket: its stored row (from a group not yet seen committed) is not read.
    expect(shape(await cache.below('o', 3, load))).toEqual(['0:0-1 20 sealed', '1:2-2 10']);
    expect(shape(await cache.below('o', 4, load))).toEqual(['0:0-1 20 sealed', '1:2-3 20']);
    const segments = await cache.below('o', 4, load);
    expect(['a-0', 'b-9', 'c-5'].every((id) => segments.some((s) => s.filter.mayHave(hashId(id))))).toBe(true);
    expect(loads).toEqual([0, 0, 3, 1]);
    // Segment 1 is sealed when bucket 4 closes into a new segment.
    stored = { sealed: [...stored.sealed, sealedOf(1, 2, 3, [...ids('b', 10), ...ids('c', 10)])], buckets: [bucket(4, 2, 40, ids('d', 10))] };
    expect(shape(await cache.below('o', 5, load))).toEqual(['0:0-1 20 sealed', '1:2-3 20 sealed', '2:4-4 10']);
    expect(shape(await cache.below('o', 2, load))).toEqual(['0:0-1 20 sealed', '1:2-3 20 sealed']);
    expect(loads).toEqual([0, 0, 3, 1, 4, 1, 0, 0]);
    cache.clear();
    await cache.below('o', 2, load);
    expect(loads).toEqual([0, 0, 3, 1, 4, 1, 0, 0, 0, 0]);
  });

  it('sizes a new segment for as many ids as those before it, at least four buckets, at most maxSegment, never less than its first bucket', () => {
    const cache = new ClaimFilterCache({ bucketSpan: 10, maxSegment: 80 });
    expect([
      [0, 12],
      [40, 12],
      [70, 12],
      [200, 12],
      [200, 130],
    ].map(([closed, bucket]) => cache.capacityAfter(closed!, bucket!))).toEqual([40, 40, 70, 80, 130]);
  });
});
