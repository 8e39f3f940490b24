import { conflict, invalid, notFound } from '../errors.js';
import type { PageRequest } from '../schemas/common.js';
import type { CreditNote } from '../schemas/creditNotes.js';
import type { Invoice } from '../schemas/invoices.js';
import type { CreditNoteFilter } from '../store/ports/creditNotes.js';
import type { Tx } from '../store/store.js';
import { getCustomer } from './customers.js';
import { getInvoice, issueCreditNote, refuseIfPlanned, statusConflict } from './invoices.js';
import { formatMoney } from '../values/money.js';

/**
 * create_credit_note (CONTRACT section 8): on an open invoice at most its amount due (the default),
 * taken off it; on a paid one at most its gross less earlier credit notes (the default), added to the
 * customer's credit balance. More is a 422 on `amount`; a draft or void invoice, an invoice under an
 * active payment plan, or a paid one credited in full already, a 409.
 */
export async function createCreditNote(
  tx: Tx,
  org: string,
  invoiceRef: string,
  input: { amount?: number | undefined; reason: string },
  now: Date,
): Promise<CreditNote> {
  const invoice = await getInvoice(tx, org, invoiceRef);
  if (invoice.status !== 'open' && invoice.status !== 'paid') {
    statusConflict(
      invoice,
      'a credit note',
      ['open', 'paid'],
      invoice.status === 'draft'
        ? 'A draft cannot be changed: void it (void_invoice) and create a corrected one (create_invoice), or finalize it (finalize_invoice) and credit it then.'
        : 'A void invoice owes nothing.',
    );
  }
  await refuseIfPlanned(tx, org, invoice, 'crediting the invoice');
  const { max, what } = await creditable(tx, org, invoice);
  if (max === 0 && invoice.status === 'paid') throw conflict(`Invoice ${invoice.number} is credited in full already; nothing is left to credit`);
  const amount = input.amount ?? max;
  if (amount > max) {
    throw invalid(
      'amount',
      `amount ${amount} exceeds the ${max} minor units (${formatMoney(max, invoice.currencyCode)}) that can be credited on ${invoice.status} invoice ${invoice.number}: ${what}`,
      'too_large',
    );
  }
  return (await issueCreditNote(tx, org, invoice, { amount, reason: input.reason }, now)).creditNote;
}

/**
 * What an open or paid invoice can still be credited, in minor units: on an open one its amount due;
 * on a paid one its gross less earlier credit notes (the credit balance is in the customer's
 * currency, which is the invoice's: it is fixed once the customer has an invoice).
 */
export async function creditable(tx: Tx, org: string, invoice: Invoice): Promise<{ max: number; what: string }> {
  if (invoice.status === 'open') return { max: invoice.amountDue, what: 'the amount due' };
  return { max: invoice.grossAmount - (await tx.creditNotes.totalForInvoice(org, invoice.id)), what: 'the gross amount less earlier credit notes' };
}

/** A credit note by id or number (CN-2026-000001); a 404 when none. */
export async function getCreditNote(tx: Tx, org: string, ref: string): Promise<CreditNote> {
  const note = (await tx.creditNotes.get(org, ref)) ?? (await tx.creditNotes.getByNumber(org, ref));
  if (!note) throw notFound('Credit note', ref);
  return note;
}

export async function listCreditNotes(tx: Tx, org: string, filter: CreditNoteFilter, page: PageRequest) {
  const invoice = filter.invoice === undefined ? undefined : (await getInvoice(tx, org, filter.invoice)).id;
  const customer = filter.customer === undefined ? undefined : (await getCustomer(tx, org, filter.customer)).id;
  return tx.creditNotes.list(org, { invoice, customer }, page);
}
