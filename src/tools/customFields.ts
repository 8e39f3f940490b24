import { z } from 'zod';
import { createCustomField, deleteCustomField, listCustomFields } from '../domain/customFields.js';
import { notFoundError } from '../errors.js';
import { defineOperation } from '../registry/operation.js';
import { CUSTOM_FIELD_ENTITIES, CUSTOM_FIELD_TYPES, customFieldSchema } from '../schemas/catalogue.js';
import { listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';

const entity = z.enum(CUSTOM_FIELD_ENTITIES);

export const customFieldOperations = [
  defineOperation({
    name: 'create_custom_field',
    title: 'Create custom field',
    description:
      "Configure a custom field: a key that subscriptions, customers or products may carry in their customFields, with a type their values are checked against. Use it before sending a customFields key; unconfigured keys are rejected. A required field must be present in every later create of that entity (and whenever customFields is replaced); existing records are not changed. Rejected (422): a key that is not a letter followed by up to 63 letters, digits or underscores; a key the entity already has; options missing, empty or repeated for type select, or given for another type.",
    toolset: 'catalogue',
    method: 'POST',
    path: '/custom-fields',
    permission: 'custom-field:write',
    kind: 'create',
    input: z.strictObject({
      key: z
        .string()
        .regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/, {
          message: 'must start with a letter followed by at most 63 letters, digits or underscores, e.g. costCentre or po_ref',
        })
        .describe('Key in customFields, unique per entity: a letter, then up to 63 letters, digits or underscores (e.g. po_ref).'),
      entity: entity.describe('Which records carry the field: subscription, customer or product.'),
      type: z
        .enum(CUSTOM_FIELD_TYPES)
        .describe('Type of the values: string (at most 255 characters), number, boolean, date (YYYY-MM-DD) or select (one of options).'),
      options: z
        .array(z.string().min(1, { message: 'must be 1 to 255 characters' }).max(255, { message: 'must be 1 to 255 characters' }).describe('One allowed value, 1 to 255 characters.'))
        .nullable()
        .optional()
        .describe('The allowed values of a select field: a non-empty list of distinct strings. Required for type select; omit it (or null) for other types.'),
      required: z.boolean().default(false).describe('true: every record of the entity must carry a value for this key. Default false.'),
    }),
    output: customFieldSchema,
    handler: (ctx, input) => createCustomField(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_custom_fields',
    title: 'List custom fields',
    description:
      'List the custom-field configuration (key, entity, type, options, required), oldest first, paginated (page, limit 0-100); optionally only the fields of one entity. Use it to learn which customFields keys an entity accepts.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/custom-fields',
    permission: 'custom-field:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      entity: entity.optional().describe('Only the fields of this entity: subscription, customer or product.'),
    }),
    output: listOf(customFieldSchema),
    handler: async (ctx, { entity: wanted, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listCustomFields(ctx.tx, ctx.org, { entity: wanted }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'delete_custom_field',
    title: 'Delete custom field',
    description:
      'Delete a custom field from the configuration: its key is no longer accepted in new customFields and no longer required; values already stored on records stay as they are. The key can be configured again later. An unknown id is a 404.',
    toolset: 'catalogue',
    method: 'DELETE',
    path: '/custom-fields/{id}',
    permission: 'custom-field:write',
    kind: 'delete',
    input: z.strictObject({ id: pathId('custom field') }),
    output: z.object({ id: z.string().describe('Id of the deleted custom field.'), deleted: z.literal(true) }),
    handler: (ctx, input) => deleteCustomField(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'get_custom_field',
    title: 'Get custom field',
    description: 'Get one custom field configuration by id: key, entity, type, options and whether it is required.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/custom-fields/{id}',
    permission: 'custom-field:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('custom field') }),
    output: customFieldSchema,
    handler: async (ctx, input) => (await ctx.tx.billingSetup.getCustomField(ctx.org, input.id)) ?? notFoundError('Custom field', input.id),
  }),
];
