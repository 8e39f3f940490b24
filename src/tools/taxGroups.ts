import { z } from 'zod';
import { createTaxGroup, getTaxGroup, listTaxGroups, updateTaxGroup } from '../domain/taxGroups.js';
import { defineOperation } from '../registry/operation.js';
import { date, listOf, pageInput, pathId, text255, paged } from '../schemas/common.js';
import { REVERSE_CHARGE_TYPES, TAX_GROUP_TYPES, taxGroupSchema } from '../schemas/taxGroups.js';

const internalDescription = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .describe('Name of the tax group shown only in the back office, 1 to 255 characters, e.g. "Standard VAT".');
const reverseChargeType = z
  .enum(REVERSE_CHARGE_TYPES)
  .describe(
    'REVERSE_CHARGE_DEACTIVATED (the seller charges the tax), REVERSE_CHARGE (the buyer accounts for the tax) or REVERSE_CHARGE_INTRA_EU_SUPPLY (tax-free intra-EU supply). Any other value is rejected.',
  );
const type = z.enum(TAX_GROUP_TYPES).describe('standard or reduced (the reduced-rate group of a country). Any other value is rejected.');

const rateRange = { message: 'must be a percentage from 0 to 100' };
const tax = z.strictObject({
  code: z
    .string()
    .min(1, { message: 'must be 1 to 255 characters' })
    .max(255, { message: 'must be 1 to 255 characters' })
    .describe('Tax code used on invoices and in accounting exports, 1 to 255 characters, e.g. VAT19.'),
  rate: z
    .number()
    .min(0, rateRange)
    .max(100, rateRange)
    .describe(
      'Rate in percent as a JSON number from 0 to 100 with at most 4 fractional digits, e.g. 19, 7, 8.1 or 5.5. Rejected: negative values, values above 100, more than 4 fractional digits (19.12345), strings.',
    ),
  countryCode: z
    .string()
    .regex(/^[A-Z]{2}$/, { message: 'must be an uppercase ISO 3166-1 alpha-2 country code, e.g. DE' })
    .describe(
      'Country the rate applies in: an officially assigned ISO 3166-1 alpha-2 code in uppercase, e.g. DE, AT, GB. Rejected: lowercase (de), alpha-3 (DEU), unassigned or reserved codes (XX, UK, EL, EU).',
    ),
  description: text255
    .nullable()
    .optional()
    .describe('Optional text about the rate, at most 255 characters; null or omitted means none.'),
  validFrom: date.describe(
    'First calendar day the rate applies, YYYY-MM-DD (e.g. 2026-01-01); date-times and impossible dates are rejected. One rate per (countryCode, validFrom) in a group: a second entry with the same pair is rejected.',
  ),
});
const taxes = z
  .array(tax)
  .describe(
    'The rates of the group, each { code, rate, countryCode, description?, validFrom } without an id (ids are generated). Several rates of one country are allowed when their validFrom dates differ.',
  );

const RULES =
  'Rules: internalDescription 1-255 chars; rate 0-100 percent with at most 4 fractional digits; countryCode an uppercase ISO 3166-1 alpha-2 code; validFrom YYYY-MM-DD; at most one rate per (countryCode, validFrom) in the group. A violation is rejected (422) naming the field, e.g. taxes[1].validFrom.';

export const taxGroupOperations = [
  defineOperation({
    name: 'create_tax_group',
    title: 'Create tax group',
    description: `Create a tax group: a set of tax rates per country and start date that products refer to (taxGroup on create_product). Use when list_tax_groups has no fitting group. reverseChargeType defaults to REVERSE_CHARGE_DEACTIVATED, type to standard, taxes to none. ${RULES}`,
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
    description: 'List the tax groups of the organisation with their rates, oldest first, paginated (page, limit 0-100).',
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
    description: 'Get one tax group by id with all its rates. An unknown id is a 404.',
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
    description: `Change a tax group's internalDescription, reverseChargeType, type or rates; omitted fields stay unchanged. taxes, when given, replaces the whole list (send every rate to keep; [] removes all); a rate with the same (countryCode, validFrom) as an existing one keeps its id. ${RULES}`,
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
      taxes: taxes.optional().describe('The complete new list of rates, replacing the current one; omit to keep the rates.'),
    }),
    output: taxGroupSchema,
    handler: (ctx, { id, ...patch }) => updateTaxGroup(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
