import type Database from 'better-sqlite3';
import type { PageRequest } from '../schemas/common.js';

type Params = unknown[];

/** Rows per multi-row INSERT: few statement variants to cache, far below SQLite's limit of bound values. */
const ROWS_PER_INSERT = 32;

/** Prepared statements cached by their text; the only door to the connection for repositories. */
export class Sql {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(readonly db: Database.Database) {}

  stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  get<T>(sql: string, ...params: Params): T | undefined {
    return this.stmt(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, ...params: Params): T[] {
    return this.stmt(sql).all(...params) as T[];
  }

  run(sql: string, ...params: Params): Database.RunResult {
    return this.stmt(sql).run(...params);
  }

  /** INSERT of one row given as column → value (the statement is cached per table and column list). */
  insert(table: string, row: Record<string, unknown>): Database.RunResult {
    const columns = Object.keys(row);
    return this.run(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      ...Object.values(row),
    );
  }

  /**
   * INSERT of many rows given as column → value, all with the same columns, in statements of at most
   * ROWS_PER_INSERT rows (cached per table, columns and row count); `suffix` follows the VALUES (e.g.
   * `ON CONFLICT DO NOTHING`). Returns the rows inserted.
   */
  insertMany(table: string, rows: ReadonlyArray<Record<string, unknown>>, suffix = ''): number {
    if (rows.length === 0) return 0;
    const columns = Object.keys(rows[0]!);
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    let changes = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + ROWS_PER_INSERT);
      changes += this.run(
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')} ${suffix}`,
        ...chunk.flatMap((r) => columns.map((c) => r[c])),
      ).changes;
    }
    return changes;
  }

  /** UPDATE of the given columns of one organisation's row by id. */
  update(table: string, org: string, id: string, row: Record<string, unknown>): Database.RunResult {
    const columns = Object.keys(row);
    return this.run(
      `UPDATE ${table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE organisation_id = ? AND id = ?`,
      ...Object.values(row),
      org,
      id,
    );
  }

  /**
   * One page of `SELECT <columns> <from>` ordered by (created_at, id), with the total count.
   * `from` is the FROM and WHERE part; its table must expose created_at and id (qualify with `alias`).
   */
  page<R>(from: string, params: Params, req: PageRequest, columns = '*', alias = ''): { rows: R[]; total: number } {
    const total = (this.get<{ n: number }>(`SELECT count(*) AS n ${from}`, ...params) as { n: number }).n;
    if (req.limit === 0) return { rows: [], total };
    const dir = req.descending ? 'DESC' : 'ASC';
    const p = alias ? `${alias}.` : '';
    const rows = this.all<R>(
      `SELECT ${columns} ${from} ORDER BY ${p}created_at ${dir}, ${p}id ${dir} LIMIT ? OFFSET ?`,
      ...params,
      req.limit,
      (req.page - 1) * req.limit,
    );
    return { rows, total };
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err.code === 'SQLITE_CONSTRAINT_UNIQUE' || err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
  );
}

export const bool = (v: number): boolean => v === 1;
export const int = (v: boolean): number => (v ? 1 : 0);
