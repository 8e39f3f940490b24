import { z } from 'zod';
import {
  createOverdueRule,
  deleteOverdueRule,
  getOverdueRule,
  listInvoiceDunning,
  listOverdueRules,
  PLACEHOLDERS,
  updateOverdueRule,
} from '../domain/dunning.js';
import { MAX_AMOUNT_CENTS } from '../domain/invoices.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber, listOf, MINOR, paged, pageInput, pathId, text255 } from '../schemas/common.js';
import { dunningStepSchema, OVERDUE_RULE_TYPES, overdueRuleSchema } from '../schemas/dunning.js';
import { listView, overdueRuleRow } from '../schemas/views.js';

const days = (min: number, what: string) =>
  z
    .number()
    .int({ message: 'must be a whole number of days' })
    .min(min, { message: `must be at least ${min}` })
    .max(3650, { message: 'must be at most 3650' })
    .describe(what);

const content = z.string().min(1, { message: 'must not be empty' }).max(10_000, { message: 'must be at most 10000 characters' });

const fields = {
  level: z
    .number()
    .int({ message: 'must be a whole number' })
    .min(1, { message: 'must be at least 1' })
    .max(100, { message: 'must be at most 100' })
    .describe('Unique per organisation.'),
  daysOverdue: days(1, "Reached this many days after the invoice's first due date."),
  dueInDays: days(0, 'New due date: days after the step.'),
  type: z.enum(OVERDUE_RULE_TYPES).describe('Kind of step.'),
  amountInCents: z
    .number()
    .int({ message: 'must be a whole number of minor units (cents)' })
    .min(0, { message: 'must be at least 0' })
    .max(MAX_AMOUNT_CENTS, { message: `must be at most ${MAX_AMOUNT_CENTS} minor units (cents)` })
    .describe(`Fee, billed on a fee invoice; ${MINOR}.`),
  attachOriginalInvoice: z.boolean().describe("Attach the invoice's PDF to the reminder."),
  sendLetter: z.boolean().describe('Also make a printable letter for the level (get_dunning_letter); posting it is up to you.'),
  isEnabled: z.boolean().describe('false: never applied.'),
  emailTemplate: z
    .strictObject({
      subject: text255.min(1, { message: 'must not be empty' }).describe('Subject line.'),
      contentPlain: content.describe('Text part.'),
      contentHtml: content.nullable().optional().describe('HTML part.'),
    })
    .nullable()
    .describe(`Placeholders: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(' ')}. null: the system template.`),
  documentTemplate: z
    .record(z.string().max(64, { message: 'keys must be at most 64 characters' }), text255)
    .nullable()
    .describe('Texts of the letter: title, introduction, closing (placeholders as emailTemplate); a part left out: the system text.'),
};

export const dunningOperations = [
  defineOperation({
    name: 'create_overdue_rule',
    title: 'Create overdue rule',
    description:
      'Create a dunning level. The jobs run gives an open invoice past due the highest enabled level reached and not yet applied (lower ones passed over are skipped): a fee invoice, a new due date, a reminder e-mail, event invoice.dunning_level_reached. Paused while a payment plan is active.',
    toolset: 'dunning',
    method: 'POST',
    path: '/dunning/overdue-rules',
    permission: 'dunning-rule:write',
    kind: 'create',
    input: z.strictObject({
      ...fields,
      type: fields.type.default('reminder'),
      amountInCents: fields.amountInCents.default(0),
      attachOriginalInvoice: fields.attachOriginalInvoice.default(false),
      sendLetter: fields.sendLetter.default(false),
      isEnabled: fields.isEnabled.default(true),
      emailTemplate: fields.emailTemplate.default(null),
      documentTemplate: fields.documentTemplate.default(null),
    }),
    output: overdueRuleSchema,
    handler: (ctx, input) => createOverdueRule(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_overdue_rules',
    title: 'List overdue rules',
    description: 'List the dunning levels of the organisation.',
    toolset: 'dunning',
    method: 'GET',
    path: '/dunning/overdue-rules',
    permission: 'dunning-rule:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(overdueRuleSchema),
    mcp: listView(overdueRuleRow),
    handler: (ctx, input) => paged(input, (page) => listOverdueRules(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_overdue_rule',
    title: 'Get overdue rule',
    description: 'Get one dunning level with its templates.',
    toolset: 'dunning',
    method: 'GET',
    path: '/dunning/overdue-rules/{id}',
    permission: 'dunning-rule:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('overdue rule') }),
    output: overdueRuleSchema,
    handler: (ctx, input) => getOverdueRule(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_overdue_rule',
    title: 'Update overdue rule',
    description: 'Change a dunning level; omitted fields stay. Steps already taken stay as they are.',
    toolset: 'dunning',
    method: 'PUT',
    path: '/dunning/overdue-rules/{id}',
    permission: 'dunning-rule:write',
    kind: 'update',
    input: z.strictObject(fields).partial().extend({ id: pathId('overdue rule') }),
    output: overdueRuleSchema,
    handler: (ctx, { id, ...patch }) => updateOverdueRule(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'delete_overdue_rule',
    title: 'Delete overdue rule',
    description: 'Delete a dunning level; to pause it, update_overdue_rule with isEnabled false.',
    toolset: 'dunning',
    method: 'DELETE',
    path: '/dunning/overdue-rules/{id}',
    permission: 'dunning-rule:write',
    kind: 'delete',
    input: z.strictObject({ id: pathId('overdue rule') }),
    output: z.object({ id: z.string(), deleted: z.literal(true) }),
    handler: (ctx, input) => deleteOverdueRule(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'list_invoice_dunning',
    title: 'List invoice dunning',
    description: "An invoice's dunning steps: level, fee invoice, reminder e-mail (get_email) and the new due date.",
    toolset: 'dunning',
    method: 'GET',
    path: '/invoices/{id}/dunning',
    permission: 'invoice:read',
    kind: 'list',
    input: z.strictObject({ id: idOrNumber('invoice'), ...pageInput }),
    output: listOf(dunningStepSchema),
    mcp: listView(dunningStepSchema),
    handler: (ctx, { id, ...rest }) => paged(rest, (page) => listInvoiceDunning(ctx.tx, ctx.org, id, page)),
  }),
];

