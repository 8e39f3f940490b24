import { z } from 'zod';
import { dateTime, timestamps } from './common.js';
import { customerSchema } from './customers.js';
import { SUBSCRIPTION_STATUSES } from './subscriptions.js';

export const OFFER_STATUSES = ['open', 'signing', 'awaiting_invoice_details', 'signed', 'archived'] as const;
export const ACCEPTANCE_MODES = ['click', 'esignature', 'print'] as const;
export const DEAL_TYPES = ['new_business', 'expansion', 'renewal', 'one_off'] as const;
export const SIGNING_STATUSES = ['not_started', 'signed'] as const;
export type OfferStatus = (typeof OFFER_STATUSES)[number];
export type AcceptanceMode = (typeof ACCEPTANCE_MODES)[number];
export type DealType = (typeof DEAL_TYPES)[number];

export const customVariablesSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .describe('Values for placeholders in the offer text, by name (flat: strings, numbers, booleans).');
export type CustomVariables = z.infer<typeof customVariablesSchema>;

export const offerSectionSchema = z.object({
  id: z.string(),
  title: z.string(),
  content: z.string().describe('Text of the section.'),
});
export type OfferSection = z.infer<typeof offerSectionSchema>;

export const offerRecipientSchema = z.object({
  id: z.string().describe('Id of the recipient; accept_offer names the signing recipient by it.'),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  createdAt: dateTime,
  signingStatus: z.enum(SIGNING_STATUSES).describe('not_started until the recipient signs (or clicks to accept), then signed.'),
  signingLog: z.array(z.string()).describe('What happened, oldest first, each line "<date-time> <event>", e.g. "2026-01-15T10:00:00.000Z signed (esignature)".'),
  signedAt: dateTime.nullable().describe('When the recipient signed, or null.'),
  signedDocument: z.string().nullable().describe('URL of the signed document; always null: this service keeps no documents.'),
  link: z.string().describe("Relative URL identifying the recipient's signing page (/offers/{offer}/recipients/{recipient}); the page itself is served by the seller's front end, which calls accept_offer."),
});
export type OfferRecipient = z.infer<typeof offerRecipientSchema>;

export const contactPersonSchema = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  avatar: z.string().nullable().describe('URL of a picture of the contact person, or null.'),
});
export type ContactPerson = z.infer<typeof contactPersonSchema>;

export const offerSubscriptionSchema = z
  .object({
    id: z.string(),
    number: z.string(),
    name: z.string().nullable(),
    status: z.enum(SUBSCRIPTION_STATUSES).describe('offer until the offer is signed; then active (autoActivateSubscription) or draft.'),
    plan: z.object({ id: z.string(), code: z.string(), name: z.string() }),
    startDate: dateTime.nullable(),
    activatedAt: dateTime.nullable(),
  })
  .describe('The subscription the offer proposes (partial; get_subscription shows all of it).');
export type OfferSubscription = z.infer<typeof offerSubscriptionSchema>;

const offerFields = {
  id: z.string().describe('ULID of the offer.'),
  number: z.string().describe('Generated per organisation: OFF-000001, OFF-000002, …'),
  status: z
    .enum(OFFER_STATUSES)
    .describe('open → (accept) signing / awaiting_invoice_details / signed; open or signing → archived.'),
  expired: z
    .boolean()
    .describe('true when the offer is open or signing and validUntil has passed: it can no longer be accepted.'),
  acceptanceMode: z.enum(ACCEPTANCE_MODES),
  dealType: z.enum(DEAL_TYPES),
  subscription: offerSubscriptionSchema,
  customer: customerSchema,
  name: z.string(),
  description: z.string().nullable(),
  locale: z.string().describe('Language of the offer, e.g. en or de-DE.'),
  customVariables: customVariablesSchema,
  validUntil: dateTime.describe('The offer can be accepted until then.'),
  recipients: z.array(offerRecipientSchema),
  auditLogDocument: z.string().nullable().describe('URL of the audit log document; always null: this service keeps no documents.'),
  signedDocument: z.string().nullable().describe('URL of the signed offer; always null: this service keeps no documents.'),
  signedAt: dateTime.nullable().describe('When the offer became signed, or null.'),
  autoActivateSubscription: z.boolean().describe('true: signing activates the subscription; false: signing makes it draft.'),
  crmDealId: z.string().nullable(),
  contactPerson: contactPersonSchema.nullable().describe("The seller's contact person shown on the offer, or null."),
  ...timestamps,
};

export const offerSchema = z.object({
  ...offerFields,
  sections: z.array(offerSectionSchema).describe('The text sections of the offer, in order.'),
});
export type Offer = z.infer<typeof offerSchema>;

/** In list responses sections are their ids (interface 2.10). */
export const offerListItemSchema = z.object({
  ...offerFields,
  sections: z.array(z.string()).describe('Ids of the sections, in order; get_offer shows their title and content.'),
});
export type OfferListItem = z.infer<typeof offerListItemSchema>;

/** The response of PUT /offers/{id} (interface section 4). */
export const offerUpdateSchema = z.object({
  id: offerFields.id,
  status: offerFields.status,
  acceptanceMode: offerFields.acceptanceMode,
  dealType: offerFields.dealType,
  autoActivateSubscription: offerFields.autoActivateSubscription,
  name: offerFields.name,
  validUntil: offerFields.validUntil,
  customVariables: offerFields.customVariables,
});
export type OfferUpdate = z.infer<typeof offerUpdateSchema>;
