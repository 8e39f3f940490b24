import type { PageRequest } from '../../schemas/common.js';
import type { CreditNote } from '../../schemas/creditNotes.js';
import type { CreditNoteFilter, CreditNoteRepo } from '../ports/creditNotes.js';
import type { Sql } from '../sql.js';

const COLUMNS = `id, number, invoice_id AS invoice, customer_id AS customer, amount, currency_code AS currencyCode, reason,
  created_at AS createdAt`;

export class SqlCreditNoteRepo implements CreditNoteRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, n: CreditNote): Promise<void> {
    await this.sql.insert('credit_notes', {
      id: n.id,
      organisation_id: org,
      number: n.number,
      invoice_id: n.invoice,
      customer_id: n.customer,
      amount: n.amount,
      currency_code: n.currencyCode,
      reason: n.reason,
      created_at: n.createdAt,
    });
  }

  async get(org: string, id: string): Promise<CreditNote | undefined> {
    return await this.sql.get<CreditNote>(`SELECT ${COLUMNS} FROM credit_notes WHERE organisation_id = ? AND id = ?`, org, id);
  }

  async getByNumber(org: string, number: string): Promise<CreditNote | undefined> {
    return await this.sql.get<CreditNote>(`SELECT ${COLUMNS} FROM credit_notes WHERE organisation_id = ? AND number = ?`, org, number);
  }

  async list(org: string, filter: CreditNoteFilter, page: PageRequest) {
    const where = ['organisation_id = ?'];
    const params: unknown[] = [org];
    if (filter.invoice !== undefined) {
      where.push('invoice_id = ?');
      params.push(filter.invoice);
    }
    if (filter.customer !== undefined) {
      where.push('customer_id = ?');
      params.push(filter.customer);
    }
    return await this.sql.page<CreditNote>(`FROM credit_notes WHERE ${where.join(' AND ')}`, params, page, COLUMNS);
  }

  async totalForInvoice(org: string, invoiceId: string): Promise<number> {
    const row = await this.sql.get<{ total: number }>(
      'SELECT coalesce(sum(amount), 0) AS total FROM credit_notes WHERE organisation_id = ? AND invoice_id = ?',
      org,
      invoiceId,
    );
    return row?.total ?? 0;
  }
}
