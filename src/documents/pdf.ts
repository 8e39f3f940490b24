import PDFDocument from 'pdfkit';

/** WinAnsi, the encoding of the PDF standard fonts: Latin-1's printable characters and these. */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

export function encodable(ch: string): boolean {
  const c = ch.codePointAt(0)!;
  return (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xff) || WIN_ANSI_EXTRA.has(ch);
}

/**
 * Text the standard fonts can show: line breaks and tabs become spaces, a character outside WinAnsi
 * becomes "?" (the standard fonts have no glyph for it; embedding a font would be the way to show it).
 */
export function pdfText(text: string): string {
  let out = '';
  for (const ch of text.replace(/[\t\r\n]+/g, ' ')) out += encodable(ch) ? ch : '?';
  return out;
}

export interface PdfStart {
  title: string;
  author: string;
  /** The document's creation and modification date: fixed by what it shows, so the same input renders the same bytes. */
  stamp: Date;
  margin: number;
  /** Keep pages to write on them again at the end (page numbers). */
  bufferPages?: boolean;
}

/** An A4 pdfkit document of the service's documents, and the bytes it will have once ended. */
export function startPdf(start: PdfStart): { pdf: PDFKit.PDFDocument; bytes: Promise<Buffer> } {
  const m = start.margin;
  const pdf = new PDFDocument({
    size: 'A4',
    margins: { top: m, bottom: m, left: m, right: m },
    bufferPages: start.bufferPages ?? false,
    info: {
      Title: pdfText(start.title),
      Author: pdfText(start.author),
      Creator: 'billing-mcp',
      Producer: 'billing-mcp',
      CreationDate: start.stamp,
      ModDate: start.stamp,
    },
  });
  const chunks: Buffer[] = [];
  pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
  const bytes = new Promise<Buffer>((resolve, reject) => {
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  return { pdf, bytes };
}
