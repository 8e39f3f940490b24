import PDFDocument from 'pdfkit';
import { zoned } from '../domain/dates.js';
import type { Customer } from '../schemas/customers.js';
import type { InvoiceAddress } from '../schemas/billingDetails.js';
import type { DunningLetterTexts, DunningStep } from '../schemas/dunning.js';
import type { Invoice } from '../schemas/invoices.js';
import { moneyFormatter, pdfText } from './invoicePdf.js';
import { addressLines, sellerLines, type Seller } from './parties.js';

export interface DunningLetterDocument {
  invoice: Invoice;
  customer: Customer;
  address: InvoiceAddress | null;
  seller: Seller;
  step: DunningStep;
  texts: DunningLetterTexts;
}

const MARGIN = 60;
const BODY = 10;
const SMALL = 8;
const GREY = '#555555';

/**
 * A dunning letter on one A4 page, ready to print and post in a window envelope: the seller's
 * letterhead, the customer's address, the date the level was applied, the title and introduction,
 * what is owed (invoice, amounts, fee, new due date) and the closing. Fixed document dates, so the
 * same step renders the same bytes.
 */
export async function renderDunningLetter(doc: DunningLetterDocument): Promise<Buffer> {
  const { invoice, customer, address, seller, step, texts } = doc;
  const money = moneyFormatter(invoice.currencyCode).minor;
  const date = (instant: string) => zoned(instant, customer.timeZone).toISODate() ?? '';
  const stamp = new Date(step.appliedAt);
  const pdf = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
    info: { Title: pdfText(texts.title), Author: pdfText(seller.legalName ?? seller.name), Creator: 'billing-mcp', Producer: 'billing-mcp', CreationDate: stamp, ModDate: stamp },
  });
  const chunks: Buffer[] = [];
  pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<Buffer>((resolve, reject) => {
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  const left = MARGIN;
  const width = pdf.page.width - 2 * MARGIN;
  const write = (text: string, options: PDFKit.Mixins.TextOptions = {}) => pdf.text(pdfText(text), { width, ...options });

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
  write(texts.introduction);

  pdf.moveDown();
  const rows: Array<[string, string]> = [
    ['Invoice', `${invoice.number ?? ''} of ${invoice.issuedAt ? date(invoice.issuedAt) : ''}`],
    ['Invoice total', money(invoice.grossAmount)],
    ['Still open', money(invoice.amountDue)],
    ...(step.feeAmount > 0 ? [['Dunning fee (separate invoice)', money(step.feeAmount)] as [string, string]] : []),
    ['Please pay by', date(step.newDueAt)],
  ];
  for (const [label, value] of rows) {
    const y = pdf.y;
    pdf.text(pdfText(label), left, y, { width: width * 0.5 });
    pdf.text(pdfText(value), left + width * 0.5, y, { width: width * 0.5, align: 'right' });
    pdf.x = left;
  }
  pdf.moveDown();
  write(texts.closing);
  pdf.moveDown(2).font('Helvetica').fontSize(SMALL).fillColor(GREY);
  write(`Reminder level ${step.level}`);
  if (seller.invoiceFooter) write(seller.invoiceFooter);
  pdf.end();
  return ended;
}
