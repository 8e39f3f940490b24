import type { PageRequest } from '../../schemas/common.js';
import type {
  AppliedDiscountRecord,
  CancellationReason,
  InlineDiscount,
  ItemBillingProgress,
  ItemRecord,
  PeriodRecord,
  QuantityChange,
  SubscriptionRecord,
  SubscriptionRepo,
  SubscriptionStatus,
} from '../ports/subscriptions.js';
import type { Sql } from '../sql.js';

interface SubscriptionRow {
  id: string;
  customer_id: string;
  plan_id: string;
  number: string;
  name: string | null;
  external_id: string | null;
  po_number: string | null;
  status: SubscriptionStatus;
  billing_group_id: string | null;
  payment_method_id: string | null;
  invoice_address_id: string | null;
  start_date: string | null;
  activated_at: string | null;
  trial_ends_on: string | null;
  trial_ending_notified_at: string | null;
  pending_plan_id: string | null;
  pending_plan_apply_at: string | null;
  custom_fields: string;
  periods: string;
  cancellation_date: string | null;
  cancelled_at: string | null;
  cancellation_reason: string | null;
  paused_at: string | null;
  terminated_at: string | null;
  last_billing_at: string | null;
  created_at: string;
  updated_at: string;
}

const toSubscription = (r: SubscriptionRow): SubscriptionRecord => ({
  id: r.id,
  customerId: r.customer_id,
  planId: r.plan_id,
  number: r.number,
  name: r.name,
  externalId: r.external_id,
  poNumber: r.po_number,
  status: r.status,
  billingGroupId: r.billing_group_id,
  paymentMethodId: r.payment_method_id,
  invoiceAddressId: r.invoice_address_id,
  startDate: r.start_date,
  activatedAt: r.activated_at,
  trialEndsOn: r.trial_ends_on,
  trialEndingNotifiedAt: r.trial_ending_notified_at,
  pendingPlanId: r.pending_plan_id,
  pendingPlanApplyAt: r.pending_plan_apply_at,
  customFields: JSON.parse(r.custom_fields) as Record<string, unknown>,
  periods: JSON.parse(r.periods) as PeriodRecord[],
  cancellationDate: r.cancellation_date,
  cancelledAt: r.cancelled_at,
  cancellationReason: r.cancellation_reason ? (JSON.parse(r.cancellation_reason) as CancellationReason) : null,
  pausedAt: r.paused_at,
  terminatedAt: r.terminated_at,
  lastBillingAt: r.last_billing_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The columns of a subscription row that insert and update both write. */
const subscriptionColumns = (s: SubscriptionRecord) => ({
  customer_id: s.customerId,
  plan_id: s.planId,
  number: s.number,
  name: s.name,
  external_id: s.externalId,
  po_number: s.poNumber,
  status: s.status,
  billing_group_id: s.billingGroupId,
  payment_method_id: s.paymentMethodId,
  invoice_address_id: s.invoiceAddressId,
  start_date: s.startDate,
  activated_at: s.activatedAt,
  trial_ends_on: s.trialEndsOn,
  trial_ending_notified_at: s.trialEndingNotifiedAt,
  pending_plan_id: s.pendingPlanId,
  pending_plan_apply_at: s.pendingPlanApplyAt,
  custom_fields: JSON.stringify(s.customFields),
  periods: JSON.stringify(s.periods),
  cancellation_date: s.cancellationDate,
  cancelled_at: s.cancelledAt,
  cancellation_reason: s.cancellationReason ? JSON.stringify(s.cancellationReason) : null,
  paused_at: s.pausedAt,
  terminated_at: s.terminatedAt,
  last_billing_at: s.lastBillingAt,
  updated_at: s.updatedAt,
});

interface ItemRow {
  id: string;
  subscription_id: string;
  parent_id: string | null;
  product_id: string;
  price_plan_id: string;
  type: 'charge' | 'addon';
  name: string | null;
  description: string | null;
  further_information: string | null;
  quantity: string;
  periods: string | null;
  start_date: string | null;
  billing_start: string | null;
  billing_anchor: string | null;
  billing_end: string | null;
  activated_at: string | null;
  last_billed_at: string | null;
  last_billed_from: string | null;
  last_billed_to: string | null;
  next_billing_at: string | null;
  created_at: string;
  updated_at: string;
}

const toItem = (r: ItemRow): ItemRecord => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  parentId: r.parent_id,
  productId: r.product_id,
  pricePlanId: r.price_plan_id,
  type: r.type,
  name: r.name,
  description: r.description,
  furtherInformation: r.further_information,
  quantity: r.quantity,
  periods: r.periods ? (JSON.parse(r.periods) as PeriodRecord[]) : null,
  startDate: r.start_date,
  billingStart: r.billing_start,
  billingAnchor: r.billing_anchor,
  billingEnd: r.billing_end,
  activatedAt: r.activated_at,
  lastBilledAt: r.last_billed_at,
  lastBilledFrom: r.last_billed_from,
  lastBilledTo: r.last_billed_to,
  nextBillingAt: r.next_billing_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The columns of an item row that insert and update both write. */
const itemColumns = (i: ItemRecord) => ({
  subscription_id: i.subscriptionId,
  parent_id: i.parentId,
  product_id: i.productId,
  price_plan_id: i.pricePlanId,
  type: i.type,
  name: i.name,
  description: i.description,
  further_information: i.furtherInformation,
  quantity: i.quantity,
  periods: i.periods ? JSON.stringify(i.periods) : null,
  start_date: i.startDate,
  billing_start: i.billingStart,
  billing_anchor: i.billingAnchor,
  billing_end: i.billingEnd,
  activated_at: i.activatedAt,
  last_billed_at: i.lastBilledAt,
  last_billed_from: i.lastBilledFrom,
  last_billed_to: i.lastBilledTo,
  next_billing_at: i.nextBillingAt,
  updated_at: i.updatedAt,
});

/** Rows a multi-row UPDATE sets at most (a subscription's items usually all at once): few statement variants to cache. */
const ROWS_PER_UPDATE = 32;

/** The statement that moves `size` subscriptions' `lastBillingAt` on. */
const lastBillingsUpdate = (size: number) =>
  `UPDATE subscriptions SET last_billing_at = v.column2, updated_at = v.column3
     FROM (VALUES ${Array.from({ length: size }, () => '(?, ?, ?)').join(', ')}) AS v
    WHERE subscriptions.id = v.column1 AND subscriptions.organisation_id = ?`;

/** The statement that moves `size` items' billing on. */
const itemsBillingUpdate = (size: number) =>
  `UPDATE subscription_items SET last_billed_at = v.column2, last_billed_from = v.column3, last_billed_to = v.column4,
     next_billing_at = v.column5, updated_at = v.column6
     FROM (VALUES ${Array.from({ length: size }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}) AS v
    WHERE subscription_items.id = v.column1 AND subscription_items.organisation_id = ?`;

export class SqlSubscriptionRepo implements SubscriptionRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, s: SubscriptionRecord): Promise<void> {
    await this.sql.insert('subscriptions', { id: s.id, organisation_id: org, ...subscriptionColumns(s), created_at: s.createdAt });
  }

  async update(org: string, s: SubscriptionRecord): Promise<void> {
    await this.sql.update('subscriptions', org, s.id, subscriptionColumns(s));
  }

  async get(org: string, id: string): Promise<SubscriptionRecord | undefined> {
    const row = await this.sql.get<SubscriptionRow>('SELECT * FROM subscriptions WHERE organisation_id = ? AND id = ?', org, id);
    return row && toSubscription(row);
  }

  async getMany(org: string, ids: readonly string[]): Promise<SubscriptionRecord[]> {
    if (ids.length === 0) return [];
    // `+organisation_id`: by the organisation's index SQLite would read every subscription of it; by id it reads these.
    const rows = await this.sql.all<SubscriptionRow>('SELECT * FROM subscriptions WHERE +organisation_id = ? AND id IN (SELECT value FROM json_each(?))', org, JSON.stringify(ids));
    return rows.map(toSubscription);
  }

  async getByNumber(org: string, number: string): Promise<SubscriptionRecord | undefined> {
    const row = await this.sql.get<SubscriptionRow>('SELECT * FROM subscriptions WHERE organisation_id = ? AND number = ?', org, number);
    return row && toSubscription(row);
  }

  async numberTaken(org: string, number: string, exceptId = ''): Promise<boolean> {
    return await this.sql.get('SELECT 1 FROM subscriptions WHERE organisation_id = ? AND number = ? AND id <> ?', org, number, exceptId) !== undefined;
  }

  async list(org: string, filter: { customer?: string | undefined; status?: string | undefined; externalId?: string | undefined }, page: PageRequest) {
    const where = ['organisation_id = ?'];
    const params: unknown[] = [org];
    if (filter.customer) {
      where.push('customer_id = ?');
      params.push(filter.customer);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.externalId) {
      where.push('external_id = ?');
      params.push(filter.externalId);
    }
    const { rows, total } = await this.sql.page<SubscriptionRow>(`FROM subscriptions WHERE ${where.join(' AND ')}`, params, page);
    return { rows: rows.map(toSubscription), total };
  }

  async dueCancellations(now: string): Promise<Array<{ org: string; id: string }>> {
    return await this.sql.all<{ org: string; id: string }>(
      `SELECT organisation_id AS org, id FROM subscriptions
       WHERE cancellation_date IS NOT NULL AND cancellation_date <= ? AND status IN ('active', 'paused')`,
      now,
    );
  }

  async duePlanChanges(now: string): Promise<Array<{ org: string; id: string }>> {
    return await this.sql.all<{ org: string; id: string }>(
      `SELECT organisation_id AS org, id FROM subscriptions
       WHERE pending_plan_apply_at IS NOT NULL AND pending_plan_apply_at <= ? AND status = 'active'`,
      now,
    );
  }

  async trialsEnding(now: string, until: string): Promise<Array<{ org: string; id: string }>> {
    return await this.sql.all<{ org: string; id: string }>(
      `SELECT organisation_id AS org, id FROM subscriptions
       WHERE trial_ends_on IS NOT NULL AND trial_ending_notified_at IS NULL AND trial_ends_on > ? AND trial_ends_on <= ? AND status = 'active'`,
      now,
      until,
    );
  }

  async insertItem(org: string, i: ItemRecord): Promise<void> {
    await this.sql.insert('subscription_items', { id: i.id, organisation_id: org, ...itemColumns(i), created_at: i.createdAt });
  }

  async updateItem(org: string, i: ItemRecord): Promise<void> {
    await this.sql.update('subscription_items', org, i.id, itemColumns(i));
  }

  // Only the changed columns: an UPDATE naming an indexed column rewrites that index entry even when
  // its value stays, and the full updates rewrote three indexes of the item and two of the subscription.
  async insertQuantityChange(org: string, c: QuantityChange): Promise<void> {
    await this.sql.insert('item_quantity_changes', {
      id: c.id,
      organisation_id: org,
      item_id: c.itemId,
      changed_at: c.changedAt,
      old_quantity: c.oldQuantity,
      new_quantity: c.newQuantity,
    });
  }

  async quantityChanges(org: string, itemIds: readonly string[]): Promise<QuantityChange[]> {
    if (itemIds.length === 0) return [];
    return (await this.sql
      .all<{ id: string; item_id: string; changed_at: string; old_quantity: string; new_quantity: string }>(
        `SELECT * FROM item_quantity_changes WHERE item_id IN (SELECT value FROM json_each(?)) AND organisation_id = ?
          ORDER BY changed_at, id`,
        JSON.stringify(itemIds),
        org,
      ))
      .map((r) => ({ id: r.id, itemId: r.item_id, changedAt: r.changed_at, oldQuantity: r.old_quantity, newQuantity: r.new_quantity }));
  }

  async updateItemsBilling(org: string, progress: readonly ItemBillingProgress[]): Promise<void> {
    for (let i = 0; i < progress.length; ) {
      const size = Math.min(ROWS_PER_UPDATE, progress.length - i);
      const params: unknown[] = [];
      for (const end = i + size; i < end; i++) {
        const p = progress[i]!;
        params.push(p.id, p.lastBilledAt, p.lastBilledFrom, p.lastBilledTo, p.nextBillingAt, p.updatedAt);
      }
      await this.sql.run(this.sql.textOf('updateItemsBilling', [], size, () => itemsBillingUpdate(size)), ...params, org);
    }
  }


  async updateLastBilling(org: string, id: string, lastBillingAt: string, updatedAt: string): Promise<void> {
    await this.updateLastBillings(org, [{ id, lastBillingAt, updatedAt }]);
  }

  async updateLastBillings(org: string, rows: ReadonlyArray<{ id: string; lastBillingAt: string; updatedAt: string }>): Promise<void> {
    for (let i = 0; i < rows.length; ) {
      const size = Math.min(ROWS_PER_UPDATE, rows.length - i);
      const params: unknown[] = [];
      for (const end = i + size; i < end; i++) params.push(rows[i]!.id, rows[i]!.lastBillingAt, rows[i]!.updatedAt);
      await this.sql.run(this.sql.textOf('updateLastBillings', [], size, () => lastBillingsUpdate(size)), ...params, org);
    }
  }

  async getItem(org: string, id: string): Promise<ItemRecord | undefined> {
    const row = await this.sql.get<ItemRow>('SELECT * FROM subscription_items WHERE organisation_id = ? AND id = ?', org, id);
    return row && toItem(row);
  }

  async items(org: string, subscriptionIds: readonly string[]): Promise<ItemRecord[]> {
    if (subscriptionIds.length === 0) return [];
    if (subscriptionIds.length === 1) {
      // One subscription (every billing unit, every get): its index gives the rows in order, no sort.
      return (await this.sql
        .all<ItemRow>(
          'SELECT * FROM subscription_items WHERE subscription_id = ? AND +organisation_id = ? ORDER BY created_at, id',
          subscriptionIds[0],
          org,
        ))
        .map(toItem);
    }
    return (await this.sql
      .all<ItemRow>(
        // `+organisation_id`: without statistics SQLite would otherwise pick the (organisation_id,
        // price_plan_id) index and read every item of the organisation; by subscription it reads its own.
        `SELECT * FROM subscription_items WHERE +organisation_id = ? AND subscription_id IN (SELECT value FROM json_each(?))
         ORDER BY created_at, id`,
        org,
        JSON.stringify(subscriptionIds),
      ))
      .map(toItem);
  }

  async insertDiscount(org: string, d: AppliedDiscountRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO applied_discounts (id, organisation_id, item_id, coupon_id, discount, status, applied_intervals, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      d.id,
      org,
      d.itemId,
      d.couponId,
      d.discount ? JSON.stringify(d.discount) : null,
      d.status,
      d.appliedIntervals,
      d.createdAt,
    );
  }

  async updateDiscount(org: string, d: AppliedDiscountRecord): Promise<void> {
    await this.sql.update('applied_discounts', org, d.id, { status: d.status, applied_intervals: d.appliedIntervals });
  }

  async discounts(org: string, itemIds: readonly string[]): Promise<AppliedDiscountRecord[]> {
    if (itemIds.length === 0) return [];
    return (await this.sql
      .all<{
        id: string;
        item_id: string;
        coupon_id: string | null;
        discount: string | null;
        status: 'active' | 'expired';
        applied_intervals: number;
        created_at: string;
      }>(
        `SELECT * FROM applied_discounts WHERE organisation_id = ? AND item_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`,
        org,
        JSON.stringify(itemIds),
      ))
      .map((r) => ({
        id: r.id,
        itemId: r.item_id,
        couponId: r.coupon_id,
        discount: r.discount ? (JSON.parse(r.discount) as InlineDiscount) : null,
        status: r.status,
        appliedIntervals: r.applied_intervals,
        createdAt: r.created_at,
      }));
  }
}
