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
      'Configure a custom field: a typed key that subscriptions, customers or products may carry in customFields (unconfigured keys are rejected). A required one must be present in later creates and whenever customFields is replaced; existing records are unchanged.',
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
        .describe('Key in customFields, unique per entity, e.g. po_ref.'),
      entity: entity.describe('Which records carry the field.'),
      type: z
        .enum(CUSTOM_FIELD_TYPES)
        .describe('Value type; date: YYYY-MM-DD; select: one of options.'),
      options: z
        .array(z.string().min(1, { message: 'must be 1 to 255 characters' }).max(255, { message: 'must be 1 to 255 characters' }))
        .max(100, { message: 'must contain at most 100 items' })
        .nullable()
        .optional()
        .describe('Allowed values, distinct, at least one; only and required for type select.'),
      required: z.boolean().default(false).describe('true: every record of the entity must carry a value.'),
    }),
    output: customFieldSchema,
    handler: (ctx, input) => createCustomField(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_custom_fields',
    title: 'List custom fields',
    description:
      'List the configured custom fields, optionally of one entity: the customFields keys it accepts.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/custom-fields',
    permission: 'custom-field:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      entity: entity.optional().describe('Only the fields of this entity.'),
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
      'Delete a custom field: its key is no longer accepted or required; stored values stay. The key can be configured again.',
    toolset: 'catalogue',
    method: 'DELETE',
    path: '/custom-fields/{id}',
    permission: 'custom-field:write',
    kind: 'delete',
    input: z.strictObject({ id: pathId('custom field') }),
    output: z.object({ id: z.string(), deleted: z.literal(true) }),
    handler: (ctx, input) => deleteCustomField(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'get_custom_field',
    title: 'Get custom field',
    description: 'Get the configuration of one custom field.',
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
