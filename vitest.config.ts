import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One PostgreSQL server for the run (BILLING_TEST_PG_URL); an already set BILLING_TEST_PG_URL is used instead.
    globalSetup: ['test/globalPostgres.ts'],
  },
});
