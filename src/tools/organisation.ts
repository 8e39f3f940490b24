import { z } from 'zod';
import { COUNTRY_CODES } from '../domain/countries.js';
import { getOrganisation, updateOrganisation } from '../domain/organisation.js';
import { defineOperation } from '../registry/operation.js';
import { text255 } from '../schemas/common.js';
import { organisationSchema } from '../schemas/organisation.js';

const nonEmpty = text255.min(1, { message: 'must be 1 to 255 characters' });
const text = (what: string) => nonEmpty.describe(what);
const clearable = (what: string) => nonEmpty.nullable().optional().describe(what);

export const organisationOperations = [
  defineOperation({
    name: 'get_organisation',
    title: 'Get organisation',
    description: 'Get the organisation as seller: the details invoices and PDFs show, its payment terms and country.',
    toolset: 'invoices',
    method: 'GET',
    path: '/organisation',
    permission: 'organisation:read',
    kind: 'read',
    input: z.strictObject({}),
    output: organisationSchema,
    handler: (ctx) => getOrganisation(ctx.tx, ctx.org),
  }),
  defineOperation({
    name: 'update_organisation',
    title: 'Update organisation',
    description:
      "Set the seller details invoices and PDFs show. Omitted fields stay, null clears. address.countryCode decides reverse charge (buyer with a valid VAT id in another EU country; unset: never); paymentTermDays applies to customers without their own.",
    toolset: 'invoices',
    method: 'PUT',
    path: '/organisation',
    permission: 'organisation:write',
    kind: 'update',
    input: z.strictObject({
      name: text('Name.').optional(),
      legalName: clearable('Legal name on invoices.'),
      address: z
        .strictObject({
          street: text('Street.'),
          houseNumber: clearable('House number.'),
          zip: text('Postal code.'),
          city: text('City.'),
          countryCode: z
            .string()
            .refine((code) => COUNTRY_CODES.has(code), { message: 'must be an ISO 3166-1 alpha-2 country code in upper case, e.g. DE' })
            .describe('ISO 3166-1 alpha-2, e.g. DE.'),
        })
        .nullable()
        .optional()
        .describe('Postal address.'),
      vatId: clearable('VAT id, checked per country, e.g. DE136695976.'),
      taxNumber: clearable('Tax number.'),
      email: z.email({ message: 'must be a valid e-mail address such as billing@example.com' }).max(255).nullable().optional().describe('Billing e-mail.'),
      paymentTermDays: z.number().int().min(0).max(365, { message: 'must be 0 to 365 days' }).nullable().optional().describe('Days to pay, 0 to 365.'),
      invoiceFooter: z.string().max(1000, { message: 'must be at most 1000 characters' }).nullable().optional().describe('Text under every invoice.'),
      brandColor: z
        .string()
        .regex(/^#[0-9A-Fa-f]{6}$/, { message: 'must be a hex colour #RRGGBB, e.g. #0A66C2' })
        .nullable()
        .optional()
        .describe('#RRGGBB.'),
    }),
    output: organisationSchema,
    handler: (ctx, input) => updateOrganisation(ctx.tx, ctx.org, input, ctx.now),
  }),
];
