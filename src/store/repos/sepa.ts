import type { PageRequest } from '../../schemas/common.js';
import type { SepaType, SepaXmlPayment, SequenceType } from '../../schemas/sepa.js';
import type {
  CollectionCandidate,
  SepaCreditorRecord,
  SepaMandateRecord,
  SepaPaymentFilter,
  SepaPaymentRecord,
  SepaRepo,
  SepaStatementRecord,
  StoredSepaMandate,
  StoredSepaXmlPayment,
} from '../ports/sepa.js';
import type { Sql } from '../sql.js';

interface MandateRow {
  id: string;
  organisation_id: string;
  customer_id: string;
  payment_method_id: string;
  creditor_identifier: string;
  mandate_reference: string;
  signature_date: string;
  sepa_type: SepaType;
  revoked_at: string | null;
  created_at: string;
  pm_name: string | null;
  sepa_iban_masked: string;
  sepa_bic: string | null;
  sepa_account_holder: string;
  collected: number;
  last_collection_date: string | null;
}

interface StatementRow {
  id: string;
  message_id: string;
  collection_date: string;
  creditor_identifier: string;
  creditor_name: string;
  creditor_iban: string;
  creditor_bic: string | null;
  created_at: string;
}

interface PaymentRow {
  id: string;
  organisation_id: string;
  statement_id: string;
  mandate_id: string;
  customer_id: string;
  invoice_id: string;
  payment_plan_id: string | null;
  installment_id: string | null;
  invoice_payment_id: string;
  end_to_end_id: string;
  amount: number;
  sequence_type: SequenceType;
  remittance_information: string;
  due_date: string;
  execution_date: string;
  status: SepaXmlPayment['status'];
  return_reason_code: string | null;
  returned_at: string | null;
  notification_email_id: string | null;
  created_at: string;
}

/** When a collection was last presented under the mandate `m`. */
const LAST_USE = '(SELECT max(u.execution_date) FROM sepa_xml_payments u WHERE u.mandate_id = m.id)';

const MANDATE_COLUMNS = `m.*, pm.name AS pm_name, pm.sepa_iban_masked, pm.sepa_bic, pm.sepa_account_holder,
  EXISTS (SELECT 1 FROM sepa_xml_payments x WHERE x.mandate_id = m.id AND x.status = 'collected') AS collected,
  ${LAST_USE} AS last_collection_date`;

const MANDATE_SELECT = `SELECT ${MANDATE_COLUMNS} FROM sepa_mandates m JOIN payment_methods pm ON pm.id = m.payment_method_id`;

function toMandate(r: MandateRow): StoredSepaMandate {
  const value = { iban: r.sepa_iban_masked, bic: r.sepa_bic, accountHolder: r.sepa_account_holder, bankName: null };
  return {
    id: r.id,
    revokedAt: r.revoked_at,
    lastCollectionDate: r.last_collection_date,
    creditorIdentifier: r.creditor_identifier,
    mandateReference: r.mandate_reference,
    signatureDate: r.signature_date,
    bankAccount: { id: r.payment_method_id, alias: r.pm_name, ...value, source: 'payment_method', asValue: value, tenantId: r.organisation_id },
    sequenceType: r.collected ? 'RCUR' : 'FRST',
    sepaType: r.sepa_type,
    createdAt: r.created_at,
    customer: r.customer_id,
    firstSepaDebit: !r.collected,
    tenantId: r.organisation_id,
  };
}

const toStatement = (r: StatementRow): SepaStatementRecord => ({
  id: r.id,
  messageId: r.message_id,
  collectionDate: r.collection_date,
  creditorIdentifier: r.creditor_identifier,
  creditorName: r.creditor_name,
  creditorIban: r.creditor_iban,
  creditorBic: r.creditor_bic,
  createdAt: r.created_at,
});

/** The payment method that pays an invoice `i` (subscription alias `s`): the subscription's, else the customer's default. */
const INVOICE_METHOD = `COALESCE(s.payment_method_id, (SELECT d.id FROM payment_methods d
  WHERE d.organisation_id = i.organisation_id AND d.customer_id = i.customer_id AND d.is_default = 1))`;

const COLLECTABLE = `JOIN payment_methods pm ON pm.organisation_id = i.organisation_id AND pm.customer_id = i.customer_id AND pm.id = %METHOD%
  JOIN sepa_mandates m ON m.payment_method_id = pm.id
  WHERE i.organisation_id = ? AND i.status = 'open' AND i.currency_code = 'EUR'
    AND pm.type = 'sepa_debit' AND pm.enabled = 1 AND m.creditor_identifier = ?
    AND m.revoked_at IS NULL AND COALESCE(${LAST_USE}, m.signature_date) > ?`;

export class SqlSepaRepo implements SepaRepo {
  constructor(private readonly sql: Sql) {}

  async getCreditor(org: string): Promise<SepaCreditorRecord | undefined> {
    const r = await this.sql.get<{ creditor_identifier: string; name: string; iban: string; bic: string | null; updated_at: string }>(
      'SELECT * FROM sepa_creditors WHERE organisation_id = ?',
      org,
    );
    return r && { creditorIdentifier: r.creditor_identifier, name: r.name, iban: r.iban, bic: r.bic, updatedAt: r.updated_at };
  }

  async putCreditor(org: string, c: SepaCreditorRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO sepa_creditors (organisation_id, creditor_identifier, name, iban, bic, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (organisation_id) DO UPDATE SET creditor_identifier = excluded.creditor_identifier, name = excluded.name,
         iban = excluded.iban, bic = excluded.bic, updated_at = excluded.updated_at`,
      org,
      c.creditorIdentifier,
      c.name,
      c.iban,
      c.bic,
      c.updatedAt,
    );
  }

  async insertMandate(org: string, m: SepaMandateRecord): Promise<'inserted' | 'duplicate_reference' | 'duplicate_method'> {
    if (await this.sql.get('SELECT 1 FROM sepa_mandates WHERE payment_method_id = ?', m.paymentMethodId)) return 'duplicate_method';
    const changes = (await this.sql.run(
      `INSERT INTO sepa_mandates (id, organisation_id, customer_id, payment_method_id, creditor_identifier, mandate_reference,
         signature_date, sepa_type, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      m.id,
      org,
      m.customerId,
      m.paymentMethodId,
      m.creditorIdentifier,
      m.mandateReference,
      m.signatureDate,
      m.sepaType,
      m.createdAt,
    )).changes;
    return changes === 1 ? 'inserted' : 'duplicate_reference';
  }

  async getMandate(org: string, id: string): Promise<StoredSepaMandate | undefined> {
    const r = await this.sql.get<MandateRow>(`${MANDATE_SELECT} WHERE m.organisation_id = ? AND m.id = ?`, org, id);
    return r && toMandate(r);
  }

  async mandateOfMethod(org: string, paymentMethodId: string): Promise<StoredSepaMandate | undefined> {
    const r = await this.sql.get<MandateRow>(`${MANDATE_SELECT} WHERE m.payment_method_id = ? AND m.organisation_id = ?`, paymentMethodId, org);
    return r && toMandate(r);
  }

  async listMandates(org: string, customerId: string, page: PageRequest): Promise<{ rows: StoredSepaMandate[]; total: number }> {
    const { rows, total } = await this.sql.page<MandateRow>(
      `FROM sepa_mandates m JOIN payment_methods pm ON pm.id = m.payment_method_id WHERE m.organisation_id = ? AND m.customer_id = ?`,
      [org, customerId],
      page,
      MANDATE_COLUMNS,
      'm',
    );
    return { rows: rows.map(toMandate), total };
  }

  async revokeMandate(org: string, id: string, at: string): Promise<void> {
    await this.sql.run('UPDATE sepa_mandates SET revoked_at = ? WHERE organisation_id = ? AND id = ?', at, org, id);
  }

  async collectionCandidates(org: string, dueBy: string, creditorIdentifier: string, usedAfter: string): Promise<CollectionCandidate[]> {
    const invoices = await this.sql.all<CollectionCandidate>(
      `SELECT i.id AS invoiceId, i.number AS invoiceNumber, NULL AS paymentPlanId, NULL AS installmentId, NULL AS position,
         NULL AS installmentCount, m.id AS mandateId, i.customer_id AS customerId, i.gross_amount - i.amount_settled AS amount,
         substr(i.due_at, 1, 10) AS dueDate
       FROM invoices i LEFT JOIN subscriptions s ON s.organisation_id = i.organisation_id AND s.id = i.subscription_id
       ${COLLECTABLE.replace('%METHOD%', INVOICE_METHOD)}
         AND substr(i.due_at, 1, 10) <= ? AND i.gross_amount > i.amount_settled
         AND NOT EXISTS (SELECT 1 FROM payment_plans p WHERE p.organisation_id = i.organisation_id AND p.invoice_id = i.id
           AND p.status IN ('active', 'broken'))
         AND NOT EXISTS (SELECT 1 FROM sepa_xml_payments x WHERE x.invoice_id = i.id AND x.installment_id IS NULL)
       ORDER BY i.created_at, i.id`,
      org,
      creditorIdentifier,
      usedAfter,
      dueBy,
    );
    const installments = await this.sql.all<CollectionCandidate>(
      `SELECT i.id AS invoiceId, i.number AS invoiceNumber, p.id AS paymentPlanId, n.id AS installmentId, n.position AS position,
         (SELECT count(*) FROM payment_plan_installments c WHERE c.payment_plan_id = p.id) AS installmentCount,
         m.id AS mandateId, i.customer_id AS customerId, n.amount - n.amount_paid AS amount, n.due_at AS dueDate
       FROM payment_plans p
       JOIN payment_plan_installments n ON n.payment_plan_id = p.id
       JOIN invoices i ON i.id = p.invoice_id
       LEFT JOIN subscriptions s ON s.organisation_id = i.organisation_id AND s.id = i.subscription_id
       ${COLLECTABLE.replace('%METHOD%', `COALESCE(p.payment_method_id, ${INVOICE_METHOD})`)}
         AND p.status = 'active' AND n.status = 'open' AND n.due_at <= ?
         AND NOT EXISTS (SELECT 1 FROM sepa_xml_payments x WHERE x.installment_id = n.id)
       ORDER BY p.created_at, p.id, n.position`,
      org,
      creditorIdentifier,
      usedAfter,
      dueBy,
    );
    return [...invoices, ...installments];
  }

  async invoiceMandate(org: string, invoiceId: string, usedAfter: string): Promise<StoredSepaMandate | undefined> {
    const collected = await this.sql.get<{ id: string }>(
      `SELECT mandate_id AS id FROM sepa_xml_payments WHERE organisation_id = ? AND invoice_id = ? AND status = 'collected'
       ORDER BY created_at DESC, id DESC LIMIT 1`,
      org,
      invoiceId,
    );
    const creditor = collected ? undefined : await this.getCreditor(org);
    const paying =
      collected ??
      (creditor &&
        await this.sql.get<{ id: string }>(
          `SELECT m.id FROM invoices i
           LEFT JOIN subscriptions s ON s.organisation_id = i.organisation_id AND s.id = i.subscription_id
           LEFT JOIN payment_plans p ON p.organisation_id = i.organisation_id AND p.invoice_id = i.id AND p.status = 'active'
           ${COLLECTABLE.replace('%METHOD%', `COALESCE(p.payment_method_id, ${INVOICE_METHOD})`)} AND i.id = ?`,
          org,
          creditor.creditorIdentifier,
          usedAfter,
          invoiceId,
        ));
    return paying ? this.getMandate(org, paying.id) : undefined;
  }

  async insertStatement(org: string, s: SepaStatementRecord): Promise<void> {
    await this.sql.insert('sepa_xml_statements', {
      id: s.id,
      organisation_id: org,
      message_id: s.messageId,
      collection_date: s.collectionDate,
      creditor_identifier: s.creditorIdentifier,
      creditor_name: s.creditorName,
      creditor_iban: s.creditorIban,
      creditor_bic: s.creditorBic,
      created_at: s.createdAt,
    });
  }

  async getStatement(org: string, id: string): Promise<SepaStatementRecord | undefined> {
    const r = await this.sql.get<StatementRow>('SELECT * FROM sepa_xml_statements WHERE organisation_id = ? AND id = ?', org, id);
    return r && toStatement(r);
  }

  async getStatementByMessageId(org: string, messageId: string): Promise<SepaStatementRecord | undefined> {
    const r = await this.sql.get<StatementRow>('SELECT * FROM sepa_xml_statements WHERE organisation_id = ? AND message_id = ?', org, messageId);
    return r && toStatement(r);
  }

  async creditorOrganisations(): Promise<string[]> {
    return (await this.sql.all<{ org: string }>('SELECT organisation_id AS org FROM sepa_creditors ORDER BY organisation_id')).map((r) => r.org);
  }

  async hasStatementFor(org: string, collectionDate: string): Promise<boolean> {
    return await this.sql.get('SELECT 1 FROM sepa_xml_statements WHERE organisation_id = ? AND collection_date = ?', org, collectionDate) !== undefined;
  }

  async claimPayment(org: string, p: SepaPaymentRecord): Promise<boolean> {
    const row = {
      id: p.id,
      organisation_id: org,
      statement_id: p.statementId,
      mandate_id: p.mandateId,
      customer_id: p.customerId,
      invoice_id: p.invoiceId,
      payment_plan_id: p.paymentPlanId,
      installment_id: p.installmentId,
      invoice_payment_id: p.invoicePaymentId,
      end_to_end_id: p.endToEndId,
      amount: p.amount,
      sequence_type: p.sequenceType,
      remittance_information: p.remittanceInformation,
      due_date: p.dueDate,
      execution_date: p.executionDate,
      status: 'collected',
      created_at: p.createdAt,
    };
    return await this.sql.insertMany('sepa_xml_payments', [row], 'ON CONFLICT DO NOTHING') === 1;
  }

  async getPayment(org: string, id: string): Promise<StoredSepaXmlPayment | undefined> {
    return (await this.withMandates(org, await this.sql.all<PaymentRow>('SELECT * FROM sepa_xml_payments WHERE organisation_id = ? AND id = ?', org, id)))[0];
  }

  async getPaymentByEndToEndId(org: string, endToEndId: string): Promise<StoredSepaXmlPayment | undefined> {
    const rows = await this.sql.all<PaymentRow>('SELECT * FROM sepa_xml_payments WHERE organisation_id = ? AND end_to_end_id = ?', org, endToEndId);
    return (await this.withMandates(org, rows))[0];
  }

  /** `filter.customer`: only the customer's collections (the domain passes it beside the port's filter). */
  async listPayments(
    org: string,
    filter: SepaPaymentFilter,
    page: PageRequest,
  ): Promise<{ rows: StoredSepaXmlPayment[]; total: number }> {
    const where = ['organisation_id = ?'];
    const params: unknown[] = [org];
    for (const [column, value] of [
      ['statement_id', filter.statement],
      ['invoice_id', filter.invoice],
      ['customer_id', filter.customer],
      ['status', filter.status],
    ] as const) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    const { rows, total } = await this.sql.page<PaymentRow>(`FROM sepa_xml_payments WHERE ${where.join(' AND ')}`, params, page);
    return { rows: await this.withMandates(org, rows), total };
  }

  async statementPayments(org: string, statementId: string): Promise<StoredSepaXmlPayment[]> {
    const rows = await this.sql.all<PaymentRow>(
      'SELECT * FROM sepa_xml_payments WHERE organisation_id = ? AND statement_id = ? ORDER BY created_at, id',
      org,
      statementId,
    );
    return await this.withMandates(org, rows);
  }

  async setPaymentNotification(org: string, id: string, emailId: string): Promise<void> {
    await this.sql.update('sepa_xml_payments', org, id, { notification_email_id: emailId });
  }

  async markReturned(org: string, id: string, reasonCode: string, returnedAt: string): Promise<void> {
    await this.sql.update('sepa_xml_payments', org, id, { status: 'returned', return_reason_code: reasonCode, returned_at: returnedAt });
  }

  /** Searched by installment (`sepa_xml_payments_installment`: an installment is collected at most once). */
  async returnedInstallmentCollections(org: string, installmentIds: readonly string[]): Promise<Array<{ installmentId: string; invoicePaymentId: string }>> {
    if (installmentIds.length === 0) return [];
    return await this.sql.all<{ installmentId: string; invoicePaymentId: string }>(
      `SELECT installment_id AS installmentId, invoice_payment_id AS invoicePaymentId FROM sepa_xml_payments
       WHERE organisation_id = ? AND status = 'returned' AND installment_id IN (${installmentIds.map(() => '?').join(', ')})`,
      org,
      ...installmentIds,
    );
  }

  /** The payments of the rows, each with its mandate (one query for all mandates). */
  private async withMandates(org: string, rows: PaymentRow[]): Promise<StoredSepaXmlPayment[]> {
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.map((r) => r.mandate_id))];
    const mandates = new Map(
      (await this.sql
        .all<MandateRow>(`${MANDATE_SELECT} WHERE m.organisation_id = ? AND m.id IN (${ids.map(() => '?').join(', ')})`, org, ...ids))
        .map((m) => [m.id, toMandate(m)]),
    );
    return rows.map((r) => ({
      id: r.id,
      type: 'debit',
      status: r.status,
      createdAt: r.created_at,
      dueDate: r.due_date,
      remittanceInformation: r.remittance_information,
      endToEndId: r.end_to_end_id,
      amount: r.amount,
      currencyCode: 'EUR',
      sequenceType: r.sequence_type,
      sepaMandate: mandates.get(r.mandate_id)!,
      sepaXmlStatement: r.statement_id,
      invoice: r.invoice_id,
      paymentPlan: r.payment_plan_id,
      installment: r.installment_id,
      transaction: r.invoice_payment_id,
      autoCaptureAt: null,
      notifications: r.notification_email_id ? [r.notification_email_id] : [],
      customer: r.customer_id,
      executionDate: r.execution_date,
      returnReasonCode: r.return_reason_code,
      returnedAt: r.returned_at,
      tenantId: r.organisation_id,
    }));
  }
}
