import { z } from 'zod';
import { date, dateTime, MINOR } from './common.js';

/** The organisation as SEPA creditor (CONTRACT section 8); the IBAN is masked like every IBAN in a response. */
export const sepaCreditorSchema = z.object({
  creditorIdentifier: z.string(),
  name: z.string(),
  iban: z.string().describe('Masked.'),
  bic: z.string().nullable(),
  updatedAt: dateTime,
});
export type SepaCreditor = z.infer<typeof sepaCreditorSchema>;

export const SEPA_TYPES = ['core', 'b2b'] as const;
export type SepaType = (typeof SEPA_TYPES)[number];
export const SEQUENCE_TYPES = ['FRST', 'RCUR'] as const;
export type SequenceType = (typeof SEQUENCE_TYPES)[number];

const bankAccountValue = z.object({
  iban: z.string().describe('Masked.'),
  bic: z.string().nullable(),
  accountHolder: z.string(),
  bankName: z.string().nullable(),
});

/** Interface section 2.12: the account a mandate debits, i.e. the SEPA payment method. */
export const bankAccountSchema = bankAccountValue.extend({
  id: z.string().describe('The payment method.'),
  alias: z.string().nullable(),
  source: z.literal('payment_method'),
  asValue: bankAccountValue,
  tenantId: z.string(),
});

export const SEPA_MANDATE_STATUSES = ['active', 'revoked', 'expired'] as const;

export const sepaMandateSchema = z.object({
  id: z.string(),
  status: z
    .enum(SEPA_MANDATE_STATUSES)
    .describe('revoked: by the debtor (revoke_sepa_mandate); expired: no collection for 36 months. Only active mandates are collected.'),
  revokedAt: dateTime.nullable(),
  creditorIdentifier: z.string(),
  mandateReference: z.string(),
  signatureDate: date,
  bankAccount: bankAccountSchema,
  sequenceType: z.enum(SEQUENCE_TYPES).describe('FRST until a collection on it stands, then RCUR.'),
  sepaType: z.enum(SEPA_TYPES),
  createdAt: dateTime,
  customer: z.string(),
  firstSepaDebit: z.boolean().describe('true while the next debit is the first.'),
  tenantId: z.string(),
});
export type SepaMandate = z.infer<typeof sepaMandateSchema>;

export const SEPA_PAYMENT_STATUSES = ['collected', 'returned'] as const;

/** Interface section 2.12, and what a collection paid and whether it came back. */
export const sepaXmlPaymentSchema = z.object({
  id: z.string(),
  type: z.literal('debit'),
  status: z.enum(SEPA_PAYMENT_STATUSES),
  createdAt: dateTime,
  dueDate: date.describe('Of the invoice or installment.'),
  remittanceInformation: z.string(),
  endToEndId: z.string(),
  amount: z.number().int().describe(MINOR),
  currencyCode: z.literal('EUR'),
  sequenceType: z.enum(SEQUENCE_TYPES),
  sepaMandate: sepaMandateSchema,
  sepaXmlStatement: z.string(),
  invoice: z.string(),
  paymentPlan: z.string().nullable(),
  installment: z.string().nullable(),
  transaction: z.string().describe("The invoice payment it recorded."),
  autoCaptureAt: dateTime.nullable(),
  notifications: z.array(z.string()),
  customer: z.string(),
  executionDate: date,
  returnReasonCode: z.string().nullable(),
  returnedAt: dateTime.nullable(),
  tenantId: z.string(),
});
export type SepaXmlPayment = z.infer<typeof sepaXmlPaymentSchema>;

/** A collection run's statement: the pain.008 file's header figures. */
export const sepaXmlStatementSchema = z.object({
  id: z.string(),
  messageId: z.string(),
  collectionDate: date,
  numberOfTransactions: z.number().int(),
  controlSum: z.number().int().describe(MINOR),
  currencyCode: z.literal('EUR'),
  creditorIdentifier: z.string(),
  createdAt: dateTime,
  url: z.string().describe('GET it (application/xml, pain.008.001.02) with the API key as Bearer token.'),
  payments: z.array(sepaXmlPaymentSchema),
});
export type SepaXmlStatement = z.infer<typeof sepaXmlStatementSchema>;
