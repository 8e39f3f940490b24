/**
 * The PostgreSQL schema (src/store/pg/schema.ts) against the SQLite schema after all migrations: the
 * same tables, columns (order, types as translated, NOT NULL, defaults), primary keys, UNIQUE
 * constraints, named indexes (uniqueness, columns, partial or not), foreign keys and number of CHECK
 * constraints; then the same statements run on both engines must be accepted or refused alike, and
 * text must sort bytewise in PostgreSQL too, whatever the database's default collation.
 */
import type Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PG_MIGRATIONS } from '../src/store/pg/schema.js';
import { openDatabase } from '../src/store/sqlite.js';
import { createDatabase, dropDatabase, postgresUrl } from './pg.js';

interface ColumnShape {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
}

interface IndexShape {
  name: string;
  unique: boolean;
  partial: boolean;
  columns: string[];
}

interface TableShape {
  columns: ColumnShape[];
  primaryKey: string[];
  /** Indexes created by CREATE INDEX, by name. */
  indexes: IndexShape[];
  /** Column lists of UNIQUE constraints (not the primary key), each as `a,b`, sorted. */
  uniques: string[];
  /** `(a,b) -> table(c,d) on delete X on update Y`, sorted. */
  foreignKeys: string[];
  checks: number;
}

/** The PostgreSQL type of each SQLite column type (translation rules of src/store/pg/schema.ts). */
const PG_TYPE: Record<string, string> = { INTEGER: 'bigint', TEXT: 'text', BLOB: 'bytea', REAL: 'double precision' };
/** Columns whose PostgreSQL type is not the rule's. */
const TYPE_EXCEPTIONS: Record<string, string> = { 'usage_events.properties': 'jsonb' };
/** Columns PostgreSQL has and SQLite has not (implicitly: the rowid), at the end of their table. */
const PG_ONLY_COLUMNS: Record<string, string[]> = { subscription_items: ['rowid'] };
/** Index columns PostgreSQL spells out where SQLite's index has them implicitly (the rowid), at the end. */
const PG_ONLY_INDEX_COLUMNS: Record<string, string[]> = { subscription_items_due: ['rowid'] };

const ACTIONS: Record<string, string> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

function sqliteShapes(db: Database.Database): Map<string, TableShape> {
  const shapes = new Map<string, TableShape>();
  const tables = db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations'`)
    .all() as Array<{ name: string; sql: string }>;
  for (const { name: table, sql } of tables) {
    // Columns of a PRIMARY KEY are NOT NULL in STRICT and WITHOUT ROWID tables (every table here), as in PostgreSQL.
    const pkNotNull = /\)\s*STRICT\b/i.test(sql) || /WITHOUT\s+ROWID\s*$/i.test(sql);
    const info = db.prepare(`PRAGMA table_xinfo("${table}")`).all() as Array<{
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
      hidden: number;
    }>;
    const columns = info
      .filter((c) => c.hidden === 0)
      .map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1 || (c.pk > 0 && pkNotNull), default: c.dflt_value }));
    const primaryKey = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    const indexes: IndexShape[] = [];
    const uniques: string[] = [];
    for (const idx of db.prepare(`PRAGMA index_list("${table}")`).all() as Array<{ name: string; unique: number; origin: string; partial: number }>) {
      const cols = (db.prepare(`PRAGMA index_info("${idx.name}")`).all() as Array<{ seqno: number; cid: number; name: string | null }>)
        .sort((a, b) => a.seqno - b.seqno)
        .map((c) => (c.cid === -2 ? '<expression>' : c.cid === -1 ? 'rowid' : c.name!));
      if (idx.origin === 'c') indexes.push({ name: idx.name, unique: idx.unique === 1, partial: idx.partial === 1, columns: cols });
      else if (idx.origin === 'u') uniques.push(cols.join(','));
    }
    const fks = new Map<number, { table: string; from: string[]; to: string[]; onDelete: string; onUpdate: string }>();
    for (const fk of db.prepare(`PRAGMA foreign_key_list("${table}")`).all() as Array<{
      id: number;
      seq: number;
      table: string;
      from: string;
      to: string | null;
      on_delete: string;
      on_update: string;
    }>) {
      const entry = fks.get(fk.id) ?? { table: fk.table, from: [], to: [], onDelete: fk.on_delete, onUpdate: fk.on_update };
      entry.from[fk.seq] = fk.from;
      entry.to[fk.seq] = fk.to ?? '<primary key>';
      fks.set(fk.id, entry);
    }
    shapes.set(table, {
      columns,
      primaryKey,
      indexes: indexes.sort((a, b) => a.name.localeCompare(b.name)),
      uniques: uniques.sort(),
      foreignKeys: [...fks.values()].map((f) => `(${f.from.join(',')}) -> ${f.table}(${f.to.join(',')}) on delete ${f.onDelete} on update ${f.onUpdate}`).sort(),
      checks: (sql.match(/\bCHECK\s*\(/gi) ?? []).length,
    });
  }
  return shapes;
}

interface PgColumn {
  table: string;
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  identity: string;
  collation: string | null;
}

async function pgColumns(client: pg.Client): Promise<PgColumn[]> {
  return (
    await client.query<PgColumn>(
      `SELECT c.relname AS "table", a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
              pg_get_expr(d.adbin, d.adrelid) AS "default", a.attidentity AS identity, co.collname AS collation
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         LEFT JOIN pg_collation co ON co.oid = a.attcollation
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`,
    )
  ).rows;
}

async function pgShapes(client: pg.Client): Promise<Map<string, TableShape>> {
  const shapes = new Map<string, TableShape>();
  const shape = (table: string): TableShape => {
    let s = shapes.get(table);
    if (!s) shapes.set(table, (s = { columns: [], primaryKey: [], indexes: [], uniques: [], foreignKeys: [], checks: 0 }));
    return s;
  };
  const { rows: tables } = await client.query<{ table: string }>(
    `SELECT relname AS "table" FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')`,
  );
  for (const { table } of tables) shape(table);
  for (const c of await pgColumns(client)) {
    // The default as SQLite shows it: without PostgreSQL's cast of the literal ('{}'::text).
    const dflt = c.default === null ? null : c.default.replace(/::[a-z ]+$/, '');
    shape(c.table).columns.push({ name: c.name, type: c.type, notNull: c.notNull, default: dflt });
  }
  const { rows: indexes } = await client.query<{
    table: string;
    name: string;
    unique: boolean;
    primary: boolean;
    partial: boolean;
    constraint: boolean;
    columns: string[];
  }>(
    `SELECT t.relname AS "table", i.relname AS name, x.indisunique AS "unique", x.indisprimary AS "primary",
            x.indpred IS NOT NULL AS partial,
            EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid AND k.contype IN ('p', 'u')) AS "constraint",
            ARRAY(SELECT pg_get_indexdef(x.indexrelid, n, true) FROM generate_series(1, x.indnkeyatts) n ORDER BY n) AS columns
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_class t ON t.oid = x.indrelid
      WHERE t.relnamespace = 'public'::regnamespace`,
  );
  for (const idx of indexes) {
    const s = shape(idx.table);
    const columns = idx.columns.map((c) => (/^"?[a-z_][a-z0-9_]*"?$/.test(c) ? c.replace(/"/g, '') : '<expression>'));
    if (idx.primary) s.primaryKey = columns;
    else if (idx.constraint) s.uniques.push(columns.join(','));
    else s.indexes.push({ name: idx.name, unique: idx.unique, partial: idx.partial, columns });
  }
  const { rows: fks } = await client.query<{
    table: string;
    references: string;
    columns: string[];
    referenced: string[];
    onDelete: string;
    onUpdate: string;
    deferrable: boolean;
  }>(
    `SELECT t.relname AS "table", f.relname AS "references",
            ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.o) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.o) AS referenced,
            k.confdeltype AS "onDelete", k.confupdtype AS "onUpdate", k.condeferrable AS deferrable
       FROM pg_constraint k
       JOIN pg_class t ON t.oid = k.conrelid
       JOIN pg_class f ON f.oid = k.confrelid
      WHERE k.contype = 'f' AND t.relnamespace = 'public'::regnamespace`,
  );
  for (const fk of fks) {
    expect(fk.deferrable, `${fk.table} -> ${fk.references} is deferrable`).toBe(false);
    shape(fk.table).foreignKeys.push(
      `(${fk.columns.join(',')}) -> ${fk.references}(${fk.referenced.join(',')}) on delete ${ACTIONS[fk.onDelete]} on update ${ACTIONS[fk.onUpdate]}`,
    );
  }
  const { rows: checks } = await client.query<{ table: string; n: number }>(
    `SELECT t.relname AS "table", count(*)::int AS n
       FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
      WHERE k.contype = 'c' AND t.relnamespace = 'public'::regnamespace
      GROUP BY t.relname`,
  );
  for (const c of checks) shape(c.table).checks = c.n;
  for (const s of shapes.values()) {
    s.indexes.sort((a, b) => a.name.localeCompare(b.name));
    s.uniques.sort();
    s.foreignKeys.sort();
  }
  return shapes;
}

/** The SQLite shape as PostgreSQL should show it: types translated, the PostgreSQL-only columns added. */
function expectedPgShape(table: string, s: TableShape): TableShape {
  const columns = s.columns.map((c) => ({ ...c, type: TYPE_EXCEPTIONS[`${table}.${c.name}`] ?? PG_TYPE[c.type] ?? `<no rule for ${c.type}>` }));
  for (const name of PG_ONLY_COLUMNS[table] ?? []) columns.push({ name, type: 'bigint', notNull: true, default: null });
  const indexes = s.indexes.map((i) => ({ ...i, columns: [...i.columns, ...(PG_ONLY_INDEX_COLUMNS[i.name] ?? [])] }));
  return { ...s, columns, indexes };
}

/** What a refused statement violated, named alike for both engines. */
function violation(err: unknown): string {
  const code = String((err as { code?: unknown }).code);
  const byCode: Record<string, string> = {
    SQLITE_CONSTRAINT_CHECK: 'check',
    SQLITE_CONSTRAINT_NOTNULL: 'not null',
    SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign key',
    SQLITE_CONSTRAINT_UNIQUE: 'unique',
    SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
    '23514': 'check',
    '23502': 'not null',
    '23503': 'foreign key',
    '23505': 'unique',
  };
  const kind = byCode[code];
  if (!kind) throw err;
  return kind;
}

const toPg = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

const T = '2026-01-01T00:00:00.000Z';

describe('PostgreSQL schema', () => {
  let adminUrl: string;
  let dbName: string;
  let client: pg.Client;
  let sqlite: Database.Database;

  beforeAll(async () => {
    adminUrl = postgresUrl();
    dbName = `billing_schema_${process.pid}`;
    await dropDatabase(adminUrl, dbName);
    // A default collation that is not bytewise ('B' < 'a' is false in it): only the columns' "C" can make text sort as in SQLite.
    // (A server built without ICU gets its default collation.)
    const url = await createDatabase(adminUrl, dbName, { icuLocale: 'en' }).catch(() => createDatabase(adminUrl, dbName));
    client = new pg.Client({
      connectionString: url,
      // int8 as numbers, as the application's adapter reads them (node-postgres reads them as strings).
      types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
    });
    await client.connect();
    await client.query('BEGIN');
    for (const m of PG_MIGRATIONS) await client.query(m.sql);
    await client.query('COMMIT');
    sqlite = openDatabase(':memory:');
  });

  afterAll(async () => {
    sqlite?.close();
    await client?.end();
    if (adminUrl && dbName) await dropDatabase(adminUrl, dbName);
  });

  test('has the version-30 baseline, then one migration per later SQLite migration, of its version and name', async () => {
    const { MIGRATIONS } = await import('../src/store/migrations/index.js');
    const later = MIGRATIONS.filter((m) => m.version > 30).map((m) => [m.version, m.name]);
    expect(PG_MIGRATIONS.map((m) => [m.version, m.name])).toEqual([[30, 'baseline'], ...later]);
  });

  describe('structure', () => {
    let lite: Map<string, TableShape>;
    let post: Map<string, TableShape>;

    beforeAll(async () => {
      lite = sqliteShapes(sqlite);
      post = await pgShapes(client);
    });

    test('the same tables', () => {
      expect([...post.keys()].sort()).toEqual([...lite.keys()].sort());
      expect(lite.size).toBeGreaterThan(50);
    });

    test('every table: columns, NOT NULL, defaults, primary key, UNIQUE constraints, indexes, foreign keys, number of CHECKs', () => {
      for (const [table, s] of lite) {
        const actual = post.get(table);
        expect(actual, `table ${table}`).toBeDefined();
        expect(actual, `table ${table}`).toEqual(expectedPgShape(table, s));
      }
    });

    test('every text column compares bytewise (collation "C"); the rowids are identities', async () => {
      const columns = await pgColumns(client);
      const text = columns.filter((c) => c.type === 'text');
      expect(text.length).toBeGreaterThan(400);
      expect(text.filter((c) => c.collation !== 'C').map((c) => `${c.table}.${c.name}`)).toEqual([]);
      expect(columns.filter((c) => c.identity !== '').map((c) => `${c.table}.${c.name}:${c.identity}`).sort()).toEqual([
        'measurement_value_ids.key:d',
        'subscription_items.rowid:d',
        'usage_rollup_marks.id:d',
      ]);
    });

    test('the comparison notices a missing column or index', () => {
      const [table, s] = [...lite].find(([, s]) => s.indexes.length > 0)!;
      const expected = expectedPgShape(table, s);
      expect({ ...expected, columns: expected.columns.slice(1) }).not.toEqual(expected);
      expect({ ...expected, indexes: expected.indexes.slice(1) }).not.toEqual(expected);
    });
  });

  describe('behaviour alike on both engines', () => {
    /** Runs one statement on both engines; the outcome ('ok' or what it violated) must be the same and is returned. */
    async function both(sql: string, ...params: unknown[]): Promise<string> {
      let lite: string;
      try {
        sqlite.prepare(sql).run(...params);
        lite = 'ok';
      } catch (err) {
        lite = violation(err);
      }
      let post: string;
      try {
        await client.query(toPg(sql), params);
        post = 'ok';
      } catch (err) {
        post = violation(err);
      }
      expect(post, `PostgreSQL and SQLite on: ${sql} ${JSON.stringify(params)}`).toBe(lite);
      return lite;
    }

    async function rowsOfBoth(sql: string, ...params: unknown[]): Promise<unknown[]> {
      const lite = sqlite.prepare(sql).all(...params);
      const post = (await client.query(toPg(sql), params)).rows;
      expect(post, `PostgreSQL and SQLite on: ${sql}`).toEqual(lite);
      return lite;
    }

    beforeAll(async () => {
      expect(await both('INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)', 'org_1', 'Org', T)).toBe('ok');
      expect(
        await both(
          `INSERT INTO customers (id, organisation_id, customer_number, time_zone, currency_code, status, created_at, updated_at)
           VALUES (?, 'org_1', ?, 'Europe/Berlin', 'EUR', 'active', ?, ?)`,
          'cus_1',
          'C-1',
          T,
          T,
        ),
      ).toBe('ok');
    });

    test('defaults of columns added by later migrations', async () => {
      expect(await rowsOfBoth('SELECT credit_balance, custom_fields, payment_term_days FROM customers WHERE id = ?', 'cus_1')).toEqual([
        { credit_balance: 0, custom_fields: '{}', payment_term_days: null },
      ]);
    });

    test('NOT NULL, foreign keys and UNIQUE constraints', async () => {
      expect(await both('INSERT INTO organisations (id, created_at) VALUES (?, ?)', 'org_x', T)).toBe('not null');
      const unit = `INSERT INTO units (id, organisation_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`;
      expect(await both(unit, 'unit_1', 'org_missing', 'hours', T, T)).toBe('foreign key');
      expect(await both(unit, 'unit_1', 'org_1', 'hours', T, T)).toBe('ok');
      expect(await both(unit, 'unit_2', 'org_1', 'hours', T, T)).toBe('unique');
      expect(await both(unit, 'unit_1', 'org_1', 'minutes', T, T)).toBe('unique');
    });

    test('measurements: column and table CHECKs', async () => {
      const insert = `INSERT INTO measurements (id, organisation_id, unit_id, code, aggregation_type, fair_billing, type, created_at, updated_at)
                      VALUES (?, 'org_1', 'unit_1', ?, ?, ?, ?, ?, ?)`;
      expect(await both(insert, 'm_1', 'm1', 'sum', 0, 'recurring', T, T)).toBe('check');
      expect(await both(insert, 'm_1', 'm1', 'sum', 2, 'metered', T, T)).toBe('check');
      expect(await both(insert, 'm_1', 'm1', 'median', 0, 'metered', T, T)).toBe('check');
      expect(await both(insert, 'm_1', 'm1', 'sum', 0, 'metered', T, T)).toBe('ok');
      expect(await both(insert, 'm_2', 'm2', 'last_value', 1, 'recurring', T, T)).toBe('ok');
    });

    test('payment methods: the last four digits of a card (GLOB in SQLite, a regular expression here), a disabled default', async () => {
      const card = `INSERT INTO payment_methods (id, organisation_id, customer_id, gateway_name, type, is_default, enabled, card_brand, card_last4,
                      card_exp_month, card_exp_year, expiration_date, created_at, updated_at)
                    VALUES (?, 'org_1', 'cus_1', 'stripe', 'card', ?, ?, 'visa', ?, 12, 2030, '2030-12', ?, ?)`;
      for (const bad of ['12a4', '123', '12345', '1234\n', '\n1234', ' 1234', '١٢٣٤', '12 4']) {
        expect(await both(card, 'pm_bad', 0, 1, bad, T, T), JSON.stringify(bad)).toBe('check');
      }
      expect(await both(card, 'pm_1', 1, 0, '4242', T, T)).toBe('check');
      expect(await both(card, 'pm_1', 1, 1, '4242', T, T)).toBe('ok');
      expect(await both(card, 'pm_2', 0, 1, '0000', T, T)).toBe('ok');
      // One default per customer (partial unique index).
      expect(await both(card, 'pm_3', 1, 1, '1111', T, T)).toBe('unique');
      // A card needs its card columns (a CHECK over several columns).
      expect(
        await both(
          `INSERT INTO payment_methods (id, organisation_id, customer_id, gateway_name, type, is_default, enabled, created_at, updated_at)
           VALUES ('pm_4', 'org_1', 'cus_1', 'stripe', 'card', 0, 1, ?, ?)`,
          T,
          T,
        ),
      ).toBe('check');
    });

    test('customer e-mails: one default per customer (partial unique index), any number of others', async () => {
      const email = `INSERT INTO customer_emails (id, organisation_id, customer_id, email, is_invoice_email, is_dunning_email, is_default, created_at, updated_at)
                     VALUES (?, 'org_1', 'cus_1', ?, 1, 1, ?, ?, ?)`;
      expect(await both(email, 'ce_1', 'a@example.com', 1, T, T)).toBe('ok');
      expect(await both(email, 'ce_2', 'b@example.com', 0, T, T)).toBe('ok');
      expect(await both(email, 'ce_3', 'c@example.com', 0, T, T)).toBe('ok');
      expect(await both(email, 'ce_4', 'd@example.com', 1, T, T)).toBe('unique');
    });

    test('coupons (rebuilt by migration 016): forever is a frequency, the coupled columns are checked', async () => {
      const coupon = `INSERT INTO coupons (id, organisation_id, code, name, type, frequency, percentage_e2, frequency_interval, is_enabled, created_at, updated_at)
                      VALUES (?, 'org_1', ?, 'Coupon', 'percentage', ?, ?, ?, 1, ?, ?)`;
      expect(await both(coupon, 'cp_1', 'FOREVER', 'forever', 1000, null, T, T)).toBe('ok');
      expect(await both(coupon, 'cp_2', 'WEEKLY', 'weekly', 1000, null, T, T)).toBe('check');
      expect(await both(coupon, 'cp_2', 'LIMITED', 'limited', 1000, null, T, T)).toBe('check');
      expect(await both(coupon, 'cp_2', 'LIMITED', 'limited', 1000, 3, T, T)).toBe('ok');
      expect(await both(coupon, 'cp_3', 'TOO_MUCH', 'once', 10001, null, T, T)).toBe('check');
    });

    test('invoices: status and amounts (migrations 005, 012, 023)', async () => {
      const invoice = `INSERT INTO invoices (id, organisation_id, number, customer_id, status, currency_code, net_amount, tax_amount, gross_amount,
                         amount_settled, amount_credited, taxes, issued_at, paid_at, created_at, updated_at)
                       VALUES (?, 'org_1', ?, 'cus_1', ?, 'EUR', 100, 19, 119, ?, ?, '[]', ?, ?, ?, ?)`;
      expect(await both(invoice, 'in_1', null, 'draft', 0, 0, null, null, T, T)).toBe('ok');
      expect(await both(invoice, 'in_2', 'RE-1', 'draft', 0, 0, null, null, T, T)).toBe('check');
      expect(await both(invoice, 'in_2', 'RE-1', 'paid', 119, 0, T, null, T, T)).toBe('check');
      expect(await both(invoice, 'in_2', 'RE-1', 'open', 120, 0, T, null, T, T)).toBe('check');
      expect(await both(invoice, 'in_2', 'RE-1', 'open', 10, 11, T, null, T, T)).toBe('check');
      expect(await both(invoice, 'in_2', 'RE-1', 'paid', 119, 0, T, T, T, T)).toBe('ok');
      expect(await both(invoice, 'in_3', 'RE-1', 'open', 0, 0, T, null, T, T)).toBe('unique');
      expect(await rowsOfBoth('SELECT credit_applied, original_due_at, dunning_of FROM invoices WHERE id = ?', 'in_2')).toEqual([
        { credit_applied: 0, original_due_at: null, dunning_of: null },
      ]);
    });

    test('e-mails (rebuilt by migration 029): the SEPA pre-notification kind', async () => {
      const email = `INSERT INTO emails (id, organisation_id, kind, customer_id, invoice_id, recipients, subject, body_text, attachments, status, attempts,
                       next_attempt_at, created_at, updated_at)
                     VALUES (?, 'org_1', ?, 'cus_1', 'in_2', '[]', 'Subject', 'Text', '[]', 'queued', 0, ?, ?, ?)`;
      expect(await both(email, 'em_1', 'sepa_pre_notification', T, T, T)).toBe('ok');
      expect(await both(email, 'em_2', 'sms', T, T, T)).toBe('check');
      expect(await both(email, 'em_2', 'invoice', null, T, T)).toBe('check');
    });

    test('price plans (migration 011): the type defaults to flat_fee and has five values; a package has at least one unit', async () => {
      expect(
        await both(
          `INSERT INTO products (id, organisation_id, type, name, invoice_visibility, custom_fields, created_at, updated_at)
           VALUES ('prod_1', 'org_1', 'service', 'Service', 'always', '{}', ?, ?)`,
          T,
          T,
        ),
      ).toBe('ok');
      const plan = (type: string | null, packageSize: number | null) =>
        both(
          `INSERT INTO price_plans (id, organisation_id, product_id, currency_code, status, apply_trial, pay_in_advance, pro_rata, free_units,
             billing_interval, show_price_per_interval, custom, created_at, updated_at${type === null ? '' : ', type'}, package_size)
           VALUES (?, 'org_1', 'prod_1', 'EUR', 'active', 0, 1, 0, 0, 'P1M', 'P1M', 0, ?, ?${type === null ? '' : ', ?'}, ?)`,
          `pp_${type}_${packageSize}`,
          T,
          T,
          ...(type === null ? [] : [type]),
          packageSize,
        );
      expect(await plan(null, null)).toBe('ok');
      expect(await plan('package', 10)).toBe('ok');
      expect(await plan('package', 0)).toBe('check');
      expect(await plan('tiered', null)).toBe('check');
      expect(await rowsOfBoth('SELECT type FROM price_plans WHERE id = ?', 'pp_null_null')).toEqual([{ type: 'flat_fee' }]);
    });

    test('taxes go with their tax group (ON DELETE CASCADE); a tax group in use by a product is kept (no action)', async () => {
      await both(
        `INSERT INTO tax_groups (id, organisation_id, internal_description, reverse_charge_type, type, created_at, updated_at)
         VALUES ('tg_1', 'org_1', 'Standard', 'none', 'standard', ?, ?)`,
        T,
        T,
      );
      const tax = `INSERT INTO taxes (id, organisation_id, tax_group_id, position, code, rate_e4, country_code, valid_from)
                   VALUES (?, 'org_1', 'tg_1', 1, 'VAT', ?, 'DE', ?)`;
      expect(await both(tax, 'tx_1', 190000, '2020-01-01')).toBe('ok');
      expect(await both(tax, 'tx_2', 1000001, '2021-01-01')).toBe('check');
      expect(await both(tax, 'tx_2', 70000, '2021-01-01')).toBe('ok');
      expect(await both("DELETE FROM tax_groups WHERE id = 'tg_1'")).toBe('ok');
      expect(await rowsOfBoth("SELECT count(*) AS n FROM taxes WHERE tax_group_id = 'tg_1'")).toEqual([{ n: 0 }]);
      await both(
        `INSERT INTO tax_groups (id, organisation_id, internal_description, reverse_charge_type, type, created_at, updated_at)
         VALUES ('tg_2', 'org_1', 'Reduced', 'none', 'reduced', ?, ?)`,
        T,
        T,
      );
      await both(`UPDATE products SET tax_group_id = 'tg_2' WHERE id = 'prod_1'`);
      expect(await both("DELETE FROM tax_groups WHERE id = 'tg_2'")).toBe('foreign key');
    });

    test('measurement value ids are numbered on insert, as SQLite numbers its rowids', async () => {
      const insert = 'INSERT INTO measurement_value_ids (organisation_id, value_id) VALUES (?, ?) RETURNING key';
      for (const id of ['a', 'b', 'c']) {
        const lite = sqlite.prepare(insert).get('org_1', id);
        const post = (await client.query(toPg(insert), ['org_1', id])).rows[0];
        expect(post).toEqual(lite);
      }
      expect(await rowsOfBoth('SELECT key, value_id FROM measurement_value_ids ORDER BY key')).toEqual([
        { key: 1, value_id: 'a' },
        { key: 2, value_id: 'b' },
        { key: 3, value_id: 'c' },
      ]);
      expect(await both("INSERT INTO measurement_value_ids (organisation_id, value_id) VALUES ('org_1', '')")).toBe('check');
    });

    test('the due items of billing runs page by rowid alike (SQLite: the implicit rowid; PostgreSQL: the rowid column)', async () => {
      await both(`INSERT INTO plan_families (id, organisation_id, created_at, updated_at) VALUES ('pf_1', 'org_1', ?, ?)`, T, T);
      await both(
        `INSERT INTO plans (id, organisation_id, family_id, code, name, status, allow_checkout, change_behaviour, change_apply_behaviour, created_at, updated_at)
         VALUES ('pl_1', 'org_1', 'pf_1', 'basic', 'Basic', 'active', 1, 'not_changeable', 'immediately', ?, ?)`,
        T,
        T,
      );
      for (const sub of ['sub_b', 'sub_a']) {
        expect(
          await both(
            `INSERT INTO subscriptions (id, organisation_id, customer_id, plan_id, number, status, custom_fields, periods, created_at, updated_at)
             VALUES (?, 'org_1', 'cus_1', 'pl_1', ?, 'active', '{}', '[]', ?, ?)`,
            sub,
            `S-${sub}`,
            T,
            T,
          ),
        ).toBe('ok');
      }
      const item = `INSERT INTO subscription_items (id, organisation_id, subscription_id, product_id, price_plan_id, type, quantity, next_billing_at,
                      created_at, updated_at)
                    VALUES (?, 'org_1', ?, 'prod_1', 'pp_null_null', 'charge', '1', ?, ?, ?)`;
      const items: Array<[string, string, string | null]> = [
        ['si_1', 'sub_b', '2026-02-01T00:00:00.000Z'],
        ['si_2', 'sub_a', '2026-02-01T00:00:00.000Z'],
        ['si_3', 'sub_a', '2026-02-01T00:00:00.000Z'],
        ['si_4', 'sub_b', null],
        ['si_5', 'sub_a', '2026-01-15T00:00:00.000Z'],
      ];
      for (const [id, sub, next] of items) expect(await both(item, id, sub, next, T, T)).toBe('ok');
      const page = `SELECT id, next_billing_at AS "nextBillingAt", subscription_id AS "subscriptionId", rowid FROM subscription_items
                     WHERE next_billing_at IS NOT NULL AND (next_billing_at, organisation_id, subscription_id, rowid) > (?, ?, ?, ?)
                     ORDER BY next_billing_at, organisation_id, subscription_id, rowid LIMIT 2`;
      const first = (await rowsOfBoth(page, '', '', '', -1)) as Array<{ nextBillingAt: string; subscriptionId: string; rowid: number }>;
      expect(first.map((r) => (r as unknown as { id: string }).id)).toEqual(['si_5', 'si_2']);
      const last = first[first.length - 1]!;
      const second = await rowsOfBoth(page, last.nextBillingAt, 'org_1', last.subscriptionId, last.rowid);
      expect(second.map((r) => (r as { id: string }).id)).toEqual(['si_3', 'si_1']);
    });

    test('text sorts and compares bytewise, as in SQLite', async () => {
      await both(`INSERT INTO organisations (id, name, created_at) VALUES ('org_sort', 'Sort', ?)`, T);
      const names = ['a', 'B', '_', 'b', 'A', 'Z', 'z', '-', '~', '0', 'a_b', 'aB', 'ab', 'a-b', 'é', 'E', 'ÿ', 'Ä', '～', '😀', 'a b', 'A1'];
      for (const [i, name] of names.entries()) {
        await both(`INSERT INTO units (id, organisation_id, name, created_at, updated_at) VALUES (?, 'org_sort', ?, ?, ?)`, `us_${i}`, name, T, T);
      }
      const sorted = (await rowsOfBoth(`SELECT name FROM units WHERE organisation_id = 'org_sort' ORDER BY name`)).map((r) => (r as { name: string }).name);
      // Bytewise UTF-8 is code point order.
      const byCodePoint = [...names].sort((x, y) => {
        const a = [...x].map((c) => c.codePointAt(0)!);
        const b = [...y].map((c) => c.codePointAt(0)!);
        for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
        return a.length - b.length;
      });
      expect(sorted).toEqual(byCodePoint);
      expect(sorted.indexOf('B')).toBeLessThan(sorted.indexOf('_'));
      expect(sorted.indexOf('_')).toBeLessThan(sorted.indexOf('a'));
      expect(sorted.indexOf('～')).toBeLessThan(sorted.indexOf('😀'));
      expect(await rowsOfBoth(`SELECT count(*) AS n FROM units WHERE organisation_id = 'org_sort' AND name < ?`, 'a')).toEqual([
        { n: byCodePoint.indexOf('a') },
      ]);
      expect(await rowsOfBoth(`SELECT min(name) AS lo, max(name) AS hi FROM units WHERE organisation_id = 'org_sort'`)).toEqual([{ lo: '-', hi: '😀' }]);
      // Keyset pagination on (created_at, id): ids compare bytewise too.
      expect(
        await rowsOfBoth(`SELECT id FROM units WHERE organisation_id = 'org_sort' AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 3`, T, 'us_1'),
      ).toEqual([{ id: 'us_10' }, { id: 'us_11' }, { id: 'us_12' }]);
      // Equality is exact: no case or accent folding.
      expect(await rowsOfBoth(`SELECT name FROM units WHERE organisation_id = 'org_sort' AND name = ?`, 'e')).toEqual([]);
    });
  });

  test('migration 025: the pages secret, 64 hex digits and an ISO-8601 UTC time, as in SQLite', async () => {
    const post = (await client.query<{ name: string; value: string; created_at: string }>('SELECT * FROM secrets')).rows;
    const lite = sqlite.prepare('SELECT * FROM secrets').all() as typeof post;
    for (const rows of [post, lite]) {
      expect(rows).toHaveLength(1);
      expect(rows[0]!.name).toBe('pages');
      expect(rows[0]!.value).toMatch(/^[0-9a-f]{64}$/);
      expect(rows[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Math.abs(Date.parse(rows[0]!.created_at) - Date.now())).toBeLessThan(60_000);
    }
  });

  test('usage event properties are JSONB, read with ->>', async () => {
    await client.query(
      `INSERT INTO usage_events (subscription_id, event_name, ts, seq, organisation_id, event_id, target, customer_id, properties, unmatched, late, received_at)
       VALUES ('', 'api_call', 1, 1, 'org_1', 'ev_1', 0, NULL, $1::jsonb, 0, 0, 1)`,
      [JSON.stringify({ region: 'eu', tokens: 12 })],
    );
    const { rows } = await client.query(`SELECT properties ->> 'region' AS region, properties ->> 'tokens' AS tokens FROM usage_events WHERE event_id = 'ev_1'`);
    expect(rows).toEqual([{ region: 'eu', tokens: '12' }]);
    await expect(
      client.query(
        `INSERT INTO usage_events (subscription_id, event_name, ts, seq, organisation_id, event_id, target, customer_id, properties, unmatched, late, received_at)
         VALUES ('', 'api_call', 2, 2, 'org_1', 'ev_1', 0, NULL, '{}'::jsonb, 0, 0, 1)`,
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'usage_events_claim' });
  });
});
