import type { Family, Plan, PlanStatus } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';
import type { PlanItemRecord, PlanRecord, PlanRepo } from '../ports/plans.js';
import { bool, int, type Sql } from '../sql.js';

interface PlanRow {
  id: string;
  family_id: string;
  family_created_at: string;
  family_updated_at: string;
  code: string;
  name: string;
  description: string | null;
  status: PlanStatus;
  allow_checkout: number;
  change_behaviour: Plan['changeBehaviour'];
  change_apply_behaviour: Plan['changeApplyBehaviour'];
  trial_period: string | null;
  origin_product_id: string | null;
  created_at: string;
  updated_at: string;
}

interface ItemRow {
  id: string;
  plan_id: string;
  kind: 'charge' | 'addon';
  product_id: string;
  price_plan_id: string;
  quantity_e6: number | null;
}

const PLAN_COLUMNS = `p.id, p.family_id, f.created_at AS family_created_at, f.updated_at AS family_updated_at, p.code, p.name,
  p.description, p.status, p.allow_checkout, p.change_behaviour, p.change_apply_behaviour, p.trial_period, p.origin_product_id,
  p.created_at, p.updated_at`;
const PLAN_FROM = 'FROM plans p JOIN plan_families f ON f.id = p.family_id';

/** Subscriptions (`?` organisation, plan, plan) on the plan or changing to it that are not final. */
const OPEN_SUBSCRIPTIONS = `FROM subscriptions WHERE organisation_id = ? AND (plan_id = ? OR pending_plan_id = ?)
  AND status NOT IN ('cancelled', 'terminated')`;

/** The columns of a plan row that insert and update both write. */
const planColumns = (p: PlanRecord) => ({
  family_id: p.family.id,
  code: p.code,
  name: p.name,
  description: p.description,
  status: p.status,
  allow_checkout: int(p.allowCheckout),
  change_behaviour: p.changeBehaviour,
  change_apply_behaviour: p.changeApplyBehaviour,
  trial_period: p.trialPeriod,
  origin_product_id: p.originProductId,
  updated_at: p.updatedAt,
});

export class SqlPlanRepo implements PlanRepo {
  constructor(private readonly sql: Sql) {}

  async insertFamily(org: string, f: Family): Promise<void> {
    await this.sql.run(
      'INSERT INTO plan_families (id, organisation_id, created_at, updated_at) VALUES (?, ?, ?, ?)',
      f.id,
      org,
      f.createdAt,
      f.updatedAt,
    );
  }

  async getFamily(org: string, id: string): Promise<Family | undefined> {
    return await this.sql.get<Family>(
      'SELECT id, created_at AS createdAt, updated_at AS updatedAt FROM plan_families WHERE organisation_id = ? AND id = ?',
      org,
      id,
    );
  }

  async insert(org: string, p: PlanRecord): Promise<void> {
    await this.sql.insert('plans', { id: p.id, organisation_id: org, ...planColumns(p), created_at: p.createdAt });
    await this.writeItems(org, p);
  }

  async update(org: string, p: PlanRecord): Promise<void> {
    await this.sql.update('plans', org, p.id, planColumns(p));
    const keep = [...p.charges, ...p.addons].map((i) => i.id);
    await this.sql.run(
      'DELETE FROM plan_items WHERE organisation_id = ? AND plan_id = ? AND id NOT IN (SELECT value FROM json_each(?))',
      org,
      p.id,
      JSON.stringify(keep),
    );
    await this.writeItems(org, p);
  }

  /** Upserts by id, so an item kept across an update keeps its row (and anything referring to it). */
  private async writeItems(org: string, p: PlanRecord): Promise<void> {
    const write = (item: PlanItemRecord, kind: 'charge' | 'addon', position: number, quantityE6: number | null) =>
      this.sql.run(
        `INSERT INTO plan_items (id, organisation_id, plan_id, kind, position, product_id, price_plan_id, quantity_e6)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, position = excluded.position, product_id = excluded.product_id,
           price_plan_id = excluded.price_plan_id, quantity_e6 = excluded.quantity_e6`,
        item.id,
        org,
        p.id,
        kind,
        position,
        item.productId,
        item.pricePlanId,
        quantityE6,
      );
    for (const [i, c] of p.charges.entries()) await write(c, 'charge', i, c.quantityE6);
    for (const [i, a] of p.addons.entries()) await write(a, 'addon', i, null);
  }

  async get(org: string, id: string): Promise<PlanRecord | undefined> {
    const row = await this.sql.get<PlanRow>(`SELECT ${PLAN_COLUMNS} ${PLAN_FROM} WHERE p.organisation_id = ? AND p.id = ?`, org, id);
    return row && (await this.withItems([row]))[0];
  }

  async findByCode(org: string, code: string): Promise<PlanRecord | undefined> {
    const row = await this.sql.get<PlanRow>(`SELECT ${PLAN_COLUMNS} ${PLAN_FROM} WHERE p.organisation_id = ? AND p.code = ?`, org, code);
    return row && (await this.withItems([row]))[0];
  }

  async list(org: string, filter: { status?: PlanStatus | undefined }, page: PageRequest) {
    const { rows, total } = filter.status
      ? await this.sql.page<PlanRow>(`${PLAN_FROM} WHERE p.organisation_id = ? AND p.status = ?`, [org, filter.status], page, PLAN_COLUMNS, 'p')
      : await this.sql.page<PlanRow>(`${PLAN_FROM} WHERE p.organisation_id = ?`, [org], page, PLAN_COLUMNS, 'p');
    return { rows: await this.withItems(rows), total };
  }

  async openSubscriptions(org: string, planId: string, limit: number): Promise<{ numbers: string[]; total: number }> {
    const numbers = await this.sql.column<string>(`SELECT number ${OPEN_SUBSCRIPTIONS} ORDER BY number LIMIT ?`, org, planId, planId, limit);
    if (numbers.length < limit) return { numbers, total: numbers.length };
    const counted = await this.sql.get<{ n: number }>(`SELECT COUNT(*) AS n ${OPEN_SUBSCRIPTIONS}`, org, planId, planId);
    return { numbers, total: counted?.n ?? 0 };
  }

  private async withItems(rows: PlanRow[]): Promise<PlanRecord[]> {
    if (rows.length === 0) return [];
    const items = await this.sql.all<ItemRow>(
      `SELECT id, plan_id, kind, product_id, price_plan_id, quantity_e6 FROM plan_items
       WHERE plan_id IN (SELECT value FROM json_each(?)) ORDER BY kind, position`,
      JSON.stringify(rows.map((r) => r.id)),
    );
    return rows.map((r) => {
      const own = items.filter((i) => i.plan_id === r.id);
      return {
        id: r.id,
        family: { id: r.family_id, createdAt: r.family_created_at, updatedAt: r.family_updated_at },
        code: r.code,
        name: r.name,
        description: r.description,
        status: r.status,
        allowCheckout: bool(r.allow_checkout),
        changeBehaviour: r.change_behaviour,
        changeApplyBehaviour: r.change_apply_behaviour,
        trialPeriod: r.trial_period,
        originProductId: r.origin_product_id,
        charges: own
          .filter((i) => i.kind === 'charge')
          .map((i) => ({ id: i.id, productId: i.product_id, pricePlanId: i.price_plan_id, quantityE6: i.quantity_e6 as number })),
        addons: own.filter((i) => i.kind === 'addon').map((i) => ({ id: i.id, productId: i.product_id, pricePlanId: i.price_plan_id })),
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      };
    });
  }
}
