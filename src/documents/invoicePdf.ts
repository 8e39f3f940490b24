import { linePeriodNote, zoned } from '../domain/dates.js';
import { formatFixed, parseDecimal, type Decimal } from '../values/decimal.js';
import { formatMoney, minorDigits } from '../values/money.js';
import type { InvoiceAddress } from '../schemas/billingDetails.js';
import type { Customer } from '../schemas/customers.js';
import type { Invoice } from '../schemas/invoices.js';
import { addressLines, sellerLines, type Seller } from './parties.js';
import { encodable, pdfText, startPdf } from './pdf.js';

/**
 * A line as the renderer reads it: `quantity` a number or a decimal string, the unit price as
 * `unitAmountDecimal` (a decimal string of minor units, preferred when present) or `unitAmount`.
 */
export interface DocumentLine {
  description: string;
  quantity: number | string;
  unitAmount?: number | null;
  unitAmountDecimal?: string | null;
  netAmount: number;
  taxRate: number | string;
  periodStart: string | null;
  periodEnd: string | null;
}

export interface InvoiceDocument {
  invoice: Omit<Invoice, 'lines'> & { lines: readonly DocumentLine[] };
  customer: Customer;
  /** The subscription it bills, its heading; null for a one-off invoice. */
  subscription: { number: string; name: string | null; poNumber: string | null } | null;
  /** The address the invoice goes to; null: the customer's name alone. */
  address: InvoiceAddress | null;
  seller: Seller;
  /** Statements the invoice carries for its reverse-charged lines. */
  reverseChargeNotes: readonly string[];
}

const MARGIN = 50;
const FOOTER = 28;
const BODY = 9;
const SMALL = 8;
const GREY = '#555555';
const RULE = '#bbbbbb';

/** Table columns: x offset from the left margin, width, alignment. */
const COLUMNS = [
  // The line's period goes under its description unless that names it (`linePeriodNote`).
  { key: 'description', title: 'Description', x: 0, width: 265, align: 'left' },
  { key: 'quantity', title: 'Qty', x: 270, width: 50, align: 'right' },
  { key: 'unit', title: 'Unit price', x: 325, width: 70, align: 'right' },
  { key: 'tax', title: 'Tax', x: 398, width: 30, align: 'right' },
  { key: 'net', title: 'Net', x: 430, width: 65, align: 'right' },
] as const;
type Column = (typeof COLUMNS)[number]['key'];

/** Money as formatMoney writes it, with the ISO code instead of a symbol the standard fonts lack ("₹" → "INR "). */
export function moneyFormatter(currency: string) {
  const symbol = formatMoney(0, currency).replace(/[\d.,]+$/, '');
  const shown = [...symbol].every(encodable) ? symbol : `${currency} `;
  const withSymbol = (text: string) => (text.startsWith('-') ? `-${shown}${text.slice(1)}` : `${shown}${text}`);
  const digits = minorDigits(currency);
  return {
    /** An integer of minor units. */
    minor: (amount: number) => withSymbol(formatMoney(amount, currency).replace(symbol, '')),
    /**
     * A unit price: a decimal string of minor units (0.15 minor units of EUR is €0.0015), with the
     * currency's digits at least and every further digit it has.
     */
    unit: (line: DocumentLine) => {
      const minorUnits: Decimal | undefined =
        line.unitAmountDecimal != null ? parseDecimal(line.unitAmountDecimal) : line.unitAmount != null ? { units: BigInt(line.unitAmount), scale: 0 } : undefined;
      if (!minorUnits) return '';
      const major: Decimal = { units: minorUnits.units, scale: minorUnits.scale + digits };
      const shownDigits = Math.max(digits, significantScale(major));
      return withSymbol(formatFixed(major, shownDigits, ','));
    },
  };
}

/** Fractional digits without trailing zeros. */
function significantScale(d: Decimal): number {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return scale;
}

/** A quantity as written: "3", "1.5" (a decimal string loses its trailing zeros). */
export function quantityText(quantity: number | string): string {
  if (typeof quantity === 'number') return String(quantity);
  const d = parseDecimal(quantity);
  return d ? formatFixed(d, significantScale(d)) : quantity;
}

function rateText(rate: number | string): string {
  return `${String(rate)}%`;
}

const STATUS_MARK: Record<string, string | undefined> = { draft: 'DRAFT', paid: 'PAID', void: 'VOID' };
const STATUS_LABEL: Record<string, string> = { draft: 'Draft', open: 'Open', paid: 'Paid', void: 'Void' };

/** The subscription an invoice bills, as its heading: number and name, and the purchase order number. */
export function subscriptionFacts(subscription: InvoiceDocument['subscription']): Array<[string, string]> {
  if (!subscription) return [];
  const facts: Array<[string, string]> = [['Subscription', [subscription.number, subscription.name].filter(Boolean).join(' - ')]];
  if (subscription.poNumber) facts.push(['PO number', subscription.poNumber]);
  return facts;
}

/**
 * The invoice as an A4 PDF in the standard Helvetica fonts (nothing embedded, nothing fetched): seller,
 * title with the number, dates and the customer's number, the invoice address, one table row per line
 * (the table continues on further pages, its header repeated), tax per rate, net, tax, gross, what
 * settled it (credit notes, credit balance applied, payments) and amount due; a DRAFT, PAID or VOID
 * mark across every page, and "page n of m" in each footer. Dates are the customer's calendar dates.
 * The same invoice gives the same bytes: the document's dates are its issue (or creation) time, and
 * nothing else varies.
 */
export async function renderInvoicePdf(doc: InvoiceDocument): Promise<Buffer> {
  const { invoice, customer, address, seller } = doc;
  const money = moneyFormatter(invoice.currencyCode);
  const date = (instant: string | null) => (instant ? (zoned(instant, customer.timeZone).toISODate() ?? '') : '');
  const title = invoice.number ? `Invoice ${invoice.number}` : 'Draft invoice';
  const stamp = new Date(invoice.issuedAt ?? invoice.createdAt);

  const { pdf, bytes: ended } = startPdf({ title, author: seller.legalName ?? seller.name, stamp, margin: MARGIN, bufferPages: true });

  const left = MARGIN;
  const width = pdf.page.width - 2 * MARGIN;
  const bottom = () => pdf.page.height - MARGIN - FOOTER;
  const at = (text: string, x: number, y: number, options: PDFKit.Mixins.TextOptions = {}) => {
    pdf.text(pdfText(text), x, y, { lineBreak: options.width !== undefined, ...options });
  };

  // Seller and title.
  const brand = seller.brandColor ?? 'black';
  pdf.font('Helvetica-Bold').fontSize(16).fillColor(brand);
  at(seller.legalName ?? seller.name, left, MARGIN, { width: width * 0.6 });
  let y = pdf.y + 2;
  pdf.font('Helvetica').fontSize(SMALL).fillColor(GREY);
  for (const line of sellerLines(seller)) {
    at(line, left, y, { width: width * 0.6 });
    y = pdf.y;
  }
  pdf.font('Helvetica-Bold').fontSize(14).fillColor(brand);
  at(title, left + width * 0.55, MARGIN, { width: width * 0.45, align: 'right' });
  let right = pdf.y + 4;
  pdf.font('Helvetica').fontSize(BODY);
  const facts: Array<[string, string]> = [
    ['Issue date', invoice.issuedAt ? date(invoice.issuedAt) : 'not issued'],
    ['Due date', invoice.dueAt ? date(invoice.dueAt) : '-'],
    ['Customer number', customer.customerNumber],
    ...subscriptionFacts(doc.subscription),
    ['Status', STATUS_LABEL[invoice.status] ?? invoice.status],
  ];
  for (const [label, value] of facts) {
    at(`${label}: ${value}`, left + width * 0.45, right, { width: width * 0.55, align: 'right' });
    right = pdf.y + 1;
  }

  // The customer.
  y = Math.max(y, right) + 18;
  pdf.font('Helvetica-Bold').fontSize(SMALL).fillColor(GREY);
  at('Bill to', left, y);
  y += 11;
  pdf.font('Helvetica').fontSize(BODY + 1).fillColor('black');
  for (const line of addressLines(customer, address)) {
    at(line, left, y, { width: width * 0.6 });
    y = pdf.y + 1;
  }
  y += 18;

  // The lines.
  const tableHeader = () => {
    pdf.font('Helvetica-Bold').fontSize(SMALL).fillColor(GREY);
    for (const c of COLUMNS) at(c.title, left + c.x, y, { width: c.width, align: c.align });
    y += 12;
    pdf.moveTo(left, y - 2).lineTo(left + width, y - 2).lineWidth(0.5).strokeColor(RULE).stroke();
    pdf.font('Helvetica').fontSize(BODY).fillColor('black');
  };
  const newPage = () => {
    pdf.addPage();
    pdf.font('Helvetica').fontSize(SMALL).fillColor(GREY);
    at(`${title} (continued)`, left, MARGIN);
    y = MARGIN + 18;
  };
  tableHeader();
  for (const line of invoice.lines) {
    const cells: Record<Column, string> = {
      description: [line.description, linePeriodNote(line, customer.timeZone)].filter(Boolean).join('\n'),
      quantity: quantityText(line.quantity),
      unit: money.unit(line),
      tax: rateText(line.taxRate),
      net: money.minor(line.netAmount),
    };
    const height = Math.max(...COLUMNS.map((c) => pdf.heightOfString(pdfText(cells[c.key]), { width: c.width }))) + 4;
    if (y + height > bottom()) {
      newPage();
      tableHeader();
    }
    for (const c of COLUMNS) at(cells[c.key], left + c.x, y, { width: c.width, align: c.align });
    y += height;
  }
  pdf.moveTo(left, y).lineTo(left + width, y).lineWidth(0.5).strokeColor(RULE).stroke();
  y += 8;

  // Totals.
  const totals: Array<[string, string, boolean?]> = [['Net', money.minor(invoice.netAmount)]];
  for (const t of invoice.taxes) totals.push([`Tax ${rateText(t.rate)} on ${money.minor(t.netAmount)}`, money.minor(t.taxAmount)]);
  totals.push(['Total tax', money.minor(invoice.taxAmount)], ['Total', money.minor(invoice.grossAmount), true]);
  // Everything that settled part of the total gets its own row, so that Total less the rows is the
  // amount due: a credit note or the customer's credit balance settles as a payment does. The
  // document has the invoice alone, not its credit notes: they show as one row.
  const settled: Array<[string, number]> = [
    ['Paid', invoice.amountPaid],
    ['Credited', invoice.amountCredited],
    ['Credit balance applied', invoice.creditApplied],
  ];
  for (const [label, amount] of settled) if (amount) totals.push([label, money.minor(-amount)]);
  totals.push(['Amount due', money.minor(invoice.amountDue), true]);
  if (y + totals.length * 14 + 40 > bottom()) newPage();
  for (const [label, value, strong] of totals) {
    pdf.font(strong ? 'Helvetica-Bold' : 'Helvetica').fontSize(BODY).fillColor('black');
    at(label, left + width * 0.4, y, { width: width * 0.4, align: 'right' });
    at(value, left + width * 0.8, y, { width: width * 0.2, align: 'right' });
    y += 14;
  }
  y += 10;
  pdf.font('Helvetica').fontSize(SMALL).fillColor(GREY);
  const note = invoice.status === 'void' ? 'This invoice is void.' : invoice.status === 'paid' ? `Paid${invoice.paidAt ? ` on ${date(invoice.paidAt)}` : ''}. Thank you.` : invoice.status === 'draft' ? 'Draft: not an invoice until it is issued.' : invoice.dueAt ? `Please pay ${money.minor(invoice.amountDue)} by ${date(invoice.dueAt)}.` : '';
  if (note) at(note, left, y, { width });
  for (const statement of doc.reverseChargeNotes) at(statement, left, pdf.y + 6, { width });
  if (seller.invoiceFooter) at(seller.invoiceFooter, left, pdf.y + 6, { width });

  // Every page: the status mark and the footer, written once the page count is known.
  const range = pdf.bufferedPageRange();
  const mark = STATUS_MARK[invoice.status];
  for (let i = range.start; i < range.start + range.count; i++) {
    pdf.switchToPage(i);
    // Writing into the bottom margin would make pdfkit open a new page.
    const margin = pdf.page.margins.bottom;
    pdf.page.margins.bottom = 0;
    if (mark) {
      pdf.save();
      pdf.rotate(-35, { origin: [pdf.page.width / 2, pdf.page.height / 2] });
      pdf.font('Helvetica-Bold').fontSize(110).fillColor('#c0392b').fillOpacity(0.18);
      at(mark, 0, pdf.page.height / 2 - 55, { width: pdf.page.width, align: 'center' });
      pdf.restore();
    }
    pdf.fillOpacity(1).font('Helvetica').fontSize(SMALL).fillColor(GREY);
    const footerY = pdf.page.height - MARGIN - 10;
    at(`${seller.legalName ?? seller.name} - ${title}`, left, footerY, { width: width * 0.7 });
    at(`Page ${i - range.start + 1} of ${range.count}`, left + width * 0.7, footerY, { width: width * 0.3, align: 'right' });
    pdf.page.margins.bottom = margin;
  }
  pdf.end();
  return ended;
}
