import { defineConfig } from 'vitest/config';

/**
 * Tests that reach the store through `setup()` (test/helpers.ts) run twice: on SQLite and, with
 * BILLING_TEST_ENGINE=postgres, on a PostgreSQL database of their own. Left out of the second run:
 * tests without a store, tests of SQLite itself (its file locking, its migrations, the schema parity
 * test, which covers both engines once), and the tool surface and HTTP limits, which no engine changes.
 */
const ENGINE_NEUTRAL = [
  'test/batching.test.ts',
  'test/budgets.test.ts',
  'test/claimFilter.test.ts',
  'test/cli.test.ts',
  'test/dates.test.ts',
  'test/discovery.test.ts',
  'test/iban.test.ts',
  'test/ids.test.ts',
  'test/invoiceMath.test.ts',
  'test/limits.test.ts',
  'test/mcpTransport.test.ts',
  'test/migrations.test.ts',
  'test/money.property.test.ts',
  'test/multiInstance.test.ts',
  'test/pgSchema.test.ts',
  'test/pricing.test.ts',
  'test/quantity.test.ts',
  'test/queryPlans.test.ts',
  'test/store.test.ts',
  'test/storeContract.test.ts',
  'test/storeLocking.test.ts',
  'test/surface.test.ts',
  'test/testHarness.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One PostgreSQL server for the run (BILLING_TEST_PG_URL); an already set BILLING_TEST_PG_URL is used instead.
    globalSetup: ['test/globalPostgres.ts'],
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'postgres', include: ['test/**/*.test.ts'], exclude: ENGINE_NEUTRAL, env: { BILLING_TEST_ENGINE: 'postgres' } },
      },
    ],
  },
});
