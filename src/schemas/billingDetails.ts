import { z } from 'zod';
import { dateTime, timestamps } from './common.js';

export const INVOICE_ADDRESS_TYPES = ['TYPE_DEFAULT', 'TYPE_BILLING'] as const;
export const INVOICE_ADDRESS_STATUSES = ['STATUS_ACTIVE'] as const;

export const invoiceAddressSchema = z.object({
  id: z.string(),
  customer: z.string().describe('Id of the customer the address belongs to.'),
  vatId: z.string().nullable(),
  type: z.enum(INVOICE_ADDRESS_TYPES),
  default: z.boolean().describe("true for the customer's default invoice address (at most one)."),
  status: z.enum(INVOICE_ADDRESS_STATUSES),
  city: z.string(),
  zip: z.string(),
  street: z.string(),
  houseNumber: z.string().nullable(),
  countryCode: z.string(),
  companyName: z.string().nullable(),
  salutation: z.string().nullable(),
  addition: z.string().nullable(),
  costCentre: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  ...timestamps,
});
export type InvoiceAddress = z.infer<typeof invoiceAddressSchema>;

export const PAYMENT_METHOD_TYPES = ['sepa_debit', 'card', 'paypal'] as const;
export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];
export const PAYMENT_METHOD_STATUSES = ['active'] as const;

export const cardSchema = z.object({
  brand: z.string(),
  last4: z.string().describe('The last four digits of the card number; the full number is never stored.'),
  expMonth: z.number().int(),
  expYear: z.number().int(),
  cardHolder: z.string().nullable(),
});

export const sepaDebitSchema = z.object({
  iban: z.string().describe('The IBAN masked: first 4 and last 4 characters, * between (DE89**************3000).'),
  bic: z.string().nullable(),
  mandateReference: z.string().nullable(),
  signingDate: z.string().nullable().describe('Day the mandate was signed, YYYY-MM-DD.'),
  accountHolder: z.string(),
});

export const paypalSchema = z.object({
  email: z.string(),
  billingAgreementId: z.string().nullable(),
});

export const paymentMethodSchema = z.object({
  id: z.string(),
  customer: z.string().describe('Id of the customer the payment method belongs to.'),
  gatewayName: z.string(),
  type: z.enum(PAYMENT_METHOD_TYPES),
  default: z.boolean().describe("true for the customer's default payment method (at most one)."),
  enabled: z.boolean(),
  status: z.enum(PAYMENT_METHOD_STATUSES),
  name: z.string().nullable(),
  creationDate: dateTime.describe('When the payment method was created (same as createdAt).'),
  expirationDate: dateTime
    .nullable()
    .describe('Cards: the last instant of the expiry month (UTC); null for other types.'),
  card: cardSchema.nullable().describe('Set when type is card, else null.'),
  sepaDebit: sepaDebitSchema.nullable().describe('Set when type is sepa_debit, else null.'),
  paypal: paypalSchema.nullable().describe('Set when type is paypal, else null.'),
  ...timestamps,
});
export type PaymentMethod = z.infer<typeof paymentMethodSchema>;
export type Card = z.infer<typeof cardSchema>;
export type SepaDebit = z.infer<typeof sepaDebitSchema>;
export type Paypal = z.infer<typeof paypalSchema>;
