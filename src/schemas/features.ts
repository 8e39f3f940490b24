import { z } from 'zod';
import { dateTime, timestamps } from './common.js';

export const FEATURE_STATUSES = ['draft', 'active', 'archived'] as const;
export const FEATURE_TYPES = ['switch', 'custom', 'quantity', 'range'] as const;
export type FeatureStatus = (typeof FEATURE_STATUSES)[number];
export type FeatureType = (typeof FEATURE_TYPES)[number];

/** The value of a quantity level or a range entitlement without a limit. */
export const UNLIMITED = 'unlimited';

export const levelSchema = z.object({
  value: z
    .union([z.string(), z.number()])
    .describe(`The level's value: a string for custom features; a non-negative integer or '${UNLIMITED}' for quantity features.`),
  label: z.string().describe('Readable name of the level, e.g. "Up to 10 users".'),
});
export type Level = z.infer<typeof levelSchema>;

export const rangeSchema = z.object({
  min: z.number().describe('Smallest value an entitlement may grant.'),
  max: z.number().describe('Largest value an entitlement may grant (>= min).'),
  unlimited: z.boolean().describe(`true: an entitlement may also grant '${UNLIMITED}'.`),
});
export type RangeConfig = z.infer<typeof rangeSchema>;

export const featureConfigSchema = z
  .union([z.array(levelSchema), rangeSchema])
  .nullable()
  .describe('custom and quantity: the levels [{ value, label }]; range: { min, max, unlimited }; switch: null.');
export type FeatureConfig = z.infer<typeof featureConfigSchema>;

export const featureSchema = z.object({
  id: z.string().describe('Slug of the feature, unique in the organisation, e.g. max-users.'),
  name: z.string(),
  description: z.string().nullable().describe('Shown in the admin UI.'),
  status: z
    .enum(FEATURE_STATUSES)
    .describe('draft: entitlements can be created but grant nothing yet; active: available; archived: no new entitlements, existing ones keep working.'),
  type: z.enum(FEATURE_TYPES).describe('switch: on/off; custom: freely defined levels; quantity: levels of a quantity; range: a value within a range.'),
  config: featureConfigSchema,
  unit: z.string().nullable().describe('Unit of the values, e.g. users or GB.'),
  ...timestamps,
});
export type Feature = z.infer<typeof featureSchema>;

export const entitlementValueSchema = z
  .union([z.boolean(), z.number(), z.string()])
  .describe(`switch: true or false; custom and quantity: the value of one of the feature's levels; range: a number within [min, max] or '${UNLIMITED}'.`);
export type EntitlementValue = z.infer<typeof entitlementValueSchema>;

export const entitlementSchema = z.object({
  id: z.string(),
  feature: z.string().describe('Id (slug) of the feature.'),
  product: z.string().nullable().describe('Id of the product that grants the entitlement, or null when a price plan grants it.'),
  pricePlan: z.string().nullable().describe('Id of the price plan that grants the entitlement, or null when a product grants it.'),
  value: entitlementValueSchema,
  createdAt: dateTime.describe('When the entitlement was created (UTC).'),
});
export type Entitlement = z.infer<typeof entitlementSchema>;

export const subscriptionEntitlementSchema = z.object({
  feature: featureSchema,
  value: entitlementValueSchema,
  entitlement: z.string().describe('Id of the entitlement this comes from.'),
  source: z
    .object({
      product: z.string().optional().describe('Id of the product of the subscription that grants it.'),
      pricePlan: z.string().optional().describe('Id of the price plan of the subscription that grants it.'),
    })
    .describe('Where the entitlement comes from: exactly one of product or pricePlan.'),
});
export type SubscriptionEntitlement = z.infer<typeof subscriptionEntitlementSchema>;
