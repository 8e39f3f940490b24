// Usage events (issue 12), each figure against a bare baseline in the same run:
// - ingestion: POST /usage-events (batches of 1,000 and single events, each request with fresh ids)
//   against a bare `node:http` handler in its own process that parses the same body and stores the
//   same rows (migration 022's table, same WAL mode and `synchronous`) with prepared statements: one
//   INSERT … ON CONFLICT DO NOTHING per event, a batch in one transaction. Targets: batches >= 100,000
//   events/s and >= 0.7 of the bare rate; single events >= 0.8 of it, p99 reported.
// - aggregation: 1,000,000 events of one subscription in one 30-day interval, a filter on a
//   property; the domain's `aggregateEvents` in a store read unit, over the events alone and then
//   with the hourly rollups the jobs loop keeps (the time to roll them up reported), against the bare
//   SQL aggregate of the events. Target: <= 1.5x the bare SQL and < 400 ms.
// - deduplication: `ingestUsageEvents` in units of 1,000 fresh random ids into a table holding
//   10,000,000 events (made by SQL) against an empty one. Target: >= 0.8 of the empty table's rate.
// `node bench/events.mjs [ingestion|aggregation|dedup]` runs one part (after `npm run build`).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { aggregateEvents } from '../dist/domain/aggregation.js';
import { ingestUsageEvents } from '../dist/domain/usageEvents.js';
import { rollUpMetric } from '../dist/domain/usageRollups.js';
import { ClaimFilter, ClaimFilterCache, DEFAULT_CLAIM_SIZES, HashList, hashId } from '../dist/store/claimFilter.js';
import { createOrganisation } from '../dist/server.js';
import { openDatabase, SqliteStore } from '../dist/store/sqlite.js';
import { compare, median, report, restClient, serveJson, startBare, startServer, tempDb } from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** How `compare` alternates baseline and candidate. */
const rounds = { rounds: ROUNDS, duration: DURATION };
const SYNCHRONOUS = process.env.BENCH_SYNCHRONOUS ?? 'full';
const BATCH = 1000;
const AGG_EVENTS = Number(process.env.BENCH_AGG_EVENTS ?? 1_000_000);
const AGG_RUNS = Number(process.env.BENCH_AGG_RUNS ?? 5);
const STORED = Number(process.env.BENCH_DEDUP_STORED ?? 10_000_000);
const DEDUP_BATCHES = Number(process.env.BENCH_DEDUP_BATCHES ?? 200);

/** The bare baseline: parse, check the minimum, store the same rows as the project, answer the counts. */
async function serveBare(db) {
  const { usageEvents } = await import(path.resolve('dist/store/migrations/022_usage_events.js'));
  const sqlite = new Database(db);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.exec('CREATE TABLE products (id TEXT)');
  sqlite.exec(usageEvents.sql);
  const insert = sqlite.prepare(
    `INSERT INTO usage_events (subscription_id, event_name, ts, seq, organisation_id, event_id, target, customer_id, properties, unmatched, late, received_at)
     VALUES (?, ?, ?, ?, ?, ?, 0, NULL, jsonb(?), 0, 0, ?) ON CONFLICT DO NOTHING`,
  );
  const org = randomUUID();
  let seq = 0;
  const store = sqlite.transaction((events) => {
    const now = Date.now();
    let accepted = 0;
    for (const e of events) {
      accepted += insert.run(e.subscription, e.eventName, e.timestamp ? Date.parse(e.timestamp) : now, ++seq, org, e.id, JSON.stringify(e.properties ?? {}), now).changes;
    }
    return { accepted, duplicates: events.length - accepted, late: 0, unmatched: 0, errors: [] };
  });
  serveJson((body) => ({ status: 200, body: store(body.events ?? [body]) }));
}

/** A subscription with one item whose product sums the `tokens` of `completion` events of the large models. */
async function meteredSubscription(server) {
  const { headers, post } = restClient(server);
  const customer = await post('/customers', { lastName: 'Bench', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  const product = await post('/catalogue/products', {
    name: 'Completions',
    usageMetric: { eventName: 'completion', aggregation: 'sum', property: 'tokens', filters: [{ property: 'model', values: ['large', 'xl'] }] },
  });
  const pricePlan = await post(`/catalogue/products/${product.id}/price-plans`, {
    type: 'per_unit',
    currencyCode: 'EUR',
    price: { amount: 0.00001 },
    billingInterval: '1M',
    payInAdvance: false,
  });
  const plan = await post('/catalogue/plans', { code: 'llm', name: 'LLM', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
  const subscription = await post('/subscriptions', {
    customer: customer.id,
    plan: plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
    activate: true,
  });
  return { headers, subscription: subscription.id };
}

/** A body whose event ids start with `@P@`, replaced per request so that every request sends new events. */
function template(subscription, count) {
  const timestamp = new Date(Date.now() - 60_000).toISOString();
  const events = Array.from({ length: count }, (_, i) => ({
    id: `@P@-${i}`,
    eventName: 'completion',
    timestamp,
    subscription,
    properties: { tokens: (i % 500) + 1, model: i % 3 ? 'large' : 'small' },
  }));
  return JSON.stringify(count === 1 ? events[0] : { events });
}

let requestCounter = 0;
const fresh = (body) => [{ setupRequest: (req) => ({ ...req, body: body.replaceAll('@P@', `${process.pid}-${++requestCounter}`) }) }];

export async function benchEventIngestion() {
  const dbs = [tempDb('events'), tempDb('events-bare')];
  // BENCH_JOBS_INTERVAL_MS runs the server's jobs loop (and so the usage rollups) during the run; off by default, as in every bench.
  const server = await startServer(dbs[0], { BILLING_DB_SYNCHRONOUS: SYNCHRONOUS, BILLING_JOBS_INTERVAL_MS: process.env.BENCH_JOBS_INTERVAL_MS ?? '0' });
  let bare;
  try {
    bare = await startBare('bench/events.mjs', dbs[1]);
    const { headers, subscription } = await meteredSubscription(server);
    const json = { 'content-type': 'application/json' };
    const batchBody = template(subscription, BATCH);
    const singleBody = template(subscription, 1);
    const events = (f) => Math.round((f.total * BATCH) / DURATION);
    const batch = await compare(
      { url: `${bare.url}/usage-events`, method: 'POST', headers: json, timeout: 30, requests: fresh(batchBody) },
      { url: `${server.url}/usage-events`, method: 'POST', headers, timeout: 30, requests: fresh(batchBody) },
      events,
      rounds,
    );
    const single = await compare(
      { url: `${bare.url}/usage-events`, method: 'POST', headers: json, requests: fresh(singleBody) },
      { url: `${server.url}/usage-events`, method: 'POST', headers, requests: fresh(singleBody) },
      (f) => f.requestsPerSecond,
      rounds,
    );
    const figures = {
      batch: { ...batch, target: '>= 100,000 events/s and ratio >= 0.7' },
      single: { ...single, target: 'ratio >= 0.8, p99 reported' },
    };
    report(`usage events: POST /usage-events vs bare node:http + better-sqlite3, synchronous=${SYNCHRONOUS}, 50 connections, ${ROUNDS} x ${DURATION} s`, figures);
    return figures;
  } finally {
    server.stop();
    bare?.stop();
    for (const db of dbs) fs.rmSync(path.dirname(db), { recursive: true, force: true });
  }
}

/**
 * Fills usage_events by SQL: `count` events of one subscription spread over the `spanMs` before now
 * (default an hour), ids from `idSql` (default random), claim buckets of `bucketSpan` arrival numbers
 * (default: all in bucket 0), in transactions of 1,000,000. Answers now.
 */
function fill(db, org, subscription, count, properties, { spanMs = 3_600_000, idSql = 'lower(hex(randomblob(16)))', bucketSpan = 0 } = {}) {
  const end = Date.now();
  const insert = db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO usage_events (subscription_id, event_name, ts, seq, organisation_id, event_id, target, customer_id, properties, unmatched, late, received_at, claim_bucket)
     SELECT ?, 'completion', CAST(? - ? + i * ? / ? AS INTEGER), i, ?, ${idSql}, 0, NULL, jsonb(${properties}), 0, 0, ?, ${bucketSpan ? `(i - 1) / ${bucketSpan}` : '0'} FROM n`,
  );
  for (let first = 1; first <= count; first += 1_000_000) {
    db.transaction(() => insert.run(first, Math.min(count, first + 999_999), subscription, end, spanMs, spanMs, count, org, end))();
  }
  db.prepare('INSERT INTO usage_event_sequence (organisation_id, last) VALUES (?, ?)').run(org, count);
  return end;
}

/** The aggregation bench's events span a monthly billing interval: 30 days before now. */
const AGG_SPAN_MS = 30 * 24 * 3_600_000;

export async function benchEventAggregation() {
  const file = tempDb('events-aggregation');
  const store = new SqliteStore(openDatabase(file));
  try {
    const { organisationId: org } = await createOrganisation(store, 'Bench');
    const subscription = randomUUID();
    const setup = new Database(file);
    setup.pragma('cache_size = -1000000');
    let t = performance.now();
    const end = fill(setup, org, subscription, AGG_EVENTS, `json_object('tokens', i % 500 + 1, 'model', CASE WHEN i % 3 = 0 THEN 'small' WHEN i % 3 = 1 THEN 'large' ELSE 'xl' END, 'user', 'u' || (i % 10000))`, { spanMs: AGG_SPAN_MS });
    const fillMs = performance.now() - t;
    setup.close();
    // The billing interval of the events: from the first to just after the last, not on whole hours.
    const scope = { subscriptionId: subscription, eventName: 'completion', from: end - AGG_SPAN_MS, to: end + 1 };
    const filters = [{ property: 'model', values: ['large', 'xl'] }];
    const bareSql = {
      count: 'count(*)',
      sum: "sum(properties ->> '$.tokens')",
      max: "max(properties ->> '$.tokens')",
      average: "avg(properties ->> '$.tokens')",
      unique_count: "count(DISTINCT properties ->> '$.user')",
    };
    const metricOf = (aggregation) => ({
      eventName: 'completion',
      aggregation,
      property: aggregation === 'count' ? null : aggregation === 'unique_count' ? 'user' : 'tokens',
      filters,
      type: 'metered',
    });
    const raw = new Database(file, { readonly: true });
    const where = `FROM usage_events WHERE subscription_id = ? AND event_name = 'completion' AND ts >= ? AND ts < ? AND properties ->> '$.model' IN ('large', 'xl')`;
    const bareOf = (aggregation) =>
      aggregation === 'latest'
        ? raw.prepare(`SELECT properties ->> '$.tokens' AS v ${where} ORDER BY ts DESC, seq DESC LIMIT 1`)
        : raw.prepare(`SELECT ${bareSql[aggregation]} AS v ${where}`);
    /** Medians of AGG_RUNS alternating runs of the bare SQL and of `aggregateEvents`, and the value. */
    const measure = async (aggregation) => {
      const bare = bareOf(aggregation);
      const b = [];
      const c = [];
      let value;
      for (let i = 0; i < AGG_RUNS; i++) {
        t = performance.now();
        bare.get(subscription, scope.from, scope.to);
        b.push(performance.now() - t);
        t = performance.now();
        value = await store.read((tx) => aggregateEvents(tx, org, scope, metricOf(aggregation)));
        c.push(performance.now() - t);
      }
      return { bareMs: median(b), oursMs: median(c), value: String(value) };
    };
    const aggregations = ['count', 'sum', 'max', 'average', 'unique_count', 'latest'];
    // First over the events alone (no rollups yet), then as the jobs loop leaves them: rolled up.
    const overEvents = {};
    for (const aggregation of aggregations) overEvents[aggregation] = await measure(aggregation);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    t = performance.now();
    for (const aggregation of ['count', 'sum']) await rollUpMetric(store, org, metricOf(aggregation));
    const rollupMs = performance.now() - t;
    loop.disable();
    const figures = {};
    for (const aggregation of aggregations) {
      const rolled = await measure(aggregation);
      if (rolled.value !== overEvents[aggregation].value) throw new Error(`${aggregation}: ${rolled.value} with the rollups, ${overEvents[aggregation].value} over the events`);
      figures[aggregation] = {
        bareMs: Number(rolled.bareMs.toFixed(1)),
        oursMs: Number(rolled.oursMs.toFixed(1)),
        ratio: Number((rolled.oursMs / rolled.bareMs).toFixed(3)),
        overEventsMs: Number(overEvents[aggregation].oursMs.toFixed(1)),
        overEventsRatio: Number((overEvents[aggregation].oursMs / overEvents[aggregation].bareMs).toFixed(2)),
        valueMicros: rolled.value,
      };
    }
    raw.close();
    report(`usage events aggregation: ${AGG_EVENTS} events of one subscription over 30 days, filter model IN (large, xl), ${AGG_RUNS} runs each (filled in ${Math.round(fillMs)} ms; the count and sum metrics rolled up in ${Math.round(rollupMs)} ms, the event loop blocked ${(loop.max / 1e6).toFixed(1)} ms at most)`, {
      ...figures,
      target: '<= 1.5x bare and < 400 ms',
    });
    return figures;
  } finally {
    await store.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

/**
 * BENCH_DEDUP_IDS: `uuidv4` (default; random, the claim index's worst case) or `uuidv7` (time-ordered,
 * as UUIDv7 and ULID clients send: the stored events' ids are older, new ones append).
 */
const DEDUP_IDS = process.env.BENCH_DEDUP_IDS ?? 'uuidv4';
const newEventId = DEDUP_IDS === 'uuidv7' ? uuidv7 : randomUUID;
/** The stored events' ids: random, or time-ordered from 2020 on (older than any new UUIDv7). */
const STORED_ID_SQL = DEDUP_IDS === 'uuidv7' ? "printf('%012x', 1577836800000 + i) || lower(hex(randomblob(10)))" : undefined;

/**
 * Closes the claim buckets of the `count` events `fill` put in buckets of the store's span, as
 * ingestion leaves them (migrations 033 and 034): every full bucket closed, the full segments
 * sealed with their filters, the last segment's buckets storing their ids' hashes, the last bucket
 * open.
 */
function closeFilledBuckets(db, org, count) {
  const cache = new ClaimFilterCache();
  const span = cache.sizes.bucketSpan;
  const ids = db.prepare('SELECT event_id FROM usage_events WHERE organisation_id = ? AND claim_bucket = ? AND target = 0').pluck();
  const seal = db.prepare('INSERT INTO usage_event_claim_filters (organisation_id, segment, first_bucket, last_bucket, claims, capacity, filter) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const keep = db.prepare('INSERT INTO usage_event_claim_hashes (organisation_id, bucket, segment, capacity, hashes) VALUES (?, ?, ?, ?, ?)');
  const full = Math.floor(count / span);
  let segment;
  let closed = 0;
  for (let b = 0; b < full; b++) {
    const hashes = ids.all(org, b).map(hashId);
    if (!segment || segment.claims + hashes.length > segment.capacity) {
      if (segment) seal.run(org, segment.number, segment.firstBucket, b - 1, segment.claims, segment.capacity, segment.filter.bytes());
      const capacity = cache.capacityAfter(closed, hashes.length);
      segment = { number: (segment?.number ?? -1) + 1, firstBucket: b, claims: 0, capacity, filter: ClaimFilter.sized(capacity), buckets: [] };
    }
    for (const h of hashes) segment.filter.add(h);
    segment.claims += hashes.length;
    segment.buckets.push({ bucket: b, hashes });
    closed += hashes.length;
  }
  for (const { bucket, hashes } of segment?.buckets ?? []) keep.run(org, bucket, segment.number, segment.capacity, HashList.of(hashes).bytes());
  db.prepare('UPDATE usage_event_sequence SET claim_bucket = ?, bucket_from = ? WHERE organisation_id = ?').run(full, full * span + 1, org);
}

/** Events per second that `ingestUsageEvents` stores in units of 1,000 fresh ids (BENCH_DEDUP_IDS), on the store `file`. */
async function ingestRate(file, org, subscription) {
  const store = SqliteStore.open(file, { synchronous: SYNCHRONOUS });
  try {
    const timestamp = new Date(Date.now() - 60_000).toISOString();
    const batch = () =>
      Array.from({ length: BATCH }, (_, i) => ({ id: newEventId(), eventName: 'completion', timestamp, subscription, properties: { tokens: i + 1, model: 'large' } }));
    const batches = Array.from({ length: DEDUP_BATCHES }, batch);
    for (const events of batches.slice(0, 5)) await store.transaction((tx) => ingestUsageEvents(tx, org, events.map((e) => ({ ...e, id: newEventId() })), false, new Date()));
    const t = performance.now();
    let accepted = 0;
    for (const events of batches) accepted += (await store.transaction((tx) => ingestUsageEvents(tx, org, events, false, new Date()))).accepted;
    const seconds = (performance.now() - t) / 1000;
    if (accepted !== DEDUP_BATCHES * BATCH) throw new Error(`accepted ${accepted}`);
    return Math.round(accepted / seconds);
  } finally {
    await store.close();
  }
}

export async function benchDeduplication() {
  const files = [tempDb('dedup-empty'), tempDb('dedup-full')];
  try {
    const made = [];
    for (const file of files) {
      const store = new SqliteStore(openDatabase(file));
      const { organisationId: org } = await createOrganisation(store, 'Bench');
      await store.close();
      made.push({ file, org, subscription: randomUUID() });
    }
    const full = new Database(files[1]);
    full.pragma('cache_size = -2000000');
    let t = performance.now();
    fill(full, made[1].org, made[1].subscription, STORED, `'{"tokens":1,"model":"large"}'`, { idSql: STORED_ID_SQL, bucketSpan: DEFAULT_CLAIM_SIZES.bucketSpan });
    closeFilledBuckets(full, made[1].org, STORED);
    const fillMs = performance.now() - t;
    full.close();
    // The filled rows name a subscription id only; the ingested events address a real subscription on both sides.
    const rates = { empty: [], full: [] };
    const subscriptions = [];
    for (const m of made) subscriptions.push(await realSubscription(m.file, m.org));
    for (let round = 0; round < ROUNDS; round++) {
      rates.empty.push(await ingestRate(files[0], made[0].org, subscriptions[0]));
      rates.full.push(await ingestRate(files[1], made[1].org, subscriptions[1]));
    }
    const empty = median(rates.empty);
    const stored = median(rates.full);
    const figures = {
      emptyEventsPerSecond: empty,
      storedEventsPerSecond: stored,
      ratio: Number((stored / empty).toFixed(3)),
      rounds: rates,
      filledMs: Math.round(fillMs),
      target: 'ratio >= 0.8',
    };
    report(`usage events deduplication: ${DEDUP_BATCHES} units of ${BATCH} new ${DEDUP_IDS} ids into ${STORED} stored events vs none, synchronous=${SYNCHRONOUS}`, figures);
    return figures;
  } finally {
    for (const file of files) fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

/** A customer and an active subscription, written by SQL (ingestion reads only the subscription row and its items). */
async function realSubscription(file, org) {
  const db = new Database(file);
  const customer = randomUUID();
  const subscription = randomUUID();
  const now = new Date().toISOString();
  const customerColumns = db.prepare("SELECT name FROM pragma_table_info('customers') WHERE \"notnull\" = 1 AND dflt_value IS NULL").all().map((r) => r.name);
  const customerValues = { custom_fields: '{}', id: customer, organisation_id: org, customer_number: 'CUS-000001', last_name: 'Bench', status: 'STATUS_ACTIVE', time_zone: 'Europe/Berlin', currency_code: 'EUR', created_at: now, updated_at: now };
  db.prepare(`INSERT INTO customers (${customerColumns.join(', ')}) VALUES (${customerColumns.map(() => '?').join(', ')})`).run(...customerColumns.map((c) => customerValues[c] ?? ''));
  const subscriptionColumns = db.prepare("SELECT name FROM pragma_table_info('subscriptions') WHERE \"notnull\" = 1 AND dflt_value IS NULL").all().map((r) => r.name);
  const subscriptionValues = { custom_fields: '{}', periods: '[]', id: subscription, organisation_id: org, customer_id: customer, number: 'SUB-000001', status: 'active', created_at: now, updated_at: now };
  db.pragma('foreign_keys = OFF');
  db.prepare(`INSERT INTO subscriptions (${subscriptionColumns.join(', ')}) VALUES (${subscriptionColumns.map(() => '?').join(', ')})`).run(
    ...subscriptionColumns.map((c) => subscriptionValues[c] ?? ''),
  );
  db.close();
  return subscription;
}

const part = process.argv[2];
if (part === '--bare') await serveBare(process.argv[3]);
else if (import.meta.url === `file://${process.argv[1]}`) {
  if (!part || part === 'ingestion') await benchEventIngestion();
  if (!part || part === 'aggregation') await benchEventAggregation();
  if (!part || part === 'dedup') await benchDeduplication();
}
