import { z } from 'zod';
import { dateTime, MINOR, timestamps } from './common.js';
import { customerSchema } from './customers.js';

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const invoiceLineSchema = z.object({
  id: z.string(),
  position: z.number().int().describe('From 1.'),
  description: z.string(),
  quantity: z.string(),
  unitAmountDecimal: z.string().describe('Exact, decimal minor units.'),
  unitAmount: z.number().int().nullable().describe(`${MINOR}; null if fractional.`),
  netAmount: z.number().int().describe(MINOR),
  taxRate: z.number().describe('Percent.'),
  periodStart: dateTime.nullable().describe('Service period; null on manual lines.'),
  periodEnd: dateTime.nullable(),
});
export type InvoiceLine = z.infer<typeof invoiceLineSchema>;

export const invoiceTaxSchema = z.object({
  rate: z.number().describe('Percent.'),
  netAmount: z.number().int().describe(MINOR),
  taxAmount: z.number().int().describe(MINOR),
});
export type InvoiceTax = z.infer<typeof invoiceTaxSchema>;

export const invoicePaymentSchema = z.object({
  id: z.string(),
  amount: z.number().int().describe(MINOR),
  paidAt: dateTime,
  paymentPlanId: z.string().nullable(),
  createdAt: dateTime,
  returnedAt: dateTime.nullable().describe('A returned direct debit: no longer counts.'),
});
export type InvoicePayment = z.infer<typeof invoicePaymentSchema>;

export const invoiceSchema = z.object({
  id: z.string(),
  number: z.string().nullable().describe('null while draft.'),
  customer: z.string(),
  subscription: z.string().nullable(),
  status: z.enum(INVOICE_STATUSES),
  currencyCode: z.string(),
  lines: z.array(invoiceLineSchema),
  taxes: z.array(invoiceTaxSchema).describe('Per rate: tax on the net of its lines, rounded half-up.'),
  netAmount: z.number().int().describe(MINOR),
  taxAmount: z.number().int().describe(MINOR),
  grossAmount: z.number().int().describe(MINOR),
  amountPaid: z.number().int().describe(MINOR),
  amountCredited: z.number().int().describe(`Credit notes while open; ${MINOR}.`),
  creditApplied: z.number().int().describe(`Credit balance used; ${MINOR}.`),
  amountDue: z.number().int().describe(MINOR),
  issuedAt: dateTime.nullable(),
  dueAt: dateTime.nullable().describe('Per payment terms unless given; moved by dunning and broken payment plans.'),
  originalDueAt: dateTime.nullable().describe('The first due date.'),
  paidAt: dateTime.nullable(),
  voidedAt: dateTime.nullable(),
  dunningPaused: z.boolean().describe('true while an active payment plan covers it.'),
  dunningOf: z.string().nullable().describe('A dunning fee invoice: the invoice dunned.'),
  payments: z.array(invoicePaymentSchema),
  ...timestamps,
});
export type Invoice = z.infer<typeof invoiceSchema>;

/** The invoice as operations answer it: the stored invoice and the link to its page for the customer (issue 18). */
export const invoiceResourceSchema = invoiceSchema.extend({
  hostedUrl: z.string().nullable().describe('Page for the customer (lines, PDF) that opens without a key; null while draft.'),
});
export type InvoiceResource = z.infer<typeof invoiceResourceSchema>;

/**
 * An invoice as list_invoices reads it: the customer by its id, number and name (what the MCP rows
 * show); the REST body keeps the customer's id, as every other invoice answer has it.
 */
export const invoiceListItemSchema = invoiceResourceSchema.extend({
  customer: customerSchema.pick({ id: true, customerNumber: true, companyName: true, firstName: true, lastName: true }),
});
export type InvoiceListItem = z.infer<typeof invoiceListItemSchema>;
