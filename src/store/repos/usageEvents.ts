import type { UsageMetric } from '../../schemas/catalogue.js';
import type {
  EventScope,
  EventStats,
  MeteringItem,
  Reservation,
  RollupMark,
  UsageEventFilter,
  UsageEventRecord,
  UsageEventRepo,
} from '../ports/usageEvents.js';
import { type BucketHashes, ClaimFilter, type ClaimFilterCache, HashList, hashId, type IdHash, type Segment } from '../claimFilter.js';
import type { Sql } from '../sql.js';

interface Row {
  seq: number;
  event_id: string;
  target: number;
  event_name: string;
  ts: number;
  subscription_id: string;
  customer_id: string | null;
  properties: string;
  unmatched: number;
  late: number;
  received_at: number;
}

const toRecord = (r: Row): UsageEventRecord => ({
  seq: r.seq,
  id: r.event_id,
  target: r.target,
  eventName: r.event_name,
  ts: r.ts,
  subscriptionId: r.subscription_id === '' ? null : r.subscription_id,
  customerId: r.customer_id,
  properties: r.properties,
  unmatched: r.unmatched === 1,
  late: r.late === 1,
  receivedAt: r.received_at,
});

/** Rows per multi-row INSERT on PostgreSQL (13 values each, far below its limit of bound values). */
const ROWS_PER_INSERT = 100;
const INSERT_HEAD = `INSERT INTO usage_events (subscription_id, event_name, ts, seq, organisation_id, event_id, target, customer_id, properties, unmatched, late, received_at, claim_bucket) VALUES `;

/**
 * How each engine reads the JSONB properties. Names are checked against PROPERTY_NAME_RE, so quoting
 * them is safe. `micros` is a numeric property in integer micro-units (rounded to 6 decimals), so sums
 * and maxima are exact integers. A string counts as a number only when it is one as ingestion takes
 * it (no exponent, no spaces), any other string as 0, alike on both engines.
 */
interface PropertySql {
  /** The stored row's columns, properties as JSON text. */
  columns: string;
  /** One row's placeholders, properties bound as JSON text. */
  tuple: string;
  /** The organisation in a scope's WHERE. */
  organisation: string;
  prop(name: string): string;
  /** A property as text, as filters and unique_count compare it: 1 and "1" are the same value on both engines. */
  text(name: string): string;
  micros(name: string): string;
  /**
   * The columns `whole` and `part` of one event's value in micro-units, exact: SQLite reads an
   * integer as it is (whole units) and rounds others to micro-units; PostgreSQL's numeric is exact.
   */
  exact(name: string): { whole: string; part: string };
  /** How a statement reads the events along their arrival order. */
  byArrival: string;
}

/**
 * Whether a SQLite text `v` is a number as ingestion takes one (NUMBER_TEXT in domain/usageEvents.ts:
 * digits with an optional leading minus and decimal point), as PostgreSQL's `pgNumber` matches it.
 * SQLite's arithmetic alone would read "1e3" as 1000, " 12 " as 12 and "12abc" as 12.
 */
const sqliteDecimal = (v: string) =>
  `(${v} GLOB '[0-9]*' OR ${v} GLOB '-[0-9]*') AND NOT substr(${v}, 2) GLOB '*[^0-9.]*' AND NOT ${v} GLOB '*.*.*' AND NOT ${v} GLOB '*.'`;

/**
 * A SQLite property `v` in micro-units, by its type: an integer (or a string of one) is multiplied as
 * one, since round() would go through a double, which past 2^53 micro-units (about 9,000,000,000
 * units) is no longer exact; a real (or a string of one) is rounded; any other string is 0, as on
 * PostgreSQL. Ingestion refuses values of 10^12 or more; the CASTs keep one stored before within 64
 * bits, as SQLite saturates a double it casts. `text` is the micro-units of a string.
 */
function sqliteMicros(v: string): { integer: string; real: string; text: string } {
  const integer = `CAST(${v} * 1000000 AS INTEGER)`;
  const real = `CAST(round(${v} * 1000000) AS INTEGER)`;
  return { integer, real, text: `CASE WHEN NOT (${sqliteDecimal(v)}) THEN 0 WHEN ${v} GLOB '*.*' THEN ${real} ELSE ${integer} END` };
}

const SQLITE: PropertySql = {
  columns: 'seq, event_id, target, event_name, ts, subscription_id, customer_id, json(properties) AS properties, unmatched, late, received_at',
  tuple: '(?, ?, ?, ?, ?, ?, ?, ?, jsonb(?), ?, ?, ?, ?)',
  // `+` keeps the planner on the clustered key's range (the claim index also starts with the organisation).
  organisation: '+organisation_id',
  prop: (name) => `properties ->> '$."${name}"'`,
  text: (name) => `CAST(properties ->> '$."${name}"' AS TEXT)`,
  micros: (name) => {
    const v = `properties ->> '$."${name}"'`;
    const m = sqliteMicros(v);
    return `CASE typeof(${v}) WHEN 'integer' THEN ${m.integer} WHEN 'real' THEN ${m.real} WHEN 'text' THEN ${m.text} END`;
  },
  exact: (name) => {
    const v = `properties ->> '$."${name}"'`;
    const m = sqliteMicros(v);
    return {
      whole: `CASE typeof(${v}) WHEN 'integer' THEN ${v} WHEN 'real' THEN ${m.real} / 1000000 WHEN 'text' THEN (${m.text}) / 1000000 END`,
      part: `CASE typeof(${v}) WHEN 'integer' THEN 0 WHEN 'real' THEN ${m.real} % 1000000 WHEN 'text' THEN (${m.text}) % 1000000 END`,
    };
  },
  byArrival: 'INDEXED BY usage_events_arrival',
};

/**
 * A property as SQLite's JSON text: a number's digits, a string in its quotes. Its plain sum is an
 * integer only when every value is a JSON integer (a quoted string makes it a real); so no string
 * that SQLite's arithmetic reads as an integer (" 12 ") passes that way.
 */
const sqliteJson = (name: string) => `properties -> '$."${name}"'`;

/** One event's row on SQLite, where a prepared single-row INSERT per event is the fastest. */
const INSERT_ONE = `${INSERT_HEAD}${SQLITE.tuple} ON CONFLICT DO NOTHING`;

/** A JSON number, or a string that is one as ingestion takes it (no exponent, no spaces); other strings count as 0. */
const pgNumber = (name: string) =>
  `CASE jsonb_typeof(properties -> '${name}') WHEN 'number' THEN (properties ->> '${name}')::numeric
   WHEN 'string' THEN CASE WHEN properties ->> '${name}' ~ '^-?[0-9]+([.][0-9]+)?$'
     THEN (properties ->> '${name}')::numeric ELSE 0 END END`;

const POSTGRES: PropertySql = {
  columns: 'seq, event_id, target, event_name, ts, subscription_id, customer_id, properties::text AS properties, unmatched, late, received_at',
  tuple: '(?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?)',
  organisation: 'organisation_id',
  prop: (name) => `properties ->> '${name}'`,
  text: (name) => `properties ->> '${name}'`,
  micros: (name) => `round(${pgNumber(name)} * 1000000)`,
  exact: (name) => ({ whole: `trunc(round(${pgNumber(name)} * 1000000) / 1000000)`, part: `round(${pgNumber(name)} * 1000000) % 1000000` }),
  byArrival: '',
};

/** An hour in milliseconds: the rollups' bucket. */
const HOUR_MS = 3_600_000;

interface StatsRow {
  events: bigint;
  late: bigint;
  valued: bigint;
  whole: bigint;
  part: bigint;
  max: bigint | null;
}

const toStats = (r: StatsRow): EventStats => ({
  events: BigInt(r.events),
  late: BigInt(r.late),
  valued: BigInt(r.valued),
  sum: BigInt(r.whole) * 1_000_000n + BigInt(r.part),
  max: r.max === null ? null : BigInt(r.max),
});

/**
 * A value that left 64 bits: SQLite's sum() of integers stops rather than lose precision, a STRICT
 * column refuses the REAL that `+` made of it, PostgreSQL's bigint is out of range.
 */
const isOverflow = (err: unknown) =>
  err instanceof Error &&
  (err.message === 'integer overflow' || ('code' in err && (err.code === 'SQLITE_CONSTRAINT_DATATYPE' || err.code === '22003')));

/** Whether some segment's filter may hold the id (a loop: this runs for every event ingested). */
function mayBeClaimed(segments: readonly Segment[], h: IdHash): boolean {
  for (let i = 0; i < segments.length; i++) if (segments[i]!.filter.mayHave(h)) return true;
  return false;
}

export class SqlUsageEventRepo implements UsageEventRepo {
  private readonly p: PropertySql;

  constructor(
    private readonly sql: Sql,
    private readonly filters: ClaimFilterCache,
  ) {
    this.p = sql.dialect === 'postgres' ? POSTGRES : SQLITE;
  }

  async reserveSeq(org: string, count: number): Promise<Reservation> {
    const r = (await this.sql.get<{ last: number; bucket: number; from: number }>(
      `INSERT INTO usage_event_sequence (organisation_id, last) VALUES (?, ?) ON CONFLICT (organisation_id) DO UPDATE SET last = usage_event_sequence.last + excluded.last
       RETURNING last, claim_bucket AS bucket, bucket_from AS "from"`,
      org,
      count,
    )) as { last: number; bucket: number; from: number };
    this.filters.reserved(org, r.bucket, count);
    return { first: r.last - count + 1, last: r.last, bucket: r.bucket, bucketFrom: r.from };
  }

  async insert(org: string, rows: readonly UsageEventRecord[], reserved: Reservation): Promise<Set<string>> {
    const segments = await this.filters.below(org, reserved.bucket, (bucket, segment) => this.stored(org, bucket, segment));
    const fresh: UsageEventRecord[] = [];
    /** The hashes of the fresh rows' ids (targets 0), in the same order. */
    const freshHashes: Array<IdHash | undefined> = [];
    for (const r of rows) {
      let h: IdHash | undefined;
      if (r.target === 0) {
        h = hashId(r.id);
        if (mayBeClaimed(segments, h) && (await this.claimedBefore(org, segments, h, r.id))) continue;
      }
      fresh.push(r);
      freshHashes.push(h);
    }
    const claimed = new Set<string>();
    /** The hashes of the ids claimed. */
    const noted: IdHash[] = [];
    const values = (r: UsageEventRecord) => [
      r.subscriptionId ?? '',
      r.eventName,
      r.ts,
      r.seq,
      org,
      r.id,
      r.target,
      r.customerId,
      r.properties,
      r.unmatched ? 1 : 0,
      r.late ? 1 : 0,
      r.receivedAt,
      reserved.bucket,
    ];
    if (this.sql.dialect === 'sqlite') {
      // In-process, one prepared single-row INSERT per event, run synchronously, costs less than
      // multi-row INSERTs with RETURNING (15 % less, measured on batches of 1,000); PostgreSQL saves
      // round trips with the latter.
      const changes = await this.sql.runEach(INSERT_ONE, fresh.map(values));
      for (let i = 0; i < fresh.length; i++) {
        const r = fresh[i]!;
        if (changes[i] === 1 && r.target === 0) {
          claimed.add(r.id);
          noted.push(freshHashes[i]!);
        }
      }
    } else {
      for (let i = 0; i < fresh.length; i += ROWS_PER_INSERT) {
        const chunk = fresh.slice(i, i + ROWS_PER_INSERT);
        const inserted = await this.sql.all<{ event_id: string; target: number }>(
          this.sql.textOf('usage events insert', [], chunk.length, () => `${INSERT_HEAD}${chunk.map(() => this.p.tuple).join(', ')} ON CONFLICT DO NOTHING RETURNING event_id, target`),
          ...chunk.flatMap(values),
        );
        for (const r of inserted) {
          if (r.target !== 0) continue;
          claimed.add(r.event_id);
          noted.push(hashId(r.event_id));
        }
      }
    }
    if (!claimed.size) return claimed;
    this.filters.claimed(org, reserved.bucket, noted);
    if (reserved.last - reserved.bucketFrom + 1 >= this.filters.sizes.bucketSpan) await this.closeBucket(org, reserved.bucket, reserved.bucketFrom, reserved.last, segments);
    return claimed;
  }

  /** Whether a closed bucket holds the id (hashed `h`): its segment's filter says "maybe" and a lookup finds it. */
  private async claimedBefore(org: string, segments: readonly Segment[], h: IdHash, id: string): Promise<boolean> {
    for (const s of segments) {
      if (!s.filter.mayHave(h)) continue;
      for (let bucket = s.firstBucket; bucket <= s.lastBucket; bucket++) {
        if (await this.sql.get('SELECT 1 AS one FROM usage_events WHERE organisation_id = ? AND claim_bucket = ? AND event_id = ? AND target = 0', org, bucket, id)) return true;
      }
    }
    return false;
  }

  /** The organisation's sealed segments from `segment` on, and its stored buckets from `bucket` on, in order. */
  private async stored(org: string, bucket: number, segment: number): Promise<{ sealed: Segment[]; buckets: BucketHashes[] }> {
    const sealed = (await this.sql.all<{ segment: number; first_bucket: number; last_bucket: number; claims: number; capacity: number; filter: Uint8Array }>(
      'SELECT segment, first_bucket, last_bucket, claims, capacity, filter FROM usage_event_claim_filters WHERE organisation_id = ? AND segment >= ? ORDER BY segment',
      org,
      segment,
    )).map((r) => ({ segment: r.segment, firstBucket: r.first_bucket, lastBucket: r.last_bucket, claims: r.claims, capacity: r.capacity, filter: ClaimFilter.of(r.filter), sealed: true }));
    const buckets = await this.sql.all<BucketHashes>(
      'SELECT bucket, segment, capacity, hashes FROM usage_event_claim_hashes WHERE organisation_id = ? AND bucket >= ? ORDER BY bucket',
      org,
      bucket,
    );
    return { sealed, buckets };
  }

  /**
   * Closes the open bucket: its ids' hashes are stored for the open segment while it has room;
   * otherwise that segment is sealed (its filter, as this store added it up, stored once and its
   * buckets' hashes dropped) and the bucket opens the next one. The arrival numbers after `last`
   * open the next bucket. Nothing in the cache changes: the next unit reads what this one stored.
   */
  private async closeBucket(org: string, bucket: number, from: number, last: number, segments: readonly Segment[]): Promise<void> {
    const hashes = await this.bucketHashes(org, bucket, last - from + 1);
    const latest = segments[segments.length - 1];
    const open = latest && !latest.sealed ? latest : undefined;
    let segment: { segment: number; capacity: number };
    if (open && open.claims + hashes.length <= open.capacity) segment = open;
    else {
      if (open) {
        await this.sql.run(
          'INSERT INTO usage_event_claim_filters (organisation_id, segment, first_bucket, last_bucket, claims, capacity, filter) VALUES (?, ?, ?, ?, ?, ?, ?)',
          org,
          open.segment,
          open.firstBucket,
          open.lastBucket,
          open.claims,
          open.capacity,
          open.filter.bytes(),
        );
        await this.sql.run('DELETE FROM usage_event_claim_hashes WHERE organisation_id = ? AND segment = ?', org, open.segment);
      }
      segment = { segment: (latest?.segment ?? -1) + 1, capacity: this.filters.capacityAfter(segments.reduce((n, s) => n + s.claims, 0), hashes.length) };
    }
    await this.sql.run(
      'INSERT INTO usage_event_claim_hashes (organisation_id, bucket, segment, capacity, hashes) VALUES (?, ?, ?, ?, ?)',
      org,
      bucket,
      segment.segment,
      segment.capacity,
      hashes.bytes(),
    );
    await this.sql.run('UPDATE usage_event_sequence SET claim_bucket = ?, bucket_from = ? WHERE organisation_id = ?', bucket + 1, last + 1, org);
  }

  /**
   * The hashes of the ids of the bucket (of `numbers` arrival numbers): those this store noted as it
   * claimed them when its units took all of the bucket's numbers, else its ids read and hashed.
   */
  private async bucketHashes(org: string, bucket: number, numbers: number): Promise<HashList> {
    const noted = this.filters.pendingOf(org, bucket, numbers);
    if (noted) return noted;
    return HashList.of((await this.sql.column<string>('SELECT event_id FROM usage_events WHERE organisation_id = ? AND claim_bucket = ? AND target = 0', org, bucket)).map(hashId));
  }

  async activeSubscriptionsOf(org: string, customerId: string): Promise<string[]> {
    return (await this.sql
      .all<{ id: string }>(`SELECT id FROM subscriptions WHERE organisation_id = ? AND customer_id = ? AND status = 'active' ORDER BY created_at, id`, org, customerId))
      .map((r) => r.id);
  }

  async meteringItems(org: string, subscriptionId: string): Promise<MeteringItem[]> {
    return (await this.sql
      .all<{ name: string; usage_metric: string; start_date: string | null; billing_end: string | null; last_billed_to: string | null }>(
        `SELECT p.name, p.usage_metric, i.start_date, i.billing_end, i.last_billed_to
         FROM subscription_items i JOIN products p ON p.id = i.product_id
         WHERE i.organisation_id = ? AND i.subscription_id = ? AND p.usage_metric IS NOT NULL`,
        org,
        subscriptionId,
      ))
      .map((r) => ({
        product: r.name,
        metric: JSON.parse(r.usage_metric) as UsageMetric,
        startDate: r.start_date,
        billingEnd: r.billing_end,
        lastBilledTo: r.last_billed_to,
      }));
  }

  /**
   * The WHERE clause of a scope with the metric's filters, and its parameters; with `afterSeq`, of
   * the events that arrived after it, read along the arrival index (a short tail, not the scope).
   */
  private where(org: string, scope: EventScope, metric: UsageMetric, afterSeq?: number): { text: string; params: unknown[] } {
    let text: string;
    let params: unknown[];
    if (afterSeq === undefined) {
      text = `WHERE subscription_id = ? AND event_name = ? AND ts >= ? AND ts < ? AND ${this.p.organisation} = ?`;
      params = [scope.subscriptionId, scope.eventName, scope.from, scope.to, org];
    } else {
      text = `${this.p.byArrival} WHERE organisation_id = ? AND seq > ? AND subscription_id = ? AND event_name = ? AND ts >= ? AND ts < ?`;
      params = [org, afterSeq, scope.subscriptionId, scope.eventName, scope.from, scope.to];
    }
    if (scope.onTime) text += ' AND late = 0';
    return this.filtered(text, params, metric);
  }

  private filtered(text: string, params: unknown[], metric: UsageMetric): { text: string; params: unknown[] } {
    for (const f of metric.filters) {
      text += ` AND ${this.p.text(f.property)} IN (${f.values.map(() => '?').join(', ')})`;
      for (const v of f.values) params.push(String(v));
    }
    return { text, params };
  }

  /** The aggregates of EventStats over a metric's events, SQLite's sums as whole units and millionths. */
  private statsColumns(metric: UsageMetric): string {
    if (metric.property === null) return `count(*) AS events, coalesce(sum(late), 0) AS late, 0 AS valued, 0 AS whole, 0 AS part, NULL AS max`;
    const { whole, part } = this.p.exact(metric.property);
    return `count(*) AS events, coalesce(sum(late), 0) AS late, count(${this.p.prop(metric.property)}) AS valued,
      coalesce(sum(${whole}), 0) AS whole, coalesce(sum(${part}), 0) AS part, max(${this.p.micros(metric.property)}) AS max`;
  }

  async stats(org: string, scope: EventScope, metric: UsageMetric, afterSeq?: number): Promise<EventStats | null> {
    const { text, params } = this.where(org, scope, metric, afterSeq);
    try {
      return toStats((await this.sql.getExact(`SELECT ${this.statsColumns(metric)} FROM usage_events ${text}`, ...params)) as StatsRow);
    } catch (err) {
      if (isOverflow(err)) return null;
      throw err;
    }
  }

  async lastSeq(org: string): Promise<number> {
    return (await this.sql.get<{ last: number }>('SELECT last FROM usage_event_sequence WHERE organisation_id = ?', org))?.last ?? 0;
  }

  async productMetrics(): Promise<Array<{ org: string; metric: UsageMetric }>> {
    return (await this.sql
      .all<{ organisation_id: string; usage_metric: string }>('SELECT DISTINCT organisation_id, usage_metric FROM products WHERE usage_metric IS NOT NULL ORDER BY organisation_id, usage_metric'))
      .map((r) => ({ org: r.organisation_id, metric: JSON.parse(r.usage_metric) as UsageMetric }));
  }

  async rollupMark(org: string, key: string): Promise<RollupMark | undefined> {
    return this.sql.get<RollupMark>('SELECT id, upto FROM usage_rollup_marks WHERE organisation_id = ? AND metric = ?', org, key);
  }

  async openRollup(org: string, key: string): Promise<RollupMark> {
    await this.sql.run('INSERT INTO usage_rollup_marks (organisation_id, metric, upto) VALUES (?, ?, 0) ON CONFLICT (organisation_id, metric) DO NOTHING', org, key);
    return (await this.rollupMark(org, key)) as RollupMark;
  }

  async rollupMarks(): Promise<Array<RollupMark & { org: string; key: string }>> {
    return this.sql.all<RollupMark & { org: string; key: string }>('SELECT id, upto, organisation_id AS org, metric AS key FROM usage_rollup_marks ORDER BY id');
  }

  async dropRollup(markId: number): Promise<void> {
    await this.sql.run('DELETE FROM usage_rollup_marks WHERE id = ?', markId);
  }

  async abandonRollup(markId: number): Promise<void> {
    await this.sql.run('UPDATE usage_rollup_marks SET upto = NULL WHERE id = ?', markId);
  }

  async rollUp(org: string, mark: RollupMark & { upto: number }, metric: UsageMetric, toSeq: number): Promise<'rolled' | 'moved' | 'overflow'> {
    const moved = await this.sql.run('UPDATE usage_rollup_marks SET upto = ? WHERE id = ? AND upto = ?', toSeq, mark.id, mark.upto);
    if (moved.changes !== 1) return 'moved';
    const { text, params } = this.filtered(
      `${this.p.byArrival} WHERE organisation_id = ? AND seq > ? AND seq <= ? AND event_name = ? AND subscription_id <> '' AND ts >= 0`,
      [org, mark.upto, toSeq, metric.eventName],
      metric,
    );
    try {
      await this.sql.run(
        `INSERT INTO usage_rollups (organisation_id, mark_id, subscription_id, hour, events, late, valued, whole, part, max)
         SELECT organisation_id, CAST(? AS BIGINT), subscription_id, ts - ts % ${HOUR_MS} AS hour, ${this.statsColumns(metric)}
         FROM usage_events ${text}
         GROUP BY organisation_id, subscription_id, hour
         ON CONFLICT (mark_id, subscription_id, hour) DO UPDATE SET
           events = usage_rollups.events + excluded.events, late = usage_rollups.late + excluded.late,
           valued = usage_rollups.valued + excluded.valued, whole = usage_rollups.whole + excluded.whole,
           part = usage_rollups.part + excluded.part,
           max = CASE WHEN usage_rollups.max IS NULL OR excluded.max > usage_rollups.max THEN excluded.max ELSE usage_rollups.max END`,
        mark.id,
        ...params,
      );
    } catch (err) {
      if (isOverflow(err)) return 'overflow';
      throw err;
    }
    return 'rolled';
  }

  async rolledUp(org: string, markId: number, subscriptionId: string, fromHour: number, toHour: number): Promise<EventStats | null> {
    try {
      const row = await this.sql.getExact(
        `SELECT coalesce(sum(events), 0) AS events, coalesce(sum(late), 0) AS late, coalesce(sum(valued), 0) AS valued,
           coalesce(sum(whole), 0) AS whole, coalesce(sum(part), 0) AS part, max(max) AS max
         FROM usage_rollups WHERE mark_id = ? AND subscription_id = ? AND hour >= ? AND hour < ? AND organisation_id = ?`,
        markId,
        subscriptionId,
        fromHour,
        toHour,
        org,
      );
      return toStats(row as StatsRow);
    } catch (err) {
      if (isOverflow(err)) return null;
      throw err;
    }
  }

  async countEvents(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint> {
    const { text, params } = this.where(org, scope, metric);
    return (await this.sql.getExact(`SELECT count(*) AS v FROM usage_events ${text}`, ...params) as { v: bigint }).v;
  }

  async uniqueCount(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint> {
    const { text, params } = this.where(org, scope, metric);
    return (await this.sql.getExact(`SELECT count(DISTINCT ${this.p.text(metric.property ?? '')}) AS v FROM usage_events ${text}`, ...params) as { v: bigint }).v;
  }

  async max(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint | null> {
    const { text, params } = this.where(org, scope, metric);
    return (await this.sql.getExact(`SELECT max(${this.p.micros(metric.property ?? '')}) AS v FROM usage_events ${text}`, ...params) as { v: bigint | null }).v;
  }

  async latest(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint | null> {
    const { text, params } = this.where(org, scope, metric);
    const property = metric.property ?? '';
    const row = await this.sql.getExact(`SELECT ${this.p.micros(property)} AS v FROM usage_events ${text} AND ${this.p.prop(property)} IS NOT NULL ORDER BY ts DESC, seq DESC LIMIT 1`, ...params) as { v: bigint } | undefined;
    return row ? row.v : null;
  }

  async sum(org: string, scope: EventScope, metric: UsageMetric): Promise<bigint> {
    const { text, params } = this.where(org, scope, metric);
    return (await this.sumOf(`FROM usage_events ${text}`, metric.property ?? '', params, false)).sum;
  }

  async sumAndCount(org: string, scope: EventScope, metric: UsageMetric): Promise<{ sum: bigint; count: bigint }> {
    const { text, params } = this.where(org, scope, metric);
    return this.sumOf(`FROM usage_events ${text}`, metric.property ?? '', params, true);
  }

  /**
   * The sum of the property in micro-units. While every value is a JSON integer, SQLite's own sum is
   * exact (an integer result, `sqliteJson`) and costs about what the bare aggregate costs; otherwise
   * each value is rounded to micro-units and those integers summed, and past 2^63 micro-units (SQLite
   * refuses with "integer overflow") two exact sums, whole units and millionths, are joined in BigInt.
   */
  private async sumOf(from: string, property: string, params: unknown[], withCount: boolean): Promise<{ sum: bigint; count: bigint }> {
    const count = withCount ? `count(${this.p.prop(property)})` : '0';
    if (this.sql.dialect === 'postgres') {
      const row = (await this.sql.getExact(`SELECT sum(${this.p.micros(property)}) AS s, ${count} AS n ${from}`, ...params)) as { s: bigint | null; n: bigint };
      return { sum: row.s ?? 0n, count: BigInt(row.n) };
    }
    try {
      const plain = await this.sql.getExact(`SELECT sum(${sqliteJson(property)}) AS s, ${count} AS n ${from}`, ...params) as { s: bigint | number | null; n: bigint };
      if (plain.s === null) return { sum: 0n, count: plain.n };
      if (typeof plain.s === 'bigint') return { sum: plain.s * 1_000_000n, count: plain.n };
      const row = await this.sql.getExact(`SELECT sum(${this.p.micros(property)}) AS s, ${count} AS n ${from}`, ...params) as { s: bigint | null; n: bigint };
      return { sum: row.s ?? 0n, count: row.n };
    } catch (err) {
      if (!isOverflow(err)) throw err;
      const row = await this.sql.getExact(`SELECT sum(${this.p.micros(property)} / 1000000) AS whole, sum(${this.p.micros(property)} % 1000000) AS part, count(${this.p.prop(property)}) AS n ${from}`, ...params) as { whole: bigint; part: bigint; n: bigint };
      return { sum: row.whole * 1_000_000n + row.part, count: row.n };
    }
  }

  async count(org: string, scope: EventScope, metric: UsageMetric): Promise<{ events: number; late: number }> {
    const { text, params } = this.where(org, scope, metric);
    const row = await this.sql.get<{ n: number; late: number | null }>(`SELECT count(*) AS n, sum(late) AS late FROM usage_events ${text}`, ...params) as {
      n: number;
      late: number | null;
    };
    return { events: row.n, late: row.late ?? 0 };
  }

  async page(org: string, scope: EventScope, metric: UsageMetric, limit: number, offset: number): Promise<UsageEventRecord[]> {
    const { text, params } = this.where(org, scope, metric);
    return (await this.sql
      .all<Row>(`SELECT ${this.p.columns} FROM usage_events ${text} ORDER BY ts DESC, seq DESC LIMIT ? OFFSET ?`, ...params, limit, offset))
      .map(toRecord);
  }

  async list(org: string, filter: UsageEventFilter, limit: number): Promise<UsageEventRecord[]> {
    let text = 'WHERE organisation_id = ?';
    const params: unknown[] = [org];
    const add = (clause: string, value: unknown) => {
      text += ` AND ${clause}`;
      params.push(value);
    };
    if (filter.before !== undefined) add('seq < ?', filter.before);
    if (filter.subscriptionId !== undefined) add('subscription_id = ?', filter.subscriptionId);
    if (filter.customerId !== undefined) add('customer_id = ?', filter.customerId);
    if (filter.eventName !== undefined) add('event_name = ?', filter.eventName);
    if (filter.from !== undefined) add('ts >= ?', filter.from);
    if (filter.to !== undefined) add('ts < ?', filter.to);
    if (filter.unmatched !== undefined) add('unmatched = ?', filter.unmatched ? 1 : 0);
    return (await this.sql
      .all<Row>(
        `SELECT ${this.p.columns} FROM usage_events ${text} ORDER BY seq DESC LIMIT ?`,
        ...params,
        limit,
      ))
      .map(toRecord);
  }
}
