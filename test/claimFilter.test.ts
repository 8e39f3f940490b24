/** The Bloom filter of closed claim buckets (src/store/claimFilter.ts): no id added is ever missed, few others pass. */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClaimFilter, ClaimFilterCache, hashId } from '../src/store/claimFilter.js';

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

describe('ClaimFilterCache', () => {
  const segment = (n: number, firstBucket: number, lastBucket: number, claims = 1) => ({ segment: n, firstBucket, lastBucket, claims, capacity: claims, filter: ClaimFilter.sized(claims) });

  it('loads the segments that cover buckets it lacks, replaces a segment that grew, and starts over when the open bucket went back', async () => {
    const cache = new ClaimFilterCache({ bucketSpan: 10, maxSegment: 80 });
    const loads: number[] = [];
    let stored = [segment(0, 0, 3, 40), segment(1, 4, 4, 20)];
    const load = async (from: number) => {
      loads.push(from);
      return stored.filter((s) => s.lastBucket >= from);
    };
    const covered = async (open: number) => (await cache.below('o', open, load)).map((s) => `${s.segment}:${s.firstBucket}-${s.lastBucket}`);
    expect(await covered(5)).toEqual(['0:0-3', '1:4-4']);
    expect(await covered(5)).toEqual(['0:0-3', '1:4-4']);
    stored = [stored[0]!, segment(1, 4, 5, 30)];
    expect(await covered(6)).toEqual(['0:0-3', '1:4-5']);
    expect(loads).toEqual([0, 5]);
    expect(await covered(4)).toEqual(['0:0-3', '1:4-5']);
    expect(loads).toEqual([0, 5, 0]);
    cache.clear();
    await covered(4);
    expect(loads).toEqual([0, 5, 0, 0]);
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
