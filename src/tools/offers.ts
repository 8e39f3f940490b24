import { z } from 'zod';
import {
  acceptOffer,
  archiveOffer,
  createOffer,
  getOffer,
  listOffers,
  submitOfferInvoiceDetails,
  updateOffer,
} from '../domain/offers.js';
import { invoiceAddressFields } from './billingDetails.js';
import { subscriptionInputShape } from './subscriptions.js';
import { defineOperation } from '../registry/operation.js';
import { dateTimeInput, filterBy, idOrNumber, listOf, pageInput, pageRequest, pathId, text255, toPage } from '../schemas/common.js';
import {
  ACCEPTANCE_MODES,
  DEAL_TYPES,
  OFFER_STATUSES,
  offerListItemSchema,
  offerSchema,
  offerUpdateSchema,
} from '../schemas/offers.js';
import { listView, offerRow, offerView } from '../schemas/views.js';

const ref = (what: string) => z.string().min(1).max(255).describe(what);
const requiredText = (what: string) =>
  z
    .string()
    .max(255, { message: 'must be 1 to 255 characters' })
    .refine((s) => s.trim() !== '', { message: 'must be 1 to 255 characters and not blank' })
    .describe(`${what}; required, 1 to 255 characters, not blank.`);
const nullableText = (what: string) => text255.nullable().optional().describe(`${what}; at most 255 characters, null or omitted for none.`);
const email = z
  .email({ message: 'must be a valid e-mail address such as jane@example.com' })
  .max(255, { message: 'must be at most 255 characters' });

const ACCEPTANCE = `click: the recipient accepts with a click (signed at once, or awaiting_invoice_details when the customer has no invoice address yet); esignature: every recipient signs electronically (signing after the first, signed after the last); print: the customer signs a printed copy and the seller records it with accept_offer (signed at once).`;
const acceptanceMode = z.enum(ACCEPTANCE_MODES).describe(`How the offer is accepted. ${ACCEPTANCE}`);
const dealType = z.enum(DEAL_TYPES).describe('Kind of deal: new_business, expansion, renewal or one_off.');
const name = requiredText('Title of the offer, e.g. "Pro plan for ACME"');
const description = z.string().max(10_000, { message: 'must be at most 10000 characters' }).nullable();
const locale = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$/, { message: 'must be a language tag such as en, de or de-DE' })
  .describe('Language of the offer as a language tag: en, de, de-DE, fr-CH, …');
const section = z.strictObject({
  title: requiredText('Heading of the section, e.g. "Scope"'),
  content: z.string().max(20_000, { message: 'must be at most 20000 characters' }).describe('Text of the section, at most 20000 characters.'),
});
const sections = z
  .array(section)
  .max(50, { message: 'must contain at most 50 sections' })
  .describe('Text sections of the offer in order, each { title, content }; at most 50. Each gets an id; list_offers shows only the ids.');
const customVariables = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: 'must be 1 to 64 of A-Z, a-z, 0-9 and _, not starting with a digit' }),
    z.union([z.string().max(1000, { message: 'must be at most 1000 characters' }), z.number(), z.boolean()]),
  )
  .refine((v) => Object.keys(v).length <= 100, { message: 'must have at most 100 variables' })
  .describe('Values for placeholders in the offer text, by name: a flat object (at most 100 entries) whose keys are 1-64 of A-Z, a-z, 0-9 and _ (not starting with a digit) and whose values are strings (at most 1000 characters), numbers or booleans. Nested objects and arrays are rejected.');
const validUntil = dateTimeInput.describe('Until when the offer can be accepted: a date-time with offset in the future (a past one is rejected); after it the offer shows expired true.');
const autoActivateSubscription = z.boolean().describe('true: signing the offer activates its subscription (billing starts); false: signing leaves the subscription draft, to be activated with activate_subscription.');
const crmDealId = nullableText('Id of the deal in a CRM');
const contactPerson = z
  .strictObject({
    firstName: requiredText("Contact person's first name"),
    lastName: requiredText("Contact person's last name"),
    email: email.describe("Contact person's e-mail address, at most 255 characters."),
    avatar: z.url({ message: 'must be an absolute URL' }).max(2048).nullable().optional().describe('URL of a picture of the contact person; optional.'),
  })
  .nullable()
  .describe('The seller\'s contact person shown on the offer: { firstName, lastName, email, avatar? }; null for none.');

const subscription = z
  .strictObject(subscriptionInputShape)
  .describe("The subscription the offer proposes, for the offer's customer: { plan, periods, … } as in create_subscription. It is created at once in status offer (not billed) and becomes active or draft when the offer is signed. Rejected (422 at subscription.<field>): what create_subscription rejects.");

const invoiceAddress = z
  .strictObject(invoiceAddressFields)
  .describe("The customer's invoice address, fields as in create_invoice_address: { street, zip, city, countryCode, companyName?, firstName?, lastName?, … }. It is added to the customer as the default invoice address.");

const noBody = { id: pathId('offer (ULID)') };

export const offerOperations = [
  defineOperation({
    name: 'create_offer',
    title: 'Create offer',
    description: `Draft an offer (quote) for a customer: what is proposed (a subscription to a plan), who accepts it (recipients) and how (acceptanceMode). Created open with a number OFF-000001…; the proposed subscription is created at once in status offer and is not billed. Then the customer accepts it (accept_offer); when it is signed the subscription becomes active (autoActivateSubscription true, the default) or draft. ${ACCEPTANCE} Rejected (422): an unknown customer, validUntil not in the future, no recipients or a recipient listed twice, sections or customVariables out of shape, and at subscription.<field> whatever create_subscription rejects (unknown plan, currency mismatch, …).`,
    toolset: 'offers',
    method: 'POST',
    path: '/offers',
    permission: 'offer:write',
    kind: 'create',
    input: z.strictObject({
      customer: idOrNumber('customer', 'customer the offer is for'),
      acceptanceMode,
      dealType: dealType.default('new_business').describe(`${dealType.description} Default new_business.`),
      name,
      description: description.optional().describe('Introduction or summary of the offer, at most 10000 characters.'),
      locale: locale.default('en').describe(`${locale.description} Default en.`),
      recipients: z
        .array(
          z.strictObject({
            email: email.describe("Recipient's e-mail address, at most 255 characters; each recipient once."),
            firstName: requiredText("Recipient's first name"),
            lastName: requiredText("Recipient's last name"),
          }),
        )
        .min(1, { message: 'must contain at least 1 recipient' })
        .max(20, { message: 'must contain at most 20 recipients' })
        .describe('Who accepts or signs the offer, 1 to 20, each { email, firstName, lastName } with a distinct e-mail. Each gets an id that accept_offer takes. With esignature every one of them must sign.'),
      sections: sections.default([]),
      customVariables: customVariables.default({}),
      validUntil,
      autoActivateSubscription: autoActivateSubscription.default(true).describe(`${autoActivateSubscription.description} Default true.`),
      crmDealId,
      contactPerson: contactPerson.optional(),
      subscription,
    }),
    output: offerSchema,
    mcp: { output: offerView },
    handler: (ctx, input) => createOffer(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_offers',
    title: 'List offers',
    description:
      'List offers, oldest first, paginated (page, limit 0-100), optionally only those of a customer or in a status. sections are shown as their ids (get_offer shows their content); expired tells whether an open or signing offer is past validUntil.',
    toolset: 'offers',
    method: 'GET',
    path: '/offers',
    permission: 'offer:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      customer: filterBy('customer', 'offers'),
      status: z.enum(OFFER_STATUSES).optional().describe(`Only offers in this status: ${OFFER_STATUSES.join(', ')}.`),
    }),
    output: listOf(offerListItemSchema),
    mcp: listView(offerRow),
    handler: async (ctx, { customer, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listOffers(ctx.tx, ctx.org, { customer, status }, page, ctx.now);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_offer',
    title: 'Get offer',
    description:
      'Get one offer by id: status, expired, customer, the proposed subscription (id, number, status), recipients with their signing status and log, sections with their content. An unknown id is a 404.',
    toolset: 'offers',
    method: 'GET',
    path: '/offers/{id}',
    permission: 'offer:read',
    kind: 'read',
    input: z.strictObject(noBody),
    output: offerSchema,
    mcp: { output: offerView },
    handler: (ctx, input) => getOffer(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'update_offer',
    title: 'Update offer',
    description:
      'Change an offer partially: omitted fields stay. While the offer is open every field here may change (sections replace the whole list). Once it has been accepted (signing, awaiting_invoice_details, signed) or archived only name may change: another field sent with a different value is a 409 naming it (sending the current value is accepted). An expired open offer becomes acceptable again with a later validUntil. Customer, recipients and the proposed subscription cannot change here: archive the offer and create a new one. Answers the reduced offer { id, status, acceptanceMode, dealType, autoActivateSubscription, name, validUntil, customVariables }. Rejected (422): validUntil not in the future, fields out of shape. An unknown id is a 404.',
    toolset: 'offers',
    method: 'PUT',
    path: '/offers/{id}',
    permission: 'offer:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('offer (ULID)'),
      name: name.optional(),
      description: description.optional().describe('Introduction or summary, at most 10000 characters; null clears it. Only while open.'),
      locale: locale.optional(),
      acceptanceMode: acceptanceMode.optional(),
      dealType: dealType.optional(),
      sections: sections.optional(),
      customVariables: customVariables.optional().describe('Replaces the whole map of variables. Only while open.'),
      validUntil: validUntil.optional(),
      autoActivateSubscription: autoActivateSubscription.optional(),
      crmDealId,
      contactPerson: contactPerson.optional(),
    }),
    output: offerUpdateSchema,
    handler: (ctx, { id, ...patch }) => updateOffer(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'accept_offer',
    title: 'Accept offer',
    description: `Record that a recipient accepts or signs the offer (recipient: the recipient's id from the offer). ${ACCEPTANCE} The recipient's signingStatus becomes signed with a line in its signingLog. When the offer becomes signed, signedAt is set and its subscription becomes active (autoActivateSubscription true) or draft. Rejected: 409 when the offer is not open (esignature: open or signing), is expired (past validUntil) or the recipient has already signed; 422 for a recipient id not on the offer. An unknown offer id is a 404.`,
    toolset: 'offers',
    method: 'POST',
    path: '/offers/{id}/accept',
    permission: 'offer:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({
      ...noBody,
      recipient: ref("Id of the recipient who accepts or signs (the offer's recipients[].id)."),
    }),
    output: offerSchema,
    mcp: { output: offerView },
    handler: (ctx, { id, ...input }) => acceptOffer(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'submit_offer_invoice_details',
    title: 'Submit invoice details for an offer',
    description:
      "Complete an offer accepted by click whose customer had no invoice address (status awaiting_invoice_details): the address is added to the customer as the default invoice address and the offer becomes signed, which activates its subscription (autoActivateSubscription true) or makes it draft. Rejected: 409 in any other status; 422 for an address out of shape (street, zip, city required; countryCode an upper-case ISO 3166-1 alpha-2 code). An unknown offer id is a 404.",
    toolset: 'offers',
    method: 'POST',
    path: '/offers/{id}/invoice-details',
    permission: 'offer:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({ ...noBody, invoiceAddress }),
    output: offerSchema,
    mcp: { output: offerView },
    handler: (ctx, { id, ...input }) => submitOfferInvoiceDetails(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'archive_offer',
    title: 'Archive offer',
    description:
      'Withdraw an open or signing offer: it can no longer be accepted (final). Its proposed subscription stays in status offer and is never billed. Rejected: 409 from awaiting_invoice_details, signed or archived. An unknown id is a 404.',
    toolset: 'offers',
    method: 'POST',
    path: '/offers/{id}/archive',
    permission: 'offer:write',
    kind: 'action',
    annotations: { destructiveHint: true },
    input: z.strictObject(noBody),
    output: offerSchema,
    mcp: { output: offerView },
    handler: (ctx, input) => archiveOffer(ctx.tx, ctx.org, input.id, ctx.now),
  }),
];
