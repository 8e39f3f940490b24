import { z } from 'zod';
import { createCoupon, findCoupon, listCoupons, percentageE2 } from '../domain/coupons.js';
import { notFoundError } from '../errors.js';
import { defineOperation } from '../registry/operation.js';
import { amountInput, COUPON_FREQUENCIES, COUPON_TYPES, couponSchema, currencyCodeInput } from '../schemas/catalogue.js';
import { listOf, MAJOR, pageInput, paged, pathId } from '../schemas/common.js';
import { couponRow, listView } from '../schemas/views.js';

const between1and255 = { message: 'must be 1 to 255 characters' };

export const couponOperations = [
  defineOperation({
    name: 'create_coupon',
    title: 'Create coupon',
    description:
      'Create a coupon: a reusable discount that subscriptions can apply by code or id. type percentage takes percentage (more than 0, at most 100); type fixed_amount takes fixedAmount { amount, currency }. frequency once discounts one invoice; limited discounts frequencyInterval invoices. isEnabled defaults to true. Rejected (422): a code already used; percentage without type percentage or missing with it; fixedAmount without type fixed_amount or missing with it; frequencyInterval without frequency limited or missing with it; more than 2 fractional digits in percentage, or more than the minor-unit digits of the currency in amount (EUR 2, JPY 0, KWD 3).',
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
        .describe('Code customers enter, unique in this organisation, 1 to 255 characters, e.g. WELCOME10. A code already used is rejected.'),
      name: z.string().min(1, between1and255).max(255, between1and255).describe('Name shown on invoices, 1 to 255 characters.'),
      type: z.enum(COUPON_TYPES).describe('percentage (needs percentage) or fixed_amount (needs fixedAmount).'),
      frequency: z
        .enum(COUPON_FREQUENCIES)
        .describe('once (the first invoice only) or limited (frequencyInterval invoices; needs frequencyInterval).'),
      percentage: z
        .number()
        .refine((v) => percentageE2(v) !== undefined, {
          message: 'must be more than 0 and at most 100, with at most 2 fractional digits (e.g. 10 or 12.5)',
        })
        .nullable()
        .optional()
        .describe('Discount in percent, more than 0 and at most 100, at most 2 fractional digits. Required for type percentage; omit it (or null) for fixed_amount.'),
      fixedAmount: z
        .strictObject({
          amount: amountInput('positive').describe(`Discount; ${MAJOR}, more than 0, at most the currency's minor-unit digits: 10.5 EUR means 10.50.`),
          currency: currencyCodeInput.describe('ISO 4217 currency code in upper case (EUR, USD); lower case and unknown codes are rejected.'),
        })
        .nullable()
        .optional()
        .describe(`{ amount, currency }: the amount taken off, ${MAJOR}. Required for type fixed_amount; omit it (or null) for percentage.`),
      frequencyInterval: z
        .number()
        .int({ message: 'must be a whole number of 1 or more' })
        .min(1, { message: 'must be a whole number of 1 or more' })
        .nullable()
        .optional()
        .describe('Number of invoices the discount applies to, 1 or more. Required for frequency limited; omit it (or null) for once.'),
      isEnabled: z.boolean().default(true).describe('false: the coupon exists but cannot be applied. Default true.'),
    }),
    output: couponSchema,
    handler: (ctx, input) => createCoupon(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_coupons',
    title: 'List coupons',
    description: 'List the coupons of the organisation, oldest first, paginated (page, limit 0-100).',
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
    description: 'Get one coupon by its id or by its code (e.g. WELCOME10).',
    toolset: 'catalogue',
    method: 'GET',
    path: '/coupons/{id}',
    permission: 'coupon:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('coupon (its id or its code)') }),
    output: couponSchema,
    handler: async (ctx, input) => (await findCoupon(ctx.tx, ctx.org, input.id)) ?? notFoundError('Coupon', input.id),
  }),
];
