import type { PageRequest } from '../../schemas/common.js';
import type { Invoice, InvoicePayment, InvoiceStatus } from '../../schemas/invoices.js';

export interface InvoiceFilter {
  customer?: string | undefined;
  subscription?: string | undefined;
  status?: InvoiceStatus | undefined;
  /** true: issued invoices only (no drafts). */
  issued?: boolean | undefined;
}

export interface InvoiceRepo {
  /** The invoice with its lines; payments are added with `insertPayment`. */
  insert(org: string, invoice: Invoice): Promise<void>;
  /** Writes the header (status, number, amounts paid, credited and applied, dates); lines, payments and dunningOf are not touched. */
  update(org: string, invoice: Invoice): Promise<void>;
  get(org: string, id: string): Promise<Invoice | undefined>;
  getByNumber(org: string, number: string): Promise<Invoice | undefined>;
  list(org: string, filter: InvoiceFilter, page: PageRequest): Promise<{ rows: Invoice[]; total: number }>;
  insertPayment(org: string, invoiceId: string, payment: InvoicePayment): Promise<void>;
  /** A direct debit that came back: the payment stays listed with `returnedAt` and no longer counts. */
  markPaymentReturned(org: string, paymentId: string, returnedAt: string): Promise<void>;
}
