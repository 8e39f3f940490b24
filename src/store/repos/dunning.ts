import type { PageRequest } from '../../schemas/common.js';
import type { DocumentTemplate, DunningLetterTexts, DunningStep, EmailTemplate, OverdueRule } from '../../schemas/dunning.js';
import type { DunningRepo } from '../ports/dunning.js';
import { bool, int, type Sql } from '../sql.js';

interface RuleRow {
  id: string;
  level: number;
  days_overdue: number;
  due_in_days: number;
  type: 'reminder';
  amount_in_cents: number;
  attach_original_invoice: number;
  send_letter: number;
  is_enabled: number;
  email_template: string | null;
  document_template: string | null;
  created_at: string;
  updated_at: string;
}

interface StepRow {
  level: number;
  applied_at: string;
  fee_invoice_id: string | null;
  fee_amount: number;
  email_id: string;
  new_due_at: string;
  letter: string | null;
}

const toRule = (r: RuleRow): OverdueRule => ({
  id: r.id,
  level: r.level,
  daysOverdue: r.days_overdue,
  dueInDays: r.due_in_days,
  type: r.type,
  amountInCents: r.amount_in_cents,
  attachOriginalInvoice: bool(r.attach_original_invoice),
  sendLetter: bool(r.send_letter),
  isEnabled: bool(r.is_enabled),
  emailTemplate: r.email_template === null ? null : (JSON.parse(r.email_template) as EmailTemplate),
  documentTemplate: r.document_template === null ? null : (JSON.parse(r.document_template) as DocumentTemplate),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toStep = (r: StepRow): DunningStep => ({
  level: r.level,
  appliedAt: r.applied_at,
  feeInvoice: r.fee_invoice_id,
  feeAmount: r.fee_amount,
  emailId: r.email_id,
  newDueAt: r.new_due_at,
  letter: r.letter !== null,
});

const json = (value: object | null): string | null => (value === null ? null : JSON.stringify(value));

export class SqlDunningRepo implements DunningRepo {
  constructor(private readonly sql: Sql) {}

  async insertRule(org: string, r: OverdueRule): Promise<void> {
    await this.sql.insert('overdue_rules', { id: r.id, organisation_id: org, ...this.columns(r), created_at: r.createdAt });
  }

  async updateRule(org: string, r: OverdueRule): Promise<void> {
    await this.sql.update('overdue_rules', org, r.id, this.columns(r));
  }

  async deleteRule(org: string, id: string): Promise<void> {
    await this.sql.run('DELETE FROM overdue_rules WHERE organisation_id = ? AND id = ?', org, id);
  }

  async getRule(org: string, id: string): Promise<OverdueRule | undefined> {
    const row = await this.sql.get<RuleRow>('SELECT * FROM overdue_rules WHERE organisation_id = ? AND id = ?', org, id);
    return row && toRule(row);
  }

  async listRules(org: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<RuleRow>('FROM overdue_rules WHERE organisation_id = ?', [org], page);
    return { rows: rows.map(toRule), total };
  }

  async ruleOfLevel(org: string, level: number, exceptId = ''): Promise<OverdueRule | undefined> {
    const row = await this.sql.get<RuleRow>('SELECT * FROM overdue_rules WHERE organisation_id = ? AND level = ? AND id <> ?', org, level, exceptId);
    return row && toRule(row);
  }

  async enabledRules(org: string): Promise<OverdueRule[]> {
    return (await this.sql.all<RuleRow>('SELECT * FROM overdue_rules WHERE organisation_id = ? AND is_enabled = 1 ORDER BY level', org)).map(toRule);
  }

  async insertStep(org: string, invoiceId: string, id: string, s: DunningStep, letter: DunningLetterTexts | null): Promise<void> {
    await this.sql.insert('dunning_steps', {
      id,
      organisation_id: org,
      invoice_id: invoiceId,
      level: s.level,
      applied_at: s.appliedAt,
      fee_invoice_id: s.feeInvoice,
      fee_amount: s.feeAmount,
      email_id: s.emailId,
      new_due_at: s.newDueAt,
      letter: json(letter),
      created_at: s.appliedAt,
    });
  }

  async getStep(org: string, invoiceId: string, level: number) {
    const row = await this.sql.get<StepRow>('SELECT * FROM dunning_steps WHERE organisation_id = ? AND invoice_id = ? AND level = ?', org, invoiceId, level);
    return row && { step: toStep(row), letter: row.letter === null ? null : (JSON.parse(row.letter) as DunningLetterTexts) };
  }

  async listSteps(org: string, invoiceId: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<StepRow>('FROM dunning_steps WHERE organisation_id = ? AND invoice_id = ?', [org, invoiceId], page);
    return { rows: rows.map(toStep), total };
  }

  async highestLevel(org: string, invoiceId: string): Promise<number> {
    return (
      (await this.sql.get<{ level: number | null }>('SELECT max(level) AS level FROM dunning_steps WHERE organisation_id = ? AND invoice_id = ?', org, invoiceId))
        ?.level ?? 0
    );
  }

  async candidates(now: string): Promise<Array<{ organisationId: string; id: string }>> {
    const hoursOverdue =
      this.sql.dialect === 'postgres'
        ? 'extract(epoch FROM (@now::timestamptz - i.original_due_at::timestamptz)) / 3600'
        : '(julianday(@now) - julianday(i.original_due_at)) * 24';
    return await this.sql.all<{ organisationId: string; id: string }>(
      `SELECT i.organisation_id AS organisationId, i.id FROM invoices i
       WHERE i.status = 'open' AND i.dunning_of IS NULL AND i.original_due_at < @now AND i.due_at <= @now
         AND NOT EXISTS (SELECT 1 FROM payment_plans p
           WHERE p.organisation_id = i.organisation_id AND p.invoice_id = i.id AND p.status = 'active')
         AND EXISTS (SELECT 1 FROM overdue_rules r
           WHERE r.organisation_id = i.organisation_id AND r.is_enabled = 1
             AND ${hoursOverdue} >= r.days_overdue * 24 - 1
             AND r.level > coalesce((SELECT max(s.level) FROM dunning_steps s WHERE s.invoice_id = i.id), 0))
       ORDER BY i.original_due_at, i.id`,
      { now },
    );
  }

  private columns(r: OverdueRule): Record<string, unknown> {
    return {
      level: r.level,
      days_overdue: r.daysOverdue,
      due_in_days: r.dueInDays,
      type: r.type,
      amount_in_cents: r.amountInCents,
      attach_original_invoice: int(r.attachOriginalInvoice),
      send_letter: int(r.sendLetter),
      is_enabled: int(r.isEnabled),
      email_template: json(r.emailTemplate),
      document_template: json(r.documentTemplate),
      updated_at: r.updatedAt,
    };
  }
}
