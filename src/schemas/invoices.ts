import { z } from 'zod';
import { dateTime, MINOR, timestamps } from './common.js';

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const invoiceLineSchema = z.object({
  id: z.string(),
  position: z.number().int().describe('1-based order of the line on the invoice.'),
  description: z.string(),
  quantity: z.number().describe('Quantity billed.'),
  unitAmount: z.number().int().describe(`Price of one unit; ${MINOR}, negative for a discount or credit line.`),
  netAmount: z.number().int().describe(`quantity x unitAmount, rounded half-up; ${MINOR}.`),
  taxRate: z.number().describe('Tax rate of the line in percent.'),
  periodStart: dateTime.nullable().describe('Start of the billed service period; null on manual lines.'),
  periodEnd: dateTime.nullable().describe('End of the billed service period; null on manual lines.'),
});
export type InvoiceLine = z.infer<typeof invoiceLineSchema>;

export const invoiceTaxSchema = z.object({
  rate: z.number().describe('Tax rate in percent.'),
  netAmount: z.number().int().describe(`Sum of the net amounts of the lines with this rate; ${MINOR}.`),
  taxAmount: z.number().int().describe(`Tax on that sum, rounded half-up; ${MINOR}.`),
});
export type InvoiceTax = z.infer<typeof invoiceTaxSchema>;

export const invoicePaymentSchema = z.object({
  id: z.string(),
  amount: z.number().int().describe(`Amount received; ${MINOR}.`),
  paidAt: dateTime.describe('When the money was received.'),
  paymentPlanId: z.string().nullable().describe('The payment plan the payment was recorded on; null for a direct payment.'),
  createdAt: dateTime.describe('When the payment was recorded.'),
});
export type InvoicePayment = z.infer<typeof invoicePaymentSchema>;

export const invoiceSchema = z.object({
  id: z.string(),
  number: z.string().nullable().describe('INV-<year>-000001, …, assigned when the invoice is issued; null while draft.'),
  customer: z.string().describe('Id of the customer billed.'),
  subscription: z.string().nullable().describe('Id of the subscription billed, or null.'),
  status: z.enum(INVOICE_STATUSES),
  currencyCode: z.string().describe("ISO 4217 currency of every amount (the customer's currency)."),
  lines: z.array(invoiceLineSchema),
  taxes: z.array(invoiceTaxSchema).describe('Tax per rate, computed on the summed net of the lines with that rate.'),
  netAmount: z.number().int().describe(`Sum of the line net amounts; ${MINOR}.`),
  taxAmount: z.number().int().describe(`Sum of the taxes per rate; ${MINOR}.`),
  grossAmount: z.number().int().describe(`netAmount + taxAmount; ${MINOR}.`),
  amountPaid: z.number().int().describe(`Sum of the payments received; ${MINOR}.`),
  amountDue: z.number().int().describe(`grossAmount - amountPaid, 0 once paid or void; ${MINOR}.`),
  issuedAt: dateTime.nullable().describe('When the invoice was issued (finalized); null while draft.'),
  dueAt: dateTime.nullable().describe('When payment is due; the moment a payment plan broke, if one did.'),
  paidAt: dateTime.nullable().describe('When the last payment settled the invoice.'),
  voidedAt: dateTime.nullable(),
  dunningPaused: z.boolean().describe('true while an active payment plan covers the invoice: no dunning.'),
  payments: z.array(invoicePaymentSchema),
  ...timestamps,
});
export type Invoice = z.infer<typeof invoiceSchema>;
