/**
 * vitest `globalSetup`: one PostgreSQL server for the whole test run (every test file runs in a
 * process of its own). Its admin URL goes to the test processes in `BILLING_TEST_PG_URL` (they inherit
 * the environment; `postgresUrl()` of test/pg.ts reads it) and as `inject('billingPgUrl')`.
 *
 * With `BILLING_TEST_PG_URL` already set, that server (external, e.g. CI's) is used and nothing is
 * started or stopped.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres, type RunningPostgres } from './pg.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the test run's PostgreSQL server. */
    billingPgUrl: string;
  }
}

let server: RunningPostgres | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.BILLING_TEST_PG_URL;
  if (!url) {
    const started = performance.now();
    server = await startPostgres();
    url = server.url;
    process.env.BILLING_TEST_PG_URL = url;
    if (process.env.BILLING_TEST_PG_LOG === '1') {
      process.stderr.write(`[postgres] test server ready in ${Math.round(performance.now() - started)} ms\n`);
    }
  }
  project.provide('billingPgUrl', url);
}

export async function teardown(): Promise<void> {
  if (!server) return;
  const s = server;
  server = undefined;
  delete process.env.BILLING_TEST_PG_URL;
  await s.stop();
}
