import { z } from 'zod';
import { createTaxGroup, getTaxGroup, listTaxGroups, updateTaxGroup } from '../domain/taxGroups.js';
import { defineOperation } from '../registry/operation.js';
import { date, listOf, pageInput, pathId, text255, paged } from '../schemas/common.js';
import { REVERSE_CHARGE_TYPES, TAX_GROUP_TYPES, taxGroupSchema } from '../schemas/taxGroups.js';

const internalDescription = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .describe('Back-office name, e.g. "Standard VAT".');
const reverseChargeType = z
  .enum(REVERSE_CHARGE_TYPES)
  .describe(
    'REVERSE_CHARGE_DEACTIVATED: the seller charges the tax; REVERSE_CHARGE (services), REVERSE_CHARGE_INTRA_EU_SUPPLY (goods): 0 % for a buyer with a valid VAT id in another EU country than the organisation.',
  );
const type = z.enum(TAX_GROUP_TYPES).describe("reduced: a country's reduced-rate group.");

const rateRange = { message: 'must be a percentage from 0 to 100' };
const tax = z.strictObject({
  code: z
    .string()
    .min(1, { message: 'must be 1 to 255 characters' })
    .max(255, { message: 'must be 1 to 255 characters' })
    .describe('Tax code for invoices and accounting exports, e.g. VAT19.'),
  rate: z
    .number()
    .min(0, rateRange)
    .max(100, rateRange)
    .describe('Percent, at most 4 fractional digits, e.g. 19 or 5.5.'),
  countryCode: z
    .string()
    .regex(/^[A-Z]{2}$/, { message: 'must be an uppercase ISO 3166-1 alpha-2 country code, e.g. DE' })
    .describe('Assigned ISO 3166-1 alpha-2 code, e.g. DE; not UK, EL or EU.'),
  description: text255.nullable().optional().describe('Text about the rate.'),
  validFrom: date.describe('First day the rate applies; unique per countryCode in a group.'),
});
const taxes = z.array(tax).max(100, { message: 'must contain at most 100 items' }).describe('The rates of the group; ids are generated.');

export const taxGroupOperations = [
  defineOperation({
    name: 'create_tax_group',
    title: 'Create tax group',
    description: 'Create a tax group: rates per country and start date that products refer to (taxGroup). Use it when list_tax_groups has none that fits.',
    toolset: 'catalogue',
    method: 'POST',
    path: '/tax-groups',
    permission: 'tax-group:write',
    kind: 'create',
    input: z.strictObject({
      internalDescription,
      reverseChargeType: reverseChargeType.default('REVERSE_CHARGE_DEACTIVATED'),
      type: type.default('standard'),
      taxes: taxes.default([]),
    }),
    output: taxGroupSchema,
    handler: (ctx, input) => createTaxGroup(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_tax_groups',
    title: 'List tax groups',
    description: 'List the tax groups of the organisation with their rates.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/tax-groups',
    permission: 'tax-group:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(taxGroupSchema),
    handler: (ctx, input) => paged(input, (page) => listTaxGroups(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_tax_group',
    title: 'Get tax group',
    description: 'Get one tax group with all its rates per country.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/tax-groups/{id}',
    permission: 'tax-group:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('tax group') }),
    output: taxGroupSchema,
    handler: (ctx, input) => getTaxGroup(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_tax_group',
    title: 'Update tax group',
    description: 'Change a tax group; omitted fields stay unchanged. taxes replaces all rates; one with the countryCode and validFrom of an existing rate keeps its id.',
    toolset: 'catalogue',
    method: 'PUT',
    path: '/tax-groups/{id}',
    permission: 'tax-group:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('tax group'),
      internalDescription: internalDescription.optional(),
      reverseChargeType: reverseChargeType.optional(),
      type: type.optional(),
      taxes: taxes.optional().describe('The complete new list of rates; [] removes all.'),
    }),
    output: taxGroupSchema,
    handler: (ctx, { id, ...patch }) => updateTaxGroup(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
