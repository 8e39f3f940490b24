import MarkdownIt from 'markdown-it';
import { zoned } from '../domain/dates.js';
import type { OfferPresentation } from '../domain/offerPresentation.js';
import { moneyFormatter, quantityText } from './invoicePdf.js';
import { pdfText, startPdf } from './pdf.js';
import { sellerLines } from './parties.js';

/** A recipient's signature: the name given (typed on the page, else the recipient's), when and how. */
export interface Signature {
  name: string;
  email: string;
  at: string;
  how: string;
}

export interface SignedOfferDocument {
  presentation: OfferPresentation;
  signedAt: string;
  signatures: Signature[];
}

export interface AuditEvent {
  at: string;
  name: string;
  email: string;
  event: string;
  /** null for a step recorded through the API (no browser involved). */
  ip: string | null;
  userAgent: string | null;
}

export interface OfferAuditLogDocument {
  presentation: OfferPresentation;
  signedAt: string;
  /** Hex SHA-256 of the signed offer's PDF. */
  signedSha256: string;
  events: AuditEvent[];
}

const MARGIN = 50;
const FOOTER = 28;
const BODY = 9;
const SMALL = 8;
const GREY = '#555555';
const RULE = '#bbbbbb';
/** Space between table cells. */
const CELL_GAP = 8;

/** An instant (ISO, UTC) to the second: "2026-01-16 09:00:00". */
const toSecond = (instant: string) => `${instant.slice(0, 10)} ${instant.slice(11, 19)}`;
const utcTime = (instant: string) => `${toSecond(instant)} UTC`;

// ---------------------------------------------------------------------------------------------
// Markdown as text blocks (the standard fonts show no markup).

type Block = { kind: 'heading' | 'paragraph' | 'code'; text: string } | { kind: 'item'; text: string; depth: number };

const markdown = new MarkdownIt({ html: false });

type Token = ReturnType<MarkdownIt['parse']>[number];

/** The text of an inline token: links followed by their address, images by their alt text, breaks as spaces. */
function inlineText(children: readonly Token[] | null): string {
  let out = '';
  const hrefs: string[] = [];
  for (const t of children ?? []) {
    if (t.type === 'text' || t.type === 'code_inline') out += t.content;
    else if (t.type === 'softbreak' || t.type === 'hardbreak') out += ' ';
    else if (t.type === 'image') out += inlineText(t.children);
    else if (t.type === 'link_open') hrefs.push(t.attrGet('href') ?? '');
    else if (t.type === 'link_close') {
      const href = hrefs.pop();
      if (href && !out.endsWith(href)) out += ` (${href})`;
    }
  }
  return out;
}

/** A section's markdown as headings, paragraphs, list items ("•" or "1.") and code. */
export function markdownBlocks(source: string): Block[] {
  const out: Block[] = [];
  const lists: Array<{ ordered: boolean; n: number }> = [];
  let heading = false;
  let itemStart = false;
  for (const t of markdown.parse(source, {})) {
    if (t.type === 'bullet_list_open' || t.type === 'ordered_list_open') lists.push({ ordered: t.type === 'ordered_list_open', n: Number(t.attrGet('start') ?? 1) - 1 });
    else if (t.type === 'bullet_list_close' || t.type === 'ordered_list_close') lists.pop();
    else if (t.type === 'list_item_open') {
      lists[lists.length - 1]!.n += 1;
      itemStart = true;
    } else if (t.type === 'heading_open') heading = true;
    else if (t.type === 'heading_close') heading = false;
    else if (t.type === 'fence' || t.type === 'code_block') out.push({ kind: 'code', text: t.content.replace(/\n$/, '') });
    else if (t.type === 'inline') {
      const text = inlineText(t.children);
      if (itemStart) {
        const list = lists[lists.length - 1]!;
        out.push({ kind: 'item', text: `${list.ordered ? `${list.n}.` : '•'} ${text}`, depth: lists.length });
        itemStart = false;
      } else {
        out.push({ kind: heading ? 'heading' : 'paragraph', text });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Layout shared by both documents.

interface Writer {
  pdf: PDFKit.PDFDocument;
  left: number;
  width: number;
  /** Where the next block starts. */
  y: number;
  /** Text at a position; wrapped when a width is given. */
  at(text: string, x: number, y: number, options?: PDFKit.Mixins.TextOptions): void;
  /** Starts a new page unless `height` still fits on this one. */
  room(height: number): void;
  /** A paragraph over the whole width (or from `indent`), moving y below it. */
  paragraph(text: string, font?: string, size?: number, indent?: number): void;
  heading(text: string): void;
  finish(footer: string): Promise<Buffer>;
}

function writer(title: string, author: string, stamp: Date): Writer {
  const { pdf, bytes: ended } = startPdf({ title, author, stamp, margin: MARGIN, bufferPages: true });
  const left = MARGIN;
  const width = pdf.page.width - 2 * MARGIN;
  const bottom = () => pdf.page.height - MARGIN - FOOTER;
  const w: Writer = {
    pdf,
    left,
    width,
    y: MARGIN,
    at(text, x, y, options = {}) {
      pdf.text(pdfText(text), x, y, { lineBreak: options.width !== undefined, ...options });
    },
    room(height) {
      if (w.y + height > bottom()) {
        pdf.addPage();
        w.y = MARGIN;
      }
    },
    paragraph(text, font = 'Helvetica', size = BODY, indent = 0) {
      pdf.font(font).fontSize(size).fillColor('black');
      const height = pdf.heightOfString(pdfText(text), { width: width - indent });
      w.room(height);
      w.at(text, left + indent, w.y, { width: width - indent });
      w.y = pdf.y + 4;
    },
    heading(text) {
      w.room(40);
      w.y += 8;
      pdf.font('Helvetica-Bold').fontSize(11).fillColor('black');
      w.at(text, left, w.y, { width });
      w.y = pdf.y + 4;
    },
    async finish(footer) {
      const range = pdf.bufferedPageRange();
      for (let i = range.start; i < range.start + range.count; i++) {
        pdf.switchToPage(i);
        // Writing into the bottom margin would make pdfkit open a new page.
        const margin = pdf.page.margins.bottom;
        pdf.page.margins.bottom = 0;
        pdf.font('Helvetica').fontSize(SMALL).fillColor(GREY);
        const footerY = pdf.page.height - MARGIN - 10;
        w.at(footer, left, footerY, { width: width * 0.7 });
        w.at(`Page ${i - range.start + 1} of ${range.count}`, left + width * 0.7, footerY, { width: width * 0.3, align: 'right' });
        pdf.page.margins.bottom = margin;
      }
      pdf.end();
      return ended;
    },
  };
  return w;
}

/** Seller on the left, the document's title and facts on the right. */
function letterhead(w: Writer, p: OfferPresentation, title: string, facts: Array<[string, string]>): void {
  const { pdf, left, width } = w;
  const brand = p.seller.brandColor ?? 'black';
  pdf.font('Helvetica-Bold').fontSize(16).fillColor(brand);
  w.at(p.seller.legalName ?? p.seller.name, left, MARGIN, { width: width * 0.55 });
  let y = pdf.y + 2;
  pdf.font('Helvetica').fontSize(SMALL).fillColor(GREY);
  for (const line of sellerLines(p.seller)) {
    w.at(line, left, y, { width: width * 0.55 });
    y = pdf.y;
  }
  pdf.font('Helvetica-Bold').fontSize(14).fillColor(brand);
  w.at(title, left + width * 0.5, MARGIN, { width: width * 0.5, align: 'right' });
  let right = pdf.y + 4;
  pdf.font('Helvetica').fontSize(BODY).fillColor('black');
  for (const [label, value] of facts) {
    w.at(`${label}: ${value}`, left + width * 0.4, right, { width: width * 0.6, align: 'right' });
    right = pdf.y + 1;
  }
  w.y = Math.max(y, right) + 18;
}

interface Column {
  title: string;
  width: number;
  align?: 'left' | 'right';
}

/** A table whose rows grow with their longest cell; on a new page its header is repeated. */
function table(w: Writer, columns: readonly Column[], rows: ReadonlyArray<readonly string[]>): void {
  const { pdf, left } = w;
  const xs = columns.map((_, i) => left + columns.slice(0, i).reduce((sum, c) => sum + c.width, 0));
  const header = () => {
    pdf.font('Helvetica-Bold').fontSize(SMALL).fillColor(GREY);
    columns.forEach((c, i) => w.at(c.title, xs[i]!, w.y, { width: c.width - CELL_GAP, align: c.align ?? 'left' }));
    w.y += 12;
    pdf.moveTo(left, w.y - 2).lineTo(left + w.width, w.y - 2).lineWidth(0.5).strokeColor(RULE).stroke();
  };
  w.room(30);
  header();
  for (const row of rows) {
    pdf.font('Helvetica').fontSize(BODY).fillColor('black');
    const heightOf = (text: string, c: Column) => pdf.heightOfString(pdfText(text), { width: c.width - CELL_GAP });
    const height = Math.max(...columns.map((c, i) => heightOf(row[i] ?? '', c))) + 4;
    const page = pdf.bufferedPageRange().count;
    w.room(height);
    if (pdf.bufferedPageRange().count !== page) {
      header();
      pdf.font('Helvetica').fontSize(BODY).fillColor('black');
    }
    columns.forEach((c, i) => w.at(row[i] ?? '', xs[i]!, w.y, { width: c.width - CELL_GAP, align: c.align ?? 'left' }));
    w.y += height;
  }
  pdf.moveTo(left, w.y).lineTo(left + w.width, w.y).lineWidth(0.5).strokeColor(RULE).stroke();
  w.y += 8;
}

/** Label and amount rows right-aligned under a table. */
function totals(w: Writer, rows: Array<[string, string, boolean?]>): void {
  const { pdf, left, width } = w;
  w.room(rows.length * 14 + 10);
  for (const [label, value, strong] of rows) {
    pdf.font(strong ? 'Helvetica-Bold' : 'Helvetica').fontSize(BODY).fillColor('black');
    w.at(label, left + width * 0.35, w.y, { width: width * 0.45, align: 'right' });
    w.at(value, left + width * 0.8, w.y, { width: width * 0.2, align: 'right' });
    w.y += 14;
  }
}

const dateIn = (timeZone: string) => (instant: string | null) => (instant ? (zoned(instant, timeZone).toISODate() ?? '') : '');

// ---------------------------------------------------------------------------------------------
// The documents.

/**
 * The signed offer as an A4 PDF in the standard fonts: seller and offer facts, description, sections
 * (their markdown as text), the subscription's start and term, its items and prices with their
 * discounts, the trial, the first invoice (the estimate with its tax and totals), and each signature
 * with name, e-mail, time and how it was given.
 */
export async function renderSignedOfferPdf(doc: SignedOfferDocument): Promise<Buffer> {
  const p = doc.presentation;
  const { offer } = p;
  const date = dateIn(p.timeZone);
  const title = `Offer ${offer.number}`;
  const w = writer(`${title} (signed)`, p.seller.legalName ?? p.seller.name, new Date(doc.signedAt));
  letterhead(w, p, title, [
    ['Customer', p.customerName],
    ['Valid until', date(offer.validUntil)],
    ['Signed', utcTime(doc.signedAt)],
  ]);

  w.paragraph(offer.name, 'Helvetica-Bold', 14);
  if (offer.description) w.paragraph(offer.description);
  for (const section of offer.sections) {
    w.heading(section.rendered.title);
    for (const block of markdownBlocks(section.rendered.content)) {
      if (block.kind === 'heading') w.paragraph(block.text, 'Helvetica-Bold', BODY + 1);
      else if (block.kind === 'item') w.paragraph(block.text, 'Helvetica', BODY, 12 * block.depth);
      else if (block.kind === 'code') w.paragraph(block.text, 'Courier', BODY);
      else w.paragraph(block.text);
    }
  }

  w.heading(`Subscription: ${offer.subscription.plan.name}`);
  const { start, activatedBy, term } = p.contract;
  const seller = p.seller.legalName ?? p.seller.name;
  w.paragraph(`Starts: ${start ? date(start) : activatedBy === 'signing' ? 'when the offer is signed' : `when ${seller} activates it, after the offer is signed`}`);
  w.paragraph(`Term: ${term}`);
  table(
    w,
    [
      { title: 'Item', width: 190 },
      { title: 'Qty', width: 50, align: 'right' },
      { title: 'Price', width: 130 },
      { title: 'Billed', width: 125 },
    ],
    // Each discount on a row of its own under its item.
    p.items.flatMap((i) => [[i.name, quantityText(i.quantity), i.price, i.billing], ...i.discounts.map((d) => [d, '', '', ''])]),
  );
  if (p.trial) {
    const free = p.trial.items;
    w.paragraph(`Free trial until ${date(p.trial.until)}: ${free.join(', ')} ${free.length > 1 ? 'are' : 'is'} free until then and billed from then.`);
  }

  const e = p.estimate;
  if (e) {
    const money = moneyFormatter(e.currencyCode);
    w.heading(`First invoice (estimate), on ${date(e.billingDate)}`);
    table(
      w,
      [
        // The description names the line's period.
        { title: 'Description', width: 275 },
        { title: 'Qty', width: 45, align: 'right' },
        { title: 'Unit price', width: 70, align: 'right' },
        { title: 'Tax', width: 35, align: 'right' },
        { title: 'Net', width: 70, align: 'right' },
      ],
      e.lines.map((l) => [
        l.description,
        quantityText(l.quantity),
        money.unit(l),
        `${l.taxRate}%`,
        money.minor(l.netAmount),
      ]),
    );
    totals(w, [
      ['Net', money.minor(e.netAmount)],
      ...e.taxes.map((t): [string, string] => [`Tax ${t.rate}% on ${money.minor(t.netAmount)}`, money.minor(t.taxAmount)]),
      ['Total', money.minor(e.grossAmount), true],
    ]);
    if (!p.hasInvoiceAddress) w.paragraph('Without an invoice address no tax is shown; tax follows the invoice address.', 'Helvetica', SMALL);
  }

  w.heading('Signatures');
  for (const s of doc.signatures) {
    w.room(44);
    w.paragraph(s.name, 'Helvetica-Bold', BODY + 1);
    w.paragraph(`${s.email} - ${utcTime(s.at)}`, 'Helvetica', BODY);
    w.paragraph(s.how, 'Helvetica', SMALL);
    w.y += 4;
  }
  return w.finish(`${p.seller.legalName ?? p.seller.name} - ${title} - signed ${utcTime(doc.signedAt)}`);
}

/**
 * The audit log of a signed offer: every view of the offer page, acceptance, signature and invoice
 * details with its time, the recipient, the address and user agent of the browser (none for a step
 * recorded through the API), and the SHA-256 of the signed offer's PDF.
 */
export async function renderOfferAuditLogPdf(doc: OfferAuditLogDocument): Promise<Buffer> {
  const p = doc.presentation;
  const { offer } = p;
  const title = 'Audit log';
  const w = writer(`${title} of offer ${offer.number}`, p.seller.legalName ?? p.seller.name, new Date(doc.signedAt));
  letterhead(w, p, title, [
    ['Offer', offer.number],
    ['Customer', p.customerName],
    ['Signed', utcTime(doc.signedAt)],
  ]);
  w.paragraph(offer.name, 'Helvetica-Bold', 12);
  w.paragraph('SHA-256 of the signed offer (its PDF document):', 'Helvetica', BODY);
  w.paragraph(doc.signedSha256, 'Courier', BODY);
  w.heading('Events');
  table(
    w,
    [
      { title: 'Time (UTC)', width: 62 },
      { title: 'Recipient', width: 110 },
      { title: 'Event', width: 118 },
      { title: 'IP address', width: 70 },
      { title: 'User agent', width: 135 },
    ],
    doc.events.map((e) => [
      toSecond(e.at),
      `${e.name} ${e.email}`,
      e.event,
      e.ip ?? 'through the API',
      e.userAgent ?? '-',
    ]),
  );
  return w.finish(`${p.seller.legalName ?? p.seller.name} - Audit log of offer ${offer.number} - signed ${utcTime(doc.signedAt)}`);
}
