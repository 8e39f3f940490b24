import type { PageRequest } from '../../schemas/common.js';
import type { PaymentPlan, PaymentPlanStatus } from '../../schemas/paymentPlans.js';

export interface PaymentPlanFilter {
  invoice?: string | undefined;
  status?: PaymentPlanStatus | undefined;
}

/** A plan of a list page and the number of the invoice it splits, read by the same query. */
export type ListedPaymentPlan = PaymentPlan & { invoiceNumber: string | null };

export interface PaymentPlanRepo {
  insert(org: string, plan: PaymentPlan): Promise<void>;
  /** Writes the plan's status fields and replaces its installments with `plan.installments`. */
  update(org: string, plan: PaymentPlan): Promise<void>;
  get(org: string, id: string): Promise<PaymentPlan | undefined>;
  list(org: string, filter: PaymentPlanFilter, page: PageRequest): Promise<{ rows: ListedPaymentPlan[]; total: number }>;
  /** The plan of the invoice that is active or broken (at most one exists). */
  findOpenForInvoice(org: string, invoiceId: string): Promise<PaymentPlan | undefined>;
  /**
   * Across organisations, for the jobs runner: active plans with an open installment due on or before
   * `dueOnOrBefore` (YYYY-MM-DD), oldest first.
   */
  listWithOpenInstallmentDue(dueOnOrBefore: string): Promise<Array<{ organisationId: string; id: string }>>;
}
