import pg from 'pg';
import { Sql, type Params, type RunResult } from '../sql.js';

/** A statement as PostgreSQL receives it: `$n` placeholders, the names of `@name` ones in order, its prepared name. */
interface Translated {
  text: string;
  /** For `@name` placeholders: the parameter names in `$n` order (positional `?` statements: undefined). */
  names: string[] | undefined;
  name: string;
}

const translations = new Map<string, Translated>();

/** `AS customerNumber` → `AS "customerNumber"`: PostgreSQL folds unquoted names to lower case, SQLite keeps them. */
const CAMEL_ALIAS = /\bAS\s+([a-z][a-z0-9]*[A-Z][A-Za-z0-9]*)\b/g;

/** `AND +organisation_id = ?`: SQLite's way to keep its planner off an index; PostgreSQL has no unary + on text. */
const PLANNER_HINT = /(?<=[\s(])\+([a-z_][a-z0-9_.]*)/g;

/**
 * `x IN (SELECT value FROM json_each(?))`: PostgreSQL estimates 100 rows for a set-returning function
 * and plans a hash semi-join over a sequential scan of the table (4 ms over 10,000 items for a page of
 * 30); `= ANY(ARRAY(…))` evaluates the list once and reads the index. `NOT IN` is left as it is.
 */
const IN_JSON_LIST = /(?<!\bNOT\s+)\bIN\s*\(\s*SELECT value FROM json_each\(\?\)\s*\)/g;

/**
 * SQLite's SQL as the repositories write it, in PostgreSQL's: `?` becomes `$1`, `$2`…; `@name` becomes
 * one `$n` per distinct name; camelCase aliases are quoted; planner hints (`+column`) are dropped; `json_each(?)` (a JSON array of values
 * bound as text) becomes `json_array_elements_text(?::json)`, whose column is also `value`, and
 * `IN (SELECT value FROM json_each(?))` becomes `= ANY(ARRAY(SELECT json_array_elements_text(?::json)))`. Quoted
 * strings and identifiers are left alone. Anything else must already be SQL both engines speak.
 */
export function translate(sql: string): Translated {
  const cached = translations.get(sql);
  if (cached) return cached;
  const source = sql
    .replace(IN_JSON_LIST, '= ANY(ARRAY(SELECT json_array_elements_text(?::json)))')
    .replace(/json_each\(\?\)/g, 'json_array_elements_text(?::json)');
  let text = '';
  let n = 0;
  let names: string[] | undefined;
  let plain = '';
  const flush = () => {
    text += plain.replace(CAMEL_ALIAS, 'AS "$1"').replace(PLANNER_HINT, '$1');
    plain = '';
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "'" || c === '"') {
      flush();
      const end = source.indexOf(c, i + 1);
      const stop = end === -1 ? source.length - 1 : end;
      text += source.slice(i, stop + 1);
      i = stop;
    } else if (c === '?') {
      plain += `$${++n}`;
    } else if (c === '@' && /[a-z_]/i.test(source[i + 1] ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i + 1))![0];
      names ??= [];
      let index = names.indexOf(name);
      if (index === -1) index = names.push(name) - 1;
      plain += `$${index + 1}`;
      i += name.length;
    } else {
      plain += c;
    }
  }
  flush();
  const translated: Translated = { text, names, name: `s${translations.size + 1}` };
  translations.set(sql, translated);
  return translated;
}

/** Parameters as node-postgres sends them: bigints as decimal text, `@name` objects in `$n` order. */
function values(t: Translated, params: Params): unknown[] {
  const list = t.names ? t.names.map((name) => (params[0] as Record<string, unknown>)[name]) : params;
  return list.map((v) => (typeof v === 'bigint' ? v.toString() : v === undefined ? null : v));
}

const BOOL = 16;
const INT8 = 20;
const NUMERIC = 1700;

/** A boolean (`EXISTS (…) AS x`) as SQLite answers it: 1 or 0. */
const bit = (v: string) => (v === 't' ? 1 : 0);

/** 64-bit integers and numerics (sums, counts) as numbers, like SQLite's default reads; booleans as 1 or 0. */
const numberTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === BOOL) return bit;
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** The same as bigints, for `allExact`. */
const bigintTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === BOOL) return bit;
    if (oid === INT8 || oid === NUMERIC) return (v: string) => (/^-?\d+$/.test(v) ? BigInt(v) : Number(v));
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Rows per statement of a multi-row INSERT: powers of two up to this many (within the protocol's 65,535 bound values). */
const MAX_ROWS_PER_INSERT = 512;
const MAX_BOUND_VALUES = 65_535;
/** Below this many rows a chunk is one statement of its exact size (as the shared `insertMany` does). */
const SMALL_INSERT = 32;

/** The PostgreSQL engine's statements on one connection (a unit's client), prepared once per connection and text. */
export class PgSql extends Sql {
  readonly dialect = 'postgres';

  constructor(private readonly client: pg.ClientBase | pg.Pool) {
    super();
  }

  private async query<T>(sql: string, params: Params, exact: boolean): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
    const t = translate(sql);
    return this.client.query<T & pg.QueryResultRow>({ text: t.text, name: t.name, values: values(t, params), types: exact ? bigintTypes : numberTypes });
  }

  async get<T>(sql: string, ...params: Params): Promise<T | undefined> {
    return (await this.query<T>(sql, params, false)).rows[0];
  }

  async all<T>(sql: string, ...params: Params): Promise<T[]> {
    return (await this.query<T>(sql, params, false)).rows;
  }

  async run(sql: string, ...params: Params): Promise<RunResult> {
    return { changes: (await this.query(sql, params, false)).rowCount ?? 0 };
  }

  async allExact<T>(sql: string, ...params: Params): Promise<T[]> {
    return (await this.query<T>(sql, params, true)).rows;
  }

  /**
   * Larger INSERTs than the shared 32 rows: every statement is a round trip here, and 1,000 rows in
   * one statement cost PostgreSQL about a third less than in 32-row ones (docs/performance.md,
   * "PostgreSQL"). A batch of 1,000 measurement values: 512 + 256 + 128 + 64 + 32 + 8 rows, six
   * statements instead of 32. Chunks are powers of two from 32 rows up, then the rest below 32 in
   * one, so that each table and column list has at most 36 statement texts to prepare.
   */
  protected override chunkSize(left: number, columns: number): number {
    let size = MAX_ROWS_PER_INSERT;
    while (size > 1 && size * columns > MAX_BOUND_VALUES) size /= 2;
    while (size > left && size > SMALL_INSERT) size /= 2;
    return Math.min(size, left);
  }
}
