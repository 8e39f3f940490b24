import type { PageRequest } from '../../schemas/common.js';
import type { DunningLetterTexts, DunningStep, OverdueRule } from '../../schemas/dunning.js';

export interface DunningRepo {
  insertRule(org: string, rule: OverdueRule): Promise<void>;
  updateRule(org: string, rule: OverdueRule): Promise<void>;
  deleteRule(org: string, id: string): Promise<void>;
  getRule(org: string, id: string): Promise<OverdueRule | undefined>;
  listRules(org: string, page: PageRequest): Promise<{ rows: OverdueRule[]; total: number }>;
  /** The rule of this level (another than `exceptId`), if any. */
  ruleOfLevel(org: string, level: number, exceptId?: string): Promise<OverdueRule | undefined>;
  /** The enabled rules, by level. */
  enabledRules(org: string): Promise<OverdueRule[]>;
  /** Inserts a step; its (invoice, level) is unique, so a level already applied throws a unique violation. */
  /** `letter`: the texts of the step's letter, or null when its rule sends none (then `step.letter` is false). */
  insertStep(org: string, invoiceId: string, id: string, step: DunningStep, letter: DunningLetterTexts | null): Promise<void>;
  /** The step of this level on the invoice with its letter's texts (null without a letter). */
  getStep(org: string, invoiceId: string, level: number): Promise<{ step: DunningStep; letter: DunningLetterTexts | null } | undefined>;
  listSteps(org: string, invoiceId: string, page: PageRequest): Promise<{ rows: DunningStep[]; total: number }>;
  /** The highest level applied to the invoice; 0 when none. */
  highestLevel(org: string, invoiceId: string): Promise<number>;
  /**
   * Across organisations, for the jobs runner: open invoices (not fee invoices) whose due date has come
   * at `now`, not covered by an active payment plan, for which an enabled rule above the highest level
   * applied may have been reached (its daysOverdue since the first due date, less an hour for a
   * shorter day in the customer's time zone: the domain decides exactly). Oldest first due first.
   */
  candidates(now: string): Promise<Array<{ organisationId: string; id: string }>>;
}
