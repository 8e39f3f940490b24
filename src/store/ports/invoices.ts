import type { InvoiceAddress } from '../../schemas/billingDetails.js';
import type { PageRequest } from '../../schemas/common.js';
import type { Customer } from '../../schemas/customers.js';
import type { Invoice, InvoicePayment, InvoiceStatus } from '../../schemas/invoices.js';
import type { Organisation } from '../../schemas/organisation.js';
import type { REVERSE_CHARGE_TYPES } from '../../schemas/taxGroups.js';

/** A reverse charge that zero-rated lines of an invoice (the tax group's kind). */
export type ReverseCharge = Exclude<(typeof REVERSE_CHARGE_TYPES)[number], 'REVERSE_CHARGE_DEACTIVATED'>;

/**
 * The parties of an issued invoice as they stood when it was issued (migration 036), and the
 * reverse charges of its lines: what its PDF, hosted page and e-mails show from then on.
 */
export interface IssuedParties {
  customer: Pick<Customer, 'customerNumber' | 'companyName' | 'firstName' | 'lastName' | 'timeZone'>;
  /** The subscription it bills: its number, name (the invoice's heading) and purchase order number. */
  subscription: { number: string; name: string | null; poNumber: string | null } | null;
  address: InvoiceAddress | null;
  seller: Pick<Organisation, 'name' | 'legalName' | 'address' | 'vatId' | 'taxNumber' | 'email' | 'invoiceFooter' | 'brandColor'>;
  reverseCharges: ReverseCharge[];
}

export interface InvoiceFilter {
  customer?: string | undefined;
  subscription?: string | undefined;
  status?: InvoiceStatus | undefined;
  /** true: issued invoices only (no drafts). */
  issued?: boolean | undefined;
  /** Open invoices due before this instant (UTC, `toISOString()` form) only. */
  dueBefore?: string | undefined;
  /** Open invoices overdue at this instant (UTC) only: due before it, amountDue > 0, under no active payment plan. */
  overdueAt?: string | undefined;
}

/** The customer of a listed invoice, named as a model recognises it. */
export type InvoiceCustomer = Pick<Customer, 'id' | 'customerNumber' | 'companyName' | 'firstName' | 'lastName'>;

/** An invoice of a list page and its customer, read with the page. */
export type ListedInvoice = Invoice & { customerRef: InvoiceCustomer };

export interface InvoiceRepo {
  /** The invoice with its lines; payments are added with `insertPayment`. */
  insert(org: string, invoice: Invoice): Promise<void>;
  /** `insert` of many invoices, their rows and their lines in multi-row statements. */
  insertMany(org: string, invoices: readonly Invoice[]): Promise<void>;
  /** Written once, when the invoice is issued. */
  insertParties(org: string, invoiceId: string, parties: IssuedParties): Promise<void>;
  /** `insertParties` of many invoices, in multi-row statements. */
  insertManyParties(org: string, rows: ReadonlyArray<{ invoiceId: string; parties: IssuedParties }>): Promise<void>;
  /** Undefined for drafts and for invoices issued before migration 036. */
  getParties(org: string, invoiceId: string): Promise<IssuedParties | undefined>;
  /** Writes the header (status, number, amounts paid, credited and applied, dates); lines, payments and dunningOf are not touched. */
  update(org: string, invoice: Invoice): Promise<void>;
  get(org: string, id: string): Promise<Invoice | undefined>;
  getByNumber(org: string, number: string): Promise<Invoice | undefined>;
  list(org: string, filter: InvoiceFilter, page: PageRequest): Promise<{ rows: ListedInvoice[]; total: number }>;
  insertPayment(org: string, invoiceId: string, payment: InvoicePayment): Promise<void>;
  /** A direct debit that came back: the payment stays listed with `returnedAt` and no longer counts. */
  markPaymentReturned(org: string, paymentId: string, returnedAt: string): Promise<void>;
}
