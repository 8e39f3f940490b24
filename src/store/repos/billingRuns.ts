import type { BillingRun, BillingRunTrigger } from '../../schemas/billingRuns.js';
import type { PageRequest } from '../../schemas/common.js';
import type { BilledChargeKey, BillingRunRepo, DueItem } from '../ports/billingRuns.js';
import type { Sql } from '../sql.js';

interface Row {
  id: string;
  trigger: BillingRunTrigger;
  status: 'completed' | 'failed';
  subscription_id: string | null;
  as_of: string;
  started_at: string;
  finished_at: string;
  subscriptions_billed: number;
  subscriptions_skipped: number;
  subscriptions_failed: number;
  invoices_created: number;
  invoices: string;
  skipped: string;
  failed: string;
}

const toRun = (r: Row): BillingRun => ({
  id: r.id,
  trigger: r.trigger,
  status: r.status,
  subscription: r.subscription_id,
  asOf: r.as_of,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  subscriptionsBilled: r.subscriptions_billed,
  subscriptionsSkipped: r.subscriptions_skipped,
  subscriptionsFailed: r.subscriptions_failed,
  invoicesCreated: r.invoices_created,
  invoices: JSON.parse(r.invoices) as string[],
  skipped: JSON.parse(r.skipped) as BillingRun['skipped'],
  failed: JSON.parse(r.failed) as BillingRun['failed'],
});

export class SqlBillingRunRepo implements BillingRunRepo {
  constructor(private readonly sql: Sql) {}

  async dueItems(asOf: string, org: string | undefined, after: DueItem | null, limit: number): Promise<DueItem[]> {
    // Row-value keyset on the covering index subscription_items_due (its entries end with the rowid): no sort, no temp b-tree.
    return await this.sql.all<DueItem>(
      `SELECT next_billing_at AS nextBillingAt, organisation_id AS org, subscription_id AS subscriptionId, rowid
         FROM subscription_items ${this.sql.dialect === 'sqlite' ? 'INDEXED BY subscription_items_due' : ''}
        WHERE next_billing_at IS NOT NULL AND next_billing_at <= ? AND (CAST(? AS TEXT) IS NULL OR organisation_id = ?)
          AND (next_billing_at, organisation_id, subscription_id, rowid) > (?, ?, ?, ?)
          AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = subscription_items.subscription_id AND s.status IN ('active', 'cancelled', 'terminated'))
        ORDER BY next_billing_at, organisation_id, subscription_id, rowid LIMIT ?`,
      asOf,
      org ?? null,
      org ?? null,
      after?.nextBillingAt ?? '',
      after?.org ?? '',
      after?.subscriptionId ?? '',
      after?.rowid ?? -1,
      limit,
    );
  }

  async claim(org: string, keys: readonly BilledChargeKey[], invoiceId: string): Promise<number> {
    return await this.claimAll(
      org,
      keys.map((k) => ({ ...k, invoiceId })),
    );
  }

  async claimAll(org: string, claims: ReadonlyArray<BilledChargeKey & { invoiceId: string }>): Promise<number> {
    const rows = claims.map((k) => ({ organisation_id: org, item_id: k.itemId, period_key: k.periodKey, kind: k.kind, invoice_id: k.invoiceId }));
    return await this.sql.insertMany('billed_charges', rows, 'ON CONFLICT DO NOTHING');
  }

  async invoiceOfCharge(org: string, key: BilledChargeKey): Promise<string | undefined> {
    return (await this.sql
      .get<{ invoice_id: string }>(
        'SELECT invoice_id FROM billed_charges WHERE item_id = ? AND period_key = ? AND kind = ? AND organisation_id = ?',
        key.itemId,
        key.periodKey,
        key.kind,
        org,
      ))?.invoice_id;
  }


  async insertRun(org: string, run: BillingRun): Promise<void> {
    await this.sql.insert('billing_runs', {
      id: run.id,
      organisation_id: org,
      trigger: run.trigger,
      status: run.status,
      subscription_id: run.subscription,
      as_of: run.asOf,
      started_at: run.startedAt,
      finished_at: run.finishedAt,
      subscriptions_billed: run.subscriptionsBilled,
      subscriptions_skipped: run.subscriptionsSkipped,
      subscriptions_failed: run.subscriptionsFailed,
      invoices_created: run.invoicesCreated,
      invoices: JSON.stringify(run.invoices),
      skipped: JSON.stringify(run.skipped),
      failed: JSON.stringify(run.failed),
      created_at: run.startedAt,
    });
  }

  async getRun(org: string, id: string): Promise<BillingRun | undefined> {
    const row = await this.sql.get<Row>('SELECT * FROM billing_runs WHERE organisation_id = ? AND id = ?', org, id);
    return row && toRun(row);
  }

  async listRuns(org: string, filter: { trigger?: BillingRunTrigger | undefined }, page: PageRequest) {
    const where = filter.trigger ? 'FROM billing_runs WHERE organisation_id = ? AND trigger = ?' : 'FROM billing_runs WHERE organisation_id = ?';
    const params = filter.trigger ? [org, filter.trigger] : [org];
    const { rows, total } = await this.sql.page<Row>(where, params, page);
    return { rows: rows.map(toRun), total };
  }
}
