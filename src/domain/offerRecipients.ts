/**
 * An offer as one of its recipients meets it on the offer page (issue 18): what the page shows, and
 * the steps the recipient takes there. Every step goes through the API's own domain code
 * (`acceptOffer`, `submitOfferInvoiceDetails`), with its events, logged as taken on the page with the
 * client's address and user agent.
 */
import { AppError, conflict, invalidMany, type Violation } from '../errors.js';
import type { Offer, OfferRecipient } from '../schemas/offers.js';
import type { Organisation } from '../schemas/organisation.js';
import type { OfferRecord, RecipientRecord } from '../store/ports/offers.js';
import type { Tx } from '../store/store.js';
import type { InvoiceAddressInput } from './billingDetails.js';
import type { Links } from './links.js';
import { presentOffer, termsFingerprint, type OfferPresentation } from './offerPresentation.js';
import { acceptOffer, isExpired, loadByRecipient, submitOfferInvoiceDetails, toOffer } from './offers.js';
import { signingEvent, VIEW_LOG_INTERVAL_MS, withEvent } from './offerSigning.js';
import { getOrganisation } from './organisation.js';

/** The browser a recipient uses: its address and user agent, for the audit log. */
export interface RecipientClient {
  ip: string;
  userAgent: string;
}

/**
 * What the page offers the recipient: `act` accept (click) or sign (esignature); `waiting` they signed,
 * others still must; `print` the seller records the signed printout; `invoice_details` the invoice
 * address that completes a click acceptance; `signed`, `archived`, `expired` a message, no action.
 */
export type RecipientPageState = 'act' | 'waiting' | 'print' | 'invoice_details' | 'signed' | 'archived' | 'expired';

/** The states in which the page shows the offer (the others say why there is nothing to do). */
export type OfferShownState = Extract<RecipientPageState, 'act' | 'waiting' | 'print' | 'invoice_details'>;
const SHOWN: ReadonlySet<RecipientPageState> = new Set(['act', 'waiting', 'print', 'invoice_details']);

export function showsOffer(state: RecipientPageState): state is OfferShownState {
  return SHOWN.has(state);
}

export interface RecipientPage {
  state: RecipientPageState;
  offer: Offer;
  recipient: OfferRecipient;
  seller: Organisation;
  /** The offer as shown; null in the message states. */
  presentation: OfferPresentation | null;
  /** The fingerprint of the terms shown (`termsFingerprint`), which the page's form sends back; null in the message states. */
  terms: string | null;
  /** Whether this visit is still to be logged as a view (see `recordRecipientView`). */
  logView: boolean;
}

function stateOf(record: OfferRecord, recipient: RecipientRecord, now: Date): RecipientPageState {
  if (record.status === 'archived') return 'archived';
  if (record.status === 'signed') return 'signed';
  if (record.status === 'awaiting_invoice_details') return 'invoice_details';
  if (isExpired(record, now)) return 'expired';
  if (record.acceptanceMode === 'print') return 'print';
  return recipient.signingStatus === 'signed' ? 'waiting' : 'act';
}

async function loadRecipient(tx: Tx, org: string, recipientId: string): Promise<{ record: OfferRecord; recipient: RecipientRecord }> {
  const record = await loadByRecipient(tx, org, recipientId);
  return { record, recipient: record.recipients.find((r) => r.id === recipientId)! };
}

function viewedSince(tx: Tx, org: string, record: OfferRecord, recipientId: string, client: RecipientClient, now: Date): Promise<boolean> {
  return tx.offers.viewedSince(org, record.id, recipientId, client, new Date(now.getTime() - VIEW_LOG_INTERVAL_MS).toISOString());
}

export async function recipientPage(tx: Tx, org: string, recipientId: string, now: Date, links: Links, client: RecipientClient): Promise<RecipientPage> {
  const { record, recipient } = await loadRecipient(tx, org, recipientId);
  const state = stateOf(record, recipient, now);
  const offer = await toOffer(tx, org, record, now, links);
  const shown = showsOffer(state);
  const presentation = shown ? await presentOffer(tx, org, offer, now) : null;
  return {
    state,
    offer,
    recipient: offer.recipients.find((r) => r.id === recipientId)!,
    seller: presentation?.seller ?? (await getOrganisation(tx, org)),
    presentation,
    terms: presentation && termsFingerprint(presentation),
    logView: shown && !(await viewedSince(tx, org, record, recipientId, client, now)),
  };
}

/**
 * Logs that the recipient viewed the offer, once per address and user agent within
 * VIEW_LOG_INTERVAL_MS (reloads and returns within the hour are one view), so signingLog stays readable.
 */
export async function recordRecipientView(tx: Tx, org: string, recipientId: string, client: RecipientClient, now: Date): Promise<void> {
  const { record, recipient } = await loadRecipient(tx, org, recipientId);
  if (!showsOffer(stateOf(record, recipient, now)) || (await viewedSince(tx, org, record, recipientId, client, now))) return;
  await withEvent(tx, org, record, signingEvent(recipientId, 'viewed', { via: 'page', ...client, signerName: null }, now));
}

/** Names compare trimmed, with inner spaces collapsed, ignoring case. */
function sameName(a: string, b: string): boolean {
  const norm = (s: string) => s.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
  return norm(a) === norm(b);
}

export interface RecipientConsent {
  /** The full name the recipient typed: it must be theirs as the offer names them. */
  fullName: string;
  /** The terms box ticked. */
  agreed: boolean;
  /** The fingerprint of the terms the page showed (`RecipientPage.terms`). */
  terms: string;
}

/**
 * A refusal of a recipient's step that the offer's state does not explain (an inactive customer
 * cannot get the subscription), in the recipient's words: the API's reason speaks to the seller and
 * names tools. The page shows it with the offer.
 */
async function refusalForRecipient(tx: Tx, org: string, record: OfferRecord, what: string): Promise<AppError> {
  const seller = await getOrganisation(tx, org);
  const name = seller.legalName ?? seller.name;
  const customer = await tx.customers.get(org, record.customerId);
  const why = customer?.status === 'STATUS_ACTIVE' ? `${name} cannot conclude this offer at the moment` : `your customer account with ${name} is not active`;
  const contact = record.contactPerson;
  const whom = contact ? `${contact.firstName} ${contact.lastName} (${contact.email}) at ${name}` : name;
  return conflict(`Your ${what} was not recorded: ${why}. Please contact ${whom}.`);
}

/** `step`, with a conflict it meets reworded for the recipient (`refusalForRecipient`). */
async function forRecipient<T>(tx: Tx, org: string, record: OfferRecord, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof AppError && err.kind === 'conflict') throw await refusalForRecipient(tx, org, record, what);
    throw err;
  }
}

/**
 * The recipient accepts (`click`) or signs (`esignature`) on the page: the terms the page showed must
 * still be the offer's (a 409 asking to review it again otherwise; nothing is recorded), their typed
 * name must be theirs and the terms box ticked (422 naming the field); in any state but `act`, or for
 * an offer of the other mode, a 409 (the page then shows what is the case); a refusal of the step
 * itself (`refusalForRecipient`), a 409 the page shows.
 */
export async function acceptAsRecipient(
  tx: Tx,
  org: string,
  recipientId: string,
  mode: 'click' | 'esignature',
  consent: RecipientConsent,
  client: RecipientClient,
  now: Date,
  links: Links,
): Promise<Offer> {
  const { record, recipient } = await loadRecipient(tx, org, recipientId);
  if (record.acceptanceMode !== mode) throw conflict(`Offer ${record.number} has acceptanceMode ${record.acceptanceMode}, not ${mode}`);
  const state = stateOf(record, recipient, now);
  const [verb, done] = mode === 'click' ? ['accept', 'accepted'] : ['sign', 'signed'];
  if (state !== 'act') throw conflict(`Offer ${record.number} cannot be ${done} by this recipient now (${state})`);
  const shown = await presentOffer(tx, org, await toOffer(tx, org, record, now, links), now);
  if (consent.terms !== termsFingerprint(shown)) {
    throw conflict(`This offer has changed since the page was loaded. Please review it as it is now and ${verb} again: nothing was ${done}.`);
  }
  const name = `${recipient.firstName} ${recipient.lastName}`;
  const typed = consent.fullName.trim().replace(/\s+/g, ' ');
  const violations: Violation[] = [];
  if (!typed) violations.push({ propertyPath: 'fullName', message: 'Enter your full name.', code: 'required' });
  else if (!sameName(typed, name)) violations.push({ propertyPath: 'fullName', message: `Enter your full name as this offer names you: ${name}.`, code: 'name_mismatch' });
  if (!consent.agreed) violations.push({ propertyPath: 'agree', message: 'Tick the box to confirm that you agree.', code: 'required' });
  if (violations.length) throw invalidMany(violations);
  const actor = { via: 'page' as const, ...client, signerName: typed };
  return forRecipient(tx, org, record, mode === 'click' ? 'acceptance' : 'signature', () =>
    acceptOffer(tx, org, record.id, { recipient: recipientId }, now, links, actor),
  );
}

/**
 * The invoice address that completes a click acceptance, given on the page (validated as the API
 * validates it); in any state but `invoice_details` a 409 (the page then shows what is the case).
 */
export async function submitInvoiceDetailsAsRecipient(
  tx: Tx,
  org: string,
  recipientId: string,
  invoiceAddress: Omit<InvoiceAddressInput, 'default'>,
  client: RecipientClient,
  now: Date,
  links: Links,
): Promise<Offer> {
  const { record, recipient } = await loadRecipient(tx, org, recipientId);
  const state = stateOf(record, recipient, now);
  if (state !== 'invoice_details') throw conflict(`Offer ${record.number} takes no invoice details now (${state})`);
  const actor = { via: 'page' as const, ...client, signerName: null };
  return forRecipient(tx, org, record, 'invoice address', () =>
    submitOfferInvoiceDetails(tx, org, record.id, { invoiceAddress }, now, links, actor, recipientId),
  );
}

/** The signed offer's PDF for its recipient (the token opens it without a key); 404 before it is signed. */
export async function recipientSignedDocument(tx: Tx, org: string, recipientId: string): Promise<{ pdf: Uint8Array; filename: string }> {
  const { record } = await loadRecipient(tx, org, recipientId);
  const document = record.status === 'signed' ? await tx.offers.document(org, record.id, 'signed') : undefined;
  if (!document) throw new AppError('not_found', `Offer ${record.number} has no signed document`);
  return { pdf: document.pdf, filename: `${record.number}-signed.pdf` };
}
