import type { InvoiceAddress } from '../schemas/billingDetails.js';
import type { Customer } from '../schemas/customers.js';
import type { Invoice } from '../schemas/invoices.js';
import type { Organisation } from '../schemas/organisation.js';
import type { Tx } from '../store/store.js';
import { billingAddressOf } from './billingDetails.js';
import { getCustomer } from './customers.js';
import { getInvoice } from './invoices.js';
import { getOrganisation } from './organisation.js';

/** What an invoice document (the PDF) shows besides the invoice itself. */
export interface InvoiceDocumentSource {
  invoice: Invoice;
  customer: Customer;
  address: InvoiceAddress | null;
  seller: Organisation;
}

/**
 * The invoice `ref` (id or number; a 404 when none) with its customer, the address it goes to (its
 * subscription's invoice address, else the customer's default one, else none) and the seller (the
 * organisation). Read in one unit of work, so the document shows one consistent state.
 */
export async function invoiceDocument(tx: Tx, org: string, ref: string): Promise<InvoiceDocumentSource> {
  const invoice = await getInvoice(tx, org, ref);
  const customer = await getCustomer(tx, org, invoice.customer);
  const subscription = invoice.subscription ? await tx.subscriptions.get(org, invoice.subscription) : undefined;
  const address = (await billingAddressOf(tx, org, subscription ?? { customerId: customer.id, invoiceAddressId: null })) ?? null;
  return { invoice, customer, address, seller: await getOrganisation(tx, org) };
}
