import { z } from 'zod';
import { loadOffer } from '../domain/offers.js';
import { getOfferDocument, type StoredOfferDocument } from '../domain/offerSigning.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber } from '../schemas/common.js';
import type { OfferDocumentKind } from '../store/ports/offers.js';

const PDF = 'application/pdf' as const;

/** The tool's result: where to fetch the document, and its digest. */
const documentLinkSchema = z.object({
  offer: z.string().describe('Offer id.'),
  number: z.string(),
  url: z.string().describe('GET it with the API key as Bearer token.'),
  mimeType: z.literal(PDF),
  sha256: z.string().describe('Hex SHA-256 of the PDF.'),
  createdAt: z.string().describe('When the offer was signed.'),
});

const LINK_KIND = { signed: 'signed', audit_log: 'audit-log' } as const;

function documentOperation(kind: OfferDocumentKind, name: string, title: string, description: string) {
  const filename = (result: { number: string }) => `${result.number}-${LINK_KIND[kind]}.pdf`;
  return defineOperation({
    name,
    title,
    description,
    toolset: 'offers',
    method: 'GET',
    path: `/offers/{id}/${LINK_KIND[kind]}-document`,
    permission: 'offer:read',
    kind: 'read',
    input: z.strictObject({ id: idOrNumber('offer') }),
    // The handler's result: the link, and the stored bytes the REST route answers (never part of the MCP result).
    output: documentLinkSchema.extend({ document: z.custom<StoredOfferDocument>() }),
    mcp: { output: documentLinkSchema },
    restDocument: { mediaType: PDF, render: async (result) => result.document.pdf, filename },
    resourceLinks: (result) => [{ type: 'resource_link', uri: result.url, name: filename(result), mimeType: PDF }],
    handler: async (ctx, input) => {
      const document = await getOfferDocument(ctx.tx, ctx.org, await loadOffer(ctx.tx, ctx.org, input.id), kind);
      const { offer, number, sha256, createdAt } = document;
      return { offer, number, url: ctx.links.offerDocument(offer, LINK_KIND[kind]), mimeType: PDF, sha256, createdAt, document };
    },
  });
}

export const offerDocumentOperations = [
  documentOperation(
    'signed',
    'get_offer_signed_document',
    'Get signed offer document',
    'Link to a signed offer as a PDF (the offer as its recipients saw it, with each signature): a resource_link to fetch, not its bytes. 409 before the offer is signed.',
  ),
  documentOperation(
    'audit_log',
    'get_offer_audit_log_document',
    'Get offer audit log document',
    "Link to a signed offer's audit log as a PDF (every view, acceptance and signature with time, IP address and user agent, and the signed document's SHA-256): a resource_link, not its bytes. 409 before signing.",
  ),
];
