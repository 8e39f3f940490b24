import { z } from 'zod';
import { can, type Principal } from '../auth/keys.js';
import {
  acceptOffer,
  archiveOffer,
  createOffer,
  getOffer,
  listOffers,
  type RecipientLinks,
  submitOfferInvoiceDetails,
  updateOffer,
} from '../domain/offers.js';
import { invoiceAddressFields } from './billingDetails.js';
import { deliverAfterCommit } from './invoices.js';
import { subscriptionInputShape } from './subscriptions.js';
import { defineOperation } from '../registry/operation.js';
import { dateTimeInput, filterBy, idOrNumber, listOf, pageInput, pageRequest, text255, toPage } from '../schemas/common.js';
import {
  ACCEPTANCE_MODES,
  DEAL_TYPES,
  OFFER_STATUSES,
  offerListItemSchema,
  offerSchema,
  offerUpdateSchema,
} from '../schemas/offers.js';
import { listView, offerCreatedView, offerRow, offerStateView, offerView } from '../schemas/views.js';

const RECIPIENT_ID = "must be the id of one of the offer's recipients (its recipients[].id): 1 to 255 characters";
const recipientId = z
  .string()
  .min(1, { message: RECIPIENT_ID })
  .max(255, { message: RECIPIENT_ID })
  .describe("Id of the recipient (the offer's recipients[].id).");
const requiredText = (what: string) =>
  z
    .string()
    .max(255, { message: 'must be 1 to 255 characters' })
    .refine((s) => s.trim() !== '', { message: 'must be 1 to 255 characters and not blank' })
    .describe(`${what}.`);
const nullableText = (what: string) => text255.nullable().optional().describe(`${what}.`);
const email = z
  .email({ message: 'must be a valid e-mail address such as jane@example.com' })
  .max(255, { message: 'must be at most 255 characters' });

const acceptanceMode = z
  .enum(ACCEPTANCE_MODES)
  .describe('click: a recipient accepts with a click; esignature: every recipient signs; print: the seller records the signed printout.');
const dealType = z.enum(DEAL_TYPES).describe('Kind of deal.');
const name = requiredText('Title, e.g. "Pro plan for ACME"');
const description = z.string().max(10_000, { message: 'must be at most 10000 characters' }).nullable();
const locale = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$/, { message: 'must be a language tag such as en, de or de-DE' })
  .describe('Language tag, e.g. de-DE.');
const section = z.strictObject({
  title: requiredText('Heading, e.g. "Scope"'),
  content: z.string().max(20_000, { message: 'must be at most 20000 characters' }).describe('Section text.'),
});
const sections = z
  .array(section)
  .max(50, { message: 'must contain at most 50 sections' })
  .describe('Text sections, in order.');
/** zod would answer "invalid key in record" and "invalid input" (a value of none of the types): these say what is allowed. */
const VARIABLE_NAME = 'is not a valid variable name: use 1 to 64 of A-Z, a-z, 0-9 and _, not starting with a digit, e.g. seat_count';
const VARIABLE_VALUE = 'must be a string of at most 1000 characters, a number or a boolean; not an object, array or null';
const customVariables = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/),
    z.union([z.string().max(1000, { message: 'must be at most 1000 characters' }), z.number(), z.boolean()], { error: VARIABLE_VALUE }),
    { error: (issue) => (issue.code === 'invalid_key' ? VARIABLE_NAME : undefined) },
  )
  .refine((v) => Object.keys(v).length <= 100, { message: 'must have at most 100 variables' })
  .describe('Values of the {{name}} placeholders in sections, each of which must be defined; at most 100.');
const validUntil = dateTimeInput.describe('Until when the offer can be accepted; in the future.');
const autoActivateSubscription = z
  .boolean()
  .describe('true: signing activates the subscription; false: it stays draft for activate_subscription.');
const crmDealId = nullableText('Deal id in a CRM');
/**
 * https only: the picture is for showing the contact person to customers, on pages served over
 * https, where an http picture is mixed content (blocked, and fetched in clear); any other scheme
 * (javascript:, data:) is no picture to link to. The pattern shows a model the rule in the schema.
 */
const HTTPS_URL = 'must be an https URL of a picture, e.g. https://example.com/sam.png';
const avatar = z
  .url({ protocol: /^https$/, message: HTTPS_URL, abort: true })
  .regex(/^https:\/\//i, { message: HTTPS_URL })
  .max(2048, { message: 'must be at most 2048 characters' });
const contactPerson = z
  .strictObject({
    firstName: requiredText('First name'),
    lastName: requiredText('Last name'),
    email: email.describe('E-mail address.'),
    avatar: avatar.nullable().optional().describe('Picture URL.'),
  })
  .nullable()
  .describe("The seller's contact person shown on the offer.");

const subscription = z
  .strictObject(subscriptionInputShape)
  .describe('The subscription proposed, as in create_subscription.');

/** The invoice address of submit_offer_invoice_details, which the offer page validates too. */
export const offerInvoiceAddress = z
  .strictObject(invoiceAddressFields)
  .describe("The customer's invoice address, as in create_invoice_address.");

const noBody = { id: idOrNumber('offer') };

/** A recipient's link accepts or signs the offer: reads show it to a key that may (offer:write), else null. */
const recipientLinks = (principal: Principal): RecipientLinks => (can(principal, 'offer:write') ? 'shown' : 'withheld');

export const offerOperations = [
  defineOperation({
    name: 'create_offer',
    title: 'Create offer',
    description:
      'Propose a subscription to a customer in an offer (quote) that its recipients accept with accept_offer. The offer is created open, numbered OFF-000001; its subscription is created in status offer, not billed until the offer is signed.',
    toolset: 'offers',
    method: 'POST',
    path: '/offers',
    permission: 'offer:write',
    kind: 'create',
    input: z.strictObject({
      customer: idOrNumber('customer'),
      acceptanceMode,
      dealType: dealType.default('new_business'),
      name,
      description: description.optional().describe('Introduction or summary.'),
      locale: locale.default('en'),
      contactPerson: contactPerson.optional(),
      recipients: z
        .array(
          z.strictObject({
            email: email.describe('E-mail address.'),
            firstName: requiredText('First name'),
            lastName: requiredText('Last name'),
          }),
        )
        .min(1, { message: 'must contain at least 1 recipient' })
        .max(20, { message: 'must contain at most 20 recipients' })
        .describe('Who accepts or signs the offer, each with a distinct e-mail; each gets an id for accept_offer.'),
      sections: sections.default([]),
      customVariables: customVariables.default({}),
      validUntil,
      autoActivateSubscription: autoActivateSubscription.default(true),
      crmDealId,
      subscription,
    }),
    output: offerSchema,
    mcp: { output: offerCreatedView },
    handler: (ctx, input) => createOffer(ctx.tx, ctx.org, input, ctx.now, ctx.links),
  }),
  defineOperation({
    name: 'list_offers',
    title: 'List offers',
    description: 'List offers, optionally of one customer or status. expired: past validUntil, no longer acceptable.',
    toolset: 'offers',
    method: 'GET',
    path: '/offers',
    permission: 'offer:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      customer: filterBy('customer', 'offers'),
      status: z.enum(OFFER_STATUSES).optional().describe('Only offers in this status.'),
    }),
    output: listOf(offerListItemSchema),
    mcp: listView(offerRow),
    handler: async (ctx, { customer, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listOffers(ctx.tx, ctx.org, { customer, status }, page, ctx.now, ctx.links, recipientLinks(ctx.principal));
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_offer',
    title: 'Get offer',
    description: 'Get an offer with its proposed subscription, recipients and their signing status, and sections.',
    toolset: 'offers',
    method: 'GET',
    path: '/offers/{id}',
    permission: 'offer:read',
    kind: 'read',
    input: z.strictObject(noBody),
    output: offerSchema,
    mcp: { output: offerView },
    handler: (ctx, input) => getOffer(ctx.tx, ctx.org, input.id, ctx.now, ctx.links, recipientLinks(ctx.principal)),
  }),
  defineOperation({
    name: 'update_offer',
    title: 'Update offer',
    description:
      'Change an open offer: omitted fields stay, sections and customVariables are replaced whole; a later validUntil makes an expired offer acceptable again. Once accepted or archived only name can change. To change customer, recipients or subscription, archive it and create another.',
    toolset: 'offers',
    method: 'PUT',
    path: '/offers/{id}',
    permission: 'offer:write',
    kind: 'update',
    input: z.strictObject({
      id: idOrNumber('offer'),
      name: name.optional(),
      description: description.optional().describe('Introduction or summary; null clears it.'),
      locale: locale.optional(),
      acceptanceMode: acceptanceMode.optional(),
      dealType: dealType.optional(),
      sections: sections.optional(),
      customVariables: customVariables.optional(),
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
    description:
      'Record that a recipient accepts or signs an open, unexpired offer. click and print sign it at once (click without a customer invoice address: awaiting_invoice_details, see submit_offer_invoice_details); esignature once every recipient has. Signing activates its subscription, or leaves it draft.',
    toolset: 'offers',
    method: 'POST',
    path: '/offers/{id}/accept',
    permission: 'offer:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({
      ...noBody,
      recipient: recipientId,
    }),
    output: offerSchema,
    mcp: { output: offerStateView },
    handler: (ctx, { id, ...input }) => {
      deliverAfterCommit(ctx);
      return acceptOffer(ctx.tx, ctx.org, id, input, ctx.now, ctx.links);
    },
  }),
  defineOperation({
    name: 'submit_offer_invoice_details',
    title: 'Submit invoice details for an offer',
    description:
      "Complete an offer awaiting_invoice_details with the customer's invoice address, which becomes the customer's default: the offer is signed and its subscription activated (or left draft).",
    toolset: 'offers',
    method: 'POST',
    path: '/offers/{id}/invoice-details',
    permission: 'offer:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({ ...noBody, invoiceAddress: offerInvoiceAddress }),
    output: offerSchema,
    mcp: { output: offerStateView },
    handler: (ctx, { id, ...input }) => {
      deliverAfterCommit(ctx);
      return submitOfferInvoiceDetails(ctx.tx, ctx.org, id, input, ctx.now, ctx.links);
    },
  }),
  defineOperation({
    name: 'archive_offer',
    title: 'Archive offer',
    description: 'Withdraw an open or signing offer for good; its subscription is terminated, never billed.',
    toolset: 'offers',
    method: 'POST',
    path: '/offers/{id}/archive',
    permission: 'offer:write',
    kind: 'action',
    annotations: { destructiveHint: true },
    input: z.strictObject(noBody),
    output: offerSchema,
    mcp: { output: offerStateView },
    handler: (ctx, input) => archiveOffer(ctx.tx, ctx.org, input.id, ctx.now, ctx.links),
  }),
];
