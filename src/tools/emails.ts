import { z } from 'zod';
import { getEmail, listEmails } from '../domain/emails.js';
import { defineOperation } from '../registry/operation.js';
import { filterBy, listOf, paged, pageInput, pathId } from '../schemas/common.js';
import { EMAIL_KINDS, EMAIL_STATUSES, emailSchema } from '../schemas/emails.js';
import { emailRow, listView } from '../schemas/views.js';

export const emailOperations = [
  defineOperation({
    name: 'list_emails',
    title: 'List e-mails',
    description: 'List the e-mail outbox (invoices, dunning reminders and SEPA pre-notifications to customers) with status and last error.',
    toolset: 'invoices',
    method: 'GET',
    path: '/emails',
    permission: 'email:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      kind: z.enum(EMAIL_KINDS).optional().describe('Only e-mails of this kind.'),
      status: z.enum(EMAIL_STATUSES).optional().describe('Only e-mails in this status.'),
      invoice: filterBy('invoice', 'e-mails'),
      customer: filterBy('customer', 'e-mails'),
    }),
    output: listOf(emailSchema),
    mcp: listView(emailRow),
    handler: (ctx, { kind, status, invoice, customer, ...rest }) =>
      paged(rest, (page) => listEmails(ctx.tx, ctx.org, { kind, status, invoice, customer }, page)),
  }),
  defineOperation({
    name: 'get_email',
    title: 'Get e-mail',
    description: 'Get one e-mail with its text and attachments.',
    toolset: 'invoices',
    method: 'GET',
    path: '/emails/{id}',
    permission: 'email:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('e-mail') }),
    output: emailSchema,
    handler: (ctx, input) => getEmail(ctx.tx, ctx.org, input.id),
  }),
];
