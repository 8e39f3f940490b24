import { z } from 'zod';
import { dateTime, timestamps } from './common.js';

export const INVOICE_ADDRESS_TYPES = ['TYPE_DEFAULT', 'TYPE_BILLING'] as const;
export const INVOICE_ADDRESS_STATUSES = ['STATUS_ACTIVE'] as const;

export const invoiceAddressSchema = z.object({
  id: z.string(),
  customer: z.string(),
  vatId: z.string().nullable(),
  type: z.enum(INVOICE_ADDRESS_TYPES),
  default: z.boolean().describe("The customer's default address."),
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
export const PAYMENT_METHOD_STATUSES = ['active', 'disabled', 'expired'] as const;

export const cardSchema = z.object({
  brand: z.string(),
  last4: z.string(),
  expMonth: z.number().int(),
  expYear: z.number().int(),
  cardHolder: z.string().nullable(),
});

export const sepaDebitSchema = z.object({
  iban: z.string().describe('Masked, e.g. DE89**************3000.'),
  bic: z.string().nullable(),
  mandateReference: z.string().nullable(),
  signingDate: z.string().nullable().describe('YYYY-MM-DD.'),
  accountHolder: z.string(),
});

export const paypalSchema = z.object({
  email: z.string(),
  billingAgreementId: z.string().nullable(),
});

export const paymentMethodSchema = z.object({
  id: z.string(),
  customer: z.string(),
  gatewayName: z.string(),
  type: z.enum(PAYMENT_METHOD_TYPES),
  default: z.boolean().describe("The customer's default method."),
  enabled: z.boolean(),
  status: z.enum(PAYMENT_METHOD_STATUSES).describe('disabled: enabled false; expired: past expirationDate. New subscriptions and payment plans take active ones only.'),
  name: z.string().nullable(),
  creationDate: dateTime.describe('Same as createdAt.'),
  expirationDate: dateTime.nullable().describe('Cards: end of the expiry month.'),
  card: cardSchema.nullable(),
  sepaDebit: sepaDebitSchema.nullable(),
  paypal: paypalSchema.nullable(),
  ...timestamps,
});
export type PaymentMethod = z.infer<typeof paymentMethodSchema>;
export type Card = z.infer<typeof cardSchema>;
export type SepaDebit = z.infer<typeof sepaDebitSchema>;
export type Paypal = z.infer<typeof paypalSchema>;
