import { z } from 'zod';
import {
  createInvoiceAddress,
  createPaymentMethod,
  DETAIL_FIELD,
  listInvoiceAddresses,
  listPaymentMethods,
  showInvoiceAddress,
  showPaymentMethod,
  updatePaymentMethod,
} from '../domain/billingDetails.js';
import { COUNTRY_CODES } from '../domain/countries.js';
import { MANDATE_REFERENCE } from '../domain/sepa.js';
import { defineOperation } from '../registry/operation.js';
import {
  INVOICE_ADDRESS_TYPES,
  invoiceAddressSchema,
  PAYMENT_METHOD_TYPES,
  paymentMethodSchema,
} from '../schemas/billingDetails.js';
import { bicInput, date, idOrNumber, jsonSchemaOf, listOf, pageInput, pageRequest, pathId, text255, toPage } from '../schemas/common.js';
import { paymentMethodUpdateView } from '../schemas/views.js';

const nullableText = (what: string) => text255.nullable().optional().describe(what);
const requiredText = (what: string) =>
  z
    .string()
    .max(255, { message: 'must be 1 to 255 characters' })
    .refine((s) => s.trim() !== '', { message: 'must be 1 to 255 characters and not blank' })
    .describe(what);

const name = nullableText('Display name.');
const enabled = z.boolean().describe('false: never used for collection.');

const FULL_CARD_NUMBER =
  'is a full card number, which is never accepted: send only card.brand and card.last4 (the last four digits) with card.expMonth and card.expYear';
/** Fields a caller might try a full card number in: always rejected, with a message that says why. */
const noCardNumberField = z
  .unknown()
  .refine((value) => value === undefined, { message: FULL_CARD_NUMBER })
  .optional()
  .describe('Rejected: never send a full card number.');
const noCardNumber = { number: noCardNumberField, cardNumber: noCardNumberField, pan: noCardNumberField };

/**
 * A text field the input schema takes as it is and only describes by `rule` (its pattern):
 * createPaymentMethod checks it with the IBAN and the signing date, which need the domain, so that
 * one answer names every problem of the account rather than these first and the others in a second.
 */
function describedBy(rule: z.ZodString): z.ZodString {
  return z.string().meta(jsonSchemaOf(rule));
}

/** A SEPA account as create_payment_method takes it (also the customer portal's bank account form). */
export const sepaDebitFields = z.strictObject({
  iban: z
    .string()
    .max(255, { message: 'must be at most 255 characters' })
    .describe('IBAN, e.g. DE89370400440532013000; spaces are ignored.'),
  bic: describedBy(bicInput)
    .nullable()
    .optional()
    .describe('BIC, e.g. COBADEFFXXX.'),
  accountHolder: requiredText('Account holder name.'),
  mandateReference: describedBy(z.string().regex(MANDATE_REFERENCE))
    .nullable()
    .optional()
    .describe('With signingDate: records the signed mandate, as create_sepa_mandate (needs the SEPA creditor). Unique, 1 to 35 characters.'),
  signingDate: date.nullable().optional().describe('Day the mandate was signed.'),
});

const sepaDebitInput = sepaDebitFields.nullable().optional().describe('For type sepa_debit.');

const cardInput = z
  .strictObject({
    brand: z
      .string()
      .min(1, { message: 'must be 1 to 255 characters' })
      .max(255, { message: 'must be 1 to 255 characters' })
      .describe('Card brand, e.g. visa.'),
    last4: z
      .string()
      .regex(/^[0-9]{4}$/, { message: 'must be exactly the last 4 digits of the card number, e.g. "4242"' })
      .describe('Last four digits, e.g. "4242".'),
    expMonth: z
      .number()
      .int({ message: 'must be an integer from 1 to 12' })
      .min(1, { message: 'must be an integer from 1 to 12' })
      .max(12, { message: 'must be an integer from 1 to 12' })
      .describe('Expiry month.'),
    expYear: z
      .number()
      .int({ message: 'must be a 4-digit year such as 2028' })
      .min(1000, { message: 'must be a 4-digit year such as 2028' })
      .max(9999, { message: 'must be a 4-digit year such as 2028' })
      .describe('Expiry year, e.g. 2028.'),
    cardHolder: nullableText('Name on the card.'),
    ...noCardNumber,
  })
  .nullable()
  .optional()
  .describe('For type card.');

const paypalInput = z
  .strictObject({
    email: z
      .email({ message: 'must be a valid e-mail address such as payer@example.com' })
      .max(255, { message: 'must be at most 255 characters' })
      .describe('PayPal account e-mail.'),
    billingAgreementId: nullableText('Billing agreement id, e.g. B-5YM87293DB0352043.'),
  })
  .nullable()
  .optional()
  .describe('For type paypal.');

/**
 * The details object of another type than `type` is refused as not belonging to it ("card belongs to
 * type card, but type is paypal", createPaymentMethod); what it lacks for its own type is beside the
 * point, so its issues are dropped, except a full card number's, which is refused wherever it is sent.
 */
function onlyOwnDetails(input: { type: unknown }, ctx: z.core.$RefinementCtx): void {
  const type = PAYMENT_METHOD_TYPES.find((t) => t === input.type);
  if (type === undefined) return;
  const others = Object.values(DETAIL_FIELD).filter((field) => field !== DETAIL_FIELD[type]);
  const kept = ctx.issues.filter(({ path = [] }) => {
    const [field, inner] = path;
    return !others.some((other) => other === field) || Object.hasOwn(noCardNumber, inner ?? '');
  });
  ctx.issues.splice(0, ctx.issues.length, ...kept);
}

/** The address fields of an invoice address (also taken by submit_offer_invoice_details). */
export const invoiceAddressFields = {
  type: z
    .enum(INVOICE_ADDRESS_TYPES)
    .default('TYPE_DEFAULT')
    .describe('Address type.'),
  companyName: nullableText('Company name.'),
  salutation: nullableText('Salutation, e.g. Ms, Dr.'),
  firstName: nullableText('First name.'),
  lastName: nullableText('Last name.'),
  street: requiredText('Street name.'),
  houseNumber: nullableText('House number, e.g. 12a.'),
  addition: nullableText('Address addition, e.g. c/o, floor.'),
  zip: requiredText('Postal code.'),
  city: requiredText('City.'),
  countryCode: z
    .string()
    .refine((code) => COUNTRY_CODES.has(code), {
      message: 'must be an officially assigned ISO 3166-1 alpha-2 country code in upper case, e.g. DE, AT, GB',
    })
    .describe('ISO 3166-1 alpha-2 code, e.g. DE, GB (not UK).'),
  vatId: nullableText('VAT id, checked per country, e.g. DE136695976.'),
  costCentre: nullableText('Cost centre printed on invoices.'),
};

export const billingDetailOperations = [
  defineOperation({
    name: 'create_invoice_address',
    title: 'Create invoice address',
    description:
      "Add an invoice address to a customer. The first one becomes the default that subscriptions without an invoiceAddress use.",
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/invoice-addresses',
    permission: 'customer:write',
    kind: 'create',
    input: z.strictObject({
      id: idOrNumber('customer'),
      default: z.boolean().default(false).describe("true: becomes the customer's default address."),
      ...invoiceAddressFields,
    }),
    output: invoiceAddressSchema,
    location: (a) => `/customers/${a.customer}/invoice-addresses/${a.id}`,
    handler: (ctx, { id, ...input }) => createInvoiceAddress(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_invoice_addresses',
    title: 'List invoice addresses',
    description:
      "List a customer's invoice addresses, oldest first; subscriptions without an invoiceAddress use the default one.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/invoice-addresses',
    permission: 'customer:read',
    kind: 'list',
    input: z.strictObject({ id: idOrNumber('customer'), ...pageInput }),
    output: listOf(invoiceAddressSchema),
    handler: async (ctx, { id, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listInvoiceAddresses(ctx.tx, ctx.org, id, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_invoice_address',
    title: 'Get invoice address',
    description: "Get one of a customer's invoice addresses by its id.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/invoice-addresses/{addressId}',
    permission: 'customer:read',
    kind: 'read',
    input: z.strictObject({ id: idOrNumber('customer'), addressId: pathId('invoice address') }),
    output: invoiceAddressSchema,
    handler: (ctx, { id, addressId }) => showInvoiceAddress(ctx.tx, ctx.org, id, addressId),
  }),
  defineOperation({
    name: 'create_payment_method',
    title: 'Create payment method',
    description:
      'Add a payment method (SEPA direct debit, card or PayPal) to a customer, with only the object its type names. The first enabled one becomes the default that subscriptions without a paymentMethod use.',
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/payment-methods',
    permission: 'customer:write',
    kind: 'create',
    customerAccess: { permission: 'customer:payment-method:add', customerField: 'id' },
    input: z.strictObject({
      id: idOrNumber('customer'),
      type: z.enum(PAYMENT_METHOD_TYPES).describe('Selects which of sepaDebit, card, paypal to give.'),
      gatewayName: z
        .string()
        .min(1, { message: 'must be 1 to 255 characters' })
        .max(255, { message: 'must be 1 to 255 characters' })
        .default('manual')
        .describe('Collecting gateway, e.g. stripe.'),
      name,
      default: z
        .boolean()
        .default(false)
        .describe("true: becomes the customer's default method; not with enabled false."),
      enabled: enabled.default(true),
      sepaDebit: sepaDebitInput,
      card: cardInput,
      paypal: paypalInput,
      ...noCardNumber,
    }).superRefine(onlyOwnDetails, { when: () => true }),
    output: paymentMethodSchema,
    location: (m) => `/customers/${m.customer}/payment-methods/${m.id}`,
    handler: (ctx, { id, ...input }) => createPaymentMethod(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_payment_methods',
    title: 'List payment methods',
    description:
      "List a customer's payment methods, oldest first, IBANs masked; subscriptions without a paymentMethod use the default one.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/payment-methods',
    permission: 'customer:read',
    kind: 'list',
    customerAccess: { permission: 'customer:payment-method:read', customerField: 'id' },
    input: z.strictObject({ id: idOrNumber('customer'), ...pageInput }),
    output: listOf(paymentMethodSchema),
    handler: async (ctx, { id, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listPaymentMethods(ctx.tx, ctx.org, id, page, ctx.now);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_payment_method',
    title: 'Get payment method',
    description: "Get one of a customer's payment methods by its id, IBAN masked.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/payment-methods/{paymentMethodId}',
    permission: 'customer:read',
    kind: 'read',
    customerAccess: { permission: 'customer:payment-method:read', customerField: 'id' },
    input: z.strictObject({ id: idOrNumber('customer'), paymentMethodId: pathId('payment method') }),
    output: paymentMethodSchema,
    handler: (ctx, { id, paymentMethodId }) => showPaymentMethod(ctx.tx, ctx.org, id, paymentMethodId, ctx.now),
  }),
  defineOperation({
    name: 'update_payment_method',
    title: 'Update payment method',
    description:
      "Change a customer's payment method; omitted fields stay. Disabling the default makes the oldest active one the default.",
    toolset: 'customers',
    method: 'PUT',
    path: '/customers/{id}/payment-methods/{paymentMethodId}',
    permission: 'customer:write',
    kind: 'update',
    input: z.strictObject({
      id: idOrNumber('customer'),
      paymentMethodId: pathId('payment method'),
      name: name.optional(),
      enabled: enabled.optional(),
      default: z.literal(true).optional().describe("true: the customer's default from now on."),
    }),
    output: paymentMethodSchema,
    mcp: { output: paymentMethodUpdateView },
    handler: (ctx, { id, paymentMethodId, ...patch }) => updatePaymentMethod(ctx.tx, ctx.org, id, paymentMethodId, patch, ctx.now),
  }),
];
