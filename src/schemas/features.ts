import { z } from 'zod';
import { dateTime, timestamps } from './common.js';

export const FEATURE_STATUSES = ['draft', 'active', 'archived'] as const;
export const FEATURE_TYPES = ['switch', 'custom', 'quantity', 'range'] as const;
export type FeatureStatus = (typeof FEATURE_STATUSES)[number];
export type FeatureType = (typeof FEATURE_TYPES)[number];

/** The value of a quantity level or a range entitlement without a limit. */
export const UNLIMITED = 'unlimited';

export const levelSchema = z.object({
  value: z.union([z.string(), z.number()]),
  label: z.string(),
});
export type Level = z.infer<typeof levelSchema>;

export const rangeSchema = z.object({
  min: z.number(),
  max: z.number(),
  unlimited: z.boolean(),
});
export type RangeConfig = z.infer<typeof rangeSchema>;

export const featureConfigSchema = z.union([z.array(levelSchema), rangeSchema]).nullable();
export type FeatureConfig = z.infer<typeof featureConfigSchema>;

export const featureSchema = z.object({
  id: z.string().describe('Slug.'),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(FEATURE_STATUSES),
  type: z.enum(FEATURE_TYPES),
  config: featureConfigSchema,
  unit: z.string().nullable(),
  ...timestamps,
});
export type Feature = z.infer<typeof featureSchema>;

export const entitlementValueSchema = z.union([z.boolean(), z.number(), z.string()]);
export type EntitlementValue = z.infer<typeof entitlementValueSchema>;

export const entitlementSchema = z.object({
  id: z.string(),
  feature: z.string(),
  product: z.string().nullable(),
  pricePlan: z.string().nullable(),
  value: entitlementValueSchema,
  createdAt: dateTime,
});
export type Entitlement = z.infer<typeof entitlementSchema>;

export const subscriptionEntitlementSchema = z.object({
  feature: featureSchema,
  value: entitlementValueSchema,
  entitlement: z.string().describe('Id of the entitlement.'),
  source: z
    .object({ product: z.string().optional(), pricePlan: z.string().optional() })
    .describe('The product or price plan granting it.'),
});
export type SubscriptionEntitlement = z.infer<typeof subscriptionEntitlementSchema>;
