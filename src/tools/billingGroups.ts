import { z } from 'zod';
import { createBillingGroup, findBillingGroup, listBillingGroups } from '../domain/billingGroups.js';
import { notFoundError } from '../errors.js';
import { defineOperation } from '../registry/operation.js';
import { BILLING_GROUP_TYPES, billingGroupSchema } from '../schemas/catalogue.js';
import { listOf, pageInput, paged, pathId } from '../schemas/common.js';

export const billingGroupOperations = [
  defineOperation({
    name: 'create_billing_group',
    title: 'Create billing group',
    description:
      'Create a billing group, the billing cycle a subscription follows; items billed in days or weeks (D, W) ignore it (anniversary). Its id is a ULID; subscriptions accept it as a UUID too.',
    toolset: 'catalogue',
    method: 'POST',
    path: '/billing-groups',
    permission: 'billing-group:write',
    kind: 'create',
    input: z.strictObject({
      name: z
        .string()
        .min(1, { message: 'must be 1 to 255 characters' })
        .max(255, { message: 'must be 1 to 255 characters' })
        .describe('Name, e.g. "Monthly on the 15th".'),
      type: z
        .enum(BILLING_GROUP_TYPES)
        .describe("end_of_month: periods end at month ends; custom_day: they start on customDay; anniversary: on the subscription's start date."),
      customDay: z
        .number()
        .int({ message: 'must be a whole number from 1 to 28' })
        .min(1, { message: 'must be a whole number from 1 to 28' })
        .max(28, { message: 'must be a whole number from 1 to 28' })
        .nullable()
        .optional()
        .describe('Day of the month periods start on; only and required for type custom_day.'),
      customMonth: z
        .number()
        .int({ message: 'must be a whole number from 1 to 12' })
        .min(1, { message: 'must be a whole number from 1 to 12' })
        .max(12, { message: 'must be a whole number from 1 to 12' })
        .nullable()
        .optional()
        .describe('Month of customDay, for yearly cycles; only with custom_day.'),
    }),
    output: billingGroupSchema,
    handler: (ctx, input) => createBillingGroup(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_billing_groups',
    title: 'List billing groups',
    description: 'List the billing groups. Use it to find a billing group id for a subscription.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/billing-groups',
    permission: 'billing-group:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(billingGroupSchema),
    handler: (ctx, input) => paged(input, (page) => listBillingGroups(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_billing_group',
    title: 'Get billing group',
    description: 'Get one billing group by its ULID or its UUID form.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/billing-groups/{id}',
    permission: 'billing-group:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('billing group (ULID or its UUID form)') }),
    output: billingGroupSchema,
    handler: async (ctx, input) => (await findBillingGroup(ctx.tx, ctx.org, input.id)) ?? notFoundError('Billing group', input.id),
  }),
];
