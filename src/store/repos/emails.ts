import type { PageRequest } from '../../schemas/common.js';
import type { CustomerEmail } from '../../schemas/customers.js';
import type { Email, EmailKind, EmailStatus } from '../../schemas/emails.js';
import type {
  EmailAttachment,
  EmailFilter,
  EmailOutcome,
  EmailRepo,
  NewEmail,
  OutgoingEmail,
  Recipient,
} from '../ports/emails.js';
import { bool, type Sql } from '../sql.js';

interface EmailRow {
  id: string;
  organisation_id: string;
  kind: EmailKind;
  customer_id: string;
  invoice_id: string;
  recipients: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  attachments: string;
  status: EmailStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
}

interface AddressRow {
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

/** The recipients column: a JSON array of recipients, or of bare addresses as e-mails queued before names were kept have it. */
const recipientsOf = (column: string): Recipient[] =>
  (JSON.parse(column) as Array<Recipient | string>).map((r) => (typeof r === 'string' ? { address: r, name: null } : r));

const toEmail = (r: EmailRow): Email => ({
  id: r.id,
  kind: r.kind,
  invoice: r.invoice_id,
  customer: r.customer_id,
  to: recipientsOf(r.recipients).map((t) => t.address),
  subject: r.subject,
  body: r.body_text,
  status: r.status,
  attempts: r.attempts,
  lastError: r.last_error,
  nextAttemptAt: r.next_attempt_at,
  sentAt: r.sent_at,
  attachments: (JSON.parse(r.attachments) as EmailAttachment[]).map((a) => a.filename),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class SqlEmailRepo implements EmailRepo {
  constructor(private readonly sql: Sql) {}

  async addressesOf(org: string, customerId: string): Promise<CustomerEmail[]> {
    return (await this.sql
      .all<AddressRow>('SELECT * FROM customer_emails WHERE organisation_id = ? AND customer_id = ? ORDER BY created_at, id', org, customerId))
      .map((r) => ({
        id: r.id,
        customer: r.customer_id,
        email: r.email,
        receiverName: r.receiver_name,
        isInvoiceEmail: bool(r.is_invoice_email),
        isDunningEmail: bool(r.is_dunning_email),
        default: bool(r.is_default),
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }));
  }

  async insert(org: string, e: NewEmail): Promise<void> {
    await this.insertMany(org, [e]);
  }

  async insertMany(org: string, emails: readonly NewEmail[]): Promise<void> {
    await this.sql.insertMany(
      'emails',
      emails.map((e) => ({
        id: e.id,
        organisation_id: org,
        kind: e.kind,
        customer_id: e.customer,
        invoice_id: e.invoice,
        recipients: JSON.stringify(e.to),
        subject: e.subject,
        body_text: e.text,
        body_html: e.html,
        attachments: JSON.stringify(e.attachments),
        status: e.status,
        attempts: 0,
        last_error: e.lastError,
        next_attempt_at: e.status === 'queued' ? e.createdAt : null,
        sent_at: null,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      })),
    );
  }

  async get(org: string, id: string): Promise<Email | undefined> {
    const row = await this.sql.get<EmailRow>('SELECT * FROM emails WHERE organisation_id = ? AND id = ?', org, id);
    return row && toEmail(row);
  }

  async list(org: string, filter: EmailFilter, page: PageRequest) {
    const where = ['organisation_id = ?'];
    const params: unknown[] = [org];
    for (const [column, value] of [
      ['kind', filter.kind],
      ['status', filter.status],
      ['invoice_id', filter.invoice],
      ['customer_id', filter.customer],
    ] as const) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    const { rows, total } = await this.sql.page<EmailRow>(`FROM emails WHERE ${where.join(' AND ')}`, params, page);
    return { rows: rows.map(toEmail), total };
  }

  async claimDue(now: string, leaseUntil: string, except: readonly string[], limit: number): Promise<OutgoingEmail[]> {
    const rows = await this.sql.all<EmailRow>(
      `SELECT * FROM emails WHERE status = 'queued' AND next_attempt_at <= ? AND id NOT IN (SELECT value FROM json_each(?))
       ORDER BY next_attempt_at, id LIMIT ?`,
      now,
      JSON.stringify(except),
      limit,
    );
    for (const r of rows) await this.sql.run('UPDATE emails SET next_attempt_at = ? WHERE id = ?', leaseUntil, r.id);
    return rows.map((r) => ({
      organisationId: r.organisation_id,
      id: r.id,
      to: recipientsOf(r.recipients),
      subject: r.subject,
      text: r.body_text,
      html: r.body_html,
      attachments: JSON.parse(r.attachments) as EmailAttachment[],
      attempts: r.attempts,
    }));
  }

  async recordAttempt(org: string, id: string, o: EmailOutcome, at: string): Promise<void> {
    await this.sql.run(
      `UPDATE emails SET status = ?, attempts = attempts + 1, last_error = ?, next_attempt_at = ?, sent_at = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      o.status,
      o.lastError,
      o.nextAttemptAt,
      o.sentAt,
      at,
      org,
      id,
    );
  }

  async markDueNotSent(now: string, reason: string, at: string): Promise<number> {
    return (await this.sql.run(
      `UPDATE emails SET status = 'not_sent', last_error = ?, next_attempt_at = NULL, updated_at = ?
       WHERE status = 'queued' AND next_attempt_at <= ?`,
      reason,
      at,
      now,
    )).changes;
  }
}
