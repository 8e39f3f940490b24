import type { PageRequest } from '../../schemas/common.js';
import type {
  AcceptanceMode,
  ContactPerson,
  CustomVariables,
  DealType,
  OfferSectionTemplate,
  OfferStatus,
} from '../../schemas/offers.js';

export interface RecipientRecord {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  signingStatus: 'not_started' | 'signed';
  signedAt: string | null;
  createdAt: string;
}

/** What a recipient did: opened the page, accepted (click), signed (esignature, print), gave the invoice address. */
export type SigningEventKind = 'viewed' | 'accepted' | 'signed' | 'invoice_details';

/**
 * One step of an offer's signing: on the offer page (`page`: the client's address and user agent, and
 * for an acceptance or signature the full name typed) or recorded by the seller through the API.
 */
export interface SigningEventRecord {
  id: string;
  recipientId: string;
  at: string;
  kind: SigningEventKind;
  via: 'page' | 'api';
  signerName: string | null;
  ip: string | null;
  userAgent: string | null;
}

export type OfferDocumentKind = 'signed' | 'audit_log';

/** A document kept for a signed offer, without its bytes. */
export interface OfferDocumentInfo {
  kind: OfferDocumentKind;
  sha256: string;
  createdAt: string;
}

export interface OfferDocumentRecord extends OfferDocumentInfo {
  pdf: Uint8Array;
}

/** An offer as stored: customer and subscription by id, recipients in their order. */
export interface OfferRecord {
  id: string;
  number: string;
  customerId: string;
  subscriptionId: string;
  status: OfferStatus;
  acceptanceMode: AcceptanceMode;
  dealType: DealType;
  name: string;
  description: string | null;
  locale: string;
  sections: OfferSectionTemplate[];
  customVariables: CustomVariables;
  validUntil: string;
  autoActivateSubscription: boolean;
  crmDealId: string | null;
  contactPerson: ContactPerson | null;
  signedAt: string | null;
  archivedAt: string | null;
  /** When its terms froze: the first acceptance or signature (null while open, and when archived from open). */
  termsFrozenAt: string | null;
  /** The plan's `trialPeriod` when the terms froze, which activation gives the subscription (null: no trial). */
  frozenTrialPeriod: string | null;
  recipients: RecipientRecord[];
  /** Its signing events, oldest first. */
  events: SigningEventRecord[];
  /** The documents kept since it was signed (none before). */
  documents: OfferDocumentInfo[];
  createdAt: string;
  updatedAt: string;
}

export interface OfferFilter {
  customer?: string | undefined;
  status?: OfferStatus | undefined;
}

export interface OfferRepo {
  insert(org: string, o: OfferRecord): Promise<void>;
  /** Writes the offer's fields and each recipient's signing status and time (events and documents have their own methods). */
  update(org: string, o: OfferRecord): Promise<void>;
  get(org: string, id: string): Promise<OfferRecord | undefined>;
  /** The offer numbered `number` (OFF-000001) in the organisation. */
  getByNumber(org: string, number: string): Promise<OfferRecord | undefined>;
  /** The offer that has this recipient. */
  findByRecipient(org: string, recipientId: string): Promise<OfferRecord | undefined>;
  /** The offer that proposes the subscription, if one does. */
  findBySubscription(org: string, subscriptionId: string): Promise<OfferRecord | undefined>;
  /** The offer whose subscription has an item priced by the price plan, if one does (a custom price plan prices one item). */
  findByPricePlan(org: string, pricePlanId: string): Promise<OfferRecord | undefined>;
  insertEvent(org: string, offerId: string, e: SigningEventRecord): Promise<void>;
  /** Whether the recipient viewed the page from this address and user agent after `since`. */
  viewedSince(org: string, offerId: string, recipientId: string, client: { ip: string; userAgent: string }, since: string): Promise<boolean>;
  insertDocument(org: string, offerId: string, d: OfferDocumentRecord): Promise<void>;
  document(org: string, offerId: string, kind: OfferDocumentKind): Promise<OfferDocumentRecord | undefined>;
  list(org: string, filter: OfferFilter, page: PageRequest): Promise<{ rows: OfferRecord[]; total: number }>;
}
