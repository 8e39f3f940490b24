import { z } from 'zod';
import { dateTime, MINOR, timestamps } from './common.js';

export const OVERDUE_RULE_TYPES = ['reminder'] as const;

export const emailTemplateSchema = z.object({
  subject: z.string(),
  contentPlain: z.string(),
  contentHtml: z.string().nullable(),
});
export type EmailTemplate = z.infer<typeof emailTemplateSchema>;

export const documentTemplateSchema = z.record(z.string(), z.string());
export type DocumentTemplate = z.infer<typeof documentTemplateSchema>;

export const overdueRuleSchema = z.object({
  id: z.string(),
  level: z.number().int(),
  daysOverdue: z.number().int(),
  dueInDays: z.number().int(),
  type: z.enum(OVERDUE_RULE_TYPES),
  amountInCents: z.number().int().describe(`Fee; ${MINOR} of the invoice's currency.`),
  attachOriginalInvoice: z.boolean(),
  sendLetter: z.boolean(),
  isEnabled: z.boolean(),
  emailTemplate: emailTemplateSchema.nullable().describe('null: the system template.'),
  documentTemplate: documentTemplateSchema.nullable(),
  ...timestamps,
});
export type OverdueRule = z.infer<typeof overdueRuleSchema>;

export const dunningStepSchema = z.object({
  level: z.number().int(),
  appliedAt: dateTime,
  feeInvoice: z.string().nullable().describe('null: the level has no fee.'),
  feeAmount: z.number().int().describe(MINOR),
  emailId: z.string(),
  newDueAt: dateTime,
  letter: z.boolean().describe('true: a letter was made for this level (its rule sends letters); get_dunning_letter fetches it.'),
});
export type DunningStep = z.infer<typeof dunningStepSchema>;

/** The parts of a dunning letter that a rule's documentTemplate sets (the rest is the invoice's figures). */
export const LETTER_PARTS = ['title', 'introduction', 'closing'] as const;
export type DunningLetterTexts = Record<(typeof LETTER_PARTS)[number], string>;
