import type { PageRequest } from '../../schemas/common.js';
import type { Invoice, InvoiceLine, InvoicePayment, InvoiceStatus, InvoiceTax } from '../../schemas/invoices.js';
import type { InvoiceFilter, InvoiceRepo, IssuedParties, ListedInvoice } from '../ports/invoices.js';
import type { Sql } from '../sql.js';
import { parseDecimal, unitsAt } from '../../values/decimal.js';
import { rateOfE4, rateToE4 } from '../../values/money.js';

interface InvoiceRow {
  id: string;
  number: string | null;
  customer_id: string;
  subscription_id: string | null;
  status: InvoiceStatus;
  currency_code: string;
  net_amount: number;
  tax_amount: number;
  gross_amount: number;
  /** amountPaid + amountCredited + creditApplied: what is no longer due. */
  amount_settled: number;
  amount_credited: number;
  credit_applied: number;
  taxes: string;
  issued_at: string | null;
  due_at: string | null;
  original_due_at: string | null;
  dunning_of: string | null;
  paid_at: string | null;
  voided_at: string | null;
  created_at: string;
  updated_at: string;
  dunning_paused: number;
}

interface LineRow {
  id: string;
  invoice_id: string;
  position: number;
  description: string;
  quantity: string;
  unit_amount_decimal: string;
  net_amount: number;
  tax_rate_e4: number;
  period_start: string | null;
  period_end: string | null;
}

interface PaymentRow {
  id: string;
  invoice_id: string;
  payment_plan_id: string | null;
  amount: number;
  paid_at: string;
  created_at: string;
  returned_at: string | null;
}

interface StoredTax {
  rateE4: number;
  netAmount: number;
  taxAmount: number;
}

/** Exact percent to the integer 1/10,000 percent units the table stores (rates were checked on input). */
function toE4(rate: number): number {
  const e4 = rateToE4(rate);
  if (e4 === undefined) throw new RangeError(`not a tax rate with at most 4 fractional digits: ${rate}`);
  return e4;
}

/** A unit price of whole minor units as an integer; null when it has a fraction of one. */
function wholeUnits(decimalText: string): number | null {
  const d = parseDecimal(decimalText);
  const units = d && unitsAt(d, 0);
  return units === undefined || units === null ? null : Number(units);
}

const toLine = (r: LineRow): InvoiceLine => ({
  id: r.id,
  position: r.position,
  description: r.description,
  quantity: r.quantity,
  unitAmountDecimal: r.unit_amount_decimal,
  unitAmount: wholeUnits(r.unit_amount_decimal),
  netAmount: r.net_amount,
  taxRate: rateOfE4(r.tax_rate_e4),
  periodStart: r.period_start,
  periodEnd: r.period_end,
});

const toPayment = (r: PaymentRow): InvoicePayment => ({
  id: r.id,
  amount: r.amount,
  paidAt: r.paid_at,
  paymentPlanId: r.payment_plan_id,
  createdAt: r.created_at,
  returnedAt: r.returned_at,
});

const INVOICE_COLUMNS = `i.*, EXISTS (SELECT 1 FROM payment_plans p
  WHERE p.organisation_id = i.organisation_id AND p.invoice_id = i.id AND p.status = 'active') AS dunning_paused`;

/** The customer of each invoice of a list page, read for the page at once. */
interface CustomerRefRow {
  id: string;
  customer_number: string;
  company_name: string | null;
  first_name: string | null;
  last_name: string | null;
}

export class SqlInvoiceRepo implements InvoiceRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, inv: Invoice): Promise<void> {
    await this.insertMany(org, [inv]);
  }

  async insertMany(org: string, invoices: readonly Invoice[]): Promise<void> {
    await this.sql.insertMany(
      'invoices',
      invoices.map((inv) => ({
        id: inv.id,
        organisation_id: org,
        number: inv.number,
        customer_id: inv.customer,
        subscription_id: inv.subscription,
        status: inv.status,
        currency_code: inv.currencyCode,
        net_amount: inv.netAmount,
        tax_amount: inv.taxAmount,
        gross_amount: inv.grossAmount,
        amount_settled: inv.amountPaid + inv.amountCredited + inv.creditApplied,
        amount_credited: inv.amountCredited,
        credit_applied: inv.creditApplied,
        taxes: JSON.stringify(inv.taxes.map((t): StoredTax => ({ rateE4: toE4(t.rate), netAmount: t.netAmount, taxAmount: t.taxAmount }))),
        issued_at: inv.issuedAt,
        due_at: inv.dueAt,
        original_due_at: inv.originalDueAt,
        dunning_of: inv.dunningOf,
        paid_at: inv.paidAt,
        voided_at: inv.voidedAt,
        created_at: inv.createdAt,
        updated_at: inv.updatedAt,
      })),
    );
    await this.sql.insertMany(
      'invoice_lines',
      invoices.flatMap((inv) =>
        inv.lines.map((l) => ({
          id: l.id,
          organisation_id: org,
          invoice_id: inv.id,
          position: l.position,
          description: l.description,
          quantity: l.quantity,
          unit_amount_decimal: l.unitAmountDecimal,
          net_amount: l.netAmount,
          tax_rate_e4: toE4(l.taxRate),
          period_start: l.periodStart,
          period_end: l.periodEnd,
        })),
      ),
    );
  }

  async insertParties(org: string, invoiceId: string, parties: IssuedParties): Promise<void> {
    await this.insertManyParties(org, [{ invoiceId, parties }]);
  }

  async insertManyParties(org: string, rows: ReadonlyArray<{ invoiceId: string; parties: IssuedParties }>): Promise<void> {
    await this.sql.insertMany(
      'invoice_parties',
      rows.map((r) => ({ invoice_id: r.invoiceId, organisation_id: org, parties: JSON.stringify(r.parties) })),
    );
  }

  async getParties(org: string, invoiceId: string): Promise<IssuedParties | undefined> {
    const row = await this.sql.get<{ parties: string }>('SELECT parties FROM invoice_parties WHERE organisation_id = ? AND invoice_id = ?', org, invoiceId);
    return row && (JSON.parse(row.parties) as IssuedParties);
  }

  async update(org: string, inv: Invoice): Promise<void> {
    await this.sql.run(
      `UPDATE invoices SET number = ?, status = ?, amount_settled = ?, amount_credited = ?, credit_applied = ?, issued_at = ?,
         due_at = ?, original_due_at = ?, paid_at = ?, voided_at = ?, updated_at = ? WHERE organisation_id = ? AND id = ?`,
      inv.number,
      inv.status,
      inv.amountPaid + inv.amountCredited + inv.creditApplied,
      inv.amountCredited,
      inv.creditApplied,
      inv.issuedAt,
      inv.dueAt,
      inv.originalDueAt,
      inv.paidAt,
      inv.voidedAt,
      inv.updatedAt,
      org,
      inv.id,
    );
  }

  async get(org: string, id: string): Promise<Invoice | undefined> {
    const row = await this.sql.get<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices i WHERE i.organisation_id = ? AND i.id = ?`, org, id);
    return row && (await this.assemble(org, [row]))[0];
  }

  async getByNumber(org: string, number: string): Promise<Invoice | undefined> {
    const row = await this.sql.get<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices i WHERE i.organisation_id = ? AND i.number = ?`, org, number);
    return row && (await this.assemble(org, [row]))[0];
  }

  /**
   * A page with each invoice's customer (one read for the page). `status=open`, `dueBefore` and
   * `overdueAt` name the status as a literal, so that the partial index of open invoices (migration
   * 037) serves them in every plan: PostgreSQL's generic plan of a bound `status = $n` cannot use it
   * (it paged through every invoice of the organisation for the few open ones), and SQLite matches
   * a bound value against the index only by preparing the statement again on every call.
   */
  async list(org: string, filter: InvoiceFilter, page: PageRequest): Promise<{ rows: ListedInvoice[]; total: number }> {
    const where = ['i.organisation_id = ?'];
    const params: unknown[] = [org];
    if (filter.customer !== undefined) {
      where.push('i.customer_id = ?');
      params.push(filter.customer);
    }
    if (filter.subscription !== undefined) {
      where.push('i.subscription_id = ?');
      params.push(filter.subscription);
    }
    if (filter.status !== undefined && filter.status !== 'open') {
      where.push('i.status = ?');
      params.push(filter.status);
    }
    if (filter.issued) where.push("i.status <> 'draft'");
    if (filter.status === 'open' || filter.dueBefore !== undefined || filter.overdueAt !== undefined) where.push("i.status = 'open'");
    if (filter.dueBefore !== undefined) {
      where.push('i.due_at < ?');
      params.push(filter.dueBefore);
    }
    if (filter.overdueAt !== undefined) {
      where.push(`i.due_at < ? AND i.gross_amount > i.amount_settled AND NOT EXISTS (SELECT 1 FROM payment_plans p
        WHERE p.organisation_id = i.organisation_id AND p.invoice_id = i.id AND p.status = 'active')`);
      params.push(filter.overdueAt);
    }
    const { rows, total } = await this.sql.page<InvoiceRow>(`FROM invoices i WHERE ${where.join(' AND ')}`, params, page, INVOICE_COLUMNS, 'i');
    if (rows.length === 0) return { rows: [], total };
    const ids = [...new Set(rows.map((r) => r.customer_id))];
    const [invoices, customers] = await Promise.all([
      this.assemble(org, rows),
      this.sql.all<CustomerRefRow>(
        `SELECT id, customer_number, company_name, first_name, last_name FROM customers
         WHERE organisation_id = ? AND id IN (${ids.map(() => '?').join(', ')})`,
        org,
        ...ids,
      ),
    ]);
    const byId = new Map(
      customers.map((c) => [c.id, { id: c.id, customerNumber: c.customer_number, companyName: c.company_name, firstName: c.first_name, lastName: c.last_name }]),
    );
    return { rows: invoices.map((invoice) => ({ ...invoice, customerRef: byId.get(invoice.customer)! })), total };
  }

  async insertPayment(org: string, invoiceId: string, p: InvoicePayment): Promise<void> {
    await this.sql.run(
      `INSERT INTO invoice_payments (id, organisation_id, invoice_id, payment_plan_id, amount, paid_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      p.id,
      org,
      invoiceId,
      p.paymentPlanId,
      p.amount,
      p.paidAt,
      p.createdAt,
    );
  }

  async markPaymentReturned(org: string, paymentId: string, returnedAt: string): Promise<void> {
    await this.sql.update('invoice_payments', org, paymentId, { returned_at: returnedAt });
  }

  /** Adds lines and payments to a page of invoice rows with one query each. */
  private async assemble(org: string, rows: InvoiceRow[]): Promise<Invoice[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const marks = ids.map(() => '?').join(', ');
    const lines = await this.sql.all<LineRow>(
      `SELECT * FROM invoice_lines WHERE organisation_id = ? AND invoice_id IN (${marks}) ORDER BY invoice_id, position`,
      org,
      ...ids,
    );
    const payments = await this.sql.all<PaymentRow>(
      `SELECT * FROM invoice_payments WHERE organisation_id = ? AND invoice_id IN (${marks}) ORDER BY invoice_id, created_at, id`,
      org,
      ...ids,
    );
    return rows.map((r) => ({
      id: r.id,
      number: r.number,
      customer: r.customer_id,
      subscription: r.subscription_id,
      status: r.status,
      currencyCode: r.currency_code,
      lines: lines.filter((l) => l.invoice_id === r.id).map(toLine),
      taxes: (JSON.parse(r.taxes) as StoredTax[]).map(
        (t): InvoiceTax => ({ rate: rateOfE4(t.rateE4), netAmount: t.netAmount, taxAmount: t.taxAmount }),
      ),
      netAmount: r.net_amount,
      taxAmount: r.tax_amount,
      grossAmount: r.gross_amount,
      amountPaid: r.amount_settled - r.amount_credited - r.credit_applied,
      amountCredited: r.amount_credited,
      creditApplied: r.credit_applied,
      amountDue: r.status === 'void' ? 0 : r.gross_amount - r.amount_settled,
      issuedAt: r.issued_at,
      dueAt: r.due_at,
      originalDueAt: r.original_due_at,
      paidAt: r.paid_at,
      voidedAt: r.voided_at,
      dunningPaused: r.dunning_paused === 1,
      dunningOf: r.dunning_of,
      payments: payments.filter((p) => p.invoice_id === r.id).map(toPayment),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }
}
