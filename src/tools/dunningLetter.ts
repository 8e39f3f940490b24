import { z } from 'zod';
import { renderDunningLetter } from '../documents/dunningLetter.js';
import { dunningLetter, type DunningLetterSource } from '../domain/dunning.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber } from '../schemas/common.js';

const PDF = 'application/pdf' as const;

const letterLinkSchema = z.object({
  invoice: z.string().describe('Invoice id.'),
  level: z.number().int(),
  url: z.string().describe('GET it with the API key as Bearer token.'),
  mimeType: z.literal(PDF),
});

const filename = (result: { number: string | null; level: number }) => `${result.number ?? 'invoice'}-reminder-${result.level}.pdf`;

export const dunningLetterOperations = [
  defineOperation({
    name: 'get_dunning_letter',
    title: 'Get dunning letter',
    description:
      'Link to the printable letter (PDF) of a dunning level applied to an invoice, made when its overdue rule has sendLetter (list_invoice_dunning shows letter: true): a resource_link, not its bytes. 409 for a level without a letter.',
    toolset: 'dunning',
    method: 'GET',
    path: '/invoices/{id}/dunning/{level}/letter',
    permission: 'invoice:read',
    kind: 'read',
    input: z.strictObject({
      id: idOrNumber('invoice'),
      level: z.coerce.number().int().min(1, { message: 'must be a dunning level, 1 or more' }).describe('Dunning level applied.'),
    }),
    // The handler's result: the link, and what the REST route renders (never part of the MCP result).
    output: letterLinkSchema.extend({ number: z.string().nullable(), document: z.custom<DunningLetterSource>() }),
    mcp: { output: letterLinkSchema },
    restDocument: {
      mediaType: PDF,
      render: (result) => renderDunningLetter(result.document),
      filename,
    },
    resourceLinks: (result) => [{ type: 'resource_link', uri: result.url, name: filename(result), mimeType: PDF }],
    handler: async (ctx, input) => {
      const document = await dunningLetter(ctx.tx, ctx.org, input.id, input.level);
      const { id, number } = document.invoice;
      const url = `${ctx.baseUrl}/invoices/${encodeURIComponent(id)}/dunning/${input.level}/letter`;
      return { invoice: id, number, level: input.level, url, mimeType: PDF, document };
    },
  }),
];

