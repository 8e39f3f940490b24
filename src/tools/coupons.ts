import { z } from 'zod';
import { createCoupon, findCoupon, listCoupons, percentageE2, updateCoupon } from '../domain/coupons.js';
import { notFoundError } from '../errors.js';
import { UUID_RE } from '../ids.js';
import { defineOperation } from '../registry/operation.js';
import { amountInput, COUPON_FREQUENCIES, COUPON_TYPES, couponSchema, currencyCodeInput } from '../schemas/catalogue.js';
import { listOf, MAJOR, pageInput, paged, pathId } from '../schemas/common.js';
import { couponRow, listView } from '../schemas/views.js';

const between1and255 = { message: 'must be 1 to 255 characters' };
const name = z
  .string()
  .min(1, between1and255)
  .max(255, between1and255)
  .refine((s) => s === '' || s.trim() !== '', { message: 'must not be blank' })
  .describe('Name shown on invoices.');
const isEnabled = z.boolean().describe('false: no new applications; applied discounts keep running.');

export const couponOperations = [
  defineOperation({
    name: 'create_coupon',
    title: 'Create coupon',
    description:
      'Create a coupon: a reusable discount that subscriptions apply by code or id.',
    toolset: 'catalogue',
    method: 'POST',
    path: '/coupons',
    permission: 'coupon:write',
    kind: 'create',
    input: z.strictObject({
      code: z
        .string()
        .min(1, between1and255)
        .max(255, between1and255)
        .refine((s) => s === '' || s.trim() === s, { message: 'must not be blank or begin or end with whitespace: it is matched exactly' })
        .refine((s) => !UUID_RE.test(s), { message: 'must not have the form of an id (a UUID): every input naming a coupon takes its id or its code' })
        .describe('Unique code customers enter, e.g. WELCOME10.'),
      name,
      type: z.enum(COUPON_TYPES).describe('Which of percentage or fixedAmount gives the discount.'),
      frequency: z
        .enum(COUPON_FREQUENCIES)
        .describe('once: the first invoice only; limited: frequencyInterval invoices; forever: every invoice.'),
      percentage: z
        .number()
        .refine((v) => percentageE2(v) !== undefined, {
          message: 'must be more than 0 and at most 100, with at most 2 fractional digits (e.g. 10 or 12.5)',
        })
        .nullable()
        .optional()
        .describe('Percent off, more than 0 and up to 100, at most 2 fractional digits; only and required for type percentage.'),
      fixedAmount: z
        .strictObject({
          amount: amountInput('positive').describe(`${MAJOR}, at most the currency's minor-unit digits.`),
          currency: currencyCodeInput.describe('ISO 4217 code, upper case, e.g. EUR.'),
        })
        .nullable()
        .optional()
        .describe('Amount off per invoice (amount in major units); only and required for type fixed_amount.'),
      frequencyInterval: z
        .number()
        .int({ message: 'must be a whole number of 1 or more' })
        .min(1, { message: 'must be a whole number of 1 or more' })
        .nullable()
        .optional()
        .describe('Invoices discounted; only and required for frequency limited.'),
      isEnabled: isEnabled.default(true),
    }),
    output: couponSchema,
    handler: (ctx, input) => createCoupon(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_coupons',
    title: 'List coupons',
    description: 'List the discount coupons of the organisation.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/coupons',
    permission: 'coupon:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(couponSchema),
    mcp: listView(couponRow),
    handler: (ctx, input) => paged(input, (page) => listCoupons(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_coupon',
    title: 'Get coupon',
    description: 'Get one coupon by its id or its code (e.g. WELCOME10).',
    toolset: 'catalogue',
    method: 'GET',
    path: '/coupons/{id}',
    permission: 'coupon:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('coupon (its id or its code)') }),
    output: couponSchema,
    handler: async (ctx, input) => (await findCoupon(ctx.tx, ctx.org, input.id)) ?? notFoundError('Coupon', input.id),
  }),
  defineOperation({
    name: 'update_coupon',
    title: 'Update coupon',
    description: 'Rename, disable or re-enable a coupon (by id or code); omitted fields stay.',
    toolset: 'catalogue',
    method: 'PUT',
    path: '/coupons/{id}',
    permission: 'coupon:write',
    kind: 'update',
    input: z.strictObject({ id: pathId('coupon (its id or its code)'), name: name.optional(), isEnabled: isEnabled.optional() }),
    output: couponSchema,
    handler: (ctx, { id, ...patch }) => updateCoupon(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
