import { zoned } from '../domain/dates.js';
import type { Customer } from '../schemas/customers.js';
import type { InvoiceAddress } from '../schemas/billingDetails.js';
import type { DunningLetterTexts, DunningStep } from '../schemas/dunning.js';
import type { Invoice } from '../schemas/invoices.js';
import { moneyFormatter } from './invoicePdf.js';
import { addressLines, sellerLines, type Seller } from './parties.js';
import { pdfText, startPdf } from './pdf.js';

export interface DunningLetterDocument {
  invoice: Invoice;
  customer: Customer;
  address: InvoiceAddress | null;
  seller: Seller;
  step: DunningStep;
  texts: DunningLetterTexts;
  /** Fee invoices of earlier levels still open, each listed with what is still due on it. */
  earlierFees: Invoice[];
}

const MARGIN = 60;
const BODY = 10;
const SMALL = 8;
const GREY = '#555555';

/**
 * A dunning letter on one A4 page, ready to print and post in a window envelope: the seller's
 * letterhead, the customer's address, the date the level was applied, the title and introduction,
 * what is owed (invoice, amounts, fee, the fees of earlier levels still open, new due date) and the
 * closing. Fixed document dates, so the same step renders the same bytes.
 */
export async function renderDunningLetter(doc: DunningLetterDocument): Promise<Buffer> {
  const { invoice, customer, address, seller, step, texts, earlierFees } = doc;
  const money = moneyFormatter(invoice.currencyCode).minor;
  const date = (instant: string) => zoned(instant, customer.timeZone).toISODate() ?? '';
  const stamp = new Date(step.appliedAt);
  const { pdf, bytes: ended } = startPdf({ title: texts.title, author: seller.legalName ?? seller.name, stamp, margin: MARGIN });
  const left = MARGIN;
  const width = pdf.page.width - 2 * MARGIN;
  const write = (text: string, options: PDFKit.Mixins.TextOptions = {}) => pdf.text(pdfText(text), { width, ...options });
  /** A template text: its blank lines separate paragraphs, its other line breaks stay breaks. */
  const paragraphs = (text: string) =>
    text.split(/\n\s*\n/).forEach((paragraph, i) => {
      if (i > 0) pdf.moveDown();
      for (const line of paragraph.split('\n')) write(line);
    });

  pdf.font('Helvetica-Bold').fontSize(14).fillColor(seller.brandColor ?? 'black');
  write(seller.legalName ?? seller.name);
  pdf.font('Helvetica').fontSize(SMALL).fillColor(GREY);
  write(sellerLines(seller).join(' · '));

  pdf.moveDown(3).font('Helvetica').fontSize(BODY).fillColor('black');
  for (const line of addressLines(customer, address)) write(line, { width: width * 0.6 });
  pdf.moveDown(2);
  write(`Date: ${date(step.appliedAt)}`, { align: 'right' });
  write(`Customer number: ${customer.customerNumber}`, { align: 'right' });

  pdf.moveDown(2).font('Helvetica-Bold').fontSize(13);
  write(texts.title);
  pdf.moveDown().font('Helvetica').fontSize(BODY);
  paragraphs(texts.introduction);

  pdf.moveDown();
  const rows: Array<[string, string]> = [
    ['Invoice', `${invoice.number ?? ''} of ${invoice.issuedAt ? date(invoice.issuedAt) : ''}`],
    ['Invoice total', money(invoice.grossAmount)],
    ['Still open', money(invoice.amountDue)],
    ...(step.feeAmount > 0 ? [['Dunning fee (separate invoice)', money(step.feeAmount)] as [string, string]] : []),
    ...earlierFees.map((fee): [string, string] => [`Earlier dunning fee, invoice ${fee.number ?? ''}`, money(fee.amountDue)]),
    ['Please pay by', date(step.newDueAt)],
  ];
  for (const [label, value] of rows) {
    const y = pdf.y;
    pdf.text(pdfText(label), left, y, { width: width * 0.5 });
    pdf.text(pdfText(value), left + width * 0.5, y, { width: width * 0.5, align: 'right' });
    pdf.x = left;
  }
  pdf.moveDown();
  paragraphs(texts.closing);
  pdf.moveDown(2).font('Helvetica').fontSize(SMALL).fillColor(GREY);
  write(`Reminder level ${step.level}`);
  if (seller.invoiceFooter) write(seller.invoiceFooter);
  pdf.end();
  return ended;
}
