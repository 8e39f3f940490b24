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
    .describe(`${what}; ${MINOR}: 1250 = 12.50 EUR. 1 to ${MAX_AMOUNT_CENTS}; decimals and 0 are rejected.`);

export const paidAt = dateTimeInput
  .optional()
  .describe(
    'When the money was received, an ISO 8601 date-time with an offset (2026-03-01T10:00:00Z); default now. A time in the future or without an offset is rejected.',
  );

const line = z.strictObject({
  description: z
    .string()
    .min(1, { message: 'must be 1 to 255 characters' })
    .max(255, { message: 'must be 1 to 255 characters' })
    .describe('What is billed, as shown on the invoice, 1 to 255 characters, e.g. "Consulting, March 2026".'),
  quantity: z
    .number()
    .int({ message: 'must be a whole number' })
    .min(1, { message: `must be from 1 to ${MAX_QUANTITY}` })
    .max(MAX_QUANTITY, { message: `must be from 1 to ${MAX_QUANTITY}` })
    .describe(`How many units, a whole number from 1 to ${MAX_QUANTITY}; fractions are rejected.`),
  unitAmount: z
    .number()
    .int({ message: 'must be a whole number of minor units (cents)' })
    .min(-MAX_AMOUNT_CENTS, { message: `must be within ±${MAX_AMOUNT_CENTS} minor units (cents)` })
    .max(MAX_AMOUNT_CENTS, { message: `must be within ±${MAX_AMOUNT_CENTS} minor units (cents)` })
    .describe(
      `Net price of one unit; ${MINOR}: 4900 = 49.00 EUR. Negative for a discount or credit line; the invoice as a whole cannot be negative.`,
    ),
  taxRate: z
    .number()
    .min(0, { message: 'must be a percentage from 0 to 100' })
    .max(100, { message: 'must be a percentage from 0 to 100' })
    .default(0)
    .describe(
      'Tax rate of the line in percent, 0 to 100 with at most 4 fractional digits (19, 7, 8.1); default 0. Tax is computed per rate on the sum of the net amounts with that rate, rounded half-up to the cent.',
    ),
});

const STATUS_RULES =
  'draft (editable, no number yet), open (issued, waiting for payment), paid (settled) or void (cancelled, final).';

export const invoiceOperations = [
  defineOperation({
    name: 'create_invoice',
    title: 'Create invoice',
    description: `Create a manual invoice for a customer from lines (description, quantity, unitAmount, taxRate). unitAmount is an integer of minor units (cents): 4900 = 49.00 EUR, unlike a price plan's decimal price.amount. Use it to bill one-off charges, or to have an open invoice that a payment plan can split. By default the invoice is issued at once (status open): it gets the next number INV-<year>-000001 of the organisation and issuedAt now; with status draft it stays unnumbered until finalize_invoice. The currency is the customer's currencyCode. Each line's net is quantity x unitAmount; tax is computed per rate on the summed net of that rate, rounded half-up to the cent; grossAmount = net + tax. An invoice whose gross is 0 is paid at once. dueAt defaults to the moment of issue. Rejected (422): an unknown customer, no lines or more than ${MAX_LINES}, a quantity that is not a whole number from 1 to ${MAX_QUANTITY}, a tax rate outside 0-100 or with more than 4 decimals, a negative total, an unknown subscription number.`,
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
        .describe('When payment is due, an ISO 8601 date-time with an offset (2026-04-01T00:00:00Z); default: the moment the invoice is issued.'),
      status: z
        .enum(['draft', 'open'])
        .default('open')
        .describe('open (default): issue it now with a number; draft: keep it unnumbered until finalize_invoice. Other values are rejected.'),
      lines: z
        .array(line)
        .min(1, { message: 'must contain at least 1 line' })
        .max(MAX_LINES, { message: `must contain at most ${MAX_LINES} lines` })
        .describe(`The invoice lines in order, 1 to ${MAX_LINES}, each { description, quantity, unitAmount, taxRate? }.`),
    }),
    output: invoiceSchema,
    handler: (ctx, input) => createInvoice(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_invoices',
    title: 'List invoices',
    description:
      'List the invoices of the organisation with their lines and payments, oldest first, paginated (page, limit 0-100); optionally only those of one customer, one subscription or one status. Use it to find the open invoices of a customer before recording a payment or creating a payment plan.',
    toolset: 'invoices',
    method: 'GET',
    path: '/invoices',
    permission: 'invoice:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      customer: filterBy('customer', 'invoices'),
      subscription: filterBy('subscription', 'invoices'),
      status: z.enum(INVOICE_STATUSES).optional().describe(`Only invoices with this status: ${STATUS_RULES}`),
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
    description:
      'Get one invoice by id or number: lines, tax per rate, totals, payments, amountDue and whether dunning is paused by an active payment plan. An unknown id is a 404.',
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
    description:
      'Issue a draft invoice: it becomes open, gets the next number INV-<year>-000001 of the organisation and issuedAt now; dueAt, if it was not set, becomes now. An invoice totalling 0 becomes paid at once. Only a draft can be finalized: an open, paid or void invoice is a 409. An unknown id is a 404.',
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
      'Cancel a draft or open invoice for good: status void, nothing is due any more (amountDue 0), the number (if any) stays used. Use it for an invoice issued by mistake. Rejected (409): a paid or void invoice (final), and an invoice covered by an active payment plan (cancel the plan first with cancel_payment_plan). An unknown id is a 404.',
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
      'Record money received for an open invoice (bank transfer, cash, …). A partial payment lowers amountDue; the payment that covers the rest makes the invoice paid (paidAt = the payment time). Rejected: an amount above amountDue (422, no overpayments), a paidAt in the future (422), an invoice that is not open (409: finalize a draft first; paid and void are final), an invoice covered by an active payment plan (409: record the payment with record_payment_plan_payment instead). An unknown id is a 404.',
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
