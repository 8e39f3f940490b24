/**
 * Stores on the test run's PostgreSQL server (test/globalPostgres.ts): each a database of its own,
 * copied from one migrated template per test process, so that a test starts from the empty schema in
 * about the time of a file copy. `BILLING_TEST_ENGINE=postgres` makes `setup()` (test/helpers.ts) use
 * them instead of SQLite.
 */
import { randomBytes } from 'node:crypto';
import { PgStore, type PgStoreOptions } from '../src/store/pg/store.js';
import { createDatabase, databaseUrl, dropDatabase, postgresUrl } from './pg.js';

export const onPostgres = () => process.env.BILLING_TEST_ENGINE === 'postgres';

let template: Promise<string> | undefined;

/** A migrated database to copy, made once per process. */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `billing_template_${process.pid}_${randomBytes(3).toString('hex')}`;
    const url = await createDatabase(postgresUrl(), name);
    await (await PgStore.open(url, { poolSize: 1 })).close();
    return name;
  })();
  return template;
}

/** A new, migrated, empty database and the URL to reach it. */
export async function newPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = postgresUrl();
  const name = `billing_test_${randomBytes(6).toString('hex')}`;
  await createDatabase(admin, name, { template: await migratedTemplate() });
  return { url: databaseUrl(admin, name), drop: () => dropDatabase(admin, name) };
}

/** The databases standing in for SQLite files a test names (`setup({ db })`), kept across its restarts. */
const named = new Map<string, Promise<string>>();

/**
 * A store on a new database of its own, dropped when the store closes; or, for `file` (a test's
 * SQLite file), on the database that stands for that file in this process, kept when it closes so
 * that a test can open it again as a restart.
 */
export async function newPgStore(file?: string, options: PgStoreOptions = {}): Promise<PgStore> {
  if (file !== undefined) {
    let url = named.get(file);
    if (!url) {
      url = newPgDatabase().then((db) => db.url);
      named.set(file, url);
    }
    return PgStore.open(await url, options);
  }
  const db = await newPgDatabase();
  const store = await PgStore.open(db.url, options);
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await db.drop();
  };
  return store;
}
