import type { InvoiceAddress, PaymentMethod } from '../../schemas/billingDetails.js';
import type { PageRequest } from '../../schemas/common.js';

/** A payment method as stored: its status is derived from `enabled` and `expirationDate` when read (domain). */
export type PaymentMethodRecord = Omit<PaymentMethod, 'status'>;

/**
 * Invoice addresses and payment methods of customers. Every read is confined to one organisation and
 * one customer. Payment methods come back with the masked IBAN only; the full one leaves this
 * repository through `sepaIban` alone.
 */
export interface BillingDetailsRepo {
  insertInvoiceAddress(org: string, a: InvoiceAddress): Promise<void>;
  getInvoiceAddress(org: string, customerId: string, id: string): Promise<InvoiceAddress | undefined>;
  defaultInvoiceAddress(org: string, customerId: string): Promise<InvoiceAddress | undefined>;
  /** The default invoice address of each of these customers that has one (a billing batch reads them ahead). */
  defaultInvoiceAddresses(org: string, customerIds: readonly string[]): Promise<InvoiceAddress[]>;
  listInvoiceAddresses(org: string, customerId: string, page: PageRequest): Promise<{ rows: InvoiceAddress[]; total: number }>;
  clearDefaultInvoiceAddress(org: string, customerId: string, at: string): Promise<void>;

  /** `iban` is the full, normalised IBAN of a SEPA method (null otherwise); `m.sepaDebit.iban` is masked. */
  insertPaymentMethod(org: string, m: PaymentMethodRecord, iban: string | null): Promise<void>;
  getPaymentMethod(org: string, customerId: string, id: string): Promise<PaymentMethodRecord | undefined>;
  defaultPaymentMethod(org: string, customerId: string): Promise<PaymentMethodRecord | undefined>;
  listPaymentMethods(org: string, customerId: string, page: PageRequest): Promise<{ rows: PaymentMethodRecord[]; total: number }>;
  clearDefaultPaymentMethod(org: string, customerId: string, at: string): Promise<void>;
  updatePaymentMethod(org: string, m: Pick<PaymentMethodRecord, 'id' | 'name' | 'enabled' | 'default' | 'updatedAt'>): Promise<void>;
  /** The customer's oldest enabled payment method that has not expired at `at`, but `exceptId`. */
  oldestUsablePaymentMethod(org: string, customerId: string, at: string, exceptId: string): Promise<PaymentMethodRecord | undefined>;
  /** The full IBAN of a SEPA payment method, for building collection files only; never put it in a response. */
  sepaIban(org: string, paymentMethodId: string): Promise<string | undefined>;
}
