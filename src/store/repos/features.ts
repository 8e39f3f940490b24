import type { PageRequest } from '../../schemas/common.js';
import type {
  Entitlement,
  EntitlementValue,
  Feature,
  FeatureConfig,
  FeatureStatus,
  FeatureType,
} from '../../schemas/features.js';
import type { FeatureFilter, FeatureRepo } from '../ports/features.js';
import type { Sql } from '../sql.js';

interface FeatureRow {
  id: string;
  name: string;
  description: string | null;
  status: FeatureStatus;
  type: FeatureType;
  config: string | null;
  unit: string | null;
  created_at: string;
  updated_at: string;
}

const FEATURE_COLUMNS = 'id, name, description, status, type, config, unit, created_at, updated_at';

const toFeature = (r: FeatureRow): Feature => ({
  id: r.id,
  name: r.name,
  description: r.description,
  status: r.status,
  type: r.type,
  config: r.config === null ? null : (JSON.parse(r.config) as FeatureConfig),
  unit: r.unit,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface EntitlementRow {
  e_id: string;
  e_feature_id: string;
  e_product_id: string | null;
  e_price_plan_id: string | null;
  e_value: string;
  e_created_at: string;
}

const toEntitlement = (r: EntitlementRow): Entitlement => ({
  id: r.e_id,
  feature: r.e_feature_id,
  product: r.e_product_id,
  pricePlan: r.e_price_plan_id,
  value: JSON.parse(r.e_value) as EntitlementValue,
  createdAt: r.e_created_at,
});

const GRANTED_COLUMNS = `e.id AS e_id, e.feature_id AS e_feature_id, e.product_id AS e_product_id,
  e.price_plan_id AS e_price_plan_id, e.value AS e_value, e.created_at AS e_created_at,
  f.id, f.name, f.description, f.status, f.type, f.config, f.unit, f.created_at, f.updated_at`;

export class SqlFeatureRepo implements FeatureRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, f: Feature): Promise<void> {
    await this.sql.run(
      `INSERT INTO features (organisation_id, ${FEATURE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      org,
      f.id,
      f.name,
      f.description,
      f.status,
      f.type,
      f.config === null ? null : JSON.stringify(f.config),
      f.unit,
      f.createdAt,
      f.updatedAt,
    );
  }

  async updateStatus(org: string, f: Feature): Promise<void> {
    await this.sql.run('UPDATE features SET status = ?, updated_at = ? WHERE organisation_id = ? AND id = ?', f.status, f.updatedAt, org, f.id);
  }

  async get(org: string, id: string): Promise<Feature | undefined> {
    const row = await this.sql.get<FeatureRow>(`SELECT ${FEATURE_COLUMNS} FROM features WHERE organisation_id = ? AND id = ?`, org, id);
    return row && toFeature(row);
  }

  async list(org: string, filter: FeatureFilter, page: PageRequest) {
    const { rows, total } = await this.sql.page<FeatureRow>(
      'FROM features WHERE organisation_id = ? AND (CAST(? AS TEXT) IS NULL OR status = ?) AND (CAST(? AS TEXT) IS NULL OR type = ?)',
      [org, filter.status ?? null, filter.status ?? null, filter.type ?? null, filter.type ?? null],
      page,
      FEATURE_COLUMNS,
    );
    return { rows: rows.map(toFeature), total };
  }

  async findEntitlement(org: string, featureId: string, target: { product: string | null; pricePlan: string | null }): Promise<Entitlement | undefined> {
    const row = await this.sql.get<EntitlementRow>(
      `SELECT id AS e_id, feature_id AS e_feature_id, product_id AS e_product_id, price_plan_id AS e_price_plan_id, value AS e_value, created_at AS e_created_at
         FROM entitlements WHERE organisation_id = ? AND feature_id = ? AND ${target.product !== null ? 'product_id' : 'price_plan_id'} = ?`,
      org,
      featureId,
      target.product ?? target.pricePlan,
    );
    return row && toEntitlement(row);
  }

  async pricePlanEntitlements(org: string, pricePlanId: string): Promise<Entitlement[]> {
    const rows = await this.sql.all<EntitlementRow>(
      `SELECT id AS e_id, feature_id AS e_feature_id, product_id AS e_product_id, price_plan_id AS e_price_plan_id, value AS e_value, created_at AS e_created_at
         FROM entitlements WHERE organisation_id = ? AND price_plan_id = ? ORDER BY feature_id`,
      org,
      pricePlanId,
    );
    return rows.map(toEntitlement);
  }

  async insertEntitlement(org: string, e: Entitlement): Promise<void> {
    await this.sql.run(
      `INSERT INTO entitlements (id, organisation_id, feature_id, product_id, price_plan_id, value, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      e.id,
      org,
      e.feature,
      e.product,
      e.pricePlan,
      JSON.stringify(e.value),
      e.createdAt,
    );
  }

  async grantActiveFeatures(org: string, subscriptionId: string, at: string): Promise<void> {
    await this.sql.run(
      `INSERT INTO subscription_features (organisation_id, subscription_id, feature_id, granted_at)
       SELECT organisation_id, ?, id, ? FROM features WHERE organisation_id = ? AND status = 'active'
       ON CONFLICT DO NOTHING`,
      subscriptionId,
      at,
      org,
    );
  }

  async grantToAllSubscriptions(org: string, featureId: string, at: string): Promise<number> {
    return (await this.sql.run(
      `INSERT INTO subscription_features (organisation_id, subscription_id, feature_id, granted_at)
       SELECT organisation_id, id, ?, ? FROM subscriptions WHERE organisation_id = ?
       ON CONFLICT DO NOTHING`,
      featureId,
      at,
      org,
    )).changes;
  }

  async subscriptionEntitlements(org: string, subscriptionId: string, now: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<EntitlementRow & FeatureRow>(
      `FROM entitlements e
       JOIN subscription_features g
         ON g.organisation_id = e.organisation_id AND g.feature_id = e.feature_id AND g.subscription_id = ?
       JOIN features f ON f.organisation_id = e.organisation_id AND f.id = e.feature_id
       WHERE e.organisation_id = ?
         AND EXISTS (SELECT 1 FROM subscription_items i
           WHERE i.organisation_id = e.organisation_id AND i.subscription_id = g.subscription_id
             AND (i.product_id = e.product_id OR i.price_plan_id = e.price_plan_id)
             AND (i.billing_end IS NULL OR i.billing_end > ?))`,
      [subscriptionId, org, now],
      page,
      GRANTED_COLUMNS,
      'e',
    );
    return { rows: rows.map((r) => ({ entitlement: toEntitlement(r), feature: toFeature(r) })), total };
  }
}
