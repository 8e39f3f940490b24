/**
 * Dunning (CONTRACT section 8, "Dunning, e-mail and SEPA"): overdue rules per level, and the step that
 * applies a level to an overdue invoice: a fee invoice, a new due date, a reminder e-mail and the
 * event `invoice.dunning_level_reached`, all in one unit of work, keyed by (invoice, level).
 */
import { conflict, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer } from '../schemas/customers.js';
import { LETTER_PARTS, type DocumentTemplate, type DunningLetterTexts, type DunningStep, type EmailTemplate, type OverdueRule } from '../schemas/dunning.js';
import type { Invoice } from '../schemas/invoices.js';
import type { Tx } from '../store/store.js';
import { addInterval, toIso, zoned } from './dates.js';
import { addressingOf, customerDate, customerName, invoiceAttachment, queueEmail } from './emails.js';
import { emitEvent } from './events.js';
import { invoiceDocument, type InvoiceDocumentSource } from './invoiceDocument.js';
import { getInvoice, issueFeeInvoice } from './invoices.js';
import { formatMoney } from '../values/money.js';

/* ---------------------------------------------------------------------------------------------
 * Templates: `{{ name }}` placeholders, plain replacement (values HTML-escaped in contentHtml).
 * ------------------------------------------------------------------------------------------- */

const PLACEHOLDER = /\{\{\s*(.*?)\s*\}\}/g;
export const PLACEHOLDERS = ['customer.name', 'invoice.number', 'invoice.amountDue', 'invoice.dueAt', 'dunning.level', 'dunning.fee'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];
type Values = Record<Placeholder, string>;

const TEMPLATE_FIELDS = ['subject', 'contentPlain', 'contentHtml'] as const;

const PLACEHOLDER_LIST = PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ');

/**
 * Braces left once the placeholders are taken out, which `render` would send as they are: a `{{`,
 * or a `}}` (in HTML only one that closes a name, `{invoice.number}}`: style sheets end nested blocks
 * with `}}`).
 */
function strayBraces(text: string, html: boolean): boolean {
  const rest = text.replace(PLACEHOLDER, '');
  return rest.includes('{{') || (html ? /(?<!\{)\{\s*[\w.]+\s*\}\}/.test(rest) : rest.includes('}}'));
}

/** The placeholders of one template text at `propertyPath`: each must be known and well formed. */
function textViolations(propertyPath: string, text: string, html = false): Violation[] {
  const out: Violation[] = [];
  for (const [placeholder, name = ''] of text.matchAll(PLACEHOLDER)) {
    if ((PLACEHOLDERS as readonly string[]).includes(name)) continue;
    out.push({
      propertyPath,
      message: `${propertyPath} uses ${placeholder}, which is not a placeholder; use one of ${PLACEHOLDER_LIST}`,
      code: 'unknown_placeholder',
    });
  }
  if (strayBraces(text, html)) {
    out.push({
      propertyPath,
      message: `${propertyPath} has {{ or }} outside a placeholder, which would be sent as it is; write a placeholder with two braces on each side, one of ${PLACEHOLDER_LIST}`,
      code: 'stray_braces',
    });
  }
  return out;
}

function templateViolations(template: EmailTemplate | null): Violation[] {
  if (!template) return [];
  return TEMPLATE_FIELDS.flatMap((field) => textViolations(`emailTemplate.${field}`, template[field] ?? '', field === 'contentHtml'));
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function render(text: string, values: Values, html = false): string {
  return text.replace(PLACEHOLDER, (_: string, name: Placeholder) => {
    const value = values[name];
    return html ? value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string) : value;
  });
}

/**
 * Keys, texts and placeholders of a rule's documentTemplate (the parts of its letters). `given`: the
 * call sent it, which only a rule that sends letters uses (a template kept while letters are switched
 * off stays for when they are switched on again).
 */
function documentTemplateViolations(rule: OverdueRule, given: boolean): Violation[] {
  const template = rule.documentTemplate;
  if (!template) return [];
  const out: Violation[] = [];
  if (given && !rule.sendLetter) {
    out.push({
      propertyPath: 'documentTemplate',
      message: 'documentTemplate sets the texts of the letter, but sendLetter is false, so no letter would use it: set sendLetter true with it, or leave documentTemplate out',
      code: 'unused',
    });
  }
  for (const [key, text] of Object.entries(template)) {
    const propertyPath = `documentTemplate.${key}`;
    if (!(LETTER_PARTS as readonly string[]).includes(key)) {
      out.push({ propertyPath, message: `${propertyPath} is not a part of a letter; use ${LETTER_PARTS.join(', ')}`, code: 'unknown_key' });
    } else if (text.trim() === '') {
      out.push({ propertyPath, message: `${propertyPath} is empty; give its text, or leave ${key} out for the system text`, code: 'empty' });
    } else {
      out.push(...textViolations(propertyPath, text));
    }
  }
  return out;
}

/** The system texts of a letter, for the parts a rule's documentTemplate leaves out. */
const SYSTEM_LETTER: DunningLetterTexts = {
  title: 'Payment reminder {{dunning.level}}',
  introduction:
    'Dear {{customer.name}},\n\naccording to our records, invoice {{invoice.number}} has not been paid in full: {{invoice.amountDue}} is still open. Please pay it by {{invoice.dueAt}}.',
  closing: 'If you have paid in the meantime, please disregard this letter.\n\nKind regards',
};

function letterTexts(template: DocumentTemplate | null, values: Values): DunningLetterTexts {
  const part = (name: keyof DunningLetterTexts) => render(template?.[name] ?? SYSTEM_LETTER[name], values);
  return { title: part('title'), introduction: part('introduction'), closing: part('closing') };
}

/**
 * The system template, used when a rule has none. It greets its recipients by name as the invoice
 * e-mail does (addressingOf); a rule's own template has only `{{customer.name}}`, the customer.
 * `earlierFees`: fee invoices of earlier levels still open, which are never dunned on their own.
 */
function systemEmail(
  addressee: string,
  values: Values,
  fee: Invoice | undefined,
  originalAttached: boolean,
  earlierFees: Invoice[],
): { subject: string; text: string } {
  const lines = [
    `Dear ${addressee},`,
    '',
    `invoice ${values['invoice.number']} is overdue: ${values['invoice.amountDue']} is still open. Please pay it by ${values['invoice.dueAt']}.`,
  ];
  if (fee) lines.push(`A dunning fee of ${values['dunning.fee']} is charged on invoice ${fee.number} (attached), due by the same date.`);
  if (earlierFees.length) {
    const open = earlierFees.map((f) => `invoice ${f.number} (${formatMoney(f.amountDue, f.currencyCode)})`).join(', ');
    lines.push(`Dunning fees of earlier reminders are still open: ${open}. Please pay them as well.`);
  }
  if (originalAttached) lines.push(`Invoice ${values['invoice.number']} is attached.`);
  lines.push('', 'If you have paid in the meantime, please disregard this reminder.', '');
  return { subject: `Payment reminder ${values['dunning.level']}: invoice ${values['invoice.number']}`, text: lines.join('\n') };
}

/* ---------------------------------------------------------------------------------------------
 * Overdue rules.
 * ------------------------------------------------------------------------------------------- */

export interface OverdueRuleInput {
  level: number;
  daysOverdue: number;
  dueInDays: number;
  type: OverdueRule['type'];
  amountInCents: number;
  attachOriginalInvoice: boolean;
  sendLetter: boolean;
  isEnabled: boolean;
  emailTemplate: { subject: string; contentPlain: string; contentHtml?: string | null | undefined } | null;
  documentTemplate: DocumentTemplate | null;
}

const emailTemplateOf = (t: OverdueRuleInput['emailTemplate']): EmailTemplate | null =>
  t && { subject: t.subject, contentPlain: t.contentPlain, contentHtml: t.contentHtml ?? null };

/** Levels run from 1 to 100, one rule each: a page of this many holds every rule of an organisation. */
const MAX_RULES = 100;

/**
 * A higher level is reached later: the rule's daysOverdue must lie above every lower level's and
 * below every higher level's, enabled or not (a disabled one may be enabled again). The run applies
 * the highest level reached, so a level reached earlier than a lower one would pass over the lower
 * level's fee and letter for good. A gap (a level deleted) keeps the order.
 */
async function orderViolation(tx: Tx, org: string, rule: OverdueRule): Promise<Violation | undefined> {
  const { rows } = await tx.dunning.listRules(org, { page: 1, limit: MAX_RULES, descending: false });
  const others = rows.filter((r) => r.id !== rule.id);
  const floor = others.filter((r) => r.level < rule.level).sort((a, b) => b.daysOverdue - a.daysOverdue)[0];
  const ceiling = others.filter((r) => r.level > rule.level).sort((a, b) => a.daysOverdue - b.daysOverdue)[0];
  const tooEarly = floor !== undefined && rule.daysOverdue <= floor.daysOverdue;
  const tooLate = ceiling !== undefined && rule.daysOverdue >= ceiling.daysOverdue;
  if (!tooEarly && !tooLate) return undefined;
  const bounds = [
    ...(floor ? [`greater than ${floor.daysOverdue} (level ${floor.level})`] : []),
    ...(ceiling ? [`less than ${ceiling.daysOverdue} (level ${ceiling.level})`] : []),
  ];
  return {
    propertyPath: 'daysOverdue',
    message: `daysOverdue ${rule.daysOverdue} of level ${rule.level} must be ${bounds.join(' and ')}: a higher level is reached later, since the run applies the highest level reached and never a lower one after it`,
    code: 'out_of_order',
  };
}

/**
 * Everything wrong with the rule as it would be stored. `placed`: its level or daysOverdue is new, so
 * its place among the levels is checked (an order stored before this check never blocks other edits).
 * `templateGiven`: the call sent a documentTemplate.
 */
async function ruleViolations(tx: Tx, org: string, rule: OverdueRule, placed: boolean, templateGiven: boolean): Promise<Violation[]> {
  const out: Violation[] = [];
  const taken = await tx.dunning.ruleOfLevel(org, rule.level, rule.id);
  if (taken) {
    out.push({
      propertyPath: 'level',
      message: `level ${rule.level} already has the overdue rule ${taken.id}; give another level or update_overdue_rule that one`,
      code: 'unique',
    });
  }
  const order = placed && !taken ? await orderViolation(tx, org, rule) : undefined;
  if (order) out.push(order);
  out.push(...templateViolations(rule.emailTemplate), ...documentTemplateViolations(rule, templateGiven));
  return out;
}

export async function createOverdueRule(tx: Tx, org: string, input: OverdueRuleInput, now: Date): Promise<OverdueRule> {
  const at = now.toISOString();
  const rule: OverdueRule = {
    id: newId(),
    ...input,
    emailTemplate: emailTemplateOf(input.emailTemplate),
    createdAt: at,
    updatedAt: at,
  };
  const violations = await ruleViolations(tx, org, rule, true, input.documentTemplate !== null);
  if (violations.length) throw invalidMany(violations);
  await tx.dunning.insertRule(org, rule);
  return rule;
}

export async function getOverdueRule(tx: Tx, org: string, id: string): Promise<OverdueRule> {
  const rule = await tx.dunning.getRule(org, id);
  if (!rule) throw notFound('Overdue rule', id);
  return rule;
}

export function listOverdueRules(tx: Tx, org: string, page: PageRequest) {
  return tx.dunning.listRules(org, page);
}

/** Omitted fields stay; `null` clears a template. */
export async function updateOverdueRule(tx: Tx, org: string, id: string, patch: Partial<OverdueRuleInput>, now: Date): Promise<OverdueRule> {
  const current = await getOverdueRule(tx, org, id);
  const { emailTemplate, ...fields } = patch;
  const rule: OverdueRule = {
    ...current,
    ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    emailTemplate: emailTemplate === undefined ? current.emailTemplate : emailTemplateOf(emailTemplate),
    updatedAt: now.toISOString(),
  };
  const placed = rule.level !== current.level || rule.daysOverdue !== current.daysOverdue;
  const violations = await ruleViolations(tx, org, rule, placed, (patch.documentTemplate ?? null) !== null);
  if (violations.length) throw invalidMany(violations);
  await tx.dunning.updateRule(org, rule);
  return rule;
}

/**
 * Steps already taken keep their level; invoices are no longer dunned at this level. The levels left
 * keep their order, so the gap needs no check.
 */
export async function deleteOverdueRule(tx: Tx, org: string, id: string): Promise<{ id: string; deleted: true }> {
  const rule = await getOverdueRule(tx, org, id);
  await tx.dunning.deleteRule(org, rule.id);
  return { id: rule.id, deleted: true };
}

/* ---------------------------------------------------------------------------------------------
 * The dunning step.
 * ------------------------------------------------------------------------------------------- */

/** The instant a rule is reached: `daysOverdue` calendar days after the first due date, on the customer's wall clock. */
function reachedAt(originalDueAt: string, daysOverdue: number, customer: Customer): number {
  return addInterval(zoned(originalDueAt, customer.timeZone), { count: daysOverdue, unit: 'D' }).toMillis();
}

/**
 * Applies to the invoice the highest enabled level that is reached and above every level applied so
 * far, if the invoice is open, its current due date has come (a broken plan makes it due at once), it is no fee invoice and not covered by an active
 * payment plan. Lower levels passed over are never applied afterwards. Returns whether a level was
 * applied. Runs in the caller's unit of work; the (invoice, level) key makes a level apply once even
 * if another process applied it meanwhile (the unit then fails on the key and writes nothing).
 */
export async function applyDunning(tx: Tx, org: string, invoiceId: string, now: Date): Promise<boolean> {
  const invoice = await tx.invoices.get(org, invoiceId);
  if (!invoice || invoice.status !== 'open' || invoice.dunningOf !== null || invoice.dunningPaused) return false;
  if (invoice.dueAt === null || invoice.originalDueAt === null || Date.parse(invoice.dueAt) > now.getTime()) return false;
  const customer = await tx.customers.get(org, invoice.customer);
  if (!customer) throw notFound('Customer', invoice.customer);
  const applied = await tx.dunning.highestLevel(org, invoice.id);
  const originalDueAt = invoice.originalDueAt;
  const rule = (await tx.dunning.enabledRules(org))
    .filter((r) => r.level > applied && reachedAt(originalDueAt, r.daysOverdue, customer) <= now.getTime())
    .at(-1);
  if (!rule) return false;

  const appliedAt = now.toISOString();
  const newDueAt = toIso(addInterval(zoned(now, customer.timeZone), { count: rule.dueInDays, unit: 'D' }));
  const fee =
    rule.amountInCents > 0
      ? await issueFeeInvoice(tx, org, { dunned: invoice, customer, level: rule.level, amount: rule.amountInCents, dueAt: newDueAt }, now)
      : undefined;
  await tx.invoices.update(org, { ...invoice, dueAt: newDueAt, updatedAt: appliedAt });
  const dunned = await getInvoice(tx, org, invoice.id);

  const values: Values = {
    'customer.name': customerName(customer),
    'invoice.number': invoice.number as string,
    'invoice.amountDue': formatMoney(invoice.amountDue, invoice.currencyCode),
    'invoice.dueAt': customerDate(newDueAt, customer),
    'dunning.level': String(rule.level),
    'dunning.fee': formatMoney(rule.amountInCents, invoice.currencyCode),
  };
  const template = rule.emailTemplate;
  const { to, addressee } = await addressingOf(tx, org, customer, 'dunning');
  const content = template
    ? { subject: render(template.subject, values), text: render(template.contentPlain, values), html: template.contentHtml && render(template.contentHtml, values, true) }
    : { ...systemEmail(addressee, values, fee, rule.attachOriginalInvoice, await openFees(tx, org, invoice.id, rule.level)), html: null };
  const attachments = [...(rule.attachOriginalInvoice ? [invoiceAttachment(invoice)] : []), ...(fee ? [invoiceAttachment(fee)] : [])];
  const emailId = await queueEmail(tx, org, { kind: 'dunning', customer, invoice: invoice.id, to, ...content, attachments }, now);

  const letter = rule.sendLetter ? letterTexts(rule.documentTemplate, values) : null;
  const step: DunningStep = {
    level: rule.level,
    appliedAt,
    feeInvoice: fee?.id ?? null,
    feeAmount: fee ? rule.amountInCents : 0,
    emailId,
    newDueAt,
    letter: letter !== null,
  };
  await tx.dunning.insertStep(org, invoice.id, newId(), step, letter);
  await emitEvent(tx, org, { type: 'invoice.dunning_level_reached', subjectId: invoice.id, data: { invoice: dunned, dunning: step } }, now);
  return true;
}

/**
 * The fee invoices of the levels below `level` applied to the invoice that are still open with an
 * amount due: the reminder of `level`, e-mail and letter, names them, since fee invoices are never
 * dunned themselves.
 */
async function openFees(tx: Tx, org: string, invoiceId: string, level: number): Promise<Invoice[]> {
  const { rows } = await tx.dunning.listSteps(org, invoiceId, { page: 1, limit: MAX_RULES, descending: false });
  const fees: Invoice[] = [];
  for (const step of rows) {
    if (step.level >= level || step.feeInvoice === null) continue;
    const fee = await tx.invoices.get(org, step.feeInvoice);
    if (fee?.status === 'open' && fee.amountDue > 0) fees.push(fee);
  }
  return fees;
}

/**
 * What a dunning letter shows: its texts, the step, the dunned invoice with its addresses and the fee
 * invoices of earlier levels still open.
 */
export interface DunningLetterSource extends InvoiceDocumentSource {
  step: DunningStep;
  texts: DunningLetterTexts;
  earlierFees: Invoice[];
}

/** The letter of the invoice's dunning level; a 404 when the level was not applied, a 409 when its rule sent no letter. */
export async function dunningLetter(tx: Tx, org: string, ref: string, level: number): Promise<DunningLetterSource> {
  const document = await invoiceDocument(tx, org, ref);
  const found = await tx.dunning.getStep(org, document.invoice.id, level);
  if (!found) throw notFound(`Dunning level ${level} of invoice`, ref);
  if (!found.letter) {
    throw conflict(`Dunning level ${level} of invoice ${document.invoice.number} has no letter: its overdue rule had sendLetter false when it was applied`);
  }
  return { ...document, step: found.step, texts: found.letter, earlierFees: await openFees(tx, org, document.invoice.id, level) };
}

/** An invoice's dunning steps (id or number), oldest first by default. */
export async function listInvoiceDunning(tx: Tx, org: string, ref: string, page: PageRequest) {
  const invoice = await getInvoice(tx, org, ref);
  return tx.dunning.listSteps(org, invoice.id, page);
}
