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

const CONFIG_RULES = `Must fit the type: switch takes no config; custom takes a non-empty array of levels [{ value, label }] with distinct string values (e.g. [{ value: "basic", label: "Basic" }, { value: "pro", label: "Pro" }]); quantity takes a non-empty array of levels with distinct values, each a non-negative integer or '${UNLIMITED}' (e.g. [{ value: 5, label: "5 users" }, { value: "${UNLIMITED}", label: "Unlimited" }]); range takes { min, max, unlimited? } with min <= max (unlimited true also allows entitlements of '${UNLIMITED}'). Anything else is rejected (422 at config).`;

const level = z.strictObject({
  value: z
    .union([z.string().min(1).max(255), z.number()])
    .describe(`The level's value: a string (1-255 characters) for custom features; a non-negative integer or '${UNLIMITED}' for quantity features. Distinct within the feature.`),
  label: z.string().min(1).max(255).describe('Readable name of the level, 1-255 characters, e.g. "Up to 10 users".'),
});

const range = z.strictObject({
  min: z.number().describe('Smallest value an entitlement may grant.'),
  max: z.number().describe('Largest value an entitlement may grant; must not be less than min.'),
  unlimited: z.boolean().optional().describe(`true: entitlements may also grant '${UNLIMITED}'. Default false.`),
});

const status = z.enum(FEATURE_STATUSES);

export const featureOperations = [
  defineOperation({
    name: 'create_feature',
    title: 'Create entitlement feature',
    description: `Define an entitlement feature: something a subscription can be entitled to (API access, a number of users, disk space). Then grant it with create_entitlement on products or price plans, and activate it with update_feature_status. type switch is on/off; custom has freely named levels; quantity has levels of a quantity (an '${UNLIMITED}' level may be given); range lets an entitlement pick a value within { min, max }. id is a slug you choose, or generated from the name (Max users → max-users, made unique with -2, -3, …). status defaults to draft (entitlements can be created but grant nothing until active); active makes it available at once to subscriptions created from now on. Rejected (422): an id taken or not a slug, a config that does not fit the type.`,
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
        .describe('Slug of the feature, unique in the organisation: 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit (max-users). Omitted: generated from the name.'),
      name: text255.min(1, { message: 'must be 1 to 255 characters' }).describe('Name of the feature, 1-255 characters, e.g. "Max users" or "API access".'),
      description: z.string().max(1000).nullable().optional().describe('Shown in the admin UI; at most 1000 characters.'),
      status: z
        .enum(['draft', 'active'])
        .default('draft')
        .describe('draft (default): entitlements grant nothing until activated; active: available at once. Archiving is done with update_feature_status.'),
      type: z.enum(FEATURE_TYPES).describe('switch (on/off), custom (named levels), quantity (quantity levels) or range (a value within a range).'),
      config: z
        .union([z.array(level), range])
        .nullable()
        .optional()
        .describe(CONFIG_RULES),
      unit: text255.nullable().optional().describe('Unit of the values, e.g. users or GB; at most 255 characters.'),
    }),
    output: featureSchema,
    handler: (ctx, input) => createFeature(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_features',
    title: 'List entitlement features',
    description: 'List the entitlement features, oldest first, paginated (page, limit 0-100), optionally only those of a status or type.',
    toolset: 'entitlements',
    method: 'GET',
    path: '/entitlement/features',
    permission: 'feature:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      status: status.optional().describe('Only features in this status: draft, active or archived.'),
      type: z.enum(FEATURE_TYPES).optional().describe('Only features of this type: switch, custom, quantity or range.'),
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
    description: 'Get one entitlement feature by its id (slug): name, type, config, status, unit. An unknown id is a 404.',
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
      'Activate or archive an entitlement feature. Allowed: draft → active, archived → active, active → archived, draft → archived; the current status again changes nothing (200). Anything else, e.g. back to draft, is a 409. On a change to active, applyToExistingSubscriptions true gives the feature to every existing subscription (each is entitled where its products or price plans have an entitlement of it); false (default) gives it only to subscriptions created from now on. Archiving keeps existing entitlements working but takes no new ones. An unknown id is a 404.',
    toolset: 'entitlements',
    method: 'PUT',
    path: '/entitlement/features/{id}/status',
    permission: 'feature:write',
    kind: 'update',
    annotations: { destructiveHint: false, idempotentHint: true },
    input: z.strictObject({
      id: pathId('feature (its slug)'),
      status: status.describe('The new status: active or archived (draft only as the current status again, a no-op).'),
      applyToExistingSubscriptions: z
        .boolean()
        .default(false)
        .describe('Only for a change to active (ignored otherwise): true gives the feature to every existing subscription too; false (default) only to subscriptions created after the activation.'),
    }),
    output: featureSchema,
    handler: (ctx, { id, ...input }) => updateFeatureStatus(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'create_entitlement',
    title: 'Create entitlement',
    description: `Grant a feature with a value on a product or a price plan: subscriptions with an item of that product (or price plan) that have the feature are entitled to the value. Give exactly one of product or pricePlan. value must fit the feature: switch true or false (default true); custom and quantity the value of one of its levels; range a number within [min, max], or '${UNLIMITED}' when the range allows it. A draft feature takes entitlements that start working when it is activated; an archived feature takes none (409). Rejected (422): neither or both of product and pricePlan, an unknown product or price plan, a value that does not fit. An unknown feature id is a 404.`,
    toolset: 'entitlements',
    method: 'POST',
    path: '/entitlement/features/{id}/entitlements',
    permission: 'feature:write',
    kind: 'create',
    input: z.strictObject({
      id: pathId('feature (its slug) to grant'),
      product: ref('Id of the product that grants the feature (list_products). Give this or pricePlan, not both.').optional(),
      pricePlan: ref('Id of the price plan that grants the feature (list_price_plans). Give this or product, not both.').optional(),
      value: z
        .union([z.boolean(), z.number(), z.string().max(255)])
        .optional()
        .describe(`What is granted: switch true or false (default true); custom or quantity the value of one of the feature's levels; range a number within [min, max] or '${UNLIMITED}' when allowed.`),
    }),
    output: entitlementSchema,
    location: (e) => `/entitlement/features/${e.feature}`,
    handler: (ctx, { id, ...input }) => createEntitlement(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_subscription_entitlements',
    title: 'List subscription entitlements',
    description:
      "What a subscription is entitled to right now: one entry per entitlement { feature, value, entitlement, source: { product } or { pricePlan } } from the products and price plans of its current items, for the features it has (those active when it was created, or activated later with applyToExistingSubscriptions). Draft features grant nothing; archived ones keep working where granted. Only an active subscription is entitled: for any other status the list is empty. Paginated (page, limit 0-100), in the order the entitlements were created. An unknown subscription id is a 404.",
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
