// Shared pieces of the benchmarks: a server in its own process, autocannon runs, figures.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export const CLI = path.resolve('dist/cli.js');

export function tempDb(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `billing-bench-${name}-`));
  return path.join(dir, 'billing.sqlite');
}

/**
 * Starts `billing-mcp serve --demo` on a free port in its own process; resolves to { url, apiKey, stop }.
 * BENCH_SERVER_NODE_ARGS adds Node options to it, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 */
export function startServer(db, extraEnv = {}) {
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--demo', '--port', '0'], {
    // One key from 50 connections: above the default per-key concurrency limit, which is not what is measured.
    env: { ...process.env, BILLING_DB: db, LOG_LEVEL: 'warn', BILLING_JOBS_INTERVAL_MS: '0', BILLING_MAX_CONCURRENT_PER_KEY: '1000', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 15_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        const { apiKey } = JSON.parse(stdout);
        resolve({ url: m[1], apiKey, stop: () => child.kill('SIGTERM') });
      }
    });
  });
}

/** One autocannon run; returns requests/s (mean) and latency percentiles in ms. */
export async function load(opts) {
  const result = await autocannon({ connections: 50, duration: 10, ...opts });
  const non2xx = result.non2xx + result.errors;
  if (non2xx > 0) throw new Error(`${opts.title ?? opts.url}: ${non2xx} failed requests`);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
  };
}

export function report(name, figures) {
  console.log(JSON.stringify({ bench: name, ...figures }, null, 2));
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Starts `script --bare <db>` (a bench's bare baseline server) in its own process; resolves to { url, stop }. */
export function startBare(script, db) {
  const child = spawn(process.execPath, [path.resolve(script), '--bare', db], { stdio: ['ignore', 'inherit', 'pipe'] });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bare server did not start: ${stderr}`)), 15_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop: () => child.kill('SIGTERM') });
      }
    });
  });
}

/**
 * Baseline and candidate alternate, `rounds` times each after a warm-up, so that a burst of other work
 * on the machine hits both; each figure is the median of its rounds, each ratio the median of the
 * per-round ratios. `value` turns a load result into the figure compared.
 */
export async function compare(baseline, candidate, value, { rounds: count, duration }) {
  await load({ ...baseline, duration: 2 });
  await load({ ...candidate, duration: 2 });
  const rounds = [];
  for (let i = 0; i < count; i++) {
    const b = await load({ ...baseline, duration });
    const c = await load({ ...candidate, duration });
    rounds.push({ baseline: b, candidate: c, ratio: value(c) / value(b) });
  }
  const pick = (side) => ({
    perSecond: median(rounds.map((r) => value(r[side]))),
    p50: median(rounds.map((r) => r[side].p50)),
    p99: median(rounds.map((r) => r[side].p99)),
  });
  return {
    baseline: pick('baseline'),
    ours: pick('candidate'),
    ratio: Number(median(rounds.map((r) => r.ratio)).toFixed(3)),
    rounds: rounds.map((r) => Number(r.ratio.toFixed(3))),
  };
}

/**
 * The HTTP side of a bench's bare baseline (`script --bare <db>`): JSON bodies in, `answer(body, url)`
 * giving `{ status, body }` out, keep-alive, on a free port of 127.0.0.1 announced on stderr for `startBare`.
 */
export function serveJson(answer) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const { status, body } = answer(JSON.parse(Buffer.concat(chunks).toString('utf8')), req.url);
      const text = JSON.stringify(body);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => process.stderr.write(`bare listening on http://127.0.0.1:${server.address().port}\n`));
}

/** The bearer headers of a started server and a POST that answers the JSON body or throws with it. */
export function restClient(server) {
  const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
  const post = async (p, body) => {
    const res = await fetch(`${server.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${p}: ${JSON.stringify(json)}`);
    return json;
  };
  return { headers, post };
}

/** A subscription with one item metered by a sum measurement, built through the REST facade. */
export async function meteredItem(server) {
  const { headers, post } = restClient(server);
  const customer = await post('/customers', { lastName: 'Bench', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  await post('/catalogue/units', { name: 'call' });
  const measurement = await post('/catalogue/measurements', { unit: 'call', code: 'api_calls', aggregationType: 'sum', type: 'metered' });
  const product = await post('/catalogue/products', { name: 'API', measurement: measurement.id });
  const pricePlan = await post(`/catalogue/products/${product.id}/price-plans`, {
    type: 'per_unit',
    currencyCode: 'EUR',
    price: { amount: 0.01 },
    billingInterval: '1M',
    payInAdvance: false,
  });
  const plan = await post('/catalogue/plans', { code: 'api', name: 'API', charges: [{ product: product.id, pricePlan: pricePlan.id }] });
  const subscription = await post('/subscriptions', {
    customer: customer.id,
    plan: plan.id,
    periods: [{ contractPeriod: '12M', cancellationPeriod: '1M' }],
    activate: true,
  });
  return { headers, itemId: subscription.items[0].id, subscriptionId: subscription.id, customerId: customer.id };
}
