import type { PageRequest } from '../../schemas/common.js';
import type { Customer, CustomerEmail } from '../../schemas/customers.js';
import type { CustomerFilter, CustomerRepo } from '../ports/customers.js';
import { bool, int, type Sql } from '../sql.js';

const CUSTOMER_COLUMNS = `id, customer_number AS customerNumber, time_zone AS timeZone, first_name AS firstName,
  last_name AS lastName, currency_code AS currencyCode, company_name AS companyName, datev_id AS datevId,
  status, payment_term_days AS paymentTermDays, credit_balance AS creditBalance, custom_fields AS customFields,
  created_at AS createdAt, updated_at AS updatedAt`;

type CustomerRow = Omit<Customer, 'customFields'> & { customFields: string };

const toCustomer = (r: CustomerRow): Customer => ({ ...r, customFields: JSON.parse(r.customFields) as Record<string, unknown> });

interface EmailRow {
  id: string;
  customer_id: string;
  email: string;
  receiver_name: string | null;
  is_invoice_email: number;
  is_dunning_email: number;
  is_default: number;
  created_at: string;
  updated_at: string;
}

const toEmail = (r: EmailRow): CustomerEmail => ({
  id: r.id,
  customer: r.customer_id,
  email: r.email,
  receiverName: r.receiver_name,
  isInvoiceEmail: bool(r.is_invoice_email),
  isDunningEmail: bool(r.is_dunning_email),
  default: bool(r.is_default),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** A-Z folded to a-z and nothing else: what `lower()` does on both engines (SQLite's built-in; PostgreSQL's on "C" collated columns). */
const foldAscii = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** `%text%` for `LIKE … ESCAPE '\'`: the text's own `%`, `_` and `\` match as themselves. */
const containing = (text: string) => `%${foldAscii(text).replace(/[\\%_]/g, '\\$&')}%`;

/** The customer's number, names or one of its e-mail addresses contain the `containing` pattern, bound to each `?`. */
const SEARCH = `(lower(customer_number) LIKE ? ESCAPE '\\' OR lower(company_name) LIKE ? ESCAPE '\\'
  OR lower(first_name) LIKE ? ESCAPE '\\' OR lower(last_name) LIKE ? ESCAPE '\\'
  OR EXISTS (SELECT 1 FROM customer_emails e WHERE e.organisation_id = customers.organisation_id AND e.customer_id = customers.id
    AND lower(e.email) LIKE ? ESCAPE '\\'))`;
const SEARCHED = SEARCH.split('?').length - 1;

export class SqlCustomerRepo implements CustomerRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, c: Customer): Promise<void> {
    await this.sql.run(
      `INSERT INTO customers (id, organisation_id, customer_number, time_zone, first_name, last_name, currency_code,
         company_name, datev_id, status, payment_term_days, credit_balance, custom_fields, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      c.id,
      org,
      c.customerNumber,
      c.timeZone,
      c.firstName,
      c.lastName,
      c.currencyCode,
      c.companyName,
      c.datevId,
      c.status,
      c.paymentTermDays,
      c.creditBalance,
      JSON.stringify(c.customFields),
      c.createdAt,
      c.updatedAt,
    );
  }

  async update(org: string, c: Customer): Promise<void> {
    await this.sql.run(
      `UPDATE customers SET customer_number = ?, time_zone = ?, first_name = ?, last_name = ?, currency_code = ?,
         company_name = ?, datev_id = ?, status = ?, payment_term_days = ?, custom_fields = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      c.customerNumber,
      c.timeZone,
      c.firstName,
      c.lastName,
      c.currencyCode,
      c.companyName,
      c.datevId,
      c.status,
      c.paymentTermDays,
      JSON.stringify(c.customFields),
      c.updatedAt,
      org,
      c.id,
    );
  }

  async get(org: string, id: string): Promise<Customer | undefined> {
    const row = await this.sql.get<CustomerRow>(`SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE organisation_id = ? AND id = ?`, org, id);
    return row && toCustomer(row);
  }

  async getMany(org: string, ids: readonly string[]): Promise<Customer[]> {
    if (ids.length === 0) return [];
    return (
      await this.sql.all<CustomerRow>(
        `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE organisation_id = ? AND id IN (SELECT value FROM json_each(?))`,
        org,
        JSON.stringify(ids),
      )
    ).map(toCustomer);
  }

  async getByNumber(org: string, customerNumber: string): Promise<Customer | undefined> {
    const row = await this.sql.get<CustomerRow>(
      `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE organisation_id = ? AND customer_number = ?`,
      org,
      customerNumber,
    );
    return row && toCustomer(row);
  }

  async numberTaken(org: string, customerNumber: string, exceptId = ''): Promise<boolean> {
    return (
      await this.sql.get(
        'SELECT 1 FROM customers WHERE organisation_id = ? AND customer_number = ? AND id <> ?',
        org,
        customerNumber,
        exceptId,
      ) !== undefined
    );
  }

  async list(org: string, filter: CustomerFilter, page: PageRequest) {
    const where = ['organisation_id = ?'];
    const params: unknown[] = [org];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.search !== undefined) {
      where.push(SEARCH);
      params.push(...Array<string>(SEARCHED).fill(containing(filter.search)));
    }
    const { rows, total } = await this.sql.page<CustomerRow>(`FROM customers WHERE ${where.join(' AND ')}`, params, page, CUSTOMER_COLUMNS);
    return { rows: rows.map(toCustomer), total };
  }

  async billingSubscriptions(
    org: string,
    customerId: string,
    statuses: { running: readonly string[]; ending: readonly string[] },
    limit: number,
  ): Promise<{ numbers: string[]; total: number }> {
    const { rows, total } = await this.sql.page<{ number: string }>(
      `FROM subscriptions s WHERE s.organisation_id = ? AND s.customer_id = ? AND (s.status IN (SELECT value FROM json_each(?))
         OR (s.status IN (SELECT value FROM json_each(?)) AND EXISTS (SELECT 1 FROM subscription_items i
           WHERE i.organisation_id = s.organisation_id AND i.subscription_id = s.id AND i.next_billing_at IS NOT NULL)))`,
      [org, customerId, JSON.stringify(statuses.running), JSON.stringify(statuses.ending)],
      { page: 1, limit, descending: false },
      's.number',
      's',
    );
    return { numbers: rows.map((r) => r.number), total };
  }

  async insertEmail(org: string, e: CustomerEmail): Promise<void> {
    await this.sql.run(
      `INSERT INTO customer_emails (id, organisation_id, customer_id, email, receiver_name, is_invoice_email,
         is_dunning_email, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      e.id,
      org,
      e.customer,
      e.email,
      e.receiverName,
      int(e.isInvoiceEmail),
      int(e.isDunningEmail),
      int(e.default),
      e.createdAt,
      e.updatedAt,
    );
  }

  async updateEmail(org: string, e: CustomerEmail): Promise<void> {
    await this.sql.run(
      `UPDATE customer_emails SET email = ?, receiver_name = ?, is_invoice_email = ?, is_dunning_email = ?, is_default = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      e.email,
      e.receiverName,
      int(e.isInvoiceEmail),
      int(e.isDunningEmail),
      int(e.default),
      e.updatedAt,
      org,
      e.id,
    );
  }

  async deleteEmail(org: string, id: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM customer_emails WHERE organisation_id = ? AND id = ?', org, id)).changes > 0;
  }

  async emailTaken(org: string, customerId: string, email: string, exceptId = ''): Promise<boolean> {
    return (
      (await this.sql.get(
        'SELECT 1 FROM customer_emails WHERE organisation_id = ? AND customer_id = ? AND lower(email) = ? AND id <> ?',
        org,
        customerId,
        foldAscii(email),
        exceptId,
      )) !== undefined
    );
  }

  async getEmail(org: string, id: string): Promise<CustomerEmail | undefined> {
    const row = await this.sql.get<EmailRow>('SELECT * FROM customer_emails WHERE organisation_id = ? AND id = ?', org, id);
    return row && toEmail(row);
  }

  async listEmails(org: string, customerId: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<EmailRow>(
      'FROM customer_emails WHERE organisation_id = ? AND customer_id = ?',
      [org, customerId],
      page,
    );
    return { rows: rows.map(toEmail), total };
  }

  async clearDefaultEmail(org: string, customerId: string, at: string): Promise<void> {
    await this.sql.run(
      'UPDATE customer_emails SET is_default = 0, updated_at = ? WHERE organisation_id = ? AND customer_id = ? AND is_default = 1',
      at,
      org,
      customerId,
    );
  }

  async addCreditBalance(org: string, customerId: string, delta: number, at: string): Promise<void> {
    await this.sql.run(
      'UPDATE customers SET credit_balance = credit_balance + ?, updated_at = ? WHERE organisation_id = ? AND id = ?',
      delta,
      at,
      org,
      customerId,
    );
  }
}
