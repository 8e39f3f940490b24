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

export const customVariablesSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
export type CustomVariables = z.infer<typeof customVariablesSchema>;

const sectionText = { title: z.string(), content: z.string() };

export const offerSectionSchema = z.object({
  id: z.string(),
  ...sectionText,
  rendered: z.object(sectionText).describe('title and content as recipients read them: {{name}} replaced by customVariables, numbers formatted for locale.'),
});
export type OfferSection = z.infer<typeof offerSectionSchema>;
/** A section as stored: its text as written, placeholders unfilled. */
export type OfferSectionTemplate = Omit<OfferSection, 'rendered'>;

export const offerRecipientSchema = z.object({
  id: z.string().describe('For accept_offer.'),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  createdAt: dateTime,
  signingStatus: z.enum(SIGNING_STATUSES),
  signingLog: z.array(z.string()).describe('"<date-time> <event>" lines, oldest first.'),
  signedAt: dateTime.nullable(),
  signedDocument: z.string().nullable().describe("The signed PDF, opened by the link's token (no key); null until signed."),
  link: z
    .string()
    .nullable()
    .describe("The recipient's offer page (URL with their own token, no key): read, accept or sign there. null to a key without offer:write."),
});
export type OfferRecipient = z.infer<typeof offerRecipientSchema>;

export const contactPersonSchema = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  avatar: z.string().nullable(),
});
export type ContactPerson = z.infer<typeof contactPersonSchema>;

export const offerSubscriptionSchema = z
  .object({
    id: z.string(),
    number: z.string(),
    name: z.string().nullable(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    plan: z.object({ id: z.string(), code: z.string(), name: z.string() }),
    startDate: dateTime.nullable(),
    activatedAt: dateTime.nullable(),
  })
  .describe('Part of it; get_subscription shows all.');
export type OfferSubscription = z.infer<typeof offerSubscriptionSchema>;

const offerFields = {
  id: z.string(),
  number: z.string(),
  status: z.enum(OFFER_STATUSES),
  expired: z.boolean().describe('Past validUntil: no longer acceptable.'),
  acceptanceMode: z.enum(ACCEPTANCE_MODES),
  dealType: z.enum(DEAL_TYPES),
  subscription: offerSubscriptionSchema,
  customer: customerSchema,
  name: z.string(),
  description: z.string().nullable(),
  locale: z.string(),
  customVariables: customVariablesSchema,
  validUntil: dateTime,
  recipients: z.array(offerRecipientSchema),
  auditLogDocument: z.string().nullable().describe('PDF URL (API key); null until signed.'),
  signedDocument: z.string().nullable().describe('PDF URL (API key); null until signed.'),
  signedAt: dateTime.nullable(),
  autoActivateSubscription: z.boolean(),
  crmDealId: z.string().nullable(),
  contactPerson: contactPersonSchema.nullable(),
  ...timestamps,
};

export const offerSchema = z.object({
  ...offerFields,
  sections: z.array(offerSectionSchema),
});
export type Offer = z.infer<typeof offerSchema>;

/** In list responses sections are their ids (interface 2.10). */
export const offerListItemSchema = z.object({
  ...offerFields,
  sections: z.array(z.string()).describe('Section ids; get_offer shows the content.'),
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
