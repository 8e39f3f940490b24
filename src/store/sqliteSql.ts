import type Database from 'better-sqlite3';
import { Sql, type Params, type RunResult } from './sql.js';

/** The SQLite engine's statements: better-sqlite3 runs each synchronously; prepared once per text. */
export class SqliteSql extends Sql {
  readonly dialect = 'sqlite';
  private readonly cache = new Map<string, Database.Statement>();
  private readonly exactCache = new Map<string, Database.Statement>();
  private readonly columnCache = new Map<string, Database.Statement>();

  constructor(readonly db: Database.Database) {
    super();
  }

  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  async get<T>(sql: string, ...params: Params): Promise<T | undefined> {
    return this.stmt(sql).get(...params) as T | undefined;
  }

  async all<T>(sql: string, ...params: Params): Promise<T[]> {
    return this.stmt(sql).all(...params) as T[];
  }

  async run(sql: string, ...params: Params): Promise<RunResult> {
    return { changes: this.stmt(sql).run(...params).changes };
  }

  override async column<T>(sql: string, ...params: Params): Promise<T[]> {
    let s = this.columnCache.get(sql);
    if (!s) {
      s = this.db.prepare(sql).pluck();
      this.columnCache.set(sql, s);
    }
    return s.all(...params) as T[];
  }

  async allExact<T>(sql: string, ...params: Params): Promise<T[]> {
    let s = this.exactCache.get(sql);
    if (!s) {
      s = this.db.prepare(sql).safeIntegers(true);
      this.exactCache.set(sql, s);
    }
    return s.all(...params) as T[];
  }
}
