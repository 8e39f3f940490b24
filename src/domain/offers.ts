import { AppError, conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId, newUlid } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer } from '../schemas/customers.js';
import type {
  AcceptanceMode,
  ContactPerson,
  CustomVariables,
  DealType,
  Offer,
  OfferListItem,
  OfferRecipient,
  OfferSectionTemplate,
  OfferStatus,
  OfferSubscription,
  OfferUpdate,
} from '../schemas/offers.js';
import type { OfferFilter, OfferRecord, RecipientRecord } from '../store/ports/offers.js';
import type { Tx } from '../store/store.js';
import { createInvoiceAddress, defaultInvoiceAddress, type InvoiceAddressInput } from './billingDetails.js';
import { findCustomer, getCustomer } from './customers.js';
import { offerStartAt } from './estimate.js';
import { emitEvent } from './events.js';
import type { Links } from './links.js';
import { presentOffer } from './offerPresentation.js';
import { keepSignedDocuments, signingEvent, signingLogOf, THROUGH_API, withEvent, type SigningActor } from './offerSigning.js';
import { placeholderViolations, plainTextViolations, renderText } from './offerText.js';
import { createCustomPricePlan, getPricePlan, priceChangesOf, pricePlanAt } from './products.js';
import { customerViolation } from './statusRules.js';
import { createSubscription, settleOfferSubscription, withdrawOfferSubscription, type CreateSubscriptionInput } from './subscriptions/lifecycle.js';

/*
 * The offer state machine (CONTRACT section 5, "Offers"; every other transition is a 409 naming the
 * current status and the allowed ones):
 *   open --accept (click; the customer has an invoice address)--> signed
 *   open --accept (click; no invoice address)--> awaiting_invoice_details --invoice details--> signed
 *   open/signing --accept (esignature; recipients still to sign)--> signing
 *   open/signing --accept (esignature; the last recipient signs)--> signed
 *   open --accept (print: the seller records the paper signed by that recipient)--> signed
 *   open/signing --archive--> archived (its subscription: offer → terminated)
 * An open or signing offer past validUntil is expired: it can no longer be accepted (409).
 */

const ACCEPT_FROM: Record<AcceptanceMode, readonly OfferStatus[]> = {
  click: ['open'],
  esignature: ['open', 'signing'],
  print: ['open'],
};
const ARCHIVE_FROM: readonly OfferStatus[] = ['open', 'signing'];

export interface RecipientInput {
  email: string;
  firstName: string;
  lastName: string;
}

export interface SectionInput {
  title: string;
  content: string;
}

export interface ContactPersonInput {
  firstName: string;
  lastName: string;
  email: string;
  avatar?: string | null | undefined;
}

export type OfferSubscriptionInput = Omit<CreateSubscriptionInput, 'customer' | 'activate'>;

export interface OfferInput {
  customer: string;
  acceptanceMode: AcceptanceMode;
  dealType: DealType;
  name: string;
  description?: string | null | undefined;
  locale: string;
  recipients: RecipientInput[];
  sections: SectionInput[];
  customVariables: CustomVariables;
  validUntil: string;
  autoActivateSubscription: boolean;
  crmDealId?: string | null | undefined;
  contactPerson?: ContactPersonInput | null | undefined;
  subscription: OfferSubscriptionInput;
}

export interface OfferPatch {
  name?: string | undefined;
  description?: string | null | undefined;
  locale?: string | undefined;
  acceptanceMode?: AcceptanceMode | undefined;
  dealType?: DealType | undefined;
  sections?: SectionInput[] | undefined;
  customVariables?: CustomVariables | undefined;
  validUntil?: string | undefined;
  autoActivateSubscription?: boolean | undefined;
  crmDealId?: string | null | undefined;
  contactPerson?: ContactPersonInput | null | undefined;
}

// ---------------------------------------------------------------------------------------------
// Reading.

export function isExpired(record: OfferRecord, now: Date): boolean {
  return (record.status === 'open' || record.status === 'signing') && Date.parse(record.validUntil) <= now.getTime();
}

const hasDocument = (record: OfferRecord, kind: 'signed' | 'audit_log') => record.documents.some((d) => d.kind === kind);

/**
 * Whether a read shows each recipient's `link`: the page accepts or signs the offer with no key, so
 * only a reader that may accept it (`offer:write`) gets it; to a reader with `offer:read` alone it is null.
 */
export type RecipientLinks = 'shown' | 'withheld';

function toRecipient(org: string, record: OfferRecord, r: RecipientRecord, links: Links, recipientLinks: RecipientLinks): OfferRecipient {
  return {
    id: r.id,
    email: r.email,
    firstName: r.firstName,
    lastName: r.lastName,
    createdAt: r.createdAt,
    signingStatus: r.signingStatus,
    signingLog: signingLogOf(record, r.id),
    signedAt: r.signedAt,
    signedDocument: hasDocument(record, 'signed') ? links.offerRecipientDocument(org, r.id) : null,
    link: recipientLinks === 'shown' ? links.offerRecipient(org, r.id) : null,
  };
}

async function subscriptionOf(tx: Tx, org: string, id: string): Promise<OfferSubscription> {
  const s = (await tx.subscriptions.get(org, id))!;
  const plan = (await tx.plans.get(org, s.planId))!;
  return {
    id: s.id,
    number: s.number,
    name: s.name,
    status: s.status,
    plan: { id: plan.id, code: plan.code, name: plan.name },
    startDate: s.startDate,
    activatedAt: s.activatedAt,
  };
}

async function toListItem(tx: Tx, org: string, record: OfferRecord, now: Date, links: Links, recipientLinks: RecipientLinks): Promise<OfferListItem> {
  return {
    id: record.id,
    number: record.number,
    status: record.status,
    expired: isExpired(record, now),
    acceptanceMode: record.acceptanceMode,
    dealType: record.dealType,
    subscription: await subscriptionOf(tx, org, record.subscriptionId),
    customer: (await tx.customers.get(org, record.customerId)) as Customer,
    name: record.name,
    description: record.description,
    locale: record.locale,
    sections: record.sections.map((s) => s.id),
    customVariables: record.customVariables,
    validUntil: record.validUntil,
    recipients: record.recipients.map((r) => toRecipient(org, record, r, links, recipientLinks)),
    auditLogDocument: hasDocument(record, 'audit_log') ? links.offerDocument(record.id, 'audit-log') : null,
    signedDocument: hasDocument(record, 'signed') ? links.offerDocument(record.id, 'signed') : null,
    signedAt: record.signedAt,
    autoActivateSubscription: record.autoActivateSubscription,
    crmDealId: record.crmDealId,
    contactPerson: record.contactPerson,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The offer's read shape (GET /offers/{id}): its links under `links`, sections with their placeholders filled. */
export async function toOffer(tx: Tx, org: string, record: OfferRecord, now: Date, links: Links, recipientLinks: RecipientLinks = 'shown'): Promise<Offer> {
  const render = (text: string) => renderText(text, record.customVariables, record.locale);
  return {
    ...(await toListItem(tx, org, record, now, links, recipientLinks)),
    sections: record.sections.map((s) => ({ ...s, rendered: { title: render(s.title), content: render(s.content) } })),
  };
}

/** The offer an input names by its id or its number (OFF-000001); 404 when neither. */
export async function loadOffer(tx: Tx, org: string, ref: string): Promise<OfferRecord> {
  const record = (await tx.offers.get(org, ref)) ?? (await tx.offers.getByNumber(org, ref));
  if (!record) throw notFound('Offer', ref);
  return record;
}

export async function getOffer(tx: Tx, org: string, id: string, now: Date, links: Links, recipientLinks: RecipientLinks): Promise<Offer> {
  return toOffer(tx, org, await loadOffer(tx, org, id), now, links, recipientLinks);
}

export async function listOffers(
  tx: Tx,
  org: string,
  filter: OfferFilter,
  page: PageRequest,
  now: Date,
  links: Links,
  recipientLinks: RecipientLinks,
): Promise<{ rows: OfferListItem[]; total: number }> {
  const customer = filter.customer === undefined ? undefined : (await getCustomer(tx, org, filter.customer)).id;
  const { rows, total } = await tx.offers.list(org, { ...filter, customer }, page);
  const items: OfferListItem[] = [];
  for (const r of rows) items.push(await toListItem(tx, org, r, now, links, recipientLinks));
  return { rows: items, total };
}

// ---------------------------------------------------------------------------------------------
// Creating and updating.

/** New sections; one with the same title and content at the same position keeps its id. */
function newSections(input: readonly SectionInput[], previous: readonly OfferSectionTemplate[] = []): OfferSectionTemplate[] {
  return input.map((s, i) => {
    const same = previous[i];
    if (same && same.title === s.title && same.content === s.content) return same;
    return { id: newId(), title: s.title, content: s.content };
  });
}

function newContactPerson(input: ContactPersonInput | null | undefined, previous: ContactPerson | null = null): ContactPerson | null {
  if (!input) return null;
  return { id: previous?.id ?? newId(), firstName: input.firstName, lastName: input.lastName, email: input.email, avatar: input.avatar ?? null };
}

function futureViolation(validUntil: string, now: Date): Violation | undefined {
  if (Date.parse(validUntil) > now.getTime()) return undefined;
  return {
    propertyPath: 'validUntil',
    message: `validUntil must lie in the future (after ${now.toISOString()}): the offer must be acceptable for some time`,
    code: 'in_the_past',
  };
}

/**
 * A start before now is refused: signing would bill every period since then at once. One that passes
 * while the offer is open starts the subscription at its signing instead (`offerStartAt`).
 */
function pastStartViolation(startDate: string | undefined, now: Date): Violation | undefined {
  if (startDate === undefined || Date.parse(startDate) >= now.getTime()) return undefined;
  return {
    propertyPath: 'subscription.startDate',
    message: `subscription.startDate must not lie in the past (before ${now.toISOString()}): signing would bill every period since then at once; give a later date, or omit it to start the subscription when the offer is signed`,
    code: 'in_the_past',
  };
}

/** Placeholders in a name or description the patch changes (`plainTextViolations`). */
function changedTextViolations(o: OfferRecord, p: OfferPatch): Violation[] {
  return plainTextViolations({
    name: p.name !== o.name ? p.name : undefined,
    description: p.description !== o.description ? p.description : undefined,
  });
}

function recipientViolations(recipients: readonly RecipientInput[]): Violation[] {
  const seen = new Set<string>();
  const out: Violation[] = [];
  recipients.forEach((r, i) => {
    const email = r.email.toLowerCase();
    if (seen.has(email)) {
      out.push({ propertyPath: `recipients[${i}].email`, message: `recipients[${i}].email ${r.email} is already a recipient; each recipient signs once, list them once`, code: 'duplicate' });
    }
    seen.add(email);
  });
  return out;
}

function throwIf(violations: Array<Violation | undefined>): void {
  const present = violations.filter((v): v is Violation => v !== undefined);
  if (present.length) throw invalidMany(present);
}

/** The proposed subscription's violations, at `subscription.<field>` where the input named them. */
async function proposeSubscription(tx: Tx, org: string, customerId: string, input: OfferSubscriptionInput, now: Date) {
  try {
    return await createSubscription(tx, org, { ...input, customer: customerId }, now, 'offer');
  } catch (err) {
    if (err instanceof AppError && err.kind === 'validation' && err.violations) {
      throw invalidMany(
        err.violations.map((v) => ({ ...v, propertyPath: `subscription.${v.propertyPath}`, message: `subscription.${v.message}` })),
      );
    }
    throw err;
  }
}

async function nextNumber(tx: Tx, org: string): Promise<string> {
  return `OFF-${String(await tx.system.nextCounter(org, 'offer')).padStart(6, '0')}`;
}

/** An open offer to a customer, with the subscription it proposes in status offer. */
export async function createOffer(tx: Tx, org: string, input: OfferInput, now: Date, links: Links): Promise<Offer> {
  const customer = await findCustomer(tx, org, input.customer);
  throwIf([
    customer
      ? customerViolation(customer)
      : {
          propertyPath: 'customer',
          message: `customer '${input.customer}' does not exist; create it with create_customer or pick one from list_customers`,
          code: 'not_found',
        },
    futureViolation(input.validUntil, now),
    pastStartViolation(input.subscription.startDate, now),
    ...plainTextViolations({ name: input.name, description: input.description }),
    ...recipientViolations(input.recipients),
    ...placeholderViolations(input.sections, input.customVariables, true),
  ]);
  const subscription = await proposeSubscription(tx, org, customer!.id, input.subscription, now);
  const at = now.toISOString();
  const record: OfferRecord = {
    id: newUlid(),
    number: await nextNumber(tx, org),
    customerId: customer!.id,
    subscriptionId: subscription.id,
    status: 'open',
    acceptanceMode: input.acceptanceMode,
    dealType: input.dealType,
    name: input.name,
    description: input.description ?? null,
    locale: input.locale,
    sections: newSections(input.sections),
    customVariables: input.customVariables,
    validUntil: new Date(input.validUntil).toISOString(),
    autoActivateSubscription: input.autoActivateSubscription,
    crmDealId: input.crmDealId ?? null,
    contactPerson: newContactPerson(input.contactPerson),
    signedAt: null,
    archivedAt: null,
    termsFrozenAt: null,
    frozenTrialPeriod: null,
    recipients: input.recipients.map((r) => ({
      id: newId(),
      email: r.email,
      firstName: r.firstName,
      lastName: r.lastName,
      signingStatus: 'not_started',
      signedAt: null,
      createdAt: at,
    })),
    events: [],
    documents: [],
    createdAt: at,
    updatedAt: at,
  };
  await tx.offers.insert(org, record);
  return toOffer(tx, org, record, now, links);
}

/** JSON with sorted keys: two flat maps with the same entries compare equal. */
function canonical(value: CustomVariables): string {
  return JSON.stringify(Object.keys(value).sort().map((k) => [k, value[k]]));
}

/** For each field but name: does the patch (which sends the field) leave the offer's value as it is? */
const UNCHANGED: Record<Exclude<keyof OfferPatch, 'name'>, (o: OfferRecord, p: OfferPatch) => boolean> = {
  description: (o, p) => o.description === p.description,
  locale: (o, p) => o.locale === p.locale,
  acceptanceMode: (o, p) => o.acceptanceMode === p.acceptanceMode,
  dealType: (o, p) => o.dealType === p.dealType,
  sections: (o, p) =>
    p.sections!.length === o.sections.length &&
    p.sections!.every((s, i) => s.title === o.sections[i]!.title && s.content === o.sections[i]!.content),
  customVariables: (o, p) => canonical(p.customVariables!) === canonical(o.customVariables),
  validUntil: (o, p) => Date.parse(p.validUntil!) === Date.parse(o.validUntil),
  autoActivateSubscription: (o, p) => o.autoActivateSubscription === p.autoActivateSubscription,
  crmDealId: (o, p) => o.crmDealId === p.crmDealId,
  contactPerson: (o, p) => {
    const [c, v] = [o.contactPerson, p.contactPerson!];
    if (v === null || c === null) return v === c;
    return c.firstName === v.firstName && c.lastName === v.lastName && c.email === v.email && c.avatar === (v.avatar ?? null);
  },
};

/** The fields other than name that the patch sends with a value different from the offer's. */
function changedFields(o: OfferRecord, p: OfferPatch): string[] {
  return (Object.keys(UNCHANGED) as Array<keyof typeof UNCHANGED>).filter((field) => p[field] !== undefined && !UNCHANGED[field](o, p));
}

function toUpdateShape(o: OfferRecord): OfferUpdate {
  return {
    id: o.id,
    status: o.status,
    acceptanceMode: o.acceptanceMode,
    dealType: o.dealType,
    autoActivateSubscription: o.autoActivateSubscription,
    name: o.name,
    validUntil: o.validUntil,
    customVariables: o.customVariables,
  };
}

/**
 * Partial update: omitted fields stay. While open every field may change; in any other status only
 * `name` may, and sending another field with a different value is a 409 naming it (the same value
 * is accepted).
 */
export async function updateOffer(tx: Tx, org: string, id: string, patch: OfferPatch, now: Date): Promise<OfferUpdate> {
  const current = await loadOffer(tx, org, id);
  if (current.status !== 'open') {
    const changed = changedFields(current, patch);
    if (changed.length) {
      throw conflict(
        `Offer ${current.number} is ${current.status}, so only name may change; frozen field${changed.length > 1 ? 's' : ''} sent with a different value: ${changed.join(', ')}. Leave ${changed.length > 1 ? 'them' : 'it'} out (or send the current value).`,
      );
    }
    throwIf(changedTextViolations(current, patch));
    const next: OfferRecord = { ...current, name: patch.name ?? current.name, updatedAt: now.toISOString() };
    await tx.offers.update(org, next);
    return toUpdateShape(next);
  }
  throwIf([
    patch.validUntil !== undefined && !UNCHANGED.validUntil(current, patch) ? futureViolation(patch.validUntil, now) : undefined,
    ...changedTextViolations(current, patch),
    ...(patch.sections ?? patch.customVariables
      ? placeholderViolations(patch.sections ?? current.sections, patch.customVariables ?? current.customVariables, patch.sections !== undefined)
      : []),
  ]);
  const next: OfferRecord = {
    ...current,
    name: patch.name ?? current.name,
    description: patch.description === undefined ? current.description : patch.description,
    locale: patch.locale ?? current.locale,
    acceptanceMode: patch.acceptanceMode ?? current.acceptanceMode,
    dealType: patch.dealType ?? current.dealType,
    sections: patch.sections === undefined ? current.sections : newSections(patch.sections, current.sections),
    customVariables: patch.customVariables ?? current.customVariables,
    validUntil: patch.validUntil === undefined ? current.validUntil : new Date(patch.validUntil).toISOString(),
    autoActivateSubscription: patch.autoActivateSubscription ?? current.autoActivateSubscription,
    crmDealId: patch.crmDealId === undefined ? current.crmDealId : patch.crmDealId,
    contactPerson: patch.contactPerson === undefined ? current.contactPerson : newContactPerson(patch.contactPerson, current.contactPerson),
    updatedAt: now.toISOString(),
  };
  await tx.offers.update(org, next);
  return toUpdateShape(next);
}

// ---------------------------------------------------------------------------------------------
// The state machine.

/**
 * The prices an offer shows freeze when it leaves open (a recipient has accepted or signed them): each
 * item priced by a catalogue price plan with a price gets a price plan of its own (custom, as
 * order_subscription_products' customPricePlan makes), a copy at the price valid now, so that a later
 * update_price_plan reaches neither the page, the signed document nor the signed subscription's
 * invoices. Tiered plans stay: their tiers never change. The copy takes over the catalogue plan's
 * entitlements, so the subscription keeps what that plan entitled it to.
 */
async function freezePrices(tx: Tx, org: string, record: OfferRecord, now: Date): Promise<void> {
  const at = now.toISOString();
  for (const item of await tx.subscriptions.items(org, [record.subscriptionId])) {
    const catalogue = await getPricePlan(tx, org, item.pricePlanId);
    if (catalogue.custom || catalogue.price === null) continue;
    const plan = pricePlanAt(catalogue, await priceChangesOf(tx, org, catalogue.id), at);
    const copy = await createCustomPricePlan(
      tx,
      org,
      plan.product,
      {
        type: plan.type,
        currencyCode: plan.currencyCode,
        price: { amount: plan.price!.amount },
        packageSize: plan.packageSize ?? undefined,
        internalName: `Accepted in offer ${record.number} (price plan ${plan.id})`,
        applyTrial: plan.applyTrial,
        payInAdvance: plan.payInAdvance,
        proRata: plan.proRata,
        freeUnits: plan.freeUnits,
        billingInterval: plan.billingInterval,
        showPricePerInterval: plan.showPricePerInterval,
      },
      now,
    );
    await copyEntitlements(tx, org, plan.id, copy.id, now);
    await tx.subscriptions.updateItem(org, { ...item, pricePlanId: copy.id, updatedAt: at });
  }
}

/**
 * The terms freeze when the offer first leaves open: its prices (`freezePrices`), and the trial the
 * plan gives now, which activation gives the subscription even if the plan's `trialPeriod` changes
 * later (`activatedState`). Written at once: signing in the same step activates by it.
 */
async function freezeTerms(tx: Tx, org: string, record: OfferRecord, now: Date): Promise<OfferRecord> {
  await freezePrices(tx, org, record, now);
  const subscription = (await tx.subscriptions.get(org, record.subscriptionId))!;
  const trialPeriod = (await tx.plans.get(org, subscription.planId))?.trialPeriod ?? null;
  const frozen: OfferRecord = { ...record, termsFrozenAt: now.toISOString(), frozenTrialPeriod: trialPeriod, updatedAt: now.toISOString() };
  await tx.offers.update(org, frozen);
  return frozen;
}

/** Every feature's entitlement on price plan `from`, given to price plan `to` too. */
async function copyEntitlements(tx: Tx, org: string, from: string, to: string, now: Date): Promise<void> {
  for (const entitlement of await tx.features.pricePlanEntitlements(org, from)) {
    await tx.features.insertEntitlement(org, { ...entitlement, id: newId(), pricePlan: to, createdAt: now.toISOString() });
  }
}

/** A start that passed while the offer waited: the subscription starts at the signing (`offerStartAt`). */
async function startAtSigning(tx: Tx, org: string, subscriptionId: string, now: Date): Promise<void> {
  const current = (await tx.subscriptions.get(org, subscriptionId))!;
  const started = offerStartAt(current, now);
  if (started !== current) await tx.subscriptions.update(org, { ...started, updatedAt: now.toISOString() });
}

/**
 * signed: signedAt set, the proposed subscription activated (autoActivateSubscription) or made draft,
 * and the signed offer and its audit log kept. The document shows the offer as its recipients saw it:
 * presented before the subscription is settled.
 */
async function sign(tx: Tx, org: string, record: OfferRecord, now: Date, links: Links): Promise<OfferRecord> {
  await startAtSigning(tx, org, record.subscriptionId, now);
  const presentation = await presentOffer(tx, org, await toOffer(tx, org, record, now, links), now);
  await settleOfferSubscription(tx, org, record.subscriptionId, record.autoActivateSubscription, now);
  const signed: OfferRecord = { ...record, status: 'signed', signedAt: now.toISOString() };
  return { ...signed, documents: await keepSignedDocuments(tx, org, signed, presentation) };
}

/**
 * The offer as an event carries it: recipients' links withheld (null), since a link accepts or signs
 * the offer and deliveries are read with `webhook:read` (`get_webhook_delivery`), which grants neither.
 */
function eventShape(offer: Offer): Offer {
  return { ...offer, recipients: offer.recipients.map((r) => ({ ...r, link: null })) };
}

/**
 * Writes the offer and answers its read shape, with its events (`eventShape`): `offer.accepted` when a
 * recipient (`acceptedBy`) accepted or signed, then `offer.signed` when the offer is signed now.
 */
async function save(tx: Tx, org: string, next: OfferRecord, now: Date, links: Links, acceptedBy?: string): Promise<Offer> {
  await tx.offers.update(org, next);
  const offer = await toOffer(tx, org, next, now, links);
  const data = eventShape(offer);
  if (acceptedBy) await emitEvent(tx, org, { type: 'offer.accepted', subjectId: next.id, data: { offer: data, recipient: acceptedBy } }, now);
  if (next.status === 'signed') await emitEvent(tx, org, { type: 'offer.signed', subjectId: next.id, data: { offer: data } }, now);
  return offer;
}

/** The offer with this recipient (404 otherwise), for the recipient's own page. */
export async function loadByRecipient(tx: Tx, org: string, recipientId: string): Promise<OfferRecord> {
  const record = await tx.offers.findByRecipient(org, recipientId);
  if (!record) throw notFound('Offer recipient', recipientId);
  return record;
}

/**
 * A recipient accepts or signs (`actor`: the seller recording it through the API, or the recipient on
 * the offer page), the terms as they are now: through the API the seller acts for the recipient and
 * has no page to have shown older ones (the page checks its own, `acceptAsRecipient`). The first
 * acceptance or signature freezes the terms (`freezeTerms`). Emits `offer.accepted`, and
 * `offer.signed` when it signs the offer.
 */
export async function acceptOffer(
  tx: Tx,
  org: string,
  id: string,
  input: { recipient: string },
  now: Date,
  links: Links,
  actor: SigningActor = THROUGH_API,
): Promise<Offer> {
  const current = await loadOffer(tx, org, id);
  const mode = current.acceptanceMode;
  const from = ACCEPT_FROM[mode];
  if (!from.includes(current.status)) {
    throw conflict(
      `Cannot accept offer ${current.number}: its status is ${current.status}; an offer with acceptanceMode ${mode} can be accepted only while ${from.join(' or ')}`,
    );
  }
  if (isExpired(current, now)) {
    const hint = current.status === 'open' ? '; extend validUntil with update_offer to make it acceptable again' : '; archive it and send a new offer';
    throw conflict(`Offer ${current.number} expired at ${current.validUntil} and can no longer be accepted${hint}`);
  }
  const recipient = current.recipients.find((r) => r.id === input.recipient);
  if (!recipient) {
    throw invalid(
      'recipient',
      `recipient '${input.recipient}' is not a recipient of offer ${current.number}; use one of the ids of its recipients: ${current.recipients.map((r) => `${r.id} (${r.email})`).join(', ')}`,
      'not_found',
    );
  }
  if (recipient.signingStatus === 'signed') {
    const waiting = current.recipients.filter((r) => r.signingStatus !== 'signed').map((r) => r.email);
    throw conflict(`Recipient ${recipient.email} has already signed offer ${current.number}; still to sign: ${waiting.join(', ')}`);
  }
  const frozen = current.status === 'open' ? await freezeTerms(tx, org, current, now) : current;
  const at = now.toISOString();
  const recipients = current.recipients.map((r) => (r.id === recipient.id ? { ...r, signingStatus: 'signed' as const, signedAt: at } : r));
  const event = signingEvent(recipient.id, mode === 'click' ? 'accepted' : 'signed', actor, now);
  let next = await withEvent(tx, org, { ...frozen, recipients, updatedAt: at }, event);
  if (mode === 'esignature' && recipients.some((r) => r.signingStatus !== 'signed')) {
    next = { ...next, status: 'signing' };
  } else if (mode === 'click' && !(await defaultInvoiceAddress(tx, org, current.customerId))) {
    next = { ...next, status: 'awaiting_invoice_details' };
  } else {
    next = await sign(tx, org, next, now, links);
  }
  return save(tx, org, next, now, links, recipient.id);
}

/**
 * Completes a click-accepted offer whose customer had no invoice address: the address becomes the
 * customer's default, and the offer is signed. The step is logged for `recipient` (on the offer
 * page, the recipient whose page it is), else for the recipient who accepted.
 */
export async function submitOfferInvoiceDetails(
  tx: Tx,
  org: string,
  id: string,
  input: { invoiceAddress: Omit<InvoiceAddressInput, 'default'> },
  now: Date,
  links: Links,
  actor: SigningActor = THROUGH_API,
  recipient?: string,
): Promise<Offer> {
  const current = await loadOffer(tx, org, id);
  if (current.status !== 'awaiting_invoice_details') {
    throw conflict(
      `Cannot submit invoice details for offer ${current.number}: its status is ${current.status}; invoice details are taken only while awaiting_invoice_details (after a click acceptance by a customer without an invoice address)`,
    );
  }
  await createInvoiceAddress(tx, org, current.customerId, { ...input.invoiceAddress, default: true }, now, 'invoiceAddress.');
  const by = recipient ?? current.recipients.find((r) => r.signingStatus === 'signed')!.id;
  const logged = await withEvent(tx, org, { ...current, updatedAt: now.toISOString() }, signingEvent(by, 'invoice_details', actor, now));
  return save(tx, org, await sign(tx, org, logged, now, links), now, links);
}

export async function archiveOffer(tx: Tx, org: string, id: string, now: Date, links: Links): Promise<Offer> {
  const current = await loadOffer(tx, org, id);
  if (!ARCHIVE_FROM.includes(current.status)) {
    throw conflict(`Cannot archive offer ${current.number}: its status is ${current.status}; archiving is allowed only from ${ARCHIVE_FROM.join(' or ')}`);
  }
  await withdrawOfferSubscription(tx, org, current.subscriptionId, now);
  const at = now.toISOString();
  return save(tx, org, { ...current, status: 'archived', archivedAt: at, updatedAt: at }, now, links);
}
