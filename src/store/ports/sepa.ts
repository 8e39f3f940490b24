import type { PageRequest } from '../../schemas/common.js';
import type { SepaMandate, SepaType, SepaXmlPayment, SequenceType } from '../../schemas/sepa.js';

/** The creditor as stored: the full IBAN, needed for the statements; responses mask it. */
export interface SepaCreditorRecord {
  creditorIdentifier: string;
  name: string;
  iban: string;
  bic: string | null;
  updatedAt: string;
}

export interface SepaMandateRecord {
  id: string;
  customerId: string;
  paymentMethodId: string;
  creditorIdentifier: string;
  mandateReference: string;
  signatureDate: string;
  sepaType: SepaType;
  createdAt: string;
}

/**
 * A mandate as stored: what the interface shows but its status, which follows from when it was
 * revoked and when a collection was last presented under it (src/domain/sepa.ts, `mandateView`).
 */
export type StoredSepaMandate = Omit<SepaMandate, 'status' | 'revokedAt'> & {
  revokedAt: string | null;
  /** The execution date of the latest collection presented under it. */
  lastCollectionDate: string | null;
};

/** A collection as stored, with its mandate as stored. */
export type StoredSepaXmlPayment = Omit<SepaXmlPayment, 'sepaMandate'> & { sepaMandate: StoredSepaMandate };

/** An invoice or installment due for collection, with the mandate that collects it. */
export interface CollectionCandidate {
  invoiceId: string;
  invoiceNumber: string;
  paymentPlanId: string | null;
  installmentId: string | null;
  position: number | null;
  installmentCount: number | null;
  mandateId: string;
  customerId: string;
  amount: number;
  dueDate: string;
}

export interface SepaStatementRecord {
  id: string;
  messageId: string;
  collectionDate: string;
  creditorIdentifier: string;
  creditorName: string;
  creditorIban: string;
  creditorBic: string | null;
  createdAt: string;
}

export interface SepaPaymentRecord {
  id: string;
  statementId: string;
  mandateId: string;
  customerId: string;
  invoiceId: string;
  paymentPlanId: string | null;
  installmentId: string | null;
  invoicePaymentId: string;
  endToEndId: string;
  amount: number;
  sequenceType: SequenceType;
  remittanceInformation: string;
  dueDate: string;
  executionDate: string;
  createdAt: string;
}

export interface SepaPaymentFilter {
  statement?: string | undefined;
  invoice?: string | undefined;
  customer?: string | undefined;
  status?: SepaXmlPayment['status'] | undefined;
}

export interface SepaRepo {
  getCreditor(org: string): Promise<SepaCreditorRecord | undefined>;
  putCreditor(org: string, creditor: SepaCreditorRecord): Promise<void>;
  /** Refused when the creditor already has a mandate with this reference, or the payment method has a mandate. */
  insertMandate(org: string, mandate: SepaMandateRecord): Promise<'inserted' | 'duplicate_reference' | 'duplicate_method'>;
  getMandate(org: string, id: string): Promise<StoredSepaMandate | undefined>;
  /** The mandate on a payment method (at most one: `payment_method_id` is unique), whatever its status. */
  mandateOfMethod(org: string, paymentMethodId: string): Promise<StoredSepaMandate | undefined>;
  listMandates(org: string, customerId: string, page: PageRequest): Promise<{ rows: StoredSepaMandate[]; total: number }>;
  revokeMandate(org: string, id: string, at: string): Promise<void>;
  /**
   * Open EUR invoices (without an active or broken plan) and open installments of active plans, due
   * on or before `dueBy`, whose payment method (the plan's, else the subscription's, else the
   * customer's default) is an enabled SEPA method with a mandate of `creditorIdentifier` that is not
   * revoked and was signed or last used after `usedAfter` (not expired), and that were never
   * collected: invoices first, then installments in plan and position order.
   */
  collectionCandidates(org: string, dueBy: string, creditorIdentifier: string, usedAfter: string): Promise<CollectionCandidate[]>;
  /**
   * The mandate an invoice is paid by direct debit under: that of its latest collection that was not
   * returned; else, while it is open, the mandate of the current creditor, neither revoked nor used
   * last on or before `usedAfter`, on the SEPA method that pays it (an active plan's method, else the
   * subscription's, else the customer's default).
   */
  invoiceMandate(org: string, invoiceId: string, usedAfter: string): Promise<StoredSepaMandate | undefined>;
  insertStatement(org: string, statement: SepaStatementRecord): Promise<void>;
  getStatement(org: string, id: string): Promise<SepaStatementRecord | undefined>;
  getStatementByMessageId(org: string, messageId: string): Promise<SepaStatementRecord | undefined>;
  /** The organisations with a creditor set up: those the collection job visits. */
  creditorOrganisations(): Promise<string[]>;
  /** Whether the organisation has a statement for this collection date. */
  hasStatementFor(org: string, collectionDate: string): Promise<boolean>;
  /** The pre-notification e-mail of a collection (its `notifications`). */
  setPaymentNotification(org: string, id: string, emailId: string): Promise<void>;
  /** Inserts the payment unless its invoice or installment was already collected; whether it did. */
  claimPayment(org: string, payment: SepaPaymentRecord): Promise<boolean>;
  getPayment(org: string, id: string): Promise<StoredSepaXmlPayment | undefined>;
  getPaymentByEndToEndId(org: string, endToEndId: string): Promise<StoredSepaXmlPayment | undefined>;
  listPayments(org: string, filter: SepaPaymentFilter, page: PageRequest): Promise<{ rows: StoredSepaXmlPayment[]; total: number }>;
  /** Every payment of a statement, in the order they were collected. */
  statementPayments(org: string, statementId: string): Promise<StoredSepaXmlPayment[]>;
  markReturned(org: string, id: string, reasonCode: string, returnedAt: string): Promise<void>;
  /** Of these installments, those whose collection was returned, each with the invoice payment it had recorded. */
  returnedInstallmentCollections(org: string, installmentIds: readonly string[]): Promise<Array<{ installmentId: string; invoicePaymentId: string }>>;
}
