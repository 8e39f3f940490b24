import { z } from 'zod';
import { renderInvoicePdf } from '../documents/invoicePdf.js';
import { invoiceDocument, type InvoiceDocumentSource } from '../domain/invoiceDocument.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber } from '../schemas/common.js';

const PDF = 'application/pdf' as const;

/** The tool's result: where to fetch the PDF. */
const pdfLinkSchema = z.object({
  invoice: z.string().describe('Invoice id.'),
  number: z.string().nullable().describe('null while draft.'),
  url: z.string().describe('GET it with the API key as Bearer token.'),
  mimeType: z.literal(PDF),
});

export const invoicePdfOperations = [
  defineOperation({
    name: 'get_invoice_pdf',
    title: 'Get invoice PDF',
    description: 'Link to an invoice as a PDF (a draft is marked DRAFT): a resource_link to fetch, not its bytes.',
    toolset: 'invoices',
    method: 'GET',
    path: '/invoices/{id}/pdf',
    permission: 'invoice:read',
    kind: 'read',
    input: z.strictObject({ id: idOrNumber('invoice') }),
    // The handler's result: the link, and what the REST route renders (never part of the MCP result).
    output: pdfLinkSchema.extend({ document: z.custom<InvoiceDocumentSource>() }),
    mcp: { output: pdfLinkSchema },
    restDocument: {
      mediaType: PDF,
      render: (result) => renderInvoicePdf(result.document),
      filename: (result) => `${result.number ?? `draft-${result.invoice}`}.pdf`,
    },
    resourceLinks: (result) => [
      { type: 'resource_link', uri: result.url, name: `${result.number ?? `draft-${result.invoice}`}.pdf`, mimeType: PDF },
    ],
    handler: async (ctx, input) => {
      const document = await invoiceDocument(ctx.tx, ctx.org, input.id);
      const { id, number } = document.invoice;
      return { invoice: id, number, url: `${ctx.baseUrl}/invoices/${encodeURIComponent(id)}/pdf`, mimeType: PDF, document };
    },
  }),
];
