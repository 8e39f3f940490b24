import { z } from 'zod';
import { isCurrencyCode, isDecimalAmount, MAX_MINOR_DIGITS, notMoney } from '../values/money.js';
import { dateTime, MAJOR, timestamps } from './common.js';
import { measurementSchema } from './measurements.js';
import { taxGroupSchema } from './taxGroups.js';

export const PRODUCT_TYPES = ['product', 'service'] as const;
export const INVOICE_VISIBILITIES = ['always', 'never', 'if_not_zero'] as const;
export const PRICE_PLAN_TYPES = ['flat_fee', 'per_unit', 'graduated', 'volume', 'package'] as const;
/** The types priced by `tiers` instead of `price`. */
export const TIERED_TYPES: readonly PricePlanType[] = ['graduated', 'volume'];
export const PRICE_PLAN_STATUSES = ['active', 'inactive', 'archived'] as const;
export const PLAN_STATUSES = ['draft', 'active', 'archived'] as const;
export const CHANGE_BEHAVIOURS = [
  'upgradeable_and_downgradeable',
  'upgradeable_only',
  'downgradeable_only',
  'not_changeable',
] as const;
export const CHANGE_APPLY_BEHAVIOURS = ['end_of_period', 'immediately'] as const;
export const BILLING_GROUP_TYPES = ['end_of_month', 'custom_day', 'anniversary'] as const;
export const COUPON_TYPES = ['percentage', 'fixed_amount'] as const;
export const COUPON_FREQUENCIES = ['once', 'limited', 'forever'] as const;
export const CUSTOM_FIELD_ENTITIES = ['subscription', 'customer', 'product'] as const;
export const CUSTOM_FIELD_TYPES = ['string', 'number', 'boolean', 'date', 'select'] as const;

export type PricePlanType = (typeof PRICE_PLAN_TYPES)[number];
export type PricePlanStatus = (typeof PRICE_PLAN_STATUSES)[number];
export type PlanStatus = (typeof PLAN_STATUSES)[number];
export type CustomFieldEntity = (typeof CUSTOM_FIELD_ENTITIES)[number];

/** Billing intervals and displayed intervals: 1 to 999 days, weeks, months or years (`1M`, `12M`, `1Y`, `2W`). */
export const BILLING_INTERVAL_RE = /^[1-9]\d{0,2}[DWMY]$/;

const customFieldValues = z.record(z.string(), z.unknown());

export const USAGE_AGGREGATIONS = ['count', 'sum', 'max', 'average', 'unique_count', 'latest'] as const;
export type UsageAggregation = (typeof USAGE_AGGREGATIONS)[number];
export const USAGE_METRIC_TYPES = ['metered', 'recurring'] as const;
/** Names of event properties a metric reads: letters, digits, `_` and `-` (they become JSON paths). */
export const PROPERTY_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

export const usageMetricSchema = z.object({
  eventName: z.string(),
  aggregation: z.enum(USAGE_AGGREGATIONS),
  property: z.string().nullable(),
  filters: z.array(z.object({ property: z.string(), values: z.array(z.union([z.string(), z.number()])) })),
  type: z.enum(USAGE_METRIC_TYPES),
});
export type UsageMetric = z.infer<typeof usageMetricSchema>;

export const productSchema = z.object({
  id: z.string(),
  type: z.enum(PRODUCT_TYPES),
  measurement: measurementSchema.nullable().describe('Deprecated: to be replaced by a unit.'),
  usageMetric: usageMetricSchema.nullable().describe('What usage events bill it, or null.'),
  unit: z.string().nullable(),
  taxGroup: taxGroupSchema.nullable(),
  name: z.string(),
  description: z.string().nullable(),
  internalName: z.string().nullable(),
  invoiceVisibility: z.enum(INVOICE_VISIBILITIES),
  costCentre: z.string().nullable(),
  costCentre2: z.string().nullable(),
  customFields: customFieldValues,
  ...timestamps,
});
export type Product = z.infer<typeof productSchema>;

export const pricePlanPriceSchema = z.object({
  amount: z.number().describe(`${MAJOR}.`),
  createdAt: dateTime,
  updatedAt: dateTime.describe('When the amount last changed.'),
  tenantId: z.string().describe('Id of the organisation.'),
});

export const pricePlanSchema = z.object({
  id: z.string(),
  product: z.string().describe('Id of the product.'),
  type: z.enum(PRICE_PLAN_TYPES),
  currencyCode: z.string(),
  price: pricePlanPriceSchema.nullable().describe(`amount: ${MAJOR}; null for graduated, volume.`),
  tiers: z
    .array(
      z.object({
        upTo: z.number().int().nullable().describe('Last unit of the tier, inclusive; null: no limit.'),
        unitAmount: z.number().describe(`${MAJOR}.`),
        flatAmount: z.number().nullable().describe(`${MAJOR}, once per tier reached.`),
      }),
    )
    .nullable()
    .describe('graduated, volume; else null.'),
  packageSize: z.number().int().nullable().describe('Units per package (package); else null.'),
  internalName: z.string().nullable(),
  status: z.enum(PRICE_PLAN_STATUSES),
  applyTrial: z.boolean(),
  payInAdvance: z.boolean(),
  proRata: z.boolean(),
  freeUnits: z.number().int(),
  billingInterval: z.string(),
  showPricePerInterval: z.string(),
  custom: z.boolean().describe('true: made for one subscription, not in the catalogue.'),
  charge: z.string().nullable(),
  productSetOption: z.string().nullable(),
  inUse: z.boolean().describe('true: a plan or subscription uses it.'),
  ...timestamps,
});
export type PricePlan = z.infer<typeof pricePlanSchema>;

/** A price plan as get_price_plan shows it: with the prices it had. */
export const pricePlanDetailSchema = pricePlanSchema.extend({
  priceHistory: z
    .array(z.object({ amount: z.number().describe(`${MAJOR}.`), validFrom: dateTime }))
    .describe('Newest first, at most 20; a billing period is priced as at its start. [] for graduated, volume.'),
});
export type PricePlanDetail = z.infer<typeof pricePlanDetailSchema>;

export const familySchema = z.object({ id: z.string(), ...timestamps });
export type Family = z.infer<typeof familySchema>;

export const planChargeSchema = z.object({
  id: z.string(),
  product: productSchema,
  pricePlan: pricePlanSchema,
  quantity: z.number(),
});
export type PlanCharge = z.infer<typeof planChargeSchema>;

export const planAddonSchema = z.object({ id: z.string(), product: productSchema, pricePlan: pricePlanSchema });
export type PlanAddon = z.infer<typeof planAddonSchema>;

export const planSchema = z.object({
  id: z.string(),
  family: familySchema.describe('Plans a subscription may change between.'),
  code: z.string(),
  originProduct: productSchema.nullable(),
  allowCheckout: z.boolean(),
  status: z.enum(PLAN_STATUSES),
  changeBehaviour: z.enum(CHANGE_BEHAVIOURS),
  changeApplyBehaviour: z.enum(CHANGE_APPLY_BEHAVIOURS),
  trialPeriod: z.string().nullable().describe('Trial length (<n>D, <n>W or <n>M) from activation; null: no trial.'),
  name: z.string(),
  description: z.string().nullable(),
  charges: z.array(planChargeSchema).describe('Items every subscription gets.'),
  addons: z.array(planAddonSchema).describe('Items a subscription may add.'),
  ...timestamps,
});
export type Plan = z.infer<typeof planSchema>;

export const billingGroupSchema = z.object({
  id: z.string().describe('ULID.'),
  name: z.string(),
  type: z.enum(BILLING_GROUP_TYPES),
  customDay: z.number().int().nullable(),
  customMonth: z.number().int().nullable(),
  ...timestamps,
});
export type BillingGroup = z.infer<typeof billingGroupSchema>;

/** A fixed discount of a coupon or an inline discount: an amount of major units in a currency. */
export const fixedAmountSchema = z
  .object({ amount: z.number().describe(`${MAJOR}.`), currency: z.string() })
  .nullable()
  .describe(`Amount off per invoice; amount: ${MAJOR}.`);

export const couponSchema = z.object({
  id: z.string(),
  code: z.string(),
  name: z.string(),
  type: z.enum(COUPON_TYPES),
  frequency: z.enum(COUPON_FREQUENCIES),
  percentage: z.number().nullable(),
  fixedAmount: fixedAmountSchema,
  frequencyInterval: z.number().int().nullable(),
  isEnabled: z.boolean(),
  ...timestamps,
});
export type Coupon = z.infer<typeof couponSchema>;

export const customFieldSchema = z.object({
  id: z.string(),
  key: z.string(),
  entity: z.enum(CUSTOM_FIELD_ENTITIES),
  type: z.enum(CUSTOM_FIELD_TYPES),
  options: z.array(z.string()).nullable(),
  required: z.boolean(),
  createdAt: timestamps.createdAt,
});
export type CustomField = z.infer<typeof customFieldSchema>;

/** Input pieces shared by every operation that takes a decimal amount or a currency. */
export const currencyCodeInput = z
  .string()
  .refine(isCurrencyCode, { message: 'must be an ISO 4217 currency code in upper case, such as EUR, USD or CHF' })
  .refine((code) => notMoney(code) === undefined, {
    error: (issue) => `must be a currency one can bill in: ${String(issue.input)} is ${notMoney(String(issue.input))}, not money`,
  });

export const amountInput = (min: 'zero' | 'positive') =>
  (min === 'zero'
    ? z.number().min(0, { message: 'must be 0 or more', abort: true })
    : z.number().gt(0, { message: 'must be greater than 0', abort: true })
  ).refine(isDecimalAmount, {
    message: `must be a decimal of at most 15 significant digits with at most as many fractional digits as the currency's minor unit (EUR 2: 12.99, JPY 0: 4900, KWD 3: 1.234; never more than ${MAX_MINOR_DIGITS})`,
  });

/**
 * An amount of a price plan in major units: 0 or more. Its digits depend on the plan's type and
 * currency (a unit price up to 10 fractional digits, a flat amount the currency's minor-unit digits),
 * so the domain checks them, naming the field and the count allowed (`products.ts`).
 */
const priceAmountInput = z.number().min(0, { message: 'must be 0 or more' });

const interval = (what: string) =>
  z
    .string()
    .regex(BILLING_INTERVAL_RE, {
      message: 'must be a count of 1 to 999 followed by D, W, M or Y, such as 1M, 12M, 1Y or 2W',
    })
    .describe(what);

/**
 * Fields of a price plan made for one subscription (`customPricePlan` of order products) and, with
 * status and the two references added, of a catalogue price plan.
 */
export const customPricePlanShape = {
  type: z
    .enum(PRICE_PLAN_TYPES)
    .describe(
      "flat_fee: price per interval; per_unit: price x units over freeUnits (needs a metered product); package: price x started packs of packageSize over freeUnits; graduated: each unit at its tier's unitAmount; volume: all units at the total's tier.",
    ),
  currencyCode: currencyCodeInput.describe('ISO 4217 code, upper case, e.g. EUR.'),
  price: z
    .strictObject({
      amount: priceAmountInput.describe(`${MAJOR}; per_unit up to 10 fractional digits, else the currency's minor-unit digits (EUR 2, JPY 0, KWD 3).`),
    })
    .optional()
    .describe(`amount: ${MAJOR}; not with tiers.`),
  tiers: z
    .array(
      z.strictObject({
        upTo: z.number().int({ message: 'must be a whole number of units' }).min(1, { message: 'must be 1 or more' }).nullable().describe('Last unit, inclusive, increasing; null on the last only.'),
        unitAmount: priceAmountInput.describe(`${MAJOR}, up to 10 fractional digits.`),
        flatAmount: priceAmountInput.optional().describe(`${MAJOR}, once per tier reached.`),
      }),
    )
    .min(1, { message: 'must contain at least 1 tier' })
    .max(50, { message: 'must contain at most 50 tiers' })
    .optional()
    .describe('With freeUnits 0.'),
  packageSize: z.number().int({ message: 'must be a whole number of units' }).min(1, { message: 'must be 1 or more' }).optional().describe('Units per package.'),
  internalName: z
    .string()
    .max(255, { message: 'must be at most 255 characters' })
    .nullable()
    .optional()
    .describe('Name shown only internally.'),
  applyTrial: z.boolean().default(false).describe("true: free during a subscription's trial."),
  payInAdvance: z
    .boolean()
    .optional()
    .describe("Default true: billed at each interval's start; false: at its end, as usage always is."),
  proRata: z.boolean().default(false).describe('true: partial intervals billed by days; never usage.'),
  freeUnits: z
    .number()
    .int({ message: 'must be a whole number of units' })
    .min(0, { message: 'must be 0 or more' })
    .default(0)
    .describe('Units per interval not charged.'),
  billingInterval: interval('How often it is billed: a count and D, W, M or Y (days, weeks, months, years), e.g. 1M, 12M, 2W.'),
  showPricePerInterval: interval('Interval the price is shown per, same format; default billingInterval.').optional(),
};

export const pricePlanInputShape = {
  ...customPricePlanShape,
  status: z
    .enum(PRICE_PLAN_STATUSES)
    .default('active')
    .describe('inactive: no new items; archived: neither, nor new plans.'),
  charge: z
    .string()
    .min(1)
    .max(255)
    .nullable()
    .optional()
    .describe('Charge id in an external system, stored as given.'),
  productSetOption: z
    .string()
    .min(1)
    .max(255)
    .nullable()
    .optional()
    .describe('Product set option id in an external system, stored as given.'),
};
