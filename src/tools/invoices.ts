import { z } from 'zod';
import {
  createInvoice,
  finalizeInvoice,
  getInvoice,
  listInvoices,
  MAX_AMOUNT_CENTS,
  recordInvoicePayment,
  voidInvoice,
} from '../domain/invoices.js';
import { defineOperation } from '../registry/operation.js';
import { dateTimeInput, filterBy, idOrNumber, listOf, MINOR, pageInput, pageRequest, toPage } from '../schemas/common.js';
import { INVOICE_STATUSES, invoiceSchema } from '../schemas/invoices.js';
import { invoiceRow, listView } from '../schemas/views.js';

const MAX_LINES = 500;
const MAX_QUANTITY = 1_000_000;

/** An amount of money received, in minor units of the invoice currency (shared with the payment-plan tools). */
export const cents = (what: string) =>
  z
    .number()
    .int({ message: 'must be a whole number of minor units (cents)' })
    .min(1, { message: 'must be at least 1 cent (one minor unit)' })
    .max(MAX_AMOUNT_CENTS, { message: `must be at most ${MAX_AMOUNT_CENTS} minor units (cents)` })
    
    .describe(`${what}; ${MINOR}.`);

export const paidAt = dateTimeInput
  .optional()
  .describe('When the money was received; default now, not in the future.');

const line = z.strictObject({
  description: z
    .string()
    .min(1, { message: 'must be 1 to 255 characters' })
    .max(255, { message: 'must be 1 to 255 characters' })
    .describe('What is billed, e.g. "Consulting, March 2026".'),
  quantity: z
    .number()
    .int({ message: 'must be a whole number' })
    .min(1, { message: `must be from 1 to ${MAX_QUANTITY}` })
    .max(MAX_QUANTITY, { message: `must be from 1 to ${MAX_QUANTITY}` })
    .describe('Number of units.'),
  unitAmount: z
    .number()
    .int({ message: 'must be a whole number of minor units (cents)' })
    .min(-MAX_AMOUNT_CENTS, { message: `must be within ±${MAX_AMOUNT_CENTS} minor units (cents)` })
    .max(MAX_AMOUNT_CENTS, { message: `must be within ±${MAX_AMOUNT_CENTS} minor units (cents)` })
    
    .describe(`Net price of one unit; ${MINOR}: 4900 = 49.00 EUR. Negative for a discount or credit.`),
  taxRate: z
    .number()
    .min(0, { message: 'must be a percentage from 0 to 100' })
    .max(100, { message: 'must be a percentage from 0 to 100' })
    .default(0)
    .describe('Tax rate in percent, at most 4 decimals (19, 8.1).'),
});

export const invoiceOperations = [
  defineOperation({
    name: 'create_invoice',
    title: 'Create invoice',
    description:
      "Bill a customer for one-off charges in the customer's currency; unitAmount is an integer of minor units (cents): 4900 = 49.00 EUR. The invoice is issued at once (open, numbered INV-<year>-000001) unless status is draft; a total of 0 is paid at once, a negative one is rejected. A payment plan can split it.",
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices',
    permission: 'invoice:write',
    kind: 'create',
    input: z.strictObject({
      customer: idOrNumber('customer', 'customer to bill'),
      subscription: idOrNumber('subscription', 'subscription billed').optional(),
      dueAt: dateTimeInput
        .optional()
        .describe('When payment is due; default: when issued.'),
      status: z
        .enum(['draft', 'open'])
        .default('open')
        .describe('open: issue now; draft: unnumbered until finalize_invoice.'),
      lines: z
        .array(line)
        .min(1, { message: 'must contain at least 1 line' })
        .max(MAX_LINES, { message: `must contain at most ${MAX_LINES} lines` })
        .describe('Lines, in order.'),
    }),
    output: invoiceSchema,
    handler: (ctx, input) => createInvoice(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_invoices',
    title: 'List invoices',
    description: "List invoices, e.g. a customer's open ones before recording a payment or creating a payment plan.",
    toolset: 'invoices',
    method: 'GET',
    path: '/invoices',
    permission: 'invoice:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      customer: filterBy('customer', 'invoices'),
      subscription: filterBy('subscription', 'invoices'),
      status: z.enum(INVOICE_STATUSES).optional().describe('Only invoices in this status.'),
    }),
    output: listOf(invoiceSchema),
    mcp: listView(invoiceRow),
    handler: async (ctx, { customer, subscription, status, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listInvoices(ctx.tx, ctx.org, { customer, subscription, status }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_invoice',
    title: 'Get invoice',
    description: 'Get an invoice with its lines, taxes per rate, totals, payments and amountDue.',
    toolset: 'invoices',
    method: 'GET',
    path: '/invoices/{id}',
    permission: 'invoice:read',
    kind: 'read',
    input: z.strictObject({ id: idOrNumber('invoice') }),
    output: invoiceSchema,
    handler: (ctx, input) => getInvoice(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'finalize_invoice',
    title: 'Finalize invoice',
    description: 'Issue a draft invoice: it becomes open with the next number and issuedAt now (dueAt too if unset); a total of 0 becomes paid.',
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices/{id}/finalize',
    permission: 'invoice:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({ id: idOrNumber('invoice', 'draft invoice') }),
    output: invoiceSchema,
    handler: (ctx, input) => finalizeInvoice(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'void_invoice',
    title: 'Void invoice',
    description:
      'Cancel a draft or open invoice issued by mistake, for good: nothing is due any more and its number stays used. An invoice under an active payment plan needs cancel_payment_plan first.',
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices/{id}/void',
    permission: 'invoice:write',
    kind: 'action',
    input: z.strictObject({ id: idOrNumber('invoice') }),
    output: invoiceSchema,
    handler: (ctx, input) => voidInvoice(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'record_invoice_payment',
    title: 'Record invoice payment',
    description:
      'Record money received for an open invoice; the payment covering amountDue makes it paid. No overpayments. For an invoice under an active payment plan use record_payment_plan_payment.',
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices/{id}/payments',
    permission: 'invoice:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({ id: idOrNumber('invoice', 'open invoice'), amount: cents('Amount received'), paidAt }),
    output: invoiceSchema,
    handler: (ctx, { id: invoiceId, ...payment }) => recordInvoicePayment(ctx.tx, ctx.org, invoiceId, payment, ctx.now),
  }),
];
