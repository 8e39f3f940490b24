/**
 * Deduplication claims in buckets (migration 033), on both engines, with buckets of 10 arrival
 * numbers so that a few calls close several: an id in a closed bucket (found through its filter) is a
 * duplicate like one in the open bucket, across a restart, from a second store on the same database
 * that read the filters before the bucket closed; a unit rolled back after closing a bucket leaves
 * none of its ids claimed, a SQLite store forgets the filters it read in a group whose COMMIT
 * failed, and a bucket is closed from the hashes the store noted as it claimed only while they are
 * all of the bucket's claims. The open segment's buckets keep their ids' hashes, and a full segment
 * is sealed with its filter stored once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestUsageEvents } from '../src/domain/usageEvents.js';
import type { SqliteStore } from '../src/store/sqlite.js';
import { meteredSubscription, ok, setup, type TestEnv } from './helpers.js';
import { onPostgres } from './pgStore.js';

const dir = mkdtempSync(join(tmpdir(), 'usage-claims-'));
const db = join(dir, 'billing.sqlite');
const span = { claimSizes: { bucketSpan: 10, maxSegment: 60 } };
/** The subscription starts at 10:00; the events are of 11:00, ingested at NOW. */
const NOW = '2026-01-15T12:00:00Z';
let env: TestEnv;
let subscription: string;

beforeAll(async () => {
  env = await setup({ db }, span);
  env.setNow('2026-01-15T10:00:00Z');
  subscription = await meteredSubscription(env.mcp, { eventName: 'call', aggregation: 'count' }, 'Claims');
  env.setNow(NOW);
});
afterAll(async () => {
  await env.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Events with the ids `${prefix}-${from}` … `${prefix}-${to}`. */
const events = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ id: `${prefix}-${from + i}`, eventName: 'call', timestamp: '2026-01-15T11:00:00Z', subscription }));
const ingest = (e: TestEnv, list: unknown[]) => ok(e.mcp, 'ingest_usage_events', { events: list });
/** The open bucket's number: how many have closed. */
const closedBuckets = async (e: TestEnv) =>
  Number((await e.sql.get<{ n: number }>('SELECT claim_bucket AS n FROM usage_event_sequence WHERE organisation_id = ?', e.org.organisationId))!.n);
/** The sealed segments (segment, buckets, claims, capacity) and the open segment's stored buckets (bucket, segment, capacity, ids). */
const segments = async (e: TestEnv) => ({
  sealed: (await e.sql.all<Record<string, number>>('SELECT segment, first_bucket, last_bucket, claims, capacity FROM usage_event_claim_filters WHERE organisation_id = ? ORDER BY segment', e.org.organisationId)).map((r) =>
    Object.values(r).map(Number).join(' '),
  ),
  open: (await e.sql.all<Record<string, number>>('SELECT bucket, segment, capacity, length(hashes) / 8 AS ids FROM usage_event_claim_hashes WHERE organisation_id = ? ORDER BY bucket', e.org.organisationId)).map((r) =>
    Object.values(r).map(Number).join(' '),
  ),
});
const eventCount = async (e: TestEnv) => (await ok(e.mcp, 'get_subscription_usage', { id: subscription })).data[0].eventCount;

describe('claims in buckets', () => {
  it('counts an id of a closed bucket as a duplicate, across a restart and from a second store on the same database', async () => {
    for (let call = 0; call < 4; call++) expect(await ingest(env, events('c', call * 10 + 1, call * 10 + 10))).toMatchObject({ accepted: 10, duplicates: 0 });
    expect(await closedBuckets(env)).toBe(4);
    // A segment of 40 ids (four buckets), open: its buckets keep their ids' hashes.
    expect(await segments(env)).toEqual({ sealed: [], open: ['0 0 40 10', '1 0 40 10', '2 0 40 10', '3 0 40 10'] });
    expect(await ingest(env, events('c', 1, 45))).toMatchObject({ accepted: 5, duplicates: 40 });
    expect(await eventCount(env)).toBe(45);

    // A second store on the same database reads the closed buckets' filters now ...
    const org = env.org;
    const second = await setup({ db }, span);
    second.setNow(NOW);
    second.mcp = await second.mcpFor(org.apiKey);
    second.org = org;
    expect(await ingest(second, events('c', 40, 50))).toMatchObject({ accepted: 5, duplicates: 6 });
    // ... and learns of the buckets the first one closes after.
    expect(await ingest(env, events('c', 51, 70))).toMatchObject({ accepted: 20, duplicates: 0 });
    const closed = await closedBuckets(env);
    // Duplicates take arrival numbers too: the calls of 45 and 11 events closed a bucket each.
    expect(closed).toBe(7);
    // Bucket 4 did not fit: segment 0 was sealed (its filter stored once), segment 1 opened for as many ids.
    expect(await segments(env)).toEqual({ sealed: ['0 0 3 40 40'], open: ['4 1 40 5', '5 1 40 5', '6 1 40 20'] });
    expect(await ingest(second, events('c', 1, 70))).toMatchObject({ accepted: 0, duplicates: 70 });
    await second.close();

    await env.close();
    env = await setup({ db }, span);
    env.setNow(NOW);
    env.mcp = await env.mcpFor(org.apiKey);
    env.org = org;
    expect(await ingest(env, events('c', 1, 71))).toMatchObject({ accepted: 1, duplicates: 70 });
    expect(await eventCount(env)).toBe(71);
    expect(await closedBuckets(env)).toBeGreaterThan(closed);
  });

  it('leaves no claim behind when the unit that closed a bucket is rolled back', async () => {
    const org = env.org.organisationId;
    const before = await closedBuckets(env);
    await expect(
      env.app.store.transaction(async (tx) => {
        expect(await ingestUsageEvents(tx, org, events('r', 1, 12), false, new Date(NOW))).toMatchObject({ accepted: 12 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await closedBuckets(env)).toBe(before);
    expect(await ingest(env, events('r', 1, 12))).toMatchObject({ accepted: 12, duplicates: 0 });
    expect(await closedBuckets(env)).toBe(before + 1);
    expect(await ingest(env, [...events('r', 1, 12), ...events('c', 1, 3)])).toMatchObject({ accepted: 0, duplicates: 15 });
  });

  it.skipIf(onPostgres())('forgets the filters it read in a group whose COMMIT failed, though another store closed that bucket again since', async () => {
    const org = env.org;
    const a = env.app.store as SqliteStore;
    const second = await setup({ db }, span);
    second.setNow(NOW);
    second.mcp = await second.mcpFor(org.apiKey);
    second.org = org;
    // The three units share one COMMIT however slow the machine: the group lingers for them.
    const together = { lingerMs: 2_000 };
    const ingestIn = (ids: ReturnType<typeof events>) => a.transaction((tx) => ingestUsageEvents(tx, org.organisationId, ids, false, new Date(NOW)), together);
    const before = await closedBuckets(env);
    const units = await Promise.allSettled([
      // Closes the open bucket with f-1 … f-10 ...
      ingestIn(events('f', 1, 10)),
      // ... reads its segment's filter, which holds them ...
      ingestIn(events('f', 11, 11)),
      // ... and the group's COMMIT fails (a foreign key checked only then).
      a.transaction(async (tx) => {
        a.db.pragma('defer_foreign_keys = ON');
        await tx.system.createApiKey(
          { id: 'orphan', organisationId: 'no-such-organisation', name: 'orphan', prefix: 'bmk_test', permissions: ['*'], expiresAt: null, revokedAt: null, createdAt: NOW },
          'hash-of-orphan',
        );
      }, together),
    ]);
    expect(units.map((u) => u.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await closedBuckets(env)).toBe(before);
    // The other store closes the same bucket with other ids: the bucket number is where the failed group left it.
    expect(await ingest(second, events('g', 1, 10))).toMatchObject({ accepted: 10 });
    expect(await closedBuckets(env)).toBe(before + 1);
    expect(await ingest(env, [...events('g', 1, 1), ...events('f', 1, 1)])).toMatchObject({ accepted: 1, duplicates: 1 });
    await second.close();
  });

  it('closes a bucket from the hashes it noted only while they are all of its claims: not after a rolled-back unit and a second store added some', async () => {
    const org = env.org;
    const state = async () => (await env.sql.get<{ last: number; from: number }>('SELECT last, bucket_from AS "from" FROM usage_event_sequence WHERE organisation_id = ?', org.organisationId))!;
    // Fill the open bucket up (one new id closes one that is full already) so that the next one starts empty.
    const { last, from } = await state();
    const spanned = Number(last) - Number(from) + 1;
    if (spanned > 0) await ingest(env, events('pad', 1, Math.max(1, 10 - spanned)));
    expect(Number((await state()).from)).toBe(Number((await state()).last) + 1);
    const before = await closedBuckets(env);
    const second = await setup({ db }, span);
    second.setNow(NOW);
    second.mcp = await second.mcpFor(org.apiKey);
    second.org = org;
    // This store notes r-1 … r-5 and rolls them back; the second claims x-1 … x-5 in their place.
    await expect(
      env.app.store.transaction(async (tx) => {
        await ingestUsageEvents(tx, org.organisationId, events('r', 101, 105), false, new Date(NOW));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await ingest(second, events('x', 1, 5))).toMatchObject({ accepted: 5 });
    // y-1 … y-5 fill the bucket: 10 claims, as many as r and y would be.
    expect(await ingest(env, events('y', 1, 5))).toMatchObject({ accepted: 5 });
    expect(await closedBuckets(env)).toBe(before + 1);
    expect(await ingest(env, [...events('x', 1, 5), ...events('y', 1, 5), ...events('r', 101, 105)])).toMatchObject({ accepted: 5, duplicates: 10 });
    await second.close();
  });
});
