import type { SubscriptionStatus } from '../ports/subscriptions.js';
import type { MeasurementValueRecord, UsageRepo, UsageScope, UsageTarget } from '../ports/usage.js';
import type { Sql } from '../sql.js';

interface ValueRow {
  id: string;
  item_id: string;
  measurement_id: string;
  quantity_e6: bigint;
  measured_at: string;
  value_id: string | null;
  instant: bigint;
  created_at: string;
}

const toValue = (r: ValueRow): MeasurementValueRecord => ({
  id: r.id,
  itemId: r.item_id,
  measurementId: r.measurement_id,
  quantityMicros: r.quantity_e6,
  measuredAt: r.measured_at,
  valueId: r.value_id,
  instant: r.instant === 1n,
  createdAt: r.created_at,
});

interface TargetRow {
  item_id: string;
  subscription_id: string;
  number: string;
  status: SubscriptionStatus;
  cancellation_date: string | null;
  cancelled_at: string | null;
  terminated_at: string | null;
  billing_end: string | null;
  product_name: string;
  measurement_id: string | null;
}

const toTarget = (r: TargetRow): UsageTarget => ({
  itemId: r.item_id,
  subscriptionId: r.subscription_id,
  subscriptionNumber: r.number,
  status: r.status,
  cancellationDate: r.cancellation_date,
  cancelledAt: r.cancelled_at,
  terminatedAt: r.terminated_at,
  itemBillingEnd: r.billing_end,
  productName: r.product_name,
  measurementId: r.measurement_id,
});

const TARGET_SELECT = `SELECT i.id AS item_id, i.subscription_id, s.number, s.status, s.cancellation_date, s.cancelled_at,
    s.terminated_at, i.billing_end, p.name AS product_name, p.measurement_id
  FROM subscription_items i
  JOIN subscriptions s ON s.id = i.subscription_id
  JOIN products p ON p.id = i.product_id`;

/** The columns of a value with its count_unique identity decoded from the dictionary. */
const VALUE_SELECT = `SELECT v.id, v.item_id, v.measurement_id, v.quantity_e6, v.measured_at, d.value_id, v.instant, v.created_at
  FROM measurement_values v LEFT JOIN measurement_value_ids d ON d.key = v.value_key`;

const SCOPE = `FROM measurement_values
  WHERE organisation_id = ? AND item_id = ? AND measurement_id = ? AND measured_at >= ? AND measured_at < ?`;

const scopeParams = (org: string, s: UsageScope) => [org, s.itemId, s.measurementId, s.from, s.to];

/** SQLite's sum() of integers stops with this error rather than lose precision. */
const isIntegerOverflow = (err: unknown) => err instanceof Error && err.message === 'integer overflow';

export class SqlUsageRepo implements UsageRepo {
  constructor(private readonly sql: Sql) {}

  async targetOfItem(org: string, itemId: string): Promise<UsageTarget | undefined> {
    const row = await this.sql.get<TargetRow>(`${TARGET_SELECT} WHERE i.organisation_id = ? AND i.id = ?`, org, itemId);
    return row && toTarget(row);
  }

  async targetsMeasuring(org: string, subscriptionId: string, measurementId: string): Promise<UsageTarget[]> {
    return (await this.sql
      .all<TargetRow>(
        `${TARGET_SELECT} WHERE i.organisation_id = ? AND i.subscription_id = ? AND p.measurement_id = ? ORDER BY i.created_at, i.id`,
        org,
        subscriptionId,
        measurementId,
      ))
      .map(toTarget);
  }

  async measuredCodes(org: string, subscriptionId: string): Promise<string[]> {
    return (await this.sql
      .all<{ code: string }>(
        `SELECT DISTINCT m.code FROM subscription_items i
         JOIN products p ON p.id = i.product_id
         JOIN measurements m ON m.id = p.measurement_id
         WHERE i.organisation_id = ? AND i.subscription_id = ? ORDER BY m.code`,
        org,
        subscriptionId,
      ))
      .map((r) => r.code);
  }

  /** The dictionary key of a count_unique identity, added on first sight. */
  private async valueKey(org: string, valueId: string): Promise<number> {
    const found = await this.sql.get<{ key: number }>('SELECT key FROM measurement_value_ids WHERE organisation_id = ? AND value_id = ?', org, valueId);
    if (found) return found.key;
    return (await this.sql.get<{ key: number }>('INSERT INTO measurement_value_ids (organisation_id, value_id) VALUES (?, ?) RETURNING key', org, valueId) as { key: number })
      .key;
  }

  async insert(org: string, values: readonly MeasurementValueRecord[]): Promise<void> {
    const keys = new Map<string, number>();
    const rows = [];
    for (const v of values) {
      let key: number | null = null;
      if (v.valueId !== null) {
        key = keys.get(v.valueId) ?? (await this.valueKey(org, v.valueId));
        keys.set(v.valueId, key);
      }
      rows.push({
        id: v.id,
        organisation_id: org,
        item_id: v.itemId,
        measurement_id: v.measurementId,
        quantity_e6: v.quantityMicros,
        measured_at: v.measuredAt,
        value_key: key,
        instant: v.instant ? 1 : 0,
        created_at: v.createdAt,
      });
    }
    await this.sql.insertMany('measurement_values', rows);
  }

  async get(org: string, id: string): Promise<{ value: MeasurementValueRecord; subscriptionId: string } | undefined> {
    const row = await this.sql.getExact(`SELECT v.id, v.item_id, v.measurement_id, v.quantity_e6, v.measured_at, d.value_id, v.instant, v.created_at, i.subscription_id
       FROM measurement_values v
       JOIN subscription_items i ON i.id = v.item_id
       LEFT JOIN measurement_value_ids d ON d.key = v.value_key
       WHERE v.organisation_id = ? AND v.id = ?`, org, id) as (ValueRow & { subscription_id: string }) | undefined;
    return row && { value: toValue(row), subscriptionId: row.subscription_id };
  }

  async count(org: string, scope: UsageScope): Promise<number> {
    return (await this.sql.get<{ n: number }>(`SELECT count(*) AS n ${SCOPE}`, ...scopeParams(org, scope)) as { n: number }).n;
  }

  async countUnique(org: string, scope: UsageScope): Promise<number> {
    return (await this.sql.get<{ n: number }>(`SELECT count(DISTINCT value_key) AS n ${SCOPE}`, ...scopeParams(org, scope)) as { n: number }).n;
  }

  async max(org: string, scope: UsageScope): Promise<bigint | null> {
    return (await this.sql.getExact(`SELECT max(quantity_e6) AS v ${SCOPE}`, ...scopeParams(org, scope)) as { v: bigint | null }).v;
  }

  /**
   * One 64-bit sum while it fits (a million values of up to 9.2 million each always do); past
   * 2^63 micro-units SQLite refuses with "integer overflow", and the sum is taken again in two exact
   * halves, whole units and millionths, joined in BigInt.
   */
  async sumAndCount(org: string, scope: UsageScope): Promise<{ sum: bigint; count: number }> {
    const params = scopeParams(org, scope);
    try {
      const row = await this.sql.getExact(`SELECT sum(quantity_e6) AS s, count(*) AS n ${SCOPE}`, ...params) as { s: bigint | null; n: bigint };
      return { sum: row.s ?? 0n, count: Number(row.n) };
    } catch (err) {
      if (!isIntegerOverflow(err)) throw err;
      const row = await this.sql.getExact(`SELECT sum(quantity_e6 / 1000000) AS whole, sum(quantity_e6 % 1000000) AS micros, count(*) AS n ${SCOPE}`, ...params) as { whole: bigint; micros: bigint; n: bigint };
      return { sum: row.whole * 1_000_000n + row.micros, count: Number(row.n) };
    }
  }

  async last(org: string, scope: UsageScope): Promise<bigint | null> {
    const row = await this.sql.getExact(`SELECT quantity_e6 AS v ${SCOPE} ORDER BY measured_at DESC, id DESC LIMIT 1`, ...scopeParams(org, scope)) as
      | { v: bigint }
      | undefined;
    return row ? row.v : null;
  }

  async levels(org: string, scope: UsageScope): Promise<Array<{ measuredAt: string; quantityMicros: bigint }>> {
    const rows = await this.sql.allExact<{ measured_at: string; quantity_e6: bigint }>(
      `SELECT measured_at, quantity_e6 ${SCOPE} ORDER BY measured_at, id`,
      ...scopeParams(org, scope),
    );
    return rows.map((r) => ({ measuredAt: r.measured_at, quantityMicros: r.quantity_e6 }));
  }

  async events(org: string, scope: UsageScope, limit: number, offset: number): Promise<MeasurementValueRecord[]> {
    return (
      await this.sql.allExact(`${VALUE_SELECT}
         WHERE v.organisation_id = ? AND v.item_id = ? AND v.measurement_id = ? AND v.measured_at >= ? AND v.measured_at < ?
         ORDER BY v.measured_at DESC, v.id DESC LIMIT ? OFFSET ?`, ...scopeParams(org, scope), limit, offset) as ValueRow[]
    ).map(toValue);
  }

  /**
   * The latest `limit` values of each scope, scope after scope, each read from its own index range in
   * one round trip. SQLite: a UNION ALL of one read per scope. PostgreSQL: one statement whatever the
   * number of scopes, a LATERAL read per element of a JSON list: it planned the UNION ALL of a page's
   * 30 items for about 37 ms, anew for every number of items and on every new connection.
   */
  async latest(org: string, scopes: ReadonlyArray<{ itemId: string; measurementId: string }>, limit: number): Promise<MeasurementValueRecord[]> {
    if (scopes.length === 0) return [];
    if (this.sql.dialect === 'postgres') {
      return (
        (await this.sql.allExact(
          `SELECT latest.* FROM json_array_elements(?::json) WITH ORDINALITY AS s(scope, n)
           CROSS JOIN LATERAL (${VALUE_SELECT}
             WHERE v.organisation_id = ? AND v.item_id = s.scope->>0 AND v.measurement_id = s.scope->>1
             ORDER BY v.measured_at DESC, v.id DESC LIMIT ?) AS latest
           ORDER BY s.n, latest.measured_at DESC, latest.id DESC`,
          JSON.stringify(scopes.map((s) => [s.itemId, s.measurementId])),
          org,
          limit,
        )) as ValueRow[]
      ).map(toValue);
    }
    const one = `SELECT * FROM (${VALUE_SELECT} WHERE v.organisation_id = ? AND v.item_id = ? AND v.measurement_id = ?
         ORDER BY v.measured_at DESC, v.id DESC LIMIT ?) AS latest`;
    return (
      (await this.sql.allExact(
        scopes.map(() => one).join(' UNION ALL '),
        ...scopes.flatMap((s) => [org, s.itemId, s.measurementId, limit]),
      )) as ValueRow[]
    ).map(toValue);
  }

  /** A loose index scan: one index seek per distinct measurement, however many values the item has. */
  async measurementsOf(org: string, itemId: string): Promise<string[]> {
    return (await this.sql
      .all<{ id: string }>(
        `WITH RECURSIVE seen(id) AS (
           SELECT (SELECT min(measurement_id) FROM measurement_values WHERE organisation_id = @org AND item_id = @item)
           UNION ALL
           SELECT (SELECT min(measurement_id) FROM measurement_values
                   WHERE organisation_id = @org AND item_id = @item AND measurement_id > seen.id)
           FROM seen WHERE seen.id IS NOT NULL
         )
         SELECT id FROM seen WHERE id IS NOT NULL`,
        { org, item: itemId },
      ))
      .map((r) => r.id);
  }
}
