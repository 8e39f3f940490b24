/**
 * The e-mail outbox (CONTRACT section 8, "Dunning, e-mail and SEPA"). An e-mail is written in the unit
 * of work that causes it (an invoice issued, a dunning level applied), with its recipients, subject and
 * text fixed then; the PDFs it attaches are rendered when it is sent (src/email/sender.ts).
 */
import { notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer, CustomerEmail } from '../schemas/customers.js';
import type { Email, EmailKind } from '../schemas/emails.js';
import type { Invoice } from '../schemas/invoices.js';
import type { EmailAttachment, EmailFilter, Recipient } from '../store/ports/emails.js';
import type { Tx } from '../store/store.js';
import { getCustomer } from './customers.js';
import { zoned } from './dates.js';
import { getInvoice } from './invoices.js';
import { formatMoney } from '../values/money.js';

/**
 * Who receives e-mails of a kind: the addresses flagged for it (isDunningEmail for dunning,
 * isInvoiceEmail for invoices and what is paid on them), else the default address; each address once
 * whatever its case (the first of them, with its receiverName as the name shown).
 */
export function recipientsOf(addresses: readonly CustomerEmail[], kind: EmailKind): Recipient[] {
  const flagged = addresses.filter((a) => (kind === 'dunning' ? a.isDunningEmail : a.isInvoiceEmail));
  const seen = new Set<string>();
  const to: Recipient[] = [];
  for (const a of flagged.length > 0 ? flagged : addresses.filter((d) => d.default)) {
    const key = a.email.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    to.push({ address: a.email, name: a.receiverName?.trim() || null });
  }
  return to;
}

/** How an e-mail addresses the customer: the company, else first and last name, else the customer number. */
export function customerName(customer: Customer): string {
  return customer.companyName ?? ([customer.firstName, customer.lastName].filter(Boolean).join(' ') || customer.customerNumber);
}

/** A calendar date of the customer's time zone (YYYY-MM-DD). */
export function customerDate(instant: string, customer: Customer): string {
  return zoned(instant, customer.timeZone).toISODate() as string;
}

export const invoiceAttachment = (invoice: Invoice): EmailAttachment => ({ invoice: invoice.id, filename: `${invoice.number}.pdf` });

const NAMES = new Intl.ListFormat('en', { type: 'conjunction' });

/** Whom an e-mail greets: its recipients by name when each has one ("Ada Lovelace and Charles Babbage"), else the customer. */
function addresseeOf(customer: Customer, to: readonly Recipient[]): string {
  const names = to.flatMap((r) => (r.name === null ? [] : [r.name]));
  return names.length > 0 && names.length === to.length ? NAMES.format(names) : customerName(customer);
}

/** The customer's recipients of e-mails of a kind (recipientsOf), and whom such an e-mail greets (addresseeOf). */
export async function addressingOf(tx: Tx, org: string, customer: Customer, kind: EmailKind): Promise<{ to: Recipient[]; addressee: string }> {
  const to = recipientsOf(await tx.emails.addressesOf(org, customer.id), kind);
  return { to, addressee: addresseeOf(customer, to) };
}

interface EmailContent {
  kind: EmailKind;
  customer: Customer;
  invoice: string;
  to: Recipient[];
  subject: string;
  text: string;
  html: string | null;
  attachments: EmailAttachment[];
}

/**
 * Queues an e-mail to its recipients, read with addressingOf before its text is written so that the
 * text can greet them. Without any, it is stored `not_sent` with the reason, so the outbox shows that
 * the customer was not reached.
 */
export async function queueEmail(tx: Tx, org: string, input: EmailContent, now: Date): Promise<string> {
  const { to } = input;
  const id = newId();
  const flag = input.kind === 'dunning' ? 'isDunningEmail' : 'isInvoiceEmail';
  await tx.emails.insert(org, {
    id,
    kind: input.kind,
    customer: input.customer.id,
    invoice: input.invoice,
    to,
    subject: input.subject,
    text: input.text,
    html: input.html,
    attachments: input.attachments,
    status: to.length > 0 ? 'queued' : 'not_sent',
    lastError:
      to.length > 0 ? null : `customer ${input.customer.customerNumber} has no e-mail address with ${flag} and no default address`,
    createdAt: now.toISOString(),
  });
  return id;
}

/** The e-mail that sends an issued invoice, its PDF attached. */
export async function queueInvoiceEmail(tx: Tx, org: string, invoice: Invoice, customer: Customer, now: Date): Promise<string> {
  const amount = formatMoney(invoice.grossAmount, invoice.currencyCode);
  const payment =
    invoice.status === 'paid'
      ? 'It is already settled; there is nothing to pay.'
      : `Please pay ${formatMoney(invoice.amountDue, invoice.currencyCode)} by ${customerDate(invoice.dueAt as string, customer)}.`;
  const { to, addressee } = await addressingOf(tx, org, customer, 'invoice');
  const text = [
    `Dear ${addressee},`,
    '',
    `please find attached invoice ${invoice.number} of ${customerDate(invoice.issuedAt as string, customer)} over ${amount}.`,
    payment,
    '',
  ].join('\n');
  return queueEmail(
    tx,
    org,
    { kind: 'invoice', customer, invoice: invoice.id, to, subject: `Invoice ${invoice.number}`, text, html: null, attachments: [invoiceAttachment(invoice)] },
    now,
  );
}

export async function listEmails(tx: Tx, org: string, filter: EmailFilter, page: PageRequest) {
  const customer = filter.customer === undefined ? undefined : (await getCustomer(tx, org, filter.customer)).id;
  const invoice = filter.invoice === undefined ? undefined : (await getInvoice(tx, org, filter.invoice)).id;
  return tx.emails.list(org, { ...filter, customer, invoice }, page);
}

export async function getEmail(tx: Tx, org: string, id: string): Promise<Email> {
  const email = await tx.emails.get(org, id);
  if (!email) throw notFound('E-mail', id);
  return email;
}
