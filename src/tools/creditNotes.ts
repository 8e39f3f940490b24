import { z } from 'zod';
import { createCreditNote, getCreditNote, listCreditNotes } from '../domain/creditNotes.js';
import { defineOperation } from '../registry/operation.js';
import { filterBy, id, idOrNumber, listOf, pageInput, pageRequest, toPage } from '../schemas/common.js';
import { creditNoteSchema } from '../schemas/creditNotes.js';
import { creditNoteRow, listView } from '../schemas/views.js';
import { cents, deliverAfterCommit } from './invoices.js';

export const creditNoteOperations = [
  defineOperation({
    name: 'create_credit_note',
    title: 'Create credit note',
    description:
      "Credit an open invoice (off amountDue; credited in full it is void, else paid once nothing is due) or a paid one (to the customer's creditBalance, used on their next invoices). amount defaults to the most allowed (amountDue; paid: gross less earlier credit notes); more is rejected.",
    toolset: 'invoices',
    method: 'POST',
    path: '/invoices/{id}/credit-notes',
    permission: 'invoice:write',
    kind: 'create',
    input: z.strictObject({
      id: idOrNumber('invoice', 'open or paid invoice'),
      amount: cents('Amount credited').optional(),
      reason: z
        .string()
        .min(1, { message: 'must be 1 to 255 characters' })
        .max(255, { message: 'must be 1 to 255 characters' })
        .describe('Why, e.g. "Outage in March".'),
    }),
    output: creditNoteSchema,
    location: (note) => `/credit-notes/${note.id}`,
    handler: (ctx, { id: invoice, ...input }) => {
      deliverAfterCommit(ctx);
      return createCreditNote(ctx.tx, ctx.org, invoice, input, ctx.now);
    },
  }),
  defineOperation({
    name: 'list_credit_notes',
    title: 'List credit notes',
    description: 'List credit notes, optionally of one invoice or customer.',
    toolset: 'invoices',
    method: 'GET',
    path: '/credit-notes',
    permission: 'invoice:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      invoice: filterBy('invoice', 'credit notes'),
      customer: filterBy('customer', 'credit notes'),
    }),
    output: listOf(creditNoteSchema),
    mcp: listView(creditNoteRow),
    handler: async (ctx, { invoice, customer, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listCreditNotes(ctx.tx, ctx.org, { invoice, customer }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_credit_note',
    title: 'Get credit note',
    description: 'Get a credit note by id or number, with its reason.',
    toolset: 'invoices',
    method: 'GET',
    path: '/credit-notes/{id}',
    permission: 'invoice:read',
    kind: 'read',
    input: z.strictObject({ id: id.describe('Id or number (CN-2026-000001) of the credit note.') }),
    output: creditNoteSchema,
    handler: (ctx, input) => getCreditNote(ctx.tx, ctx.org, input.id),
  }),
];
