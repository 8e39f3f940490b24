import { z } from 'zod';
import { renderPain008 } from '../documents/sepaXml.js';
import { creditorIdentifierProblem, normaliseIban } from '../domain/iban.js';
import {
  createSepaMandate,
  creditorIbanProblem,
  getSepaCreditor,
  getSepaMandate,
  getSepaXmlPayment,
  getSepaXmlStatement,
  importSepaStatusReport,
  listSepaMandates,
  revokeSepaMandate,
  listSepaXmlPayments,
  recordSepaReturn,
  returnSepaXmlPayment,
  runSepaCollection,
  SEPA_RETURN_REASONS,
  updateSepaCreditor,
  type SepaStatementDocument,
} from '../domain/sepa.js';
import { BODY_LIMIT } from '../http/body.js';
import { defineOperation, type OperationContext } from '../registry/operation.js';
import { bicInput, date, dateTimeInput, filterBy, idOrNumber, listOf, pageInput, pathId, paged, text255 } from '../schemas/common.js';
import {
  SEPA_PAYMENT_STATUSES,
  SEPA_TYPES,
  sepaCreditorSchema,
  sepaMandateSchema,
  sepaXmlPaymentSchema,
  sepaXmlStatementSchema,
} from '../schemas/sepa.js';
import { listView, sepaMandateRow, sepaPaymentRow, sepaStatementView, sepaStatusReportView } from '../schemas/views.js';

const XML = 'application/xml' as const;

/** Returns and collections write plan events to the outbox; the worker sends them once the unit commits. */
function deliverAfterCommit(ctx: OperationContext): void {
  ctx.afterCommit(() => ctx.deliveries.kick());
}

const reasonCode = z
  .string()
  .regex(/^[A-Z0-9]{4}$/, { message: 'must be an ISO 20022 return reason code of 4 upper-case letters and digits, e.g. AM04, MD01', abort: true })
  .refine((code) => SEPA_RETURN_REASONS.includes(code), {
    message: `is not a reason code of SEPA direct debit R-transactions; use one of ${SEPA_RETURN_REASONS.join(', ')}`,
  })
  .describe('ISO 20022 reason, e.g. AC04 closed, AM04 no funds, MD01 no mandate, MS02 refused.');
const returnedAt = dateTimeInput.optional().describe('When the bank reported it; default now.');

/**
 * A text field whose domain check (a phrase to follow the field name, on the normalised value) runs
 * in the input schema: its violation comes with those of the other fields, not in a second answer.
 */
const checked = (problem: (normalised: string) => string | undefined) =>
  z
    .string()
    .max(255, { message: 'must be at most 255 characters', abort: true })
    .superRefine((value, ctx) => {
      const found = problem(normaliseIban(value));
      if (found) ctx.addIssue({ code: 'custom', message: found });
    });

/** The statement's link: what the tool answers and the REST route renders the pain.008 file from. */
const statementLinkSchema = sepaXmlStatementSchema.omit({ payments: true }).extend({ mimeType: z.literal(XML) });

export const sepaOperations = [
  defineOperation({
    name: 'update_sepa_creditor',
    title: 'Update SEPA creditor',
    description:
      'Set the organisation as SEPA creditor: creditor identifier and the account collections are paid into. New mandates and collection runs use it.',
    toolset: 'payments',
    method: 'PUT',
    path: '/sepa-creditor',
    permission: 'payment:write',
    kind: 'update',
    input: z.strictObject({
      creditorIdentifier: checked(creditorIdentifierProblem).describe('With valid check digits, e.g. DE98ZZZ09999999999.'),
      name: text255.min(1, { message: 'must be 1 to 255 characters' }).describe('Creditor name in the files (first 70 characters).'),
      iban: checked(creditorIbanProblem).describe('Account collected into; spaces ignored.'),
      bic: bicInput
        .nullable()
        .optional()
        .describe('BIC; omit for IBAN-only.'),
    }),
    output: sepaCreditorSchema,
    handler: (ctx, input) => updateSepaCreditor(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'get_sepa_creditor',
    title: 'Get SEPA creditor',
    description: 'Get the SEPA creditor identifier and account (IBAN masked); 404 until update_sepa_creditor set them.',
    toolset: 'payments',
    method: 'GET',
    path: '/sepa-creditor',
    permission: 'payment:read',
    kind: 'read',
    input: z.strictObject({}),
    output: sepaCreditorSchema,
    handler: (ctx) => getSepaCreditor(ctx.tx, ctx.org),
  }),
  defineOperation({
    name: 'create_sepa_mandate',
    title: 'Create SEPA mandate',
    description:
      "Record a signed direct debit mandate on one of the customer's sepa_debit payment methods (one mandate per method). Needs the creditor set; mandateReference is unique per creditor.",
    toolset: 'payments',
    method: 'POST',
    path: '/customers/{id}/sepa-mandates',
    permission: 'payment:write',
    kind: 'create',
    location: (result) => `/customers/${result.customer}/sepa-mandates/${result.id}`,
    input: z.strictObject({
      id: idOrNumber('customer'),
      paymentMethod: pathId('sepa_debit payment method'),
      // Checked with the signature date and the method (mandateReferenceProblem): one answer for all three.
      mandateReference: z.string().describe('1-35 characters, e.g. MND-2027-0001.'),
      signatureDate: date.describe('Date signed, not in the future.'),
      sepaType: z.enum(SEPA_TYPES).default('core').describe('core (consumers) or b2b.'),
    }),
    output: sepaMandateSchema,
    handler: (ctx, { id, ...input }) => createSepaMandate(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_sepa_mandates',
    title: 'List SEPA mandates',
    description: "List a customer's SEPA mandates: reference, account, FRST or RCUR.",
    toolset: 'payments',
    method: 'GET',
    path: '/customers/{id}/sepa-mandates',
    permission: 'payment:read',
    kind: 'list',
    input: z.strictObject({ id: idOrNumber('customer'), ...pageInput }),
    output: listOf(sepaMandateSchema),
    mcp: listView(sepaMandateRow),
    handler: (ctx, { id, ...rest }) => paged(rest, (page) => listSepaMandates(ctx.tx, ctx.org, id, page, ctx.now)),
  }),
  defineOperation({
    name: 'get_sepa_mandate',
    title: 'Get SEPA mandate',
    description: "Get one of a customer's SEPA mandates by its id: reference, account, status.",
    toolset: 'payments',
    method: 'GET',
    path: '/customers/{id}/sepa-mandates/{mandate}',
    permission: 'payment:read',
    kind: 'read',
    input: z.strictObject({ id: idOrNumber('customer'), mandate: pathId('SEPA mandate') }),
    output: sepaMandateSchema,
    handler: (ctx, { id, mandate }) => getSepaMandate(ctx.tx, ctx.org, id, mandate, ctx.now),
  }),
  defineOperation({
    name: 'revoke_sepa_mandate',
    title: 'Revoke SEPA mandate',
    description:
      'Record that the customer withdrew a SEPA mandate: nothing more is collected under it (collections already in a statement stand). For good; a new mandate needs create_sepa_mandate on a new payment method.',
    toolset: 'payments',
    method: 'POST',
    path: '/customers/{id}/sepa-mandates/{mandate}/revoke',
    permission: 'payment:write',
    kind: 'action',
    input: z.strictObject({ id: idOrNumber('customer'), mandate: pathId('SEPA mandate') }),
    output: sepaMandateSchema,
    handler: (ctx, { id, mandate }) => revokeSepaMandate(ctx.tx, ctx.org, id, mandate, ctx.now),
  }),
  defineOperation({
    name: 'run_sepa_collection',
    title: 'Run SEPA collection',
    description:
      'Collect by direct debit every open invoice and active-plan installment due by the collection date whose payment method has a mandate, each once, as payments of a new pain.008 statement; they count as paid. 409 when nothing is due.',
    toolset: 'payments',
    method: 'POST',
    path: '/sepa-xml-statements',
    permission: 'payment:write',
    kind: 'create',
    annotations: { openWorldHint: true },
    input: z.strictObject({
      collectionDate: date
        .optional()
        .describe('A TARGET2 business day; default and earliest: one business day after the next (D-1).'),
    }),
    output: sepaXmlStatementSchema,
    mcp: sepaStatementView,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return runSepaCollection(ctx.tx, ctx.org, input, ctx.now, ctx.baseUrl);
    },
  }),
  defineOperation({
    name: 'get_sepa_xml_statement',
    title: 'Get SEPA XML statement',
    description: 'Link to a statement as its pain.008.001.02 file for the bank: a resource_link to fetch, with its totals.',
    toolset: 'payments',
    method: 'GET',
    path: '/sepa-xml-statements/{id}',
    permission: 'payment:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('statement') }),
    output: statementLinkSchema.extend({ document: z.custom<SepaStatementDocument['document']>() }),
    mcp: { output: statementLinkSchema },
    restDocument: {
      mediaType: XML,
      render: async (result) => new TextEncoder().encode(renderPain008(result.document)),
      filename: (result) => `${result.messageId}.xml`,
    },
    resourceLinks: (result) => [{ type: 'resource_link', uri: result.url, name: `${result.messageId}.xml`, mimeType: XML }],
    handler: async (ctx, input) => ({ ...(await getSepaXmlStatement(ctx.tx, ctx.org, input.id, ctx.baseUrl, ctx.now)), mimeType: XML }),
  }),
  defineOperation({
    name: 'get_sepa_xml_payment',
    title: 'Get SEPA XML payment',
    description: 'Get one direct debit of a statement: amount, mandate, execution date, and whether it was returned.',
    toolset: 'payments',
    method: 'GET',
    path: '/sepa-xml-payments/{id}',
    permission: 'payment:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('SEPA payment') }),
    output: sepaXmlPaymentSchema,
    handler: (ctx, input) => getSepaXmlPayment(ctx.tx, ctx.org, input.id, ctx.now),
  }),
  defineOperation({
    name: 'list_sepa_xml_payments',
    title: 'List SEPA XML payments',
    description: 'List direct debits, e.g. of a statement or an invoice.',
    toolset: 'payments',
    method: 'GET',
    path: '/sepa-xml-payments',
    permission: 'payment:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      statement: z.string().max(255).optional().describe('Only of this statement.'),
      invoice: filterBy('invoice', 'payments'),
      customer: filterBy('customer', 'payments'),
      status: z.enum(SEPA_PAYMENT_STATUSES).optional().describe('Only in this status.'),
    }),
    output: listOf(sepaXmlPaymentSchema),
    mcp: listView(sepaPaymentRow),
    handler: (ctx, { statement, invoice, customer, status, ...rest }) =>
      paged(rest, (page) => listSepaXmlPayments(ctx.tx, ctx.org, { statement, invoice, customer, status }, page, ctx.now)),
  }),
  defineOperation({
    name: 'return_sepa_xml_payment',
    title: 'Return SEPA XML payment',
    description:
      'Record that the bank returned a direct debit: what it paid is due again (a paid invoice reopens) and a payment plan it paid breaks (installment failed, payment_plan.broken).',
    toolset: 'payments',
    method: 'POST',
    path: '/sepa-xml-payments/{id}/return',
    permission: 'payment:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    input: z.strictObject({ id: pathId('collected SEPA payment'), reasonCode, returnedAt }),
    output: sepaXmlPaymentSchema,
    mcp: { output: sepaPaymentRow },
    handler: async (ctx, { id, ...input }) => {
      deliverAfterCommit(ctx);
      return returnSepaXmlPayment(ctx.tx, ctx.org, id, input, ctx.now);
    },
  }),
  defineOperation({
    name: 'record_sepa_return',
    title: 'Record SEPA return',
    description: 'return_sepa_xml_payment by the endToEndId the bank reports.',
    toolset: 'payments',
    method: 'POST',
    path: '/sepa-returns',
    permission: 'payment:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    input: z.strictObject({
      endToEndId: z.string().min(1).max(35).describe('EndToEndId of the returned debit.'),
      reasonCode,
      returnedAt,
    }),
    output: sepaXmlPaymentSchema,
    mcp: { output: sepaPaymentRow },
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return recordSepaReturn(ctx.tx, ctx.org, input, ctx.now);
    },
  }),
  defineOperation({
    name: 'import_sepa_status_report',
    title: 'Import SEPA status report',
    description:
      "Import the bank's pain.002 status report on a statement: every rejected debit (RJCT, of the message, a group or a transaction) is returned as by return_sepa_xml_payment.",
    toolset: 'payments',
    method: 'POST',
    path: '/sepa-status-reports',
    permission: 'payment:write',
    kind: 'action',
    annotations: { openWorldHint: true },
    requestBody: { kind: 'text', mediaType: XML, field: 'document' },
    input: z.strictObject({
      document: z.string().min(1).max(BODY_LIMIT).describe('The pain.002 XML (REST: the application/xml body).'),
    }),
    output: z.object({
      statement: z.string(),
      messageId: z.string(),
      returned: z.array(sepaXmlPaymentSchema),
      alreadyReturned: z.array(z.string()).describe('EndToEndIds.'),
      unknown: z.array(z.string()).describe('EndToEndIds not in the statement.'),
    }),
    mcp: sepaStatusReportView,
    handler: async (ctx, input) => {
      deliverAfterCommit(ctx);
      return importSepaStatusReport(ctx.tx, ctx.org, input.document, ctx.now);
    },
  }),
];

