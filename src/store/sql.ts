import type { PageRequest } from '../schemas/common.js';

export type Dialect = 'sqlite' | 'postgres';

/** Positional values for `?`, or one object of named values for `@name`. */
export type Params = unknown[];

export interface RunResult {
  /** Rows the statement inserted, updated or deleted. */
  changes: number;
}

/** Rows per multi-row INSERT: few statement variants to cache, far below either engine's limit of bound values. */
const ROWS_PER_INSERT = 32;

/**
 * The only door to the database for repositories. Statements are written once, in the SQL both
 * engines speak (SQLite's placeholders `?` and `@name`; PostgreSQL's adapter rewrites them and quotes
 * camelCase aliases, src/store/pg/sql.ts); where the engines differ, a repository asks `dialect`.
 * Each engine caches its prepared statements by their text.
 */
export abstract class Sql {
  abstract readonly dialect: Dialect;

  /**
   * Statement texts built from their shape (`insert`, `insertMany`, `update`, a repository's
   * multi-row statement), by key and column list: the same text string every call, so that neither
   * the text is built again nor the engine's statement cache hashes and compares a new string of a
   * thousand characters for every row written.
   */
  private readonly texts = new Map<string, Array<{ columns: readonly string[]; texts: string[] }>>();

  /**
   * The text `write()` makes for `variant` (e.g. a row count) of the statement `key` over `columns`
   * (none when the key alone says the shape), written once.
   */
  textOf(key: string, columns: readonly string[], variant: number, write: () => string): string {
    let known = this.texts.get(key);
    if (!known) this.texts.set(key, (known = []));
    // Column names from Object.keys are internalised strings: comparing them compares pointers.
    let entry = known.find((e) => e.columns.length === columns.length && e.columns.every((c, i) => c === columns[i]));
    if (!entry) known.push((entry = { columns, texts: [] }));
    return (entry.texts[variant] ??= write());
  }

  abstract get<T>(sql: string, ...params: Params): Promise<T | undefined>;

  abstract all<T>(sql: string, ...params: Params): Promise<T[]>;

  abstract run(sql: string, ...params: Params): Promise<RunResult>;

  /** `run` of one statement once per parameter list, in order: the changes of each run. */
  async runEach(sql: string, paramLists: readonly Params[]): Promise<number[]> {
    const changes: number[] = [];
    for (const params of paramLists) changes.push((await this.run(sql, ...params)).changes);
    return changes;
  }

  /** `all` with every integer, aggregates included, read as a bigint: quantities reach 10^18 micro-units. */
  abstract allExact<T>(sql: string, ...params: Params): Promise<T[]>;

  /** The first column of every row, without an object per row: for long lists of one value. */
  async column<T>(sql: string, ...params: Params): Promise<T[]> {
    return (await this.all<Record<string, T>>(sql, ...params)).map((r) => Object.values(r)[0] as T);
  }

  /** `get` with integers as bigints, as `allExact`. */
  async getExact<T>(sql: string, ...params: Params): Promise<T | undefined> {
    return (await this.allExact<T>(sql, ...params))[0];
  }

  /** INSERT of one row given as column → value (the statement is cached per table and column list). */
  insert(table: string, row: Record<string, unknown>): Promise<RunResult> {
    const columns = Object.keys(row);
    const text = this.textOf(`insert ${table}`, columns, 0, () => `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    return this.run(text, ...Object.values(row));
  }

  /**
   * INSERT of many rows given as column → value, all with the same columns, in statements of
   * `chunkSize` rows (cached per table, columns and row count); `suffix` follows the VALUES (e.g.
   * `ON CONFLICT DO NOTHING`). Returns the rows inserted.
   */
  async insertMany(table: string, rows: ReadonlyArray<Record<string, unknown>>, suffix = ''): Promise<number> {
    if (rows.length === 0) return 0;
    const columns = Object.keys(rows[0]!);
    let changes = 0;
    for (let i = 0; i < rows.length; ) {
      const size = this.chunkSize(rows.length - i, columns.length);
      const text = this.textOf(`insertMany ${table} ${suffix}`, columns, size, () => {
        const tuple = `(${columns.map(() => '?').join(', ')})`;
        return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: size }, () => tuple).join(', ')} ${suffix}`;
      });
      const params: unknown[] = [];
      for (const end = i + size; i < end; i++) {
        const row = rows[i]!;
        for (const c of columns) params.push(row[c]);
      }
      changes += (await this.run(text, ...params)).changes;
    }
    return changes;
  }

  /** Rows in the next statement of `insertMany`, with `left` rows to go: at most ROWS_PER_INSERT. */
  protected chunkSize(left: number, _columns: number): number {
    return Math.min(left, ROWS_PER_INSERT);
  }

  /** UPDATE of the given columns of one organisation's row by id. */
  update(table: string, org: string, id: string, row: Record<string, unknown>): Promise<RunResult> {
    const columns = Object.keys(row);
    const text = this.textOf(`update ${table}`, columns, 0, () => `UPDATE ${table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE organisation_id = ? AND id = ?`);
    return this.run(text, ...Object.values(row), org, id);
  }

  /**
   * One page of `SELECT <columns> <from>` ordered by (created_at, id), with the total count.
   * `from` is the FROM and WHERE part; its table must expose created_at and id (qualify with `alias`).
   * The LIMIT is written into the statement (one text per limit in use, at most 101) and the OFFSET
   * only past the first page: PostgreSQL planned `LIMIT $n OFFSET $m` anew on every call (a custom
   * plan, 0.3-0.4 ms of a page of 30), where a statement whose only parameters are the filter's keeps
   * its generic plan.
   */
  async page<R>(from: string, params: Params, req: PageRequest, columns = '*', alias = ''): Promise<{ rows: R[]; total: number }> {
    if (!Number.isSafeInteger(req.limit) || req.limit < 0 || !Number.isSafeInteger(req.page) || req.page < 1) {
      throw new Error(`page: limit ${req.limit} and page ${req.page} must be integers (limit >= 0, page >= 1)`);
    }
    const counted = this.get<{ n: number }>(`SELECT count(*) AS n ${from}`, ...params);
    const dir = req.descending ? 'DESC' : 'ASC';
    const p = alias ? `${alias}.` : '';
    const select = `SELECT ${columns} ${from} ORDER BY ${p}created_at ${dir}, ${p}id ${dir} LIMIT ${req.limit}`;
    const offset = (req.page - 1) * req.limit;
    const rows = req.limit === 0 ? Promise.resolve([]) : offset === 0 ? this.all<R>(select, ...params) : this.all<R>(`${select} OFFSET ?`, ...params, offset);
    const [count, page] = await Promise.all([counted, rows]);
    return { rows: page, total: (count as { n: number }).n };
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err.code === 'SQLITE_CONSTRAINT_UNIQUE' || err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || err.code === '23505')
  );
}

export const bool = (v: number): boolean => v === 1;
export const int = (v: boolean): number => (v ? 1 : 0);
