import type { PricePlan, PricePlanStatus, PricePlanType, Product, UsageMetric } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';
import type { PriceChange, PricePlanRecord, ProductRecord, ProductRepo, StoredTier } from '../ports/products.js';
import { bool, int, type Sql } from '../sql.js';
import { numberOfDecimalText } from '../../values/decimal.js';

interface ProductRow {
  id: string;
  type: Product['type'];
  measurement_id: string | null;
  usage_metric: string | null;
  unit: string | null;
  tax_group_id: string | null;
  name: string;
  description: string | null;
  internal_name: string | null;
  invoice_visibility: Product['invoiceVisibility'];
  cost_centre: string | null;
  cost_centre_2: string | null;
  custom_fields: string;
  created_at: string;
  updated_at: string;
}

const toProduct = (r: ProductRow): ProductRecord => ({
  id: r.id,
  type: r.type,
  measurementId: r.measurement_id,
  usageMetric: r.usage_metric === null ? null : (JSON.parse(r.usage_metric) as UsageMetric),
  unit: r.unit,
  taxGroupId: r.tax_group_id,
  name: r.name,
  description: r.description,
  internalName: r.internal_name,
  invoiceVisibility: r.invoice_visibility,
  costCentre: r.cost_centre,
  costCentre2: r.cost_centre_2,
  customFields: JSON.parse(r.custom_fields) as Record<string, unknown>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface PricePlanRow {
  id: string;
  organisation_id: string;
  product_id: string;
  type: PricePlanType;
  currency_code: string;
  price: string | null;
  tiers: string | null;
  package_size: number | null;
  internal_name: string | null;
  status: PricePlanStatus;
  apply_trial: number;
  pay_in_advance: number;
  pro_rata: number;
  free_units: number;
  billing_interval: string;
  show_price_per_interval: string;
  custom: number;
  charge: string | null;
  product_set_option: string | null;
  in_use: number;
  price_changed_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * `in_use`: a plan or an item names the price plan; the items are searched by (organisation, price
 * plan), their index. `price_changed_at`: the last price change, from the changes' (price plan,
 * effective_from) index.
 */
const PRICE_PLAN_COLUMNS = `p.*, (EXISTS (SELECT 1 FROM plan_items i WHERE i.price_plan_id = p.id)
  OR EXISTS (SELECT 1 FROM subscription_items s WHERE s.organisation_id = p.organisation_id AND s.price_plan_id = p.id)) AS in_use,
  (SELECT MAX(c.effective_from) FROM price_plan_price_changes c WHERE c.price_plan_id = p.id) AS price_changed_at`;

interface PriceChangeRow {
  id: string;
  price_plan_id: string;
  effective_from: string;
  old_price: string;
  new_price: string;
}

const toPriceChange = (r: PriceChangeRow): PriceChange => ({
  id: r.id,
  pricePlanId: r.price_plan_id,
  effectiveFrom: r.effective_from,
  oldPrice: r.old_price,
  newPrice: r.new_price,
});

/**
 * Items of a product (`?` organisation, organisation, product) billed by its usage that have not
 * ended (`?` now), joined to their subscription `s`; found through the items' (organisation, price
 * plan) index.
 */
const USAGE_ITEMS = `FROM subscription_items i JOIN subscriptions s ON s.id = i.subscription_id
  WHERE i.organisation_id = ?
    AND i.price_plan_id IN (SELECT id FROM price_plans WHERE organisation_id = ? AND product_id = ? AND type <> 'flat_fee')
    AND (i.next_billing_at IS NOT NULL OR (s.status NOT IN ('cancelled', 'terminated') AND (i.billing_end IS NULL OR i.billing_end > ?)))`;

const toPricePlan = (r: PricePlanRow): PricePlan => ({
  id: r.id,
  product: r.product_id,
  type: r.type,
  currencyCode: r.currency_code,
  price:
    r.price === null
      ? null
      : {
          amount: numberOfDecimalText(r.price),
          createdAt: r.created_at,
          updatedAt: r.price_changed_at ?? r.created_at,
          tenantId: r.organisation_id,
        },
  tiers:
    r.tiers === null
      ? null
      : (JSON.parse(r.tiers) as StoredTier[]).map((t) => ({
          upTo: t.upTo,
          unitAmount: numberOfDecimalText(t.unitAmount),
          flatAmount: t.flatAmount === null ? null : numberOfDecimalText(t.flatAmount),
        })),
  packageSize: r.package_size,
  internalName: r.internal_name,
  status: r.status,
  applyTrial: bool(r.apply_trial),
  payInAdvance: bool(r.pay_in_advance),
  proRata: bool(r.pro_rata),
  freeUnits: r.free_units,
  billingInterval: r.billing_interval,
  showPricePerInterval: r.show_price_per_interval,
  custom: bool(r.custom),
  charge: r.charge,
  productSetOption: r.product_set_option,
  inUse: bool(r.in_use),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The columns of a product row that insert and update both write. */
const productColumns = (p: ProductRecord) => ({
  type: p.type,
  measurement_id: p.measurementId,
  usage_metric: p.usageMetric === null ? null : JSON.stringify(p.usageMetric),
  unit: p.unit,
  tax_group_id: p.taxGroupId,
  name: p.name,
  description: p.description,
  internal_name: p.internalName,
  invoice_visibility: p.invoiceVisibility,
  cost_centre: p.costCentre,
  cost_centre_2: p.costCentre2,
  custom_fields: JSON.stringify(p.customFields),
  updated_at: p.updatedAt,
});

export class SqlProductRepo implements ProductRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, p: ProductRecord): Promise<void> {
    await this.sql.insert('products', { id: p.id, organisation_id: org, ...productColumns(p), created_at: p.createdAt });
  }

  async update(org: string, p: ProductRecord): Promise<void> {
    await this.sql.update('products', org, p.id, productColumns(p));
  }

  async get(org: string, id: string): Promise<ProductRecord | undefined> {
    const row = await this.sql.get<ProductRow>('SELECT * FROM products WHERE organisation_id = ? AND id = ?', org, id);
    return row && toProduct(row);
  }

  async list(org: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<ProductRow>('FROM products WHERE organisation_id = ?', [org], page);
    return { rows: rows.map(toProduct), total };
  }

  async insertPricePlan(org: string, p: PricePlanRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO price_plans (id, organisation_id, product_id, type, currency_code, price, tiers, package_size, internal_name, status,
         apply_trial, pay_in_advance, pro_rata, free_units, billing_interval, show_price_per_interval, custom, charge,
         product_set_option, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      p.id,
      org,
      p.product,
      p.type,
      p.currencyCode,
      p.price,
      p.tiers === null ? null : JSON.stringify(p.tiers),
      p.packageSize,
      p.internalName,
      p.status,
      int(p.applyTrial),
      int(p.payInAdvance),
      int(p.proRata),
      p.freeUnits,
      p.billingInterval,
      p.showPricePerInterval,
      int(p.custom),
      p.charge,
      p.productSetOption,
      p.createdAt,
      p.updatedAt,
    );
  }

  async updatePricePlan(org: string, id: string, p: { status: PricePlanStatus; internalName: string | null; price: string | null; updatedAt: string }): Promise<void> {
    await this.sql.update('price_plans', org, id, { status: p.status, internal_name: p.internalName, price: p.price, updated_at: p.updatedAt });
  }

  async insertPriceChange(org: string, c: PriceChange): Promise<void> {
    await this.sql.insert('price_plan_price_changes', {
      id: c.id,
      organisation_id: org,
      price_plan_id: c.pricePlanId,
      effective_from: c.effectiveFrom,
      old_price: c.oldPrice,
      new_price: c.newPrice,
    });
  }

  async priceChanges(org: string, pricePlanId: string): Promise<PriceChange[]> {
    return (
      await this.sql.all<PriceChangeRow>(
        'SELECT * FROM price_plan_price_changes WHERE organisation_id = ? AND price_plan_id = ? ORDER BY effective_from, id',
        org,
        pricePlanId,
      )
    ).map(toPriceChange);
  }

  async latestPriceChanges(org: string, pricePlanId: string, limit: number): Promise<PriceChange[]> {
    return (
      await this.sql.all<PriceChangeRow>(
        'SELECT * FROM price_plan_price_changes WHERE organisation_id = ? AND price_plan_id = ? ORDER BY effective_from DESC, id DESC LIMIT ?',
        org,
        pricePlanId,
        limit,
      )
    ).map(toPriceChange);
  }

  async getPricePlan(org: string, id: string): Promise<PricePlan | undefined> {
    const row = await this.sql.get<PricePlanRow>(
      `SELECT ${PRICE_PLAN_COLUMNS} FROM price_plans p WHERE p.organisation_id = ? AND p.id = ?`,
      org,
      id,
    );
    return row && toPricePlan(row);
  }

  async listPricePlans(org: string, productId: string, filter: { status?: PricePlanStatus | undefined }, page: PageRequest) {
    const where = 'FROM price_plans p WHERE p.organisation_id = ? AND p.product_id = ? AND p.custom = 0';
    const { rows, total } = filter.status
      ? await this.sql.page<PricePlanRow>(`${where} AND p.status = ?`, [org, productId, filter.status], page, PRICE_PLAN_COLUMNS, 'p')
      : await this.sql.page<PricePlanRow>(where, [org, productId], page, PRICE_PLAN_COLUMNS, 'p');
    return { rows: rows.map(toPricePlan), total };
  }

  async hasPricePlanOfType(org: string, productId: string, type: PricePlanType): Promise<boolean> {
    return (
      await this.sql.get('SELECT 1 FROM price_plans WHERE organisation_id = ? AND product_id = ? AND type = ?', org, productId, type) !==
      undefined
    );
  }

  async pricePlansInAdvanceOrProRata(org: string, productId: string, limit: number): Promise<Array<{ id: string; type: PricePlanType }>> {
    return await this.sql.all<{ id: string; type: PricePlanType }>(
      `SELECT id, type FROM price_plans
       WHERE organisation_id = ? AND product_id = ? AND custom = 0 AND type <> 'flat_fee' AND (pay_in_advance = 1 OR pro_rata = 1)
       ORDER BY created_at, id LIMIT ?`,
      org,
      productId,
      limit,
    );
  }

  async subscriptionsBillingUsage(org: string, productId: string, now: string, limit: number): Promise<{ numbers: string[]; total: number }> {
    const numbers = await this.sql.column<string>(`SELECT DISTINCT s.number ${USAGE_ITEMS} ORDER BY s.number LIMIT ?`, org, org, productId, now, limit);
    if (numbers.length < limit) return { numbers, total: numbers.length };
    const counted = await this.sql.get<{ n: number }>(`SELECT COUNT(DISTINCT s.id) AS n ${USAGE_ITEMS}`, org, org, productId, now);
    return { numbers, total: counted?.n ?? 0 };
  }
}
