import { renderInvoicePdf, subscriptionFacts } from '../documents/invoicePdf.js';
import { addressLines, sellerLines } from '../documents/parties.js';
import { hostedInvoice, hostedInvoiceDocument, type HostedInvoice } from '../domain/invoiceDocument.js';
import { linePeriodNote } from '../domain/dates.js';
import { AppError } from '../errors.js';
import type { PaymentPlan } from '../schemas/paymentPlans.js';
import type { SepaMandate } from '../schemas/sepa.js';
import { formatMoney, formatUnitAmount } from '../values/money.js';
import type { PageContext, PageRoute } from './app.js';
import { chip, day, invoiceStatus } from './format.js';
import { document, html, pagesRoot, type Html } from './html.js';

/** The invoice a hosted-invoice token names; anything else is the generic 404. */
function invoiceOf(ctx: PageContext): { org: string; id: string } {
  const subject = ctx.tokens.verify('invoice', ctx.params.token ?? '');
  if (!subject) throw new AppError('not_found', 'Unknown invoice link');
  return subject;
}

/** Lines of text as one paragraph, a line break between them. */
function lines(texts: readonly string[]): Html {
  return html`${texts.map((t, i) => html`${i ? html`<br>` : ''}${t}`)}`;
}

const PLAN_STATUS: Record<PaymentPlan['status'], string> = {
  active: 'Paid in installments on the dates below.',
  completed: 'Every installment is paid.',
  broken: 'An installment was not paid in time, so the rest of the amount is due now.',
  canceled: 'The payment plan was canceled.',
};

function paymentPlanSection(plan: PaymentPlan, currency: string): Html {
  const installment = (i: PaymentPlan['installments'][number]) => {
    const status = i.status === 'paid' ? chip('Paid', 'ok') : i.status === 'failed' ? chip('Failed', 'warn') : chip('Open');
    return html`<tr><td>${i.position}</td><td>${day(i.dueAt)}</td><td class="num">${formatMoney(i.amount, currency)}</td><td>${status}</td></tr>`;
  };
  return html`<h2>Payment plan</h2>
<p>${PLAN_STATUS[plan.status]}</p>
<table><thead><tr><th scope="col">Installment</th><th scope="col">Due</th><th scope="col" class="num">Amount</th><th scope="col">Status</th></tr></thead>
<tbody>${plan.installments.map(installment)}</tbody></table>`;
}

function mandateSection(mandate: SepaMandate, paid: boolean): Html {
  const account = mandate.bankAccount;
  return html`<h2>Direct debit</h2>
<p>${paid ? 'Paid' : 'Collected'} by SEPA Direct Debit from the account below.</p>
<dl><dt>Account</dt><dd>${account.iban}</dd><dt>Account holder</dt><dd>${account.accountHolder}</dd>
<dt>Mandate reference</dt><dd>${mandate.mandateReference}</dd><dt>Creditor identifier</dt><dd>${mandate.creditorIdentifier}</dd></dl>`;
}

/** What the customer is asked to do, or told, below the totals. */
function paymentNote(page: HostedInvoice): string {
  const { invoice } = page;
  if (invoice.status === 'void') return 'This invoice is void: nothing is to be paid.';
  if (invoice.status === 'paid') return 'Thank you: this invoice is paid.';
  if (page.paymentPlan?.status === 'active') return 'Please pay each installment by its due date.';
  if (page.mandate) return 'The amount due will be collected by direct debit; there is nothing else to do.';
  return `Please pay ${formatMoney(invoice.amountDue, invoice.currencyCode)}${invoice.dueAt ? ' by the due date' : ''}, quoting the invoice number ${invoice.number}.`;
}

function invoicePage(path: string, token: string, page: HostedInvoice, now: Date): string {
  const { invoice, customer, address, seller } = page;
  const currency = invoice.currencyCode;
  const money = (amount: number) => formatMoney(amount, currency);
  const zone = customer.timeZone;
  const periodNote = (l: HostedInvoice['invoice']['lines'][number]) => {
    const note = linePeriodNote(l, zone);
    return note ? html`<br><span class="muted">${note}</span>` : '';
  };
  const number = invoice.number as string;
  const sellerName = seller.legalName ?? seller.name;
  const row = (label: string | Html, amount: number) => html`<tr><th scope="row" colspan="4">${label}</th><td class="num">${money(amount)}</td></tr>`;
  const body = html`<p class="muted">${sellerName}</p>
<h1>Invoice ${number}</h1>
<dl>
<dt>Status</dt><dd>${invoiceStatus(invoice, now)}</dd>
<dt>Issued</dt><dd>${invoice.issuedAt ? day(invoice.issuedAt, zone) : ''}</dd>
${invoice.dueAt ? html`<dt>Due</dt><dd>${day(invoice.dueAt, zone)}</dd>` : ''}
<dt>Customer number</dt><dd>${customer.customerNumber}</dd>
${subscriptionFacts(page.subscription).map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}
<dt>Amount due</dt><dd><strong>${money(invoice.amountDue)}</strong></dd>
${invoice.paidAt ? html`<dt>Paid</dt><dd>${day(invoice.paidAt, zone)}</dd>` : ''}
</dl>
<p><a href="${pagesRoot(path)}invoices/${token}/pdf" download="${number}.pdf">Download the invoice as PDF</a></p>
<div class="parties">
<section class="card" aria-labelledby="from"><h2 id="from">From</h2><p>${lines([sellerName, ...sellerLines(seller)])}</p></section>
<section class="card" aria-labelledby="to"><h2 id="to">Bill to</h2><p>${lines(addressLines(customer, address))}</p></section>
</div>
<h2>Lines</h2>
<table>
<thead><tr><th scope="col">Description</th><th scope="col" class="num"><abbr title="Quantity">Qty</abbr></th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Tax</th><th scope="col" class="num">Net</th></tr></thead>
<tbody>${invoice.lines.map(
    (l) => html`<tr><td>${l.description}${periodNote(l)}</td><td class="num">${l.quantity}</td><td class="num">${formatUnitAmount(l.unitAmountDecimal, currency)}</td><td class="num">${l.taxRate}%</td><td class="num">${money(l.netAmount)}</td></tr>`,
  )}</tbody>
<tfoot>
${row('Net', invoice.netAmount)}
${invoice.taxes.map((t) => row(`Tax ${t.rate}% on ${money(t.netAmount)}`, t.taxAmount))}
${row('Total', invoice.grossAmount)}
${invoice.amountPaid ? row('Paid', -invoice.amountPaid) : ''}
${invoice.amountCredited ? row('Credited', -invoice.amountCredited) : ''}
${invoice.creditApplied ? row('Credit balance applied', -invoice.creditApplied) : ''}
${row('Amount due', invoice.amountDue)}
</tfoot>
</table>
<p>${paymentNote(page)}</p>
${page.reverseChargeNotes.map((note) => html`<p>${note}</p>`)}
${page.paymentPlan ? paymentPlanSection(page.paymentPlan, currency) : ''}
${page.mandate ? mandateSection(page.mandate, invoice.status === 'paid') : ''}
${seller.invoiceFooter ? html`<p class="muted">${lines(seller.invoiceFooter.split(/\r?\n/))}</p>` : ''}`;
  return document({ title: `Invoice ${number} from ${sellerName}`, path, body });
}

/** The hosted invoice page (issue 18): what the customer opens from `hostedUrl`, and its PDF. */
export const INVOICE_PAGES: readonly PageRoute[] = [
  {
    method: 'GET',
    path: '/pages/invoices/:token',
    async handle(ctx) {
      const { org, id } = invoiceOf(ctx);
      const page = await ctx.read((tx) => hostedInvoice(tx, org, id, ctx.now));
      return { html: invoicePage(ctx.path, ctx.params.token as string, page, ctx.now) };
    },
  },
  {
    method: 'GET',
    path: '/pages/invoices/:token/pdf',
    async handle(ctx) {
      const { org, id } = invoiceOf(ctx);
      const source = await ctx.read((tx) => hostedInvoiceDocument(tx, org, id));
      return { pdf: await renderInvoicePdf(source), filename: `${source.invoice.number as string}.pdf` };
    },
  },
];
