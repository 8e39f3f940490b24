import { z } from 'zod';
import { createPlan, getPlan, listPlans, QUANTITY_DIGITS, updatePlan } from '../domain/plans.js';
import { microsOfNumber } from '../domain/quantity.js';
import { defineOperation } from '../registry/operation.js';
import { CHANGE_APPLY_BEHAVIOURS, CHANGE_BEHAVIOURS, PLAN_STATUSES, planSchema } from '../schemas/catalogue.js';
import { listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';
import { listView, planRow, planView } from '../schemas/views.js';

const between1and255 = { message: 'must be 1 to 255 characters' };
const code = z
  .string()
  .min(1, between1and255)
  .max(255, between1and255)
  .describe('Code of the plan, unique in this organisation, 1 to 255 characters, e.g. pro-monthly. A code another plan has is rejected.');
const name = z.string().min(1, between1and255).max(255, between1and255).describe('Name of the plan, 1 to 255 characters.');
const description = z
  .string()
  .max(255, { message: 'must be at most 255 characters' })
  .nullable()
  .describe('Description of the plan; at most 255 characters, null for none.');
const status = z
  .enum(PLAN_STATUSES)
  .describe(
    'draft (being prepared), active (offered) or archived (no longer offered). Changes allowed: draft → active or archived, active → archived, archived → active; back to draft is not.',
  );
const allowCheckout = z.boolean().describe('true: customers may subscribe to the plan themselves in a checkout.');
const changeBehaviour = z
  .enum(CHANGE_BEHAVIOURS)
  .describe(
    'Which plan changes a subscription may make within the family: upgradeable_and_downgradeable, upgradeable_only, downgradeable_only or not_changeable.',
  );
const changeApplyBehaviour = z
  .enum(CHANGE_APPLY_BEHAVIOURS)
  .describe('When a plan change takes effect: end_of_period (at the end of the current billing period) or immediately.');
const originProduct = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .describe('Id of the product the plan was derived from (list_products), or null. An unknown id is rejected.');
const family = z
  .string()
  .min(1)
  .max(255)
  .describe(
    "Id of an existing plan family (the family.id of another plan) to put this plan in; plans of one family are the ones a subscription can change between. An unknown id is rejected.",
  );
const product = z.string().min(1).max(255).describe('Id of the product (list_products). An unknown id is rejected.');
const pricePlan = z
  .string()
  .min(1)
  .max(255)
  .describe(
    'Id of a catalogue price plan of that same product (list_price_plans). Rejected: an unknown id, a price plan of another product, a custom or archived price plan, a currency other than that of the plan\'s other items.',
  );
const quantity = z
  .number()
  .gt(0, { message: 'must be greater than 0', abort: true })
  .refine((v) => microsOfNumber(v) !== undefined, {
    message: `must have at most ${QUANTITY_DIGITS} fractional digits`,
  })
  .describe(`How many units the subscription gets, more than 0, at most ${QUANTITY_DIGITS} fractional digits. Default 1.`);
const charges = z
  .array(
    z
      .strictObject({ product, pricePlan, quantity: quantity.default(1) })
      .describe('One charge: { product, pricePlan, quantity? }.'),
  )
  .min(1, { message: 'must contain at least 1 charge' })
  .describe('What every subscription of the plan is billed for: at least one { product, pricePlan, quantity? }.');
const addons = z
  .array(z.strictObject({ product, pricePlan }).describe('One addon: { product, pricePlan }.'))
  .describe('Optional extras a subscription can add: { product, pricePlan } entries (may be empty).');

const ITEM_RULES =
  "Each charge and addon names a product and one of that product's catalogue price plans; all of them must be in one currency; custom and archived price plans cannot be used.";

export const planOperations = [
  defineOperation({
    name: 'create_plan',
    title: 'Create plan',
    description: `Create a plan: a named bundle of charges (product + price plan + quantity) and optional addons that subscriptions are created from. Create the products and price plans first. Defaults: status draft, allowCheckout false, changeBehaviour upgradeable_and_downgradeable, changeApplyBehaviour end_of_period; without family a new family is started. ${ITEM_RULES} Rejected (422): a code already used, an unknown originProduct or family, any broken charge or addon (reported at charges[i].product / charges[i].pricePlan), no charges.`,
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/plans',
    permission: 'plan:write',
    kind: 'create',
    input: z.strictObject({
      code,
      name,
      description: description.optional(),
      status: status.default('draft').describe(`${status.description} Default draft.`),
      allowCheckout: allowCheckout.default(false).describe(`${allowCheckout.description} Default false.`),
      changeBehaviour: changeBehaviour
        .default('upgradeable_and_downgradeable')
        .describe(`${changeBehaviour.description} Default upgradeable_and_downgradeable.`),
      changeApplyBehaviour: changeApplyBehaviour
        .default('end_of_period')
        .describe(`${changeApplyBehaviour.description} Default end_of_period.`),
      originProduct: originProduct.optional(),
      family: family.optional().describe(`${family.description} Omit it to start a new family.`),
      charges,
      addons: addons.optional().describe(`${addons.description} Default none.`),
    }),
    output: planSchema,
    mcp: { output: planView },
    handler: (ctx, input) => createPlan(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_plans',
    title: 'List plans',
    description:
      'List the plans of the organisation with their charges and addons resolved, oldest first, paginated (page, limit 0-100); optionally only those with a given status. Use it to find a plan id for a subscription.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/plans',
    permission: 'plan:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      status: z.enum(PLAN_STATUSES).optional().describe('Only plans with this status: draft, active or archived.'),
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
    description: 'Get one plan by id with its family, origin product, charges and addons (products and price plans resolved). An unknown id is a 404.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/plans/{id}',
    permission: 'plan:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('plan') }),
    output: planSchema,
    mcp: { output: planView },
    handler: (ctx, input) => getPlan(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_plan',
    title: 'Update plan',
    description: `Change a plan. Omitted fields stay unchanged; null clears description or originProduct; charges and addons, when given, each replace their whole list (an entry with the same product and price plan as before keeps its id). Status may change draft → active or archived, active → archived, archived → active; any other change (e.g. back to draft) is a 409. ${ITEM_RULES} Rejected (422): a code another plan has, an unknown originProduct or family, a broken charge or addon, an empty charges list. An unknown id is a 404.`,
    toolset: 'catalogue',
    method: 'PUT',
    path: '/catalogue/plans/{id}',
    permission: 'plan:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('plan'),
      code: code.optional(),
      name: name.optional(),
      description: description.optional(),
      status: status.optional(),
      allowCheckout: allowCheckout.optional(),
      changeBehaviour: changeBehaviour.optional(),
      changeApplyBehaviour: changeApplyBehaviour.optional(),
      originProduct: originProduct.optional(),
      family: family.optional().describe(`${family.description} Moves the plan to that family.`),
      charges: charges.optional().describe(`${charges.description} Replaces all charges.`),
      addons: addons.optional().describe(`${addons.description} Replaces all addons; [] removes them.`),
    }),
    output: planSchema,
    mcp: { output: planView },
    handler: (ctx, { id, ...patch }) => updatePlan(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
