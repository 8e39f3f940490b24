import { decimal, toNumber } from '../../values/decimal.js';
import { toMajor } from '../../values/money.js';
import type { BillingGroup, Coupon, CustomField, CustomFieldEntity } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';
import type { BillingSetupRepo, CouponRecord } from '../ports/billing.js';
import { bool, int, type Sql } from '../sql.js';

const BILLING_GROUP_COLUMNS = `id, name, type, custom_day AS customDay, custom_month AS customMonth, created_at AS createdAt,
  updated_at AS updatedAt`;

interface CouponRow {
  id: string;
  code: string;
  name: string;
  type: Coupon['type'];
  frequency: Coupon['frequency'];
  percentage_e2: number | null;
  fixed_amount_cents: number | null;
  fixed_amount_currency: string | null;
  frequency_interval: number | null;
  is_enabled: number;
  created_at: string;
  updated_at: string;
}

const toCoupon = (r: CouponRow): Coupon => ({
  id: r.id,
  code: r.code,
  name: r.name,
  type: r.type,
  frequency: r.frequency,
  percentage: r.percentage_e2 === null ? null : toNumber(decimal(r.percentage_e2, 2)),
  fixedAmount:
    r.fixed_amount_cents === null
      ? null
      : { amount: toMajor(r.fixed_amount_cents, r.fixed_amount_currency as string), currency: r.fixed_amount_currency as string },
  frequencyInterval: r.frequency_interval,
  isEnabled: bool(r.is_enabled),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface CustomFieldRow {
  id: string;
  key: string;
  entity: CustomFieldEntity;
  type: CustomField['type'];
  options: string | null;
  required: number;
  created_at: string;
}

const toCustomField = (r: CustomFieldRow): CustomField => ({
  id: r.id,
  key: r.key,
  entity: r.entity,
  type: r.type,
  options: r.options === null ? null : (JSON.parse(r.options) as string[]),
  required: bool(r.required),
  createdAt: r.created_at,
});

export class SqlBillingSetupRepo implements BillingSetupRepo {
  constructor(private readonly sql: Sql) {}

  async insertBillingGroup(org: string, g: BillingGroup): Promise<void> {
    await this.sql.run(
      `INSERT INTO billing_groups (id, organisation_id, name, type, custom_day, custom_month, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      g.id,
      org,
      g.name,
      g.type,
      g.customDay,
      g.customMonth,
      g.createdAt,
      g.updatedAt,
    );
  }

  async getBillingGroup(org: string, id: string): Promise<BillingGroup | undefined> {
    return await this.sql.get<BillingGroup>(
      `SELECT ${BILLING_GROUP_COLUMNS} FROM billing_groups WHERE organisation_id = ? AND id = ?`,
      org,
      id,
    );
  }

  async listBillingGroups(org: string, page: PageRequest) {
    return await this.sql.page<BillingGroup>('FROM billing_groups WHERE organisation_id = ?', [org], page, BILLING_GROUP_COLUMNS);
  }

  async insertCoupon(org: string, c: CouponRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO coupons (id, organisation_id, code, name, type, frequency, percentage_e2, fixed_amount_cents,
         fixed_amount_currency, frequency_interval, is_enabled, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      c.id,
      org,
      c.code,
      c.name,
      c.type,
      c.frequency,
      c.percentageE2,
      c.fixedAmount?.cents ?? null,
      c.fixedAmount?.currency ?? null,
      c.frequencyInterval,
      int(c.isEnabled),
      c.createdAt,
      c.updatedAt,
    );
  }

  async getCoupon(org: string, id: string): Promise<Coupon | undefined> {
    const row = await this.sql.get<CouponRow>('SELECT * FROM coupons WHERE organisation_id = ? AND id = ?', org, id);
    return row && toCoupon(row);
  }

  async findCouponByCode(org: string, code: string): Promise<Coupon | undefined> {
    const row = await this.sql.get<CouponRow>('SELECT * FROM coupons WHERE organisation_id = ? AND code = ?', org, code);
    return row && toCoupon(row);
  }

  async listCoupons(org: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<CouponRow>('FROM coupons WHERE organisation_id = ?', [org], page);
    return { rows: rows.map(toCoupon), total };
  }

  async updateCoupon(org: string, id: string, c: Pick<Coupon, 'name' | 'isEnabled' | 'updatedAt'>): Promise<void> {
    await this.sql.update('coupons', org, id, { name: c.name, is_enabled: int(c.isEnabled), updated_at: c.updatedAt });
  }

  async insertCustomField(org: string, f: CustomField): Promise<void> {
    await this.sql.run(
      `INSERT INTO custom_fields (id, organisation_id, key, entity, type, options, required, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      f.id,
      org,
      f.key,
      f.entity,
      f.type,
      f.options === null ? null : JSON.stringify(f.options),
      int(f.required),
      f.createdAt,
    );
  }

  async findCustomField(org: string, entity: CustomFieldEntity, key: string): Promise<CustomField | undefined> {
    const row = await this.sql.get<CustomFieldRow>(
      'SELECT * FROM custom_fields WHERE organisation_id = ? AND entity = ? AND key = ?',
      org,
      entity,
      key,
    );
    return row && toCustomField(row);
  }

  async getCustomField(org: string, id: string): Promise<CustomField | undefined> {
    const row = await this.sql.get<CustomFieldRow>('SELECT * FROM custom_fields WHERE organisation_id = ? AND id = ?', org, id);
    return row && toCustomField(row);
  }

  async customFieldsOf(org: string, entity: CustomFieldEntity): Promise<CustomField[]> {
    return (await this.sql
      .all<CustomFieldRow>('SELECT * FROM custom_fields WHERE organisation_id = ? AND entity = ? ORDER BY created_at, id', org, entity))
      .map(toCustomField);
  }

  async listCustomFields(org: string, filter: { entity?: CustomFieldEntity | undefined }, page: PageRequest) {
    const { rows, total } = filter.entity
      ? await this.sql.page<CustomFieldRow>('FROM custom_fields WHERE organisation_id = ? AND entity = ?', [org, filter.entity], page)
      : await this.sql.page<CustomFieldRow>('FROM custom_fields WHERE organisation_id = ?', [org], page);
    return { rows: rows.map(toCustomField), total };
  }

  async deleteCustomField(org: string, id: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM custom_fields WHERE organisation_id = ? AND id = ?', org, id)).changes > 0;
  }
}
