import { conflict, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import {
  UNLIMITED,
  type Entitlement,
  type EntitlementValue,
  type Feature,
  type FeatureConfig,
  type FeatureStatus,
  type FeatureType,
  type Level,
  type RangeConfig,
  type SubscriptionEntitlement,
} from '../schemas/features.js';
import type { FeatureFilter } from '../store/ports/features.js';
import type { Tx } from '../store/store.js';
import { loadSubscription } from './subscriptions/records.js';

export const FEATURE_ID_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const FEATURE_ID_MAX = 64;

/**
 * The feature status machine (CONTRACT section 5, "Entitlement features"): draft is only the
 * initial status; the same status again is a no-op; everything else is a 409.
 */
export const FEATURE_TRANSITIONS: Record<FeatureStatus, readonly FeatureStatus[]> = {
  draft: ['active', 'archived'],
  active: ['archived'],
  archived: ['active'],
};

/** Config as given on input: the shape is checked against the type here, not by the schema. */
export type FeatureConfigInput = Array<{ value: string | number; label: string }> | { min: number; max: number; unlimited?: boolean | undefined } | null;

export interface FeatureInput {
  id?: string | undefined;
  name: string;
  description?: string | null | undefined;
  status: 'draft' | 'active';
  type: FeatureType;
  config?: FeatureConfigInput | undefined;
  unit?: string | null | undefined;
}

const CONFIG_SHAPE: Record<FeatureType, string> = {
  switch: 'no config (omit it or send null)',
  custom: 'a non-empty array of levels [{ value, label }] with distinct string values, e.g. [{ value: "basic", label: "Basic" }]',
  quantity: `a non-empty array of levels [{ value, label }] with distinct values, each a non-negative integer or '${UNLIMITED}', e.g. [{ value: 10, label: "10 users" }, { value: "${UNLIMITED}", label: "Unlimited" }]`,
  range: `an object { min, max, unlimited? } with min <= max; unlimited true also allows the value '${UNLIMITED}'`,
};

function levelViolations(type: 'custom' | 'quantity', levels: Array<{ value: string | number; label: string }>): Violation[] {
  const out: Violation[] = [];
  if (levels.length === 0) {
    out.push({ propertyPath: 'config', message: `config of a ${type} feature must be ${CONFIG_SHAPE[type]}; got an empty array`, code: 'empty' });
  }
  const seen = new Set<string | number>();
  levels.forEach((level, i) => {
    const at = `config[${i}].value`;
    const v = level.value;
    if (type === 'custom' && typeof v !== 'string') {
      out.push({ propertyPath: at, message: `${at} of a custom feature must be a string (the level's name, e.g. "basic"); got ${v}`, code: 'invalid_level' });
    }
    if (type === 'quantity' && !(v === UNLIMITED || (typeof v === 'number' && Number.isInteger(v) && v >= 0))) {
      out.push({
        propertyPath: at,
        message: `${at} of a quantity feature must be a non-negative integer or '${UNLIMITED}'; got ${JSON.stringify(v)}`,
        code: 'invalid_level',
      });
    }
    if (seen.has(v)) {
      out.push({ propertyPath: at, message: `${at} ${JSON.stringify(v)} appears more than once; level values must be distinct`, code: 'duplicate' });
    }
    seen.add(v);
  });
  return out;
}

/** The config stored for a feature of this type, or the violations that make it unusable. */
function checkConfig(type: FeatureType, config: FeatureConfigInput | undefined): [FeatureConfig, Violation[]] {
  const given = config !== undefined && config !== null;
  const wrong = (): [FeatureConfig, Violation[]] => [
    null,
    [{ propertyPath: 'config', message: `config of a ${type} feature must be ${CONFIG_SHAPE[type]}`, code: 'config_mismatch' }],
  ];
  if (type === 'switch') return given ? wrong() : [null, []];
  if (!given) {
    return [null, [{ propertyPath: 'config', message: `config is required for a ${type} feature: ${CONFIG_SHAPE[type]}`, code: 'required' }]];
  }
  if (type === 'range') {
    if (Array.isArray(config)) return wrong();
    const range: RangeConfig = { min: config.min, max: config.max, unlimited: config.unlimited ?? false };
    if (range.min > range.max) {
      return [null, [{ propertyPath: 'config.max', message: `config.max (${range.max}) must not be less than config.min (${range.min})`, code: 'range_order' }]];
    }
    return [range, []];
  }
  if (!Array.isArray(config)) return wrong();
  const levels: Level[] = config.map((l) => ({ value: l.value, label: l.label }));
  return [levels, levelViolations(type, config)];
}

/** A slug from the name (`Max users` → `max-users`); `feature` when nothing usable is left. */
function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, FEATURE_ID_MAX)
    .replace(/-+$/, '');
  return slug === '' ? 'feature' : slug;
}

async function generatedId(tx: Tx, org: string, name: string): Promise<string> {
  const base = slugOf(name);
  if (!(await tx.features.get(org, base))) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, FEATURE_ID_MAX - suffix.length)}${suffix}`;
    if (!(await tx.features.get(org, candidate))) return candidate;
  }
}

export async function createFeature(tx: Tx, org: string, input: FeatureInput, now: Date): Promise<Feature> {
  const [config, violations] = checkConfig(input.type, input.config);
  if (input.id !== undefined && (await tx.features.get(org, input.id))) {
    violations.push({
      propertyPath: 'id',
      message: `id must be unique: a feature '${input.id}' already exists; choose another slug or omit id to have one generated from the name`,
      code: 'unique',
    });
  }
  if (violations.length) throw invalidMany(violations);
  const at = now.toISOString();
  const feature: Feature = {
    id: input.id ?? (await generatedId(tx, org, input.name)),
    name: input.name,
    description: input.description ?? null,
    status: input.status,
    type: input.type,
    config,
    unit: input.unit ?? null,
    createdAt: at,
    updatedAt: at,
  };
  await tx.features.insert(org, feature);
  return feature;
}

export async function getFeature(tx: Tx, org: string, id: string): Promise<Feature> {
  const feature = await tx.features.get(org, id);
  if (!feature) throw notFound('Feature', id);
  return feature;
}

export async function listFeatures(tx: Tx, org: string, filter: FeatureFilter, page: PageRequest) {
  return tx.features.list(org, filter, page);
}

/**
 * PUT status: draft → active, archived → active, active → archived, draft → archived; the same
 * status is a no-op. On a change to active with applyToExistingSubscriptions every existing
 * subscription gains the feature; without it only subscriptions created from now on do.
 */
export async function updateFeatureStatus(
  tx: Tx,
  org: string,
  id: string,
  input: { status: FeatureStatus; applyToExistingSubscriptions: boolean },
  now: Date,
): Promise<Feature> {
  const current = await getFeature(tx, org, id);
  if (current.status === input.status) return current;
  const allowed = FEATURE_TRANSITIONS[current.status];
  if (!allowed.includes(input.status)) {
    throw conflict(
      `Cannot change feature ${current.id} from ${current.status} to ${input.status}: from ${current.status} only ${allowed.join(' or ')} is allowed (draft is only the initial status)`,
    );
  }
  const at = now.toISOString();
  const next: Feature = { ...current, status: input.status, updatedAt: at };
  await tx.features.updateStatus(org, next);
  if (input.status === 'active' && input.applyToExistingSubscriptions) await tx.features.grantToAllSubscriptions(org, id, at);
  return next;
}

export interface EntitlementInput {
  product?: string | undefined;
  pricePlan?: string | undefined;
  value?: EntitlementValue | undefined;
}

/** The value an entitlement of this feature grants, or the violation that rejects it. */
function checkValue(feature: Feature, value: EntitlementValue | undefined): [EntitlementValue, Violation?] {
  const reject = (expected: string): [EntitlementValue, Violation] => [
    false,
    {
      propertyPath: 'value',
      message: `value of an entitlement of ${feature.type} feature ${feature.id} must be ${expected}; got ${value === undefined ? 'nothing' : JSON.stringify(value)}`,
      code: 'invalid_value',
    },
  ];
  if (feature.type === 'switch') {
    if (value === undefined) return [true];
    return typeof value === 'boolean' ? [value] : reject('true or false (default true)');
  }
  if (feature.type === 'range') {
    const range = feature.config as RangeConfig;
    const expected = `a number from ${range.min} to ${range.max}${range.unlimited ? ` or '${UNLIMITED}'` : ''}`;
    if (value === UNLIMITED && range.unlimited) return [value];
    if (typeof value === 'number' && value >= range.min && value <= range.max) return [value];
    return reject(expected);
  }
  const levels = feature.config as Level[];
  if (value !== undefined && levels.some((l) => l.value === value)) return [value];
  return reject(`the value of one of its levels: ${levels.map((l) => JSON.stringify(l.value)).join(', ')}`);
}

/**
 * A feature granted by a product or a price plan with a value. Draft features take entitlements
 * (effective once active); archived ones take none (409).
 */
export async function createEntitlement(tx: Tx, org: string, featureId: string, input: EntitlementInput, now: Date): Promise<Entitlement> {
  const feature = await getFeature(tx, org, featureId);
  if (feature.status === 'archived') {
    throw conflict(
      `Feature ${feature.id} is archived and takes no new entitlements (existing ones keep working); activate it again with update_feature_status first`,
    );
  }
  const violations: Array<Violation | undefined> = [];
  if ((input.product === undefined) === (input.pricePlan === undefined)) {
    violations.push({
      propertyPath: 'product',
      message: 'give exactly one of product (a product id from list_products) or pricePlan (a price plan id from list_price_plans)',
      code: 'target_choice',
    });
  }
  if (input.product !== undefined && !(await tx.products.get(org, input.product))) {
    violations.push({ propertyPath: 'product', message: `product '${input.product}' does not exist; pick one from list_products`, code: 'not_found' });
  }
  if (input.pricePlan !== undefined && !(await tx.products.getPricePlan(org, input.pricePlan))) {
    violations.push({
      propertyPath: 'pricePlan',
      message: `pricePlan '${input.pricePlan}' does not exist; pick one from list_price_plans of a product`,
      code: 'not_found',
    });
  }
  const [value, valueViolation] = checkValue(feature, input.value);
  violations.push(valueViolation);
  const present = violations.filter((v): v is Violation => v !== undefined);
  if (present.length) throw invalidMany(present);
  const target = { product: input.product ?? null, pricePlan: input.pricePlan ?? null };
  // One value per feature on a product or price plan: a second would leave its subscriptions two.
  const existing = await tx.features.findEntitlement(org, feature.id, target);
  if (existing) {
    const on = target.product !== null ? `product ${target.product}` : `price plan ${target.pricePlan}`;
    throw conflict(`${on} already has an entitlement to feature ${feature.id} (${existing.id}, value ${JSON.stringify(existing.value)}): one value per feature on a product or price plan`);
  }
  const entitlement: Entitlement = { id: newId(), feature: feature.id, ...target, value, createdAt: now.toISOString() };
  await tx.features.insertEntitlement(org, entitlement);
  return entitlement;
}

/** A new subscription gains every feature active at its creation. */
export async function grantActiveFeatures(tx: Tx, org: string, subscriptionId: string, now: Date): Promise<void> {
  await tx.features.grantActiveFeatures(org, subscriptionId, now.toISOString());
}

/**
 * What an active subscription is entitled to now: the entitlements of the features it has gained
 * (active or archived, never draft) on the products or price plans of its current items. A
 * subscription in any other status is entitled to nothing.
 */
export async function listSubscriptionEntitlements(
  tx: Tx,
  org: string,
  subscriptionId: string,
  page: PageRequest,
  now: Date,
): Promise<{ rows: SubscriptionEntitlement[]; total: number }> {
  const subscription = await loadSubscription(tx, org, subscriptionId);
  if (subscription.status !== 'active') return { rows: [], total: 0 };
  const { rows, total } = await tx.features.subscriptionEntitlements(org, subscription.id, now.toISOString(), page);
  return {
    rows: rows.map(({ entitlement, feature }) => ({
      feature,
      value: entitlement.value,
      entitlement: entitlement.id,
      source: entitlement.product !== null ? { product: entitlement.product } : { pricePlan: entitlement.pricePlan as string },
    })),
    total,
  };
}
