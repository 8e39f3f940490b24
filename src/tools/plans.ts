import { z } from 'zod';
import { createPlan, getPlan, listPlans, QUANTITY_DIGITS, updatePlan } from '../domain/plans.js';
import { microsOfNumber } from '../domain/quantity.js';
import { defineOperation } from '../registry/operation.js';
import { CHANGE_APPLY_BEHAVIOURS, CHANGE_BEHAVIOURS, PLAN_STATUSES, planSchema } from '../schemas/catalogue.js';
import { listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';
import { listView, planRow, planView } from '../schemas/views.js';

const between1and255 = { message: 'must be 1 to 255 characters' };
const code = z.string().min(1, between1and255).max(255, between1and255).describe('Unique code, e.g. pro-monthly.');
const name = z.string().min(1, between1and255).max(255, between1and255).describe('Name of the plan.');
const description = z
  .string()
  .max(255, { message: 'must be at most 255 characters' })
  .nullable()
  .describe('Description of the plan.');
const status = z
  .enum(PLAN_STATUSES)
  .describe('draft: not subscribable yet; archived: no longer offered. A plan never goes back to draft.');
const allowCheckout = z.boolean().describe('Stored only, for other systems: this service has no checkout.');
const changeBehaviour = z.enum(CHANGE_BEHAVIOURS).describe('Plan changes a subscription may make within the family.');
const changeApplyBehaviour = z
  .enum(CHANGE_APPLY_BEHAVIOURS)
  .describe('When a plan change takes effect.');
const trialPeriod = z
  .string()
  .regex(/^[1-9]\d{0,2}[DWM]$/, { message: 'must be <n>D, <n>W or <n>M with n from 1 to 999, e.g. 14D' })
  .nullable()
  .describe('Trial from activation, <n>D|W|M (e.g. 14D): items whose price plan has applyTrial are free until trialEndsOn. null: none.');
const originProduct = z.string().min(1).max(255).nullable().describe('Id of the product it derives from (list_products).');
const family = z
  .string()
  .min(1)
  .max(255)
  .describe('Id of a plan family (family.id of a plan); subscriptions change only between plans of one family.');
const product = z.string().min(1).max(255).describe('Id of the product (list_products).');
const pricePlan = z.string().min(1).max(255).describe('Id of one of its price plans (list_price_plans).');
const quantity = z
  .number()
  .gt(0, { message: 'must be greater than 0', abort: true })
  .refine((v) => microsOfNumber(v) !== undefined, {
    message: `must have at most ${QUANTITY_DIGITS} fractional digits`,
  })
  .describe(`Units (default 1), at most ${QUANTITY_DIGITS} fractional digits; not for a product with a usage metric.`);
const charges = z
  .array(z.strictObject({ product, pricePlan, quantity: quantity.optional() }))
  .min(1, { message: 'must contain at least 1 charge' })
  .max(50, { message: 'must contain at most 50 items' })
  .describe('What every subscription is billed for.');
const addons = z.array(z.strictObject({ product, pricePlan })).max(50, { message: 'must contain at most 50 items' }).describe('Extras a subscription may add.');

const ITEM_RULES =
  'Charges and addons need catalogue price plans of their product, not archived, all in one currency.';

export const planOperations = [
  defineOperation({
    name: 'create_plan',
    title: 'Create plan',
    description: `Create a plan: the charges and optional addons that subscriptions are made from. ${ITEM_RULES}`,
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/plans',
    permission: 'plan:write',
    kind: 'create',
    input: z.strictObject({
      code,
      name,
      description: description.optional(),
      status: status.default('active'),
      allowCheckout: allowCheckout.default(false),
      changeBehaviour: changeBehaviour.default('upgradeable_and_downgradeable'),
      changeApplyBehaviour: changeApplyBehaviour.default('end_of_period'),
      trialPeriod: trialPeriod.optional(),
      originProduct: originProduct.optional(),
      family: family.optional().describe(`${family.description} Omit it to start a new family.`),
      charges,
      addons: addons.optional(),
    }),
    output: planSchema,
    mcp: { output: planView },
    handler: (ctx, input) => createPlan(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_plans',
    title: 'List plans',
    description:
      'List the plans, optionally by status. Use it to find a plan id for a subscription.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/plans',
    permission: 'plan:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      status: z.enum(PLAN_STATUSES).optional().describe('Only plans with this status.'),
    }),
    output: listOf(planSchema),
    mcp: listView(planRow),
    handler: async (ctx, { status: wanted, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listPlans(ctx.tx, ctx.org, { status: wanted }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_plan',
    title: 'Get plan',
    description: 'Get one plan with its family, origin product, charges and addons.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/plans/{id}',
    permission: 'plan:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('plan (or its code)') }),
    output: planSchema,
    mcp: { output: planView },
    handler: (ctx, input) => getPlan(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_plan',
    title: 'Update plan',
    description: `Change a plan; omitted fields stay unchanged, null clears description or originProduct. charges and addons replace their whole list; an entry with the same product and price plan keeps its id. Items follow the rules of create_plan and keep their currency while subscriptions use the plan.`,
    toolset: 'catalogue',
    method: 'PUT',
    path: '/catalogue/plans/{id}',
    permission: 'plan:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('plan (or its code)'),
      code: code.optional(),
      name: name.optional(),
      description: description.optional(),
      status: status.optional(),
      allowCheckout: allowCheckout.optional(),
      changeBehaviour: changeBehaviour.optional(),
      changeApplyBehaviour: changeApplyBehaviour.optional(),
      trialPeriod: trialPeriod.optional(),
      originProduct: originProduct.optional(),
      family: family.optional().describe(`${family.description} Moves the plan to that family.`),
      charges: charges.optional(),
      addons: addons.optional().describe(`${addons.description} [] removes them.`),
    }),
    output: planSchema,
    mcp: { output: planView },
    handler: (ctx, { id, ...patch }) => updatePlan(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
