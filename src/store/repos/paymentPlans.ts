import type { PageRequest } from '../../schemas/common.js';
import type { Installment, InstallmentStatus, PaymentPlan, PaymentPlanStatus } from '../../schemas/paymentPlans.js';
import type { ListedPaymentPlan, PaymentPlanFilter, PaymentPlanRepo } from '../ports/paymentPlans.js';
import type { Sql } from '../sql.js';

interface PlanRow {
  id: string;
  invoice_id: string;
  status: PaymentPlanStatus;
  currency_code: string;
  payment_method_id: string | null;
  completed_at: string | null;
  broken_at: string | null;
  broken_reason: string | null;
  canceled_at: string | null;
  created_at: string;
  updated_at: string;
}

interface InstallmentRow {
  id: string;
  payment_plan_id: string;
  position: number;
  due_at: string;
  amount: number;
  amount_paid: number;
  status: InstallmentStatus;
  paid_at: string | null;
}

const toInstallment = (r: InstallmentRow): Installment => ({
  id: r.id,
  position: r.position,
  dueAt: r.due_at,
  amount: r.amount,
  amountPaid: r.amount_paid,
  status: r.status,
  paidAt: r.paid_at,
});

export class SqlPaymentPlanRepo implements PaymentPlanRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, p: PaymentPlan): Promise<void> {
    await this.sql.run(
      `INSERT INTO payment_plans (id, organisation_id, invoice_id, status, currency_code, payment_method_id, completed_at,
         broken_at, broken_reason, canceled_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      p.id,
      org,
      p.invoiceId,
      p.status,
      p.currencyCode,
      p.paymentMethodId,
      p.completedAt,
      p.brokenAt,
      p.brokenReason,
      p.canceledAt,
      p.createdAt,
      p.updatedAt,
    );
    await this.insertInstallments(org, p);
  }

  async update(org: string, p: PaymentPlan): Promise<void> {
    await this.sql.run(
      `UPDATE payment_plans SET status = ?, completed_at = ?, broken_at = ?, broken_reason = ?, canceled_at = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      p.status,
      p.completedAt,
      p.brokenAt,
      p.brokenReason,
      p.canceledAt,
      p.updatedAt,
      org,
      p.id,
    );
    await this.sql.run('DELETE FROM payment_plan_installments WHERE organisation_id = ? AND payment_plan_id = ?', org, p.id);
    await this.insertInstallments(org, p);
  }

  async get(org: string, id: string): Promise<PaymentPlan | undefined> {
    const row = await this.sql.get<PlanRow>('SELECT * FROM payment_plans WHERE organisation_id = ? AND id = ?', org, id);
    return row && (await this.assemble(org, [row]))[0];
  }

  /** A page with the number of each plan's invoice, looked up by its primary key per row. */
  async list(org: string, filter: PaymentPlanFilter, page: PageRequest): Promise<{ rows: ListedPaymentPlan[]; total: number }> {
    const where = ['p.organisation_id = ?'];
    const params: unknown[] = [org];
    if (filter.invoice !== undefined) {
      where.push('p.invoice_id = ?');
      params.push(filter.invoice);
    }
    if (filter.status !== undefined) {
      where.push('p.status = ?');
      params.push(filter.status);
    }
    const { rows, total } = await this.sql.page<PlanRow & { invoice_number: string | null }>(
      `FROM payment_plans p WHERE ${where.join(' AND ')}`,
      params,
      page,
      'p.*, (SELECT i.number FROM invoices i WHERE i.id = p.invoice_id) AS invoice_number',
      'p',
    );
    const plans = await this.assemble(org, rows);
    return { rows: plans.map((plan, k) => ({ ...plan, invoiceNumber: rows[k]!.invoice_number })), total };
  }

  async findOpenForInvoice(org: string, invoiceId: string): Promise<PaymentPlan | undefined> {
    const row = await this.sql.get<PlanRow>(
      "SELECT * FROM payment_plans WHERE organisation_id = ? AND invoice_id = ? AND status IN ('active', 'broken')",
      org,
      invoiceId,
    );
    return row && (await this.assemble(org, [row]))[0];
  }

  async listWithOpenInstallmentDue(dueOnOrBefore: string) {
    return await this.sql.all<{ organisationId: string; id: string }>(
      `SELECT p.organisation_id AS organisationId, p.id FROM payment_plans p
       WHERE p.status = 'active' AND EXISTS (SELECT 1 FROM payment_plan_installments i
         WHERE i.payment_plan_id = p.id AND i.status = 'open' AND i.due_at <= ?)
       ORDER BY p.created_at, p.id`,
      dueOnOrBefore,
    );
  }

  private async insertInstallments(org: string, p: PaymentPlan): Promise<void> {
    for (const i of p.installments) {
      await this.sql.run(
        `INSERT INTO payment_plan_installments (id, organisation_id, payment_plan_id, position, due_at, amount, amount_paid,
           status, paid_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        i.id,
        org,
        p.id,
        i.position,
        i.dueAt,
        i.amount,
        i.amountPaid,
        i.status,
        i.paidAt,
      );
    }
  }

  private async assemble(org: string, rows: PlanRow[]): Promise<PaymentPlan[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const installments = await this.sql.all<InstallmentRow>(
      `SELECT * FROM payment_plan_installments WHERE organisation_id = ? AND payment_plan_id IN (${ids.map(() => '?').join(', ')})
       ORDER BY payment_plan_id, position`,
      org,
      ...ids,
    );
    return rows.map((r) => {
      const own = installments.filter((i) => i.payment_plan_id === r.id).map(toInstallment);
      return {
        id: r.id,
        invoiceId: r.invoice_id,
        status: r.status,
        totalAmount: own.reduce((sum, i) => sum + i.amount, 0),
        currencyCode: r.currency_code,
        paymentMethodId: r.payment_method_id,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        completedAt: r.completed_at,
        brokenAt: r.broken_at,
        canceledAt: r.canceled_at,
        brokenReason: r.broken_reason,
        installments: own,
      };
    });
  }
}
