import { notFound } from '../errors.js';
import type { InvoiceAddress } from '../schemas/billingDetails.js';
import type { Customer } from '../schemas/customers.js';
import type { Invoice } from '../schemas/invoices.js';
import type { Organisation } from '../schemas/organisation.js';
import type { PaymentPlan } from '../schemas/paymentPlans.js';
import type { SepaMandate } from '../schemas/sepa.js';
import type { IssuedParties, ReverseCharge } from '../store/ports/invoices.js';
import type { Tx } from '../store/store.js';
import { billingAddressOf } from './billingDetails.js';
import { getCustomer } from './customers.js';
import { mandateUsedAfter, mandateView, sepaDay } from './sepa.js';
import { getInvoice } from './invoices.js';
import { getOrganisation } from './organisation.js';

/** What an invoice document (the PDF, the hosted page, a dunning letter) shows besides the invoice itself. */
export interface InvoiceDocumentSource {
  invoice: Invoice;
  customer: Customer;
  subscription: IssuedParties['subscription'];
  address: InvoiceAddress | null;
  seller: Organisation;
  /** The statements the invoice must carry for its reverse-charged lines. */
  reverseChargeNotes: string[];
}

/** What an invoice with lines zero-rated by reverse charge states (EU VAT Directive 2006/112/EC, Article 226(11) and (11a)). */
const REVERSE_CHARGE_NOTES: Record<ReverseCharge, string> = {
  REVERSE_CHARGE: 'Reverse charge: VAT is payable by the recipient (Article 196 of Directive 2006/112/EC).',
  REVERSE_CHARGE_INTRA_EU_SUPPLY: 'VAT-exempt intra-Community supply (Article 138 of Directive 2006/112/EC).',
};

/**
 * The invoice `ref` (id or number; a 404 when none) with the parties it shows. An issued invoice shows
 * them as they were when it was issued (`invoice_parties`): a later change of the customer, the address
 * or the organisation does not change it. A draft, and an invoice issued before those were kept, shows
 * the current ones: the customer, its subscription's invoice address (else the customer's default one,
 * else none) and the organisation. Read in one unit of work, so the document shows one consistent state.
 */
export async function invoiceDocument(tx: Tx, org: string, ref: string): Promise<InvoiceDocumentSource> {
  const invoice = await getInvoice(tx, org, ref);
  const [customer, seller, parties] = await Promise.all([getCustomer(tx, org, invoice.customer), getOrganisation(tx, org), tx.invoices.getParties(org, invoice.id)]);
  if (parties) {
    return {
      invoice,
      customer: { ...customer, ...parties.customer },
      subscription: parties.subscription,
      address: parties.address,
      seller: { ...seller, ...parties.seller },
      reverseChargeNotes: parties.reverseCharges.map((kind) => REVERSE_CHARGE_NOTES[kind]),
    };
  }
  const subscription = invoice.subscription ? await tx.subscriptions.get(org, invoice.subscription) : undefined;
  const address = (await billingAddressOf(tx, org, subscription ?? { customerId: customer.id, invoiceAddressId: null })) ?? null;
  const heading = subscription ? { number: subscription.number, name: subscription.name, poNumber: subscription.poNumber } : null;
  return { invoice, customer, subscription: heading, address, seller, reverseChargeNotes: [] };
}

/** What an invoice's hosted page shows (issue 18): the document, its payment plan and its direct debit mandate. */
export interface HostedInvoice extends InvoiceDocumentSource {
  /** The invoice's latest payment plan unless it was canceled (then the invoice is paid as usual again). */
  paymentPlan: PaymentPlan | null;
  /** The SEPA mandate it is (or is to be) paid under by direct debit. */
  mandate: SepaMandate | null;
}

/** Plans an invoice can have had: a canceled one may be followed by another. */
const PLAN_PAGE = { page: 1, limit: 100, descending: true };

/**
 * The document of an issued invoice, as its hosted page offers it. A draft has no hosted page nor
 * PDF there (a 404 like an unknown invoice): it is not an invoice until it is issued, and its lines
 * may still change.
 */
export async function hostedInvoiceDocument(tx: Tx, org: string, id: string): Promise<InvoiceDocumentSource> {
  const document = await invoiceDocument(tx, org, id);
  if (document.invoice.status === 'draft') throw notFound('Invoice', id);
  return document;
}

/** The hosted page of the issued invoice `id`. */
export async function hostedInvoice(tx: Tx, org: string, id: string, now: Date): Promise<HostedInvoice> {
  const document = await hostedInvoiceDocument(tx, org, id);
  const plans = await tx.paymentPlans.list(org, { invoice: document.invoice.id }, PLAN_PAGE);
  const paymentPlan = plans.rows.find((p) => p.status !== 'canceled') ?? null;
  const mandate = await tx.sepa.invoiceMandate(org, document.invoice.id, mandateUsedAfter(sepaDay(now)));
  return { ...document, paymentPlan, mandate: mandate ? mandateView(mandate, now) : null };
}
