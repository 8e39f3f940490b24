// Ingestion of measurement values over HTTP, each figure a ratio to a bare baseline in the same run:
// a `node:http` handler in its own process that parses the same JSON body and inserts into an
// equivalent table (the project's migration 006 without its foreign keys) with a prepared
// better-sqlite3 statement, in the same WAL mode. Single values: requests/s, target ratio >= 0.6 and
// p99 <= 10 ms; also with an Idempotency-Key (a fresh UUIDv7, time-ordered) on every request.
// Batches of 1,000: values/s, target ratio >= 0.6 and >= 2x the single-value rate. Baseline and
// project alternate in rounds (BENCH_ROUNDS, default 3, of BENCH_DURATION seconds, default 10).
// Both sync commits the same way: BENCH_SYNCHRONOUS=full (default, the server's default: every
// commit synced to disk) or normal (BILLING_DB_SYNCHRONOUS=normal on the server).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { compare, meteredItem, report, serveJson, startBare, startServer, tempDb } from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** How `compare` alternates baseline and candidate. */
const rounds = { rounds: ROUNDS, duration: DURATION };
const BATCH = 1000;
const SYNCHRONOUS = process.env.BENCH_SYNCHRONOUS ?? 'full';

/** The bare baseline: parse, convert the decimal quantity to micro-units, insert, answer 201 (the bodies carry no count_unique id). */
async function serveBare(db) {
  const { usage } = await import(path.resolve('dist/store/migrations/006_usage.js'));
  const sqlite = new Database(db);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.exec(usage.sql.replace(/ REFERENCES \w+\(id\)/g, ''));
  const insert = sqlite.prepare(
    `INSERT INTO measurement_values (id, organisation_id, item_id, measurement_id, quantity_e6, measured_at, value_key, instant, created_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
  );
  const org = uuidv7();
  const measurement = uuidv7();
  const micros = (q) => {
    const [whole, fraction = ''] = String(q).split('.');
    return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  };
  const row = (v, now) => {
    const id = uuidv7();
    const measuredAt = v.measuredAt ? new Date(v.measuredAt).toISOString() : now;
    insert.run(id, org, v.subscriptionItem, measurement, micros(v.quantity), measuredAt, 0, now);
    return { id, quantity: String(v.quantity), measuredAt };
  };
  const many = sqlite.transaction((values, now) => values.map((v) => row(v, now)));
  serveJson((body, url) => {
    const now = new Date().toISOString();
    return { status: 201, body: url === '/batch' ? { data: many(body.values, now) } : row(body, now) };
  });
}


const single = (itemId) => JSON.stringify({ subscriptionItem: itemId, quantity: '12.5' });
const batch = (itemId) =>
  JSON.stringify({ values: Array.from({ length: BATCH }, (_, i) => ({ subscriptionItem: itemId, quantity: `${i % 100}.25` })) });

export async function benchIngestion() {
  const dbs = [tempDb('ingestion'), tempDb('ingestion-bare')];
  const server = await startServer(dbs[0], { BILLING_DB_SYNCHRONOUS: SYNCHRONOUS });
  let bare;
  try {
    bare = await startBare('bench/ingestion.mjs', dbs[1]);
    const { headers, itemId } = await meteredItem(server);
    const json = { 'content-type': 'application/json' };
    const requests = (f) => f.requestsPerSecond;
    const values = (f) => Math.round((f.total * BATCH) / DURATION);

    const bareSingle = { url: `${bare.url}/single`, method: 'POST', headers: json, body: single(itemId) };
    const ours = { url: `${server.url}/subscription-measurements`, method: 'POST', headers, body: single(itemId) };
    const singleFigures = await compare(bareSingle, ours, requests, rounds);
    const keyed = await compare(
      bareSingle,
      { ...ours, requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': uuidv7() } }) }] },
      requests,
      rounds,
    );
    // 50 connections each waiting for its 1,000-entry batch queue up for seconds: a 30 s timeout.
    const batchFigures = await compare(
      { url: `${bare.url}/batch`, method: 'POST', headers: json, body: batch(itemId), timeout: 30 },
      { url: `${server.url}/subscription-measurements/batch`, method: 'POST', headers, body: batch(itemId), timeout: 30 },
      values,
      rounds,
    );

    const figures = {
      single: { ...singleFigures, target: 'ratio >= 0.6, p99 <= 10 ms' },
      singleWithIdempotencyKey: keyed,
      batch: {
        ...batchFigures,
        overSingle: Number((batchFigures.ours.perSecond / singleFigures.ours.perSecond).toFixed(2)),
        target: 'ratio >= 0.6 and >= 2x the single-value rate',
      },
    };
    report(`ingestion: POST /subscription-measurements vs bare node:http + better-sqlite3, synchronous=${SYNCHRONOUS}, 50 connections, ${ROUNDS} x ${DURATION} s`, figures);
    return figures;
  } finally {
    server.stop();
    bare?.stop();
    // a run writes millions of rows: leave no gigabytes behind
    for (const db of dbs) fs.rmSync(path.dirname(db), { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') await serveBare(process.argv[3]);
else if (import.meta.url === `file://${process.argv[1]}`) await benchIngestion();
