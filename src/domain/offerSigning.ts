/**
 * The signing audit of offers (issue 18): the events of each recipient (views of the offer page,
 * acceptances, signatures, invoice details), how they read in `signingLog`, and the two documents
 * kept when an offer is signed: the signed offer and its audit log, with the SHA-256 of the first.
 */
import { createHash } from 'node:crypto';
import { renderOfferAuditLogPdf, renderSignedOfferPdf } from '../documents/offerPdf.js';
import { AppError, conflict } from '../errors.js';
import { newId } from '../ids.js';
import type { AcceptanceMode } from '../schemas/offers.js';
import type { OfferDocumentInfo, OfferDocumentKind, OfferRecord, SigningEventKind, SigningEventRecord } from '../store/ports/offers.js';
import type { Tx } from '../store/store.js';
import type { OfferPresentation } from './offerPresentation.js';

/** Who takes a signing step: the seller through the API, or the recipient on the offer page. */
export type SigningActor = { via: 'api' } | { via: 'page'; ip: string; userAgent: string; signerName: string | null };

export const THROUGH_API: SigningActor = { via: 'api' };

/** Repeated views of the page by one recipient from one address and browser are logged once per this. */
export const VIEW_LOG_INTERVAL_MS = 60 * 60 * 1000;

export function signingEvent(recipientId: string, kind: SigningEventKind, actor: SigningActor, now: Date): SigningEventRecord {
  const page = actor.via === 'page' ? actor : undefined;
  return {
    id: newId(),
    recipientId,
    at: now.toISOString(),
    kind,
    via: actor.via,
    signerName: page?.signerName ?? null,
    ip: page?.ip ?? null,
    userAgent: page?.userAgent ?? null,
  };
}

/** The event stored, and the offer with it. */
export async function withEvent(tx: Tx, org: string, offer: OfferRecord, event: SigningEventRecord): Promise<OfferRecord> {
  await tx.offers.insertEvent(org, offer.id, event);
  return { ...offer, events: [...offer.events, event] };
}

const WHAT: Record<SigningEventKind, (mode: AcceptanceMode) => string> = {
  viewed: () => 'viewed the offer page',
  accepted: () => 'accepted (click)',
  signed: (mode) => (mode === 'print' ? 'signed on paper (recorded by the seller)' : 'signed (esignature)'),
  invoice_details: () => 'gave the invoice details',
};

/** An event as `signingLog` and the audit log word it: "accepted (click) on the offer page as Jane Doe". */
export function eventText(e: SigningEventRecord, mode: AcceptanceMode): string {
  const where = e.via === 'page' && e.kind !== 'viewed' ? ' on the offer page' : '';
  return `${WHAT[e.kind](mode)}${where}${e.signerName ? ` as ${e.signerName}` : ''}`;
}

/** A recipient's `signingLog`: "<date-time> <event>" lines, oldest first. */
export function signingLogOf(offer: OfferRecord, recipientId: string): string[] {
  return offer.events.filter((e) => e.recipientId === recipientId).map((e) => `${e.at} ${eventText(e, offer.acceptanceMode)}`);
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The signed offer (as `presentation` shows it, with each signature) and its audit log (every event
 * with time, address and user agent, and the signed document's SHA-256), rendered and stored in the
 * unit of work that signs `offer`. Their dates are the signing time, so they render the same bytes.
 */
export async function keepSignedDocuments(tx: Tx, org: string, offer: OfferRecord, presentation: OfferPresentation): Promise<OfferDocumentInfo[]> {
  const signedAt = offer.signedAt!;
  const recipient = (id: string) => offer.recipients.find((r) => r.id === id)!;
  const fullName = (id: string) => `${recipient(id).firstName} ${recipient(id).lastName}`;
  const signatures = offer.recipients
    .filter((r) => r.signedAt !== null)
    .map((r) => {
      const step = offer.events.find((e) => e.recipientId === r.id && (e.kind === 'accepted' || e.kind === 'signed'))!;
      return { name: step.signerName ?? fullName(r.id), email: r.email, at: r.signedAt!, how: eventText(step, offer.acceptanceMode) };
    });
  const signedPdf = await renderSignedOfferPdf({ presentation, signedAt, signatures });
  const signedHash = sha256(signedPdf);
  const auditPdf = await renderOfferAuditLogPdf({
    presentation,
    signedAt,
    signedSha256: signedHash,
    events: offer.events.map((e) => ({
      at: e.at,
      name: fullName(e.recipientId),
      email: recipient(e.recipientId).email,
      event: eventText(e, offer.acceptanceMode),
      ip: e.ip,
      userAgent: e.userAgent,
    })),
  });
  const documents: OfferDocumentInfo[] = [
    { kind: 'signed', sha256: signedHash, createdAt: signedAt },
    { kind: 'audit_log', sha256: sha256(auditPdf), createdAt: signedAt },
  ];
  await tx.offers.insertDocument(org, offer.id, { ...documents[0]!, pdf: signedPdf });
  await tx.offers.insertDocument(org, offer.id, { ...documents[1]!, pdf: auditPdf });
  return documents;
}

export interface StoredOfferDocument {
  offer: string;
  number: string;
  sha256: string;
  createdAt: string;
  pdf: Uint8Array;
}

/** A document of a signed offer; 409 naming the status before it is signed, 404 for an offer signed before documents were kept. */
export async function getOfferDocument(tx: Tx, org: string, offer: OfferRecord, kind: OfferDocumentKind): Promise<StoredOfferDocument> {
  const what = kind === 'signed' ? 'signed document' : 'audit log document';
  if (offer.status !== 'signed') {
    throw conflict(`Offer ${offer.number} is ${offer.status}: its ${what} is made when it is signed (every recipient who must sign has signed)`);
  }
  const doc = await tx.offers.document(org, offer.id, kind);
  if (!doc) throw new AppError('not_found', `Offer ${offer.number} was signed before signed documents were kept: it has no ${what}`);
  return { offer: offer.id, number: offer.number, sha256: doc.sha256, createdAt: doc.createdAt, pdf: doc.pdf };
}
