// What the billing run's ratio target (<= 3x the bare SQL) leaves for everything but SQL. A billing
// run writes, besides the invoice rows and lines the bare SQL inserts, the rows that make it durable
// and exactly once: the invoice number counter, the invoice's issued parties, the `invoice.created`
// event, the invoice e-mail, the charge keys, the items' progress and the subscription's
// `lastBillingAt`. This bench takes those rows from a real run (`runBilling` on the billing bench's
// data set) and writes them again into a fresh copy of the seeded file with bare prepared
// statements, no JavaScript between them: once a subscription at a time in a savepoint (as the run's
// units do), once 64 subscriptions per multi-row statement (the set-based form). The bare SQL of
// bench/billing.mjs runs on the same data set in the same run. Nothing is asserted: it reports.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runBilling } from '../dist/domain/billing/run.js';
import { SqliteStore } from '../dist/store/sqlite.js';
import { bare, seed } from './billing.mjs';
import { report, tempDb } from './lib.mjs';

const RUN_AT = new Date('2026-02-23T12:00:00.000Z');
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10_000);
const BATCH = 64;

const groupBy = (rows, key) => {
  const m = new Map();
  for (const r of rows) {
    const k = r[key];
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(r);
  }
  return m;
};

/** Per invoice the run issued: the rows it wrote for it, as stored. */
function writtenRows(file) {
  const db = new Database(file, { readonly: true });
  const invoices = db.prepare("SELECT * FROM invoices WHERE issued_at > '2026-01-16'").all();
  const ids = new Set(invoices.map((i) => i.id));
  const of = (sql, key) => groupBy(db.prepare(sql).all().filter((r) => ids.has(r[key])), key);
  const lines = of('SELECT * FROM invoice_lines', 'invoice_id');
  const parties = of('SELECT * FROM invoice_parties', 'invoice_id');
  const events = of("SELECT * FROM events WHERE type = 'invoice.created'", 'subject_id');
  const emails = of('SELECT * FROM emails', 'invoice_id');
  const charges = of('SELECT * FROM billed_charges', 'invoice_id');
  const items = groupBy(db.prepare('SELECT id, organisation_id, subscription_id, last_billed_at, last_billed_from, last_billed_to, next_billing_at, updated_at FROM subscription_items').all(), 'subscription_id');
  const subs = new Map(db.prepare('SELECT id, organisation_id, last_billing_at, updated_at FROM subscriptions').all().map((s) => [s.id, s]));
  db.close();
  return invoices.map((inv) => ({
    inv,
    lines: lines.get(inv.id),
    parties: parties.get(inv.id),
    events: events.get(inv.id),
    emails: emails.get(inv.id),
    charges: charges.get(inv.id),
    items: items.get(inv.subscription_id),
    sub: subs.get(inv.subscription_id),
  }));
}

/**
 * The rows written again into `file`, `batch` subscriptions per statement, in one transaction as the
 * bare SQL writes; milliseconds per kind of row. `onlyInvoices`: the invoice rows and lines alone.
 */
function replay(file, units, batch, onlyInvoices = false) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  const statements = new Map();
  const insert = (table, rows, suffix = '') => {
    const columns = Object.keys(rows[0]);
    for (let i = 0; i < rows.length; i += BATCH) {
      const chunk = rows.slice(i, i + BATCH);
      const key = `${table} ${chunk.length}`;
      if (!statements.has(key)) {
        const values = Array.from({ length: chunk.length }, () => `(${columns.map(() => '?').join(', ')})`).join(', ');
        statements.set(key, db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values} ${suffix}`));
      }
      statements.get(key).run(chunk.flatMap((r) => columns.map((c) => r[c])));
    }
  };
  const unit = { open: db.prepare('SAVEPOINT unit'), release: db.prepare('RELEASE unit') };
  const counter = db.prepare(
    "INSERT INTO counters (organisation_id, name, value) VALUES (?, 'floor', 1) ON CONFLICT (organisation_id, name) DO UPDATE SET value = counters.value + 1 RETURNING value",
  );
  const item = db.prepare(
    'UPDATE subscription_items SET last_billed_at = ?, last_billed_from = ?, last_billed_to = ?, next_billing_at = ?, updated_at = ? WHERE organisation_id = ? AND id = ?',
  );
  const subscription = db.prepare('UPDATE subscriptions SET last_billing_at = ?, updated_at = ? WHERE organisation_id = ? AND id = ?');
  const ms = {};
  let lap = performance.now();
  const time = (kind) => {
    const now = performance.now();
    ms[kind] = (ms[kind] ?? 0) + now - lap;
    lap = now;
  };
  const t = performance.now();
  db.exec('BEGIN IMMEDIATE');
  for (let i = 0; i < units.length; i += batch) {
    const group = units.slice(i, i + batch);
    lap = performance.now();
    if (batch === 1) unit.open.run();
    for (const u of group) counter.get(u.inv.organisation_id);
    time('counter');
    insert('invoices', group.map((u) => u.inv));
    time('invoices');
    insert('invoice_lines', group.flatMap((u) => u.lines));
    time('lines');
    if (onlyInvoices) continue;
    insert('invoice_parties', group.flatMap((u) => u.parties));
    time('parties');
    insert('events', group.flatMap((u) => u.events));
    time('events');
    insert('emails', group.flatMap((u) => u.emails));
    time('emails');
    insert('billed_charges', group.flatMap((u) => u.charges), 'ON CONFLICT DO NOTHING');
    time('chargeKeys');
    for (const u of group) for (const r of u.items) item.run(r.last_billed_at, r.last_billed_from, r.last_billed_to, r.next_billing_at, r.updated_at, r.organisation_id, r.id);
    time('items');
    for (const u of group) subscription.run(u.sub.last_billing_at, u.sub.updated_at, u.sub.organisation_id, u.sub.id);
    if (batch === 1) unit.release.run();
    time('subscriptions');
  }
  lap = performance.now();
  db.exec('COMMIT');
  time('commit');
  const total = performance.now() - t;
  db.close();
  return { total, ms };
}

const file = tempDb('billing-floor');
const dir = path.dirname(file);
try {
  const { org } = await seed(file);
  const copy = (name) => {
    const to = path.join(dir, name);
    fs.copyFileSync(file, to);
    return to;
  };
  const ran = copy('ran.sqlite');
  const store = SqliteStore.open(ran);
  await runBilling({ store, settings: { paymentTermDays: 14 } }, { trigger: 'cli', asOf: RUN_AT, now: RUN_AT, recordEmpty: true });
  await store.close();
  const units = writtenRows(ran);
  if (units.length !== SUBSCRIPTIONS) throw new Error(`the run issued ${units.length} invoices, not ${SUBSCRIPTIONS}`);
  const b = bare(copy('bare.sqlite'), org);
  const perUnit = replay(copy('unit.sqlite'), units, 1);
  const set = replay(copy('set.sqlite'), units, BATCH);
  const invoicesOnly = replay(copy('invoices.sqlite'), units, BATCH, true);
  const round = (x) => Math.round(x);
  report(`billing floor: ${SUBSCRIPTIONS} subscriptions, the run's rows written by bare SQL`, {
    bareMs: round(b.ms),
    perSubscription: { totalMs: round(perUnit.total), ...Object.fromEntries(Object.entries(perUnit.ms).map(([k, v]) => [k, round(v)])) },
    setBased: { totalMs: round(set.total), ...Object.fromEntries(Object.entries(set.ms).map(([k, v]) => [k, round(v)])) },
    invoicesOnlySetBasedMs: round(invoicesOnly.total),
    // What the rows beyond the bare SQL's invoices and lines add, set-based, their COMMIT included.
    beyondBareSetBasedMs: round(set.total - invoicesOnly.total),
    floorRatio: Number(((b.ms + set.total - invoicesOnly.total) / b.ms).toFixed(2)),
    note: 'floorRatio: (bare + what the rows beyond it add, set-based, without any JavaScript) / bare; a 3x target leaves (3 - floorRatio) x bare for reading what the bare SQL does not and for the domain',
  });
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
