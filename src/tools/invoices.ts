import { z } from 'zod';
import {
  canonicalUnitAmount,
  createInvoice,
  finalizeInvoice,
  getInvoice,
  listInvoices,
  MAX_AMOUNT_CENTS,
  recordInvoicePayment,
  UNIT_AMOUNT_DIGITS,
  voidInvoice,
  withHostedUrl,
} from '../domain/invoices.js';
import { formatQuantity, parseQuantity } from '../domain/quantity.js';
import { defaultPaymentTermDays } from '../domain/organisation.js';
import { defineOperation, type OperationContext } from '../registry/operation.js';
import { dateTimeInput, filterBy, idOrNumber, listOf, MINOR, pageInput, pageRequest, toPage } from '../schemas/common.js';
import { INVOICE_STATUSES, invoiceListItemSchema, invoiceResourceSchema, type Invoice, type InvoiceListItem } from '../schemas/invoices.js';
import { invoiceRow, listView } from '../schemas/views.js';

const MAX_LINES = 500;

/** Invoice events go to the outbox; the worker sends them once the change commits (shared with the credit-note tools). */
export function deliverAfterCommit(ctx: OperationContext): void {
  ctx.afterCommit(() => ctx.deliveries.kick());
}

/** Every invoice an operation answers carries the link to its hosted page. */
const hosted = (ctx: OperationContext) => (invoice: Invoice) => withHostedUrl(ctx.links, ctx.org, invoice);

/**
 * An amount of money received, in minor units of the invoice currency (shared with the payment-plan
 * tools). The bounds come first and stop the checks: zod's int check reports a whole number beyond
 * 2^53 (1e20) with the int message, which would call it a fraction.
 */
export const cents = (what: string) =>
  z
    .number()
    .min(1, { message: 'must be at least 1 cent (one minor unit)', abort: true })
    .max(MAX_AMOUNT_CENTS, { message: `must be at most ${MAX_AMOUNT_CENTS} minor units (cents)`, abort: true })
    .int({ message: 'must be a whole number of minor units (cents)' })
    .describe(`${what}; ${MINOR}.`);

export const paidAt = dateTimeInput
  .optional()
  .describe('When received, from the issue date to now; default now.');

const line = z.strictObject({
  description: z
    .string()
    .min(1, { message: 'must be 1 to 255 characters' })
    .max(255, { message: 'must be 1 to 255 characters' })
    .describe('What is billed, e.g. "Consulting, March 2026".'),
  quantity: z
    .union([z.string(), z.number()], { error: 'must be a decimal string such as "1.5" or a number' })
    .transform((value, ctx) => {
      const parsed = parseQuantity(value);
      if (!parsed.ok || parsed.micros === 0n) {
        // parseQuantity allows 0 and refuses negatives as such; an invoice line needs more than 0.
        const notPositive = parsed.ok || String(value).startsWith('-');
        ctx.addIssue({ code: 'custom', message: notPositive ? `must be greater than 0 (got ${value})` : parsed.message });
        return z.NEVER;
      }
      return formatQuantity(parsed.micros);
    })
    .describe('Units, > 0, decimal string or number, at most 6 decimals.'),
  unitAmount: z
    .number()
    .min(-MAX_AMOUNT_CENTS, { message: `must be within ±${MAX_AMOUNT_CENTS} minor units (cents)`, abort: true })
    .max(MAX_AMOUNT_CENTS, { message: `must be within ±${MAX_AMOUNT_CENTS} minor units (cents)`, abort: true })
    .int({ message: 'must be a whole number of minor units (cents); use unitAmountDecimal for a fraction' })
    .optional()
    .describe(`Net unit price; ${MINOR}: 4900 = 49.00 EUR; negative for a discount.`),
  unitAmountDecimal: z
    .string()
    .transform((value, ctx) => {
      const canonical = canonicalUnitAmount(value);
      if (canonical === undefined || canonical.replace(/^-/, '').split('.')[0]!.length > String(MAX_AMOUNT_CENTS).length) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a decimal string of minor units (cents) with at most ${UNIT_AMOUNT_DIGITS} decimals, within ±${MAX_AMOUNT_CENTS}, e.g. "0.25"`,
        });
        return z.NEVER;
      }
      return canonical;
    })
    .optional()
    .describe(`Or the net unit price as a decimal string of minor units, at most ${UNIT_AMOUNT_DIGITS} decimals: "0.25".`),
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
      "Bill a customer for one-off charges in the customer's currency; unitAmount is an integer of minor units (cents): 4900 = 49.00 EUR, or give unitAmountDecimal. Issued at once (open, INV-<year>-000001) unless status is draft; credit balance is taken off; nothing due: paid at once; a negative total is rejected.",
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
        .describe("When payment is due; default issue + the customer's paymentTermDays (else the organisation's)."),
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
    output: invoiceResourceSchema,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      const invoice = await createInvoice(ctx.tx, ctx.org, input, ctx.now, await defaultPaymentTermDays(ctx.tx, ctx.org, ctx.config.paymentTermDays));
      return hosted(ctx)(invoice);
    },
  }),
  defineOperation({
    name: 'list_invoices',
    title: 'List invoices',
    description:
      "List invoices, e.g. a customer's open ones before recording a payment or creating a payment plan, or the overdue ones to dun.",
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
      overdue: z
        .literal(true)
        .optional()
        .describe('Only open invoices past dueAt with amountDue > 0; not those under an active payment plan (its installments are due).'),
      dueBefore: dateTimeInput.optional().describe('Only open invoices due before this.'),
    }),
    output: listOf(invoiceListItemSchema),
    restBody: {
      schema: listOf(invoiceResourceSchema),
      of: (page) => ({ ...page, data: page.data.map((invoice) => ({ ...invoice, customer: invoice.customer.id })) }),
    },
    mcp: listView(invoiceRow),
    handler: async (ctx, { customer, subscription, status, overdue, dueBefore, ...rest }) => {
      const page = pageRequest(rest);
      const overdueAt = overdue ? ctx.now.toISOString() : undefined;
      const { rows, total } = await listInvoices(ctx.tx, ctx.org, { customer, subscription, status, dueBefore, overdueAt }, page);
      const items = rows.map(({ customerRef, ...invoice }): InvoiceListItem => ({ ...hosted(ctx)(invoice), customer: customerRef }));
      return toPage(items, total, page);
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
    output: invoiceResourceSchema,
    handler: async (ctx, input) => hosted(ctx)(await getInvoice(ctx.tx, ctx.org, input.id)),
  }),
  defineOperation({
    name: 'finalize_invoice',
    title: 'Finalize invoice',
    description: 'Issue a draft invoice: open with the next number, issuedAt now, dueAt per payment terms if unset; credit balance taken off; nothing due: paid.',
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices/{id}/finalize',
    permission: 'invoice:write',
    kind: 'action',
    annotations: { destructiveHint: false },
    input: z.strictObject({ id: idOrNumber('invoice', 'draft invoice') }),
    output: invoiceResourceSchema,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      const invoice = await finalizeInvoice(ctx.tx, ctx.org, input.id, ctx.now, await defaultPaymentTermDays(ctx.tx, ctx.org, ctx.config.paymentTermDays));
      return hosted(ctx)(invoice);
    },
  }),
  defineOperation({
    name: 'void_invoice',
    title: 'Void invoice',
    description:
      'Cancel a draft or open invoice for good; an open one gets a credit note for its amountDue plus applied credit balance, which returns to the customer. Under an active payment plan: cancel_payment_plan first.',
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices/{id}/void',
    permission: 'invoice:write',
    kind: 'action',
    input: z.strictObject({ id: idOrNumber('invoice') }),
    output: invoiceResourceSchema,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return hosted(ctx)(await voidInvoice(ctx.tx, ctx.org, input.id, ctx.now));
    },
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
    output: invoiceResourceSchema,
    handler: async (ctx, { id: invoiceId, ...payment }) => {
      deliverAfterCommit(ctx);
      return hosted(ctx)(await recordInvoicePayment(ctx.tx, ctx.org, invoiceId, payment, ctx.now));
    },
  }),
];
