// Aggregation of an item with 1,000,000 values in its current billing interval: each of the six
// aggregations through the project's code (domain `aggregate` in a store read unit) against the bare
// SQL computing the same aggregate over the same rows on the same connection. Target: at most 1.5x
// the bare SQL, and at most 400 ms whatever the aggregation. Runs in one process on a temp file.
import fs from 'node:fs';
import path from 'node:path';
import { authenticate } from '../dist/auth/keys.js';
import { loadConfig } from '../dist/config.js';
import { formatQuantity } from '../dist/domain/quantity.js';
import { aggregate, intervalValue } from '../dist/domain/aggregation.js';
import { currentInterval } from '../dist/domain/usage.js';
import { newId } from '../dist/ids.js';
import { createLogger } from '../dist/logger.js';
import { createApp, createOrganisation } from '../dist/server.js';
import { openDatabase, SqliteStore } from '../dist/store/sqlite.js';
import { report, tempDb } from './lib.mjs';

const VALUES = Number(process.env.BENCH_AGG_VALUES ?? 1_000_000);
/** Distinct count_unique ids among the values (a user id, say); BENCH_AGG_DISTINCT=all gives every value its own random id. */
const DISTINCT = process.env.BENCH_AGG_DISTINCT ?? '10000';
const RUNS = Number(process.env.BENCH_AGG_RUNS ?? 5);
const CHUNK = 50_000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Baseline and candidate alternate RUNS times (so that a burst of other work hits both); medians in ms. */
async function compare(baseline, candidate) {
  const b = [];
  const c = [];
  let result;
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    await baseline();
    b.push(performance.now() - t);
    t = performance.now();
    result = await candidate();
    c.push(performance.now() - t);
  }
  const bareMs = median(b);
  const oursMs = median(c);
  return { bareMs: Number(bareMs.toFixed(3)), oursMs: Number(oursMs.toFixed(3)), ratio: Number((oursMs / bareMs).toFixed(2)), result };
}

async function time(fn) {
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return Number(median(ms).toFixed(1));
}

export async function benchAggregation() {
  const file = tempDb('aggregation');
  const now = new Date();
  const store = new SqliteStore(openDatabase(file));
  const app = createApp(loadConfig({ LOG_LEVEL: 'silent', BILLING_JOBS_INTERVAL_MS: '0', BILLING_DB: file }), {
    store,
    clock: () => now,
    logger: createLogger('silent'),
  });
  try {
    const org = await createOrganisation(store, 'bench');
    const principal = await authenticate(store, org.apiKey, now);
    const run = async (name, input) => (await app.executor.execute(app.catalog.find(name), principal, input)).body;
    const customer = await run('create_customer', { lastName: 'Bench', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
    await run('create_unit', { name: 'call' });
    const measurement = await run('create_measurement', { unit: 'call', code: 'api_calls', aggregationType: 'sum', type: 'metered' });
    const product = await run('create_product', { name: 'API', measurement: measurement.id });
    const pricePlan = await run('create_price_plan', {
      id: product.id,
      type: 'per_unit',
      currencyCode: 'EUR',
      price: { amount: 0.01 },
      billingInterval: '1M',
      payInAdvance: false,
    });
    const plan = await run('create_plan', { code: 'api', name: 'API', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
    const startDate = new Date(now.getTime() - 86_400_000).toISOString();
    const subscription = await run('create_subscription', {
      customer: customer.id,
      plan: plan.id,
      periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
      startDate,
      activate: true,
    });
    const itemId = subscription.items[0].id;
    const org_ = org.organisationId;

    const interval = await store.read(async (tx) =>
      currentInterval(tx, org_, await tx.subscriptions.get(org_, subscription.id), await tx.subscriptions.getItem(org_, itemId), 'Europe/Berlin', now),
    );
    // Values spread evenly over the day before now: all inside the current interval (it began at startDate).
    const from = Date.parse(startDate);
    const step = (now.getTime() - from) / VALUES;
    const t = performance.now();
    for (let done = 0; done < VALUES; done += CHUNK) {
      const records = [];
      for (let i = done; i < Math.min(done + CHUNK, VALUES); i++) {
        const measuredAt = new Date(from + Math.floor(i * step)).toISOString();
        records.push({
          id: newId(),
          itemId,
          measurementId: measurement.id,
          quantityMicros: BigInt(1 + (i % 997)) * 1_000_000n + BigInt((i * 7919) % 1_000_000),
          measuredAt,
          valueId: DISTINCT === 'all' ? crypto.randomUUID() : `user-${(i * 7919) % Number(DISTINCT)}`,
          instant: false,
          createdAt: measuredAt,
        });
      }
      await store.transaction((tx) => tx.usage.insert(org_, records));
    }
    const buildSeconds = Number(((performance.now() - t) / 1000).toFixed(1));
    store.db.exec('ANALYZE');

    const scope = { itemId, measurementId: measurement.id, from: interval.from, to: interval.to };
    const params = [org_, itemId, measurement.id, interval.from, interval.to];
    const where = `FROM measurement_values WHERE organisation_id = ? AND item_id = ? AND measurement_id = ? AND measured_at >= ? AND measured_at < ?`;
    const bare = {
      count: `SELECT count(*) ${where}`,
      count_unique: `SELECT count(DISTINCT value_key) ${where}`,
      max: `SELECT max(quantity_e6) ${where}`,
      sum: `SELECT sum(quantity_e6) ${where}`,
      average: `SELECT sum(quantity_e6), count(*) ${where}`,
      last_value: `SELECT quantity_e6 ${where} ORDER BY measured_at DESC, id DESC LIMIT 1`,
    };
    const aggregations = {};
    for (const [aggregation, sql] of Object.entries(bare)) {
      const stmt = store.db.prepare(sql).safeIntegers(true).raw();
      const { result, ...figures } = await compare(
        async () => stmt.get(...params),
        () => store.read((tx) => aggregate(tx, org_, scope, aggregation)),
      );
      aggregations[aggregation] = { ...figures, value: formatQuantity(result) };
    }
    const intervalValueWithPeriodMs = await time(() =>
      store.read(async (tx) => {
        const s = await tx.subscriptions.get(org_, subscription.id);
        const item = await tx.subscriptions.getItem(org_, itemId);
        const i = await currentInterval(tx, org_, s, item, 'Europe/Berlin', now);
        return intervalValue(tx, org_, i, measurement);
      }),
    );
    const getSubscriptionUsageMs = await time(() => run('get_subscription_usage', { id: subscription.id }));
    const figures = {
      values: VALUES,
      distinctIds: DISTINCT,
      buildSeconds,
      databaseMB: Math.round(fs.statSync(file).size / 1e6),
      aggregations,
      intervalValueWithPeriodMs,
      getSubscriptionUsageMs,
      target: 'ratio <= 1.5 and <= 400 ms each',
    };
    report(`aggregation: ${VALUES} values in one interval, median of ${RUNS} runs`, figures);
    return figures;
  } finally {
    store.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAggregation();
