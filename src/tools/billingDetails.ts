import { z } from 'zod';
import {
  createInvoiceAddress,
  createPaymentMethod,
  listInvoiceAddresses,
  listPaymentMethods,
} from '../domain/billingDetails.js';
import { COUNTRY_CODES } from '../domain/countries.js';
import { defineOperation } from '../registry/operation.js';
import {
  INVOICE_ADDRESS_TYPES,
  invoiceAddressSchema,
  PAYMENT_METHOD_TYPES,
  paymentMethodSchema,
} from '../schemas/billingDetails.js';
import { date, idOrNumber, listOf, pageInput, pageRequest, text255, toPage } from '../schemas/common.js';
import { invoiceAddressRow, listView, paymentMethodRow } from '../schemas/views.js';

const nullableText = (what: string) => text255.nullable().optional().describe(`${what}; at most 255 characters, null or omitted for none.`);
const requiredText = (what: string) =>
  z
    .string()
    .max(255, { message: 'must be 1 to 255 characters' })
    .refine((s) => s.trim() !== '', { message: 'must be 1 to 255 characters and not blank' })
    .describe(`${what}; required, 1 to 255 characters, not blank.`);

const FULL_CARD_NUMBER =
  'is a full card number, which is never accepted: send only card.brand and card.last4 (the last four digits) with card.expMonth and card.expYear';
/** Fields a caller might try a full card number in: always rejected, with a message that says why. */
const noCardNumber = (where: string) => {
  const field = z
    .unknown()
    .refine((value) => value === undefined, { message: FULL_CARD_NUMBER })
    .optional()
    .describe(`Never send this: full card numbers ${where} are rejected (422). Send card.brand and card.last4 instead.`);
  return { number: field, cardNumber: field, pan: field };
};

const MASKED = 'Responses show the IBAN masked (first 4 and last 4 characters, e.g. DE89**************3000).';

const sepaDebitInput = z
  .strictObject({
    iban: z
      .string()
      .max(255, { message: 'must be at most 255 characters' })
      .describe(
        `The account's IBAN, e.g. DE89 3704 0044 0532 0130 00; spaces are ignored and letters upper-cased. Rejected (422 at sepaDebit.iban): an unknown country code, the wrong length for the country (DE: 22, FR: 27, GB: 22, NL: 18, …), letters in the check digits, a failing mod-97 checksum. ${MASKED}`,
      ),
    bic: z
      .string()
      .regex(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/, {
        message: 'must be a BIC of 8 or 11 upper-case letters and digits, e.g. COBADEFFXXX or COBADEFF',
      })
      .nullable()
      .optional()
      .describe('BIC (SWIFT code) of the bank: 8 or 11 characters in upper case, e.g. COBADEFFXXX. Optional.'),
    accountHolder: requiredText('Name of the account holder as the bank knows it'),
    mandateReference: z
      .string()
      .regex(/^[A-Za-z0-9+?/\-:().,' ]{1,35}$/, {
        message: "must be 1 to 35 characters of A-Z, a-z, 0-9, space and + ? / - : ( ) . , '",
      })
      .nullable()
      .optional()
      .describe(
        "Unique reference of the signed SEPA mandate: 1 to 35 characters of A-Z, a-z, 0-9, space and + ? / - : ( ) . , ' (other characters are rejected). Optional.",
      ),
    signingDate: date
      .nullable()
      .optional()
      .describe('Day the SEPA mandate was signed, YYYY-MM-DD (e.g. 2026-03-01). Optional.'),
  })
  .nullable()
  .optional()
  .describe(
    'Required when type is sepa_debit, and only then (otherwise omit it or send null): { iban, accountHolder, bic?, mandateReference?, signingDate? }.',
  );

const cardInput = z
  .strictObject({
    brand: z
      .string()
      .min(1, { message: 'must be 1 to 255 characters' })
      .max(255, { message: 'must be 1 to 255 characters' })
      .describe('Card brand, e.g. visa, mastercard, amex; 1 to 255 characters.'),
    last4: z
      .string()
      .regex(/^[0-9]{4}$/, { message: 'must be exactly the last 4 digits of the card number, e.g. "4242"' })
      .describe('The last four digits of the card number as a string of exactly 4 digits, e.g. "4242".'),
    expMonth: z
      .number()
      .int({ message: 'must be an integer from 1 to 12' })
      .min(1, { message: 'must be an integer from 1 to 12' })
      .max(12, { message: 'must be an integer from 1 to 12' })
      .describe('Expiry month, an integer 1 to 12.'),
    expYear: z
      .number()
      .int({ message: 'must be a 4-digit year such as 2028' })
      .min(1000, { message: 'must be a 4-digit year such as 2028' })
      .max(9999, { message: 'must be a 4-digit year such as 2028' })
      .describe(
        'Expiry year with 4 digits, e.g. 2028. A card whose expiry month lies before the current month is rejected as expired.',
      ),
    cardHolder: nullableText('Name on the card'),
    ...noCardNumber('in the card object'),
  })
  .nullable()
  .optional()
  .describe(
    'Required when type is card, and only then (otherwise omit it or send null): { brand, last4, expMonth, expYear, cardHolder? }. Never the full card number.',
  );

const paypalInput = z
  .strictObject({
    email: z
      .email({ message: 'must be a valid e-mail address such as payer@example.com' })
      .max(255, { message: 'must be at most 255 characters' })
      .describe('E-mail address of the PayPal account, e.g. payer@example.com; at most 255 characters.'),
    billingAgreementId: nullableText('Id of the PayPal billing agreement, e.g. B-5YM87293DB0352043'),
  })
  .nullable()
  .optional()
  .describe(
    'Required when type is paypal, and only then (otherwise omit it or send null): { email, billingAgreementId? }.',
  );

/** The address fields of an invoice address (also taken by submit_offer_invoice_details). */
export const invoiceAddressFields = {
  type: z
    .enum(INVOICE_ADDRESS_TYPES)
    .default('TYPE_DEFAULT')
    .describe('TYPE_DEFAULT (default) or TYPE_BILLING; any other value is rejected.'),
  companyName: nullableText('Company the invoice is addressed to'),
  salutation: nullableText('Salutation, e.g. Ms, Mr, Dr'),
  firstName: nullableText("Recipient's first name"),
  lastName: nullableText("Recipient's last name"),
  street: requiredText('Street name, e.g. Friedrichstraße'),
  houseNumber: nullableText('House number, e.g. 12a'),
  addition: nullableText('Address addition, e.g. c/o, floor, building'),
  zip: requiredText('Postal code, e.g. 10117'),
  city: requiredText('City, e.g. Berlin'),
  countryCode: z
    .string()
    .refine((code) => COUNTRY_CODES.has(code), {
      message: 'must be an officially assigned ISO 3166-1 alpha-2 country code in upper case, e.g. DE, AT, GB',
    })
    .describe(
      'Country: an officially assigned ISO 3166-1 alpha-2 code in upper case, e.g. DE, AT, GB. Rejected: lower case (de), alpha-3 (DEU), reserved codes (UK, EL, EU).',
    ),
  vatId: nullableText('VAT identification number of the recipient, e.g. DE123456789'),
  costCentre: nullableText('Cost centre printed on invoices to this address'),
};

export const billingDetailOperations = [
  defineOperation({
    name: 'create_invoice_address',
    title: 'Create invoice address',
    description:
      "Add an invoice address to a customer. A customer has at most one default invoice address, which subscriptions without an invoiceAddress use: the customer's first address always becomes the default; a later one with default true takes the flag over (the previous default keeps its data but loses the flag). type defaults to TYPE_DEFAULT. Rejected (422): street, zip or city missing or blank, countryCode not an upper-case ISO 3166-1 alpha-2 code, any text over 255 characters. An unknown customer id is a 404.",
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/invoice-addresses',
    permission: 'customer:write',
    kind: 'create',
    input: z.strictObject({
      id: idOrNumber('customer', 'customer the address belongs to'),
      default: z
        .boolean()
        .default(false)
        .describe(
          "true: this becomes the customer's only default invoice address. Default false, but the customer's first address becomes the default anyway.",
        ),
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
      "List a customer's invoice addresses, oldest first, paginated (page, limit 0-100); the one with default true is used by subscriptions that name no invoiceAddress. An unknown customer id is a 404.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/invoice-addresses',
    permission: 'customer:read',
    kind: 'list',
    input: z.strictObject({ id: idOrNumber('customer'), ...pageInput }),
    output: listOf(invoiceAddressSchema),
    mcp: listView(invoiceAddressRow),
    handler: async (ctx, { id, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listInvoiceAddresses(ctx.tx, ctx.org, id, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'create_payment_method',
    title: 'Create payment method',
    description: `Add a payment method to a customer: a SEPA direct debit (type sepa_debit with sepaDebit), a card (type card with card) or PayPal (type paypal with paypal). Give exactly the object of the type. Only card brand, last four digits and expiry are stored: full card numbers are never accepted. A customer has at most one default payment method, which subscriptions without a paymentMethod use: the customer's first enabled method always becomes the default; a later one with default true takes the flag over. gatewayName defaults to manual, enabled to true. ${MASKED} Rejected (422): the type's object missing or another type's object given; an invalid IBAN (unknown country, wrong length, failing checksum); a BIC that is not 8 or 11 characters; a mandateReference outside 1-35 SEPA characters; last4 not exactly 4 digits; expMonth outside 1-12; an expired card; a number, cardNumber or pan field; default true with enabled false. An unknown customer id is a 404.`,
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/payment-methods',
    permission: 'customer:write',
    kind: 'create',
    customerAccess: { permission: 'customer:payment-method:add', customerField: 'id' },
    input: z.strictObject({
      id: idOrNumber('customer', 'customer the payment method belongs to'),
      type: z
        .enum(PAYMENT_METHOD_TYPES)
        .describe('sepa_debit, card or paypal; decides which of sepaDebit, card, paypal must be given. Other values are rejected.'),
      gatewayName: z
        .string()
        .min(1, { message: 'must be 1 to 255 characters' })
        .max(255, { message: 'must be 1 to 255 characters' })
        .default('manual')
        .describe('Payment gateway that collects with this method, e.g. manual, stripe; 1 to 255 characters. Default manual.'),
      name: nullableText('Display name of the payment method, e.g. "Company account"'),
      default: z
        .boolean()
        .default(false)
        .describe(
          "true: this becomes the customer's only default payment method. Default false, but the customer's first enabled method becomes the default anyway. A disabled method cannot be the default.",
        ),
      enabled: z.boolean().default(true).describe('false adds the method disabled (never used for collection, never the default). Default true.'),
      sepaDebit: sepaDebitInput,
      card: cardInput,
      paypal: paypalInput,
      ...noCardNumber('at the top level'),
    }),
    output: paymentMethodSchema,
    location: (m) => `/customers/${m.customer}/payment-methods/${m.id}`,
    handler: (ctx, { id, ...input }) => createPaymentMethod(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_payment_methods',
    title: 'List payment methods',
    description:
      "List a customer's payment methods, oldest first, paginated (page, limit 0-100), IBANs masked; the one with default true is used by subscriptions that name no paymentMethod. An unknown customer id is a 404.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/payment-methods',
    permission: 'customer:read',
    kind: 'list',
    customerAccess: { permission: 'customer:payment-method:read', customerField: 'id' },
    input: z.strictObject({ id: idOrNumber('customer'), ...pageInput }),
    output: listOf(paymentMethodSchema),
    mcp: listView(paymentMethodRow),
    handler: async (ctx, { id, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listPaymentMethods(ctx.tx, ctx.org, id, page);
      return toPage(rows, total, page);
    },
  }),
];
