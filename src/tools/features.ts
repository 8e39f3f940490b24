import { z } from 'zod';
import {
  createEntitlement,
  createFeature,
  FEATURE_ID_RE,
  getFeature,
  listFeatures,
  listSubscriptionEntitlements,
  updateFeatureStatus,
} from '../domain/features.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber, listOf, pageInput, pageRequest, pathId, text255, toPage } from '../schemas/common.js';
import {
  entitlementSchema,
  FEATURE_STATUSES,
  FEATURE_TYPES,
  featureSchema,
  subscriptionEntitlementSchema,
  UNLIMITED,
} from '../schemas/features.js';
import { featureRow, listView, subscriptionEntitlementRow } from '../schemas/views.js';

const ref = (what: string) => z.string().min(1).max(255).describe(what);

const CONFIG_RULES = `By type: switch none; custom and quantity a non-empty list of levels; range { min, max, unlimited? }.`;

const level = z.strictObject({
  value: z
    .union([z.string().min(1).max(255), z.number()])
    .describe(`Distinct in the feature: custom a string; quantity a whole number >= 0 or '${UNLIMITED}'.`),
  label: z.string().min(1).max(255).describe('Readable name, e.g. "Up to 10 users".'),
});

const range = z.strictObject({
  min: z.number().describe('Smallest value to grant.'),
  max: z.number().describe('Largest value to grant, at least min.'),
  unlimited: z.boolean().optional().describe(`true: entitlements may also grant '${UNLIMITED}'.`),
});

const status = z.enum(FEATURE_STATUSES);

export const featureOperations = [
  defineOperation({
    name: 'create_feature',
    title: 'Create entitlement feature',
    description:
      'Define an entitlement feature a subscription can be entitled to (API access, max users, disk space), then grant it on products or price plans with create_entitlement. A draft feature grants nothing until update_feature_status activates it.',
    toolset: 'entitlements',
    method: 'POST',
    path: '/entitlement/features',
    permission: 'feature:write',
    kind: 'create',
    input: z.strictObject({
      id: z
        .string()
        .regex(FEATURE_ID_RE, { message: 'must be a slug: 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit, e.g. max-users' })
        .optional()
        .describe('Slug, unique in the organisation, e.g. max-users; default: made from the name.'),
      name: text255.min(1, { message: 'must be 1 to 255 characters' }).describe('Name, e.g. "Max users".'),
      description: z.string().max(1000).nullable().optional().describe('Shown in the admin UI.'),
      status: z
        .enum(['draft', 'active'])
        .default('draft')
        .describe('draft: grants nothing until activated; active: at once for new subscriptions.'),
      type: z.enum(FEATURE_TYPES).describe('switch: on/off; custom: named levels; quantity: levels of a quantity; range: a value within { min, max }.'),
      config: z
        .union([z.array(level).max(100, { message: 'must contain at most 100 items' }), range])
        .nullable()
        .optional()
        .describe(CONFIG_RULES),
      unit: text255.nullable().optional().describe('Unit of the values, e.g. users or GB.'),
    }),
    output: featureSchema,
    handler: (ctx, input) => createFeature(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_features',
    title: 'List entitlement features',
    description: 'List entitlement features, optionally of one status or type.',
    toolset: 'entitlements',
    method: 'GET',
    path: '/entitlement/features',
    permission: 'feature:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      status: status.optional().describe('Only features in this status.'),
      type: z.enum(FEATURE_TYPES).optional().describe('Only features of this type.'),
    }),
    output: listOf(featureSchema),
    mcp: listView(featureRow),
    handler: async (ctx, { status: wanted, type, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listFeatures(ctx.tx, ctx.org, { status: wanted, type }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_feature',
    title: 'Get entitlement feature',
    description: 'Get an entitlement feature by its slug: name, type, config, status, unit.',
    toolset: 'entitlements',
    method: 'GET',
    path: '/entitlement/features/{id}',
    permission: 'feature:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('feature (its slug)') }),
    output: featureSchema,
    handler: (ctx, input) => getFeature(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_feature_status',
    title: 'Change entitlement feature status',
    description:
      'Activate or archive an entitlement feature; it cannot go back to draft. Activating gives it to subscriptions created from then on (and to existing ones with applyToExistingSubscriptions); archiving keeps existing entitlements working but takes no new ones.',
    toolset: 'entitlements',
    method: 'PUT',
    path: '/entitlement/features/{id}/status',
    permission: 'feature:write',
    kind: 'update',
    annotations: { destructiveHint: false, idempotentHint: true },
    input: z.strictObject({
      id: pathId('feature (its slug)'),
      status: status.describe('New status.'),
      applyToExistingSubscriptions: z
        .boolean()
        .default(false)
        .describe('On activation: true gives the feature to existing subscriptions too.'),
    }),
    output: featureSchema,
    handler: (ctx, { id, ...input }) => updateFeatureStatus(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'create_entitlement',
    title: 'Create entitlement',
    description:
      'Grant a feature with a value on a product or a price plan: subscriptions with an item of it that have the feature are entitled to the value. Not on an archived feature; on a draft one it works once activated.',
    toolset: 'entitlements',
    method: 'POST',
    path: '/entitlement/features/{id}/entitlements',
    permission: 'feature:write',
    kind: 'create',
    input: z.strictObject({
      id: pathId('feature (its slug)'),
      product: ref('Product that grants it (list_products); this or pricePlan.').optional(),
      pricePlan: ref('Price plan that grants it (list_price_plans); this or product.').optional(),
      value: z
        .union([z.boolean(), z.number(), z.string().max(255)])
        .optional()
        .describe(`switch true or false (default true); custom or quantity a level's value; range a number within [min, max], or '${UNLIMITED}' if allowed.`),
    }),
    output: entitlementSchema,
    location: (e) => `/entitlement/features/${e.feature}`,
    handler: (ctx, { id, ...input }) => createEntitlement(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_subscription_entitlements',
    title: 'List subscription entitlements',
    description:
      "List what an active subscription is entitled to now, per entitlement of its items' products and price plans: feature, value, source. Empty in other statuses.",
    toolset: 'entitlements',
    method: 'GET',
    path: '/subscriptions/{id}/entitlements',
    permission: 'subscription:read',
    kind: 'list',
    input: z.strictObject({ id: idOrNumber('subscription'), ...pageInput }),
    output: listOf(subscriptionEntitlementSchema),
    mcp: listView(subscriptionEntitlementRow),
    handler: async (ctx, { id, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listSubscriptionEntitlements(ctx.tx, ctx.org, id, page, ctx.now);
      return toPage(rows, total, page);
    },
  }),
];
