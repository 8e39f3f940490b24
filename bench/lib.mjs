// Shared pieces of the benchmarks: a server in its own process, autocannon runs, figures.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export const CLI = path.resolve('dist/cli.js');

export function tempDb(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `billing-bench-${name}-`));
  return path.join(dir, 'billing.sqlite');
}

/** Starts `billing-mcp serve --demo` on a free port in its own process; resolves to { url, apiKey, stop }. */
export function startServer(db, extraEnv = {}) {
  const child = spawn(process.execPath, [CLI, 'serve', '--demo', '--port', '0'], {
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
