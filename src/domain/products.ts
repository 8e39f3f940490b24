import { conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import {
  TIERED_TYPES,
  type PricePlan,
  type PricePlanDetail,
  type PricePlanStatus,
  type PricePlanType,
  type Product,
  type UsageMetric,
} from '../schemas/catalogue.js';
import type { PageRequest } from '../schemas/common.js';
import type { PriceChange, ProductRecord } from '../store/ports/products.js';
import type { Tx } from '../store/store.js';
import { validateCustomFields } from './customFields.js';
import { numberOfDecimalText } from '../values/decimal.js';
import { amountViolation } from '../values/money.js';
import { chargeKindOf } from './billing/schedule.js';
import { decimalTextOf, unitPriceProblem } from './pricing.js';

export interface ProductInput {
  type: Product['type'];
  measurement?: string | null | undefined;
  usageMetric?: UsageMetricInput | null | undefined;
  unit?: string | null | undefined;
  taxGroup?: string | null | undefined;
  name: string;
  description?: string | null | undefined;
  internalName?: string | null | undefined;
  invoiceVisibility: Product['invoiceVisibility'];
  costCentre?: string | null | undefined;
  costCentre2?: string | null | undefined;
  customFields?: Record<string, unknown> | undefined;
}

export interface UsageMetricInput {
  eventName: string;
  aggregation: UsageMetric['aggregation'];
  property?: string | null | undefined;
  filters?: UsageMetric['filters'] | undefined;
  type: UsageMetric['type'];
}

/** The metric as stored (property null for count, filters [] when none), or the violations of its rules. */
function usageMetricOf(input: UsageMetricInput | null, measurementId: string | null): { metric: UsageMetric | null; violations: Violation[] } {
  if (input === null) return { metric: null, violations: [] };
  const violations: Violation[] = [];
  const add = (field: string, message: string, code: string) => violations.push({ propertyPath: `usageMetric${field}`, message: `usageMetric${field} ${message}`, code });
  if (measurementId !== null) {
    add('', 'cannot be set on a product with a measurement: a product is billed by a measurement or by a usage metric, not both; send measurement: null with it', 'measurement_and_metric');
  }
  const property = input.property ?? null;
  if (input.aggregation === 'count' && property !== null) add('.property', 'is not taken by count, which counts events; omit it', 'property_not_allowed');
  if (input.aggregation !== 'count' && property === null) {
    add('.property', `is required for ${input.aggregation}: name the event property it aggregates`, 'property_required');
  }
  const filters = input.filters ?? [];
  const seen = new Set<string>();
  filters.forEach((f, i) => {
    if (seen.has(f.property)) add(`.filters[${i}].property`, `'${f.property}' is filtered twice; give one filter with every value`, 'duplicate_filter');
    seen.add(f.property);
  });
  return { metric: { eventName: input.eventName, aggregation: input.aggregation, property, filters, type: input.type }, violations };
}

/** The stored product with its measurement and tax group resolved to the objects their own tools return. */
async function resolve(tx: Tx, org: string, r: ProductRecord): Promise<Product> {
  const { measurementId, taxGroupId, ...rest } = r;
  return {
    ...rest,
    measurement: measurementId === null ? null : ((await tx.catalogue.getMeasurement(org, measurementId)) ?? null),
    taxGroup: taxGroupId === null ? null : ((await tx.catalogue.getTaxGroup(org, taxGroupId)) ?? null),
  };
}

/** Unknown measurement or tax group ids, each a violation on its own field. */
async function referenceViolations(
  tx: Tx,
  org: string,
  refs: { measurement?: string | null | undefined; taxGroup?: string | null | undefined },
): Promise<Violation[]> {
  const violations: Violation[] = [];
  if (refs.measurement != null && !(await tx.catalogue.getMeasurement(org, refs.measurement))) {
    violations.push({
      propertyPath: 'measurement',
      message: `measurement '${refs.measurement}' does not exist; pass the id of a measurement from list_measurements, or null`,
      code: 'not_found',
    });
  }
  if (refs.taxGroup != null && !(await tx.catalogue.getTaxGroup(org, refs.taxGroup))) {
    violations.push({
      propertyPath: 'taxGroup',
      message: `taxGroup '${refs.taxGroup}' does not exist; pass the id of a tax group from list_tax_groups, or null`,
      code: 'not_found',
    });
  }
  return violations;
}

export async function createProduct(tx: Tx, org: string, input: ProductInput, now: Date): Promise<Product> {
  const customFields = input.customFields ?? {};
  const usage = usageMetricOf(input.usageMetric ?? null, input.measurement ?? null);
  const violations = [
    ...(await referenceViolations(tx, org, input)),
    ...usage.violations,
    ...(await validateCustomFields(tx, org, 'product', customFields)),
  ];
  if (violations.length) throw invalidMany(violations);
  const at = now.toISOString();
  const record: ProductRecord = {
    id: newId(),
    type: input.type,
    measurementId: input.measurement ?? null,
    usageMetric: usage.metric,
    unit: input.unit ?? null,
    taxGroupId: input.taxGroup ?? null,
    name: input.name,
    description: input.description ?? null,
    internalName: input.internalName ?? null,
    invoiceVisibility: input.invoiceVisibility,
    costCentre: input.costCentre ?? null,
    costCentre2: input.costCentre2 ?? null,
    customFields,
    createdAt: at,
    updatedAt: at,
  };
  await tx.products.insert(org, record);
  return resolve(tx, org, record);
}

/** The product, or undefined when the organisation has none with this id. */
export async function findProduct(tx: Tx, org: string, id: string): Promise<Product | undefined> {
  const record = await tx.products.get(org, id);
  return record && resolve(tx, org, record);
}

export async function getProduct(tx: Tx, org: string, id: string): Promise<Product> {
  const product = await findProduct(tx, org, id);
  if (!product) throw notFound('Product', id);
  return product;
}

export async function listProducts(tx: Tx, org: string, page: PageRequest) {
  const { rows, total } = await tx.products.list(org, page);
  const products: Product[] = [];
  for (const r of rows) products.push(await resolve(tx, org, r));
  return { rows: products, total };
}

/** An omitted field (undefined) keeps its current value; null is a value and clears it. */
const given = <T>(value: T | undefined, current: T): T => (value === undefined ? current : value);

/** A metric's terms in a fixed order, to tell whether an update changes them. */
const metricKey = (m: UsageMetric | null) =>
  m === null ? null : JSON.stringify([m.eventName, m.aggregation, m.property, m.type, m.filters.map((f) => [f.property, f.values])]);

/** Subscription numbers named in a message, at most this many ("and 4 more" for the rest). */
const NAMED = 3;

const named = (numbers: string[], total: number) => `${numbers.join(', ')}${total > numbers.length ? ` and ${total - numbers.length} more` : ''}`;

/**
 * A change of what meters the product (its measurement or usage metric, `field`), refused while
 * something would bill the product's usage under the old terms as if they were the new: 409 while a
 * subscription item that has not ended bills by it (a price plan other than flat_fee), since the usage
 * recorded and not yet billed would be read with the new metric (the next invoice would bill none of
 * it); 422 when the product starts metering and a catalogue price plan of it other than flat_fee says
 * payInAdvance or proRata, which usage never is.
 */
async function assertMeteringMayChange(tx: Tx, org: string, current: ProductRecord, field: 'measurement' | 'usageMetric', now: Date): Promise<void> {
  const { numbers, total } = await tx.products.subscriptionsBillingUsage(org, current.id, now.toISOString(), NAMED);
  if (total > 0) {
    throw conflict(
      `${field} of product ${current.name} cannot change while subscriptions bill its usage: ${named(numbers, total)} have items of it that have not ended, and their usage recorded but not yet billed would be lost to the new ${field}. Create a new product with the new ${field} for new subscriptions (change_subscription_plan moves a subscription to a plan with it), or change it once those items have ended`,
    );
  }
  if (current.measurementId !== null || current.usageMetric !== null) return;
  const inAdvance = await tx.products.pricePlansInAdvanceOrProRata(org, current.id, NAMED + 1);
  if (inAdvance.length) {
    throw invalid(
      field,
      `${field} cannot be set: price plans ${inAdvance.slice(0, NAMED).map((p) => `${p.id} (${p.type})`).join(', ')}${inAdvance.length > NAMED ? ' and more' : ''} of the product would then bill its usage, which is billed in arrears and never prorated, but they say payInAdvance or proRata true; create a new product with the ${field} instead`,
      'price_plans_in_advance',
    );
  }
}

/**
 * PUT: omitted fields stay, null clears a nullable field; customFields, when given, replaces the
 * whole map and is validated like on create. A product priced per unit keeps its measurement; what
 * meters a product changes only as `assertMeteringMayChange` allows.
 */
export async function updateProduct(
  tx: Tx,
  org: string,
  id: string,
  patch: Partial<ProductInput>,
  now: Date,
): Promise<Product> {
  const current = await tx.products.get(org, id);
  if (!current) throw notFound('Product', id);
  const violations = await referenceViolations(tx, org, patch);
  if (patch.customFields !== undefined) violations.push(...(await validateCustomFields(tx, org, 'product', patch.customFields)));
  const measurementId = given(patch.measurement, current.measurementId);
  const usage =
    patch.usageMetric === undefined
      ? { metric: current.usageMetric, violations: current.usageMetric && measurementId ? usageMetricOf(current.usageMetric, measurementId).violations : [] }
      : usageMetricOf(patch.usageMetric, measurementId);
  violations.push(...usage.violations);
  if (measurementId === null && usage.metric === null && (current.measurementId !== null || current.usageMetric !== null) && (await tx.products.hasPricePlanOfType(org, id, 'per_unit'))) {
    violations.push({
      propertyPath: patch.measurement === null ? 'measurement' : 'usageMetric',
      message: 'cannot be removed: the product has per_unit price plans, which are priced per unit of its usage (a measurement or a usage metric)',
      code: 'measurement_in_use',
    });
  }
  if (violations.length) throw invalidMany(violations);
  if (measurementId !== current.measurementId || metricKey(usage.metric) !== metricKey(current.usageMetric)) {
    await assertMeteringMayChange(tx, org, current, measurementId !== current.measurementId ? 'measurement' : 'usageMetric', now);
  }
  const next: ProductRecord = {
    ...current,
    type: given(patch.type, current.type),
    measurementId,
    usageMetric: usage.metric,
    unit: given(patch.unit, current.unit),
    taxGroupId: given(patch.taxGroup, current.taxGroupId),
    name: given(patch.name, current.name),
    description: given(patch.description, current.description),
    internalName: given(patch.internalName, current.internalName),
    invoiceVisibility: given(patch.invoiceVisibility, current.invoiceVisibility),
    costCentre: given(patch.costCentre, current.costCentre),
    costCentre2: given(patch.costCentre2, current.costCentre2),
    customFields: given(patch.customFields, current.customFields),
    updatedAt: now.toISOString(),
  };
  await tx.products.update(org, next);
  return resolve(tx, org, next);
}

/** The fields of a price plan made for one subscription (order products' `customPricePlan`). */
export interface CustomPricePlanInput {
  type: PricePlanType;
  currencyCode: string;
  price?: { amount: number } | undefined;
  tiers?: Array<{ upTo: number | null; unitAmount: number; flatAmount?: number | undefined }> | undefined;
  packageSize?: number | undefined;
  internalName?: string | null | undefined;
  applyTrial: boolean;
  /** Omitted: true, except for a plan billing usage (see `insertPricePlan`), which is billed in arrears. */
  payInAdvance?: boolean | undefined;
  proRata: boolean;
  freeUnits: number;
  billingInterval: string;
  showPricePerInterval?: string | undefined;
}

/** A catalogue price plan's fields. */
export interface PricePlanInput extends CustomPricePlanInput {
  status: PricePlanStatus;
  charge?: string | null | undefined;
  productSetOption?: string | null | undefined;
}

/**
 * The rules of a price plan's prices (CONTRACT section 8, "Pricing models" and "Money and precision"),
 * each violation at its field under `path` (e.g. `products[0].customPricePlan.`): `price` for every
 * type but graduated and volume, which take `tiers` (upTo strictly increasing, null on the last tier
 * only); freeUnits above 0 for per_unit and package only, the types that price them; `packageSize` for
 * package only; flat amounts (a flat_fee or package price, a tier's flatAmount) with at most the
 * currency's minor-unit digits, unit prices (per_unit, a tier's unitAmount) with at most 10 fractional
 * digits.
 */
export function pricePlanViolations(input: CustomPricePlanInput, path = ''): Violation[] {
  const out: Violation[] = [];
  const add = (field: string, message: string, code: string) => out.push({ propertyPath: `${path}${field}`, message: `${path}${field} ${message}`, code });
  const currency = input.currencyCode;
  const unitPrice = (field: string, amount: number) => {
    const problem = unitPriceProblem(`${path}${field}`, amount, currency);
    if (problem) out.push({ propertyPath: `${path}${field}`, message: problem, code: 'amount_precision' });
  };
  const flatAmount = (field: string, amount: number) => {
    const v = amountViolation(`${path}${field}`, amount, currency);
    if (v) out.push(v);
  };
  const tiered = TIERED_TYPES.includes(input.type);
  if (tiered) {
    if (input.price !== undefined) add('price', `is not taken by ${input.type} plans: their prices are the tiers' unitAmount and flatAmount; omit price`, 'price_not_allowed');
    if (input.freeUnits !== 0) {
      add('freeUnits', `must be 0 for ${input.type} plans; a first tier at unitAmount 0 gives free units`, 'free_units_not_allowed');
    }
    if (input.tiers === undefined) {
      add('tiers', `is required for ${input.type} plans: at least one tier { upTo, unitAmount, flatAmount? }, the last with upTo null`, 'tiers_required');
    }
    const tiers = input.tiers ?? [];
    let previous: number | null = null;
    for (const [i, tier] of tiers.entries()) {
      const last = i === tiers.length - 1;
      const at = `tiers[${i}].upTo`;
      if (tier.upTo === null && !last) {
        add(at, `may be null on the last tier only; give tier ${i} an upper bound${previous === null ? '' : ` above ${previous}`}`, 'tier_bound');
      } else if (tier.upTo !== null && last) {
        add(at, `must be null on the last tier, which holds every unit above the previous tiers (got ${tier.upTo}); add a tier with upTo null`, 'tier_bound');
      } else if (tier.upTo !== null && previous !== null && tier.upTo <= previous) {
        add(at, `must be greater than tiers[${i - 1}].upTo (${previous}): upTo is strictly increasing (got ${tier.upTo})`, 'tier_order');
      }
      if (tier.upTo !== null) previous = tier.upTo;
      unitPrice(`tiers[${i}].unitAmount`, tier.unitAmount);
      if (tier.flatAmount !== undefined) flatAmount(`tiers[${i}].flatAmount`, tier.flatAmount);
    }
  } else {
    if (input.tiers !== undefined) add('tiers', `are taken by graduated and volume plans only, not ${input.type}; omit tiers`, 'tiers_not_allowed');
    if (input.price === undefined) add('price', `is required for ${input.type} plans: { amount } in major units`, 'price_required');
    else if (input.type === 'per_unit') unitPrice('price.amount', input.price.amount);
    else flatAmount('price.amount', input.price.amount);
    if (input.type === 'flat_fee' && input.freeUnits !== 0) {
      add('freeUnits', 'must be 0 for flat_fee plans, which charge the whole quantity: only per_unit and package plans take free units', 'free_units_not_allowed');
    }
  }
  if (input.type === 'package' && input.packageSize === undefined) {
    add('packageSize', 'is required for package plans: the whole number of units per package, 1 or more', 'package_size_required');
  } else if (input.type !== 'package' && input.packageSize !== undefined) {
    add('packageSize', `is taken by package plans only, not ${input.type}; omit packageSize`, 'package_size_not_allowed');
  }
  return out;
}

/**
 * Whether a price plan of `type` bills the product's usage (`chargeKindOf`): any type but flat_fee on
 * a product with a usage metric or a measurement. Such a plan is billed in arrears, never prorated.
 */
async function billsUsage(tx: Tx, org: string, product: ProductRecord, type: PricePlanType): Promise<boolean> {
  const measurement = product.measurementId === null ? null : ((await tx.catalogue.getMeasurement(org, product.measurementId)) ?? null);
  return chargeKindOf({ measurement, usageMetric: product.usageMetric }, type) !== 'flat';
}

/** payInAdvance or proRata true on a plan billing usage: refused rather than stored without effect. */
function usageTermViolations(input: CustomPricePlanInput, product: ProductRecord, path: string): Violation[] {
  const out: Violation[] = [];
  const what = `a ${input.type} plan of product ${product.name} bills its usage`;
  if (input.payInAdvance === true) {
    out.push({
      propertyPath: `${path}payInAdvance`,
      message: `${path}payInAdvance cannot be true: ${what}, which is billed at the end of each interval; omit payInAdvance or send false`,
      code: 'usage_in_arrears',
    });
  }
  if (input.proRata) {
    out.push({
      propertyPath: `${path}proRata`,
      message: `${path}proRata cannot be true: ${what}, which is measured over a partial interval, never prorated; omit proRata or send false`,
      code: 'usage_not_prorated',
    });
  }
  return out;
}

async function insertPricePlan(
  tx: Tx,
  org: string,
  product: ProductRecord,
  input: PricePlanInput,
  custom: boolean,
  at: string,
  path: string,
): Promise<PricePlan> {
  const violations: Violation[] = [];
  if (input.type === 'per_unit' && product.measurementId === null && product.usageMetric === null) {
    violations.push({
      propertyPath: `${path}type`,
      message: `type per_unit needs a product with a usage metric or a measurement, and product ${product.id} has neither; use flat_fee, or give the product a usageMetric with update_product first`,
      code: 'measurement_required',
    });
  }
  violations.push(...pricePlanViolations(input, path));
  const usage = await billsUsage(tx, org, product, input.type);
  if (usage) violations.push(...usageTermViolations(input, product, path));
  if (violations.length) throw invalidMany(violations);
  const pricePlan: PricePlan = {
    id: newId(),
    product: product.id,
    type: input.type,
    currencyCode: input.currencyCode,
    price: input.price ? { amount: input.price.amount, createdAt: at, updatedAt: at, tenantId: org } : null,
    tiers: input.tiers ? input.tiers.map((t) => ({ upTo: t.upTo, unitAmount: t.unitAmount, flatAmount: t.flatAmount ?? null })) : null,
    packageSize: input.packageSize ?? null,
    internalName: input.internalName ?? null,
    status: input.status,
    applyTrial: input.applyTrial,
    payInAdvance: input.payInAdvance ?? !usage,
    proRata: input.proRata,
    freeUnits: input.freeUnits,
    billingInterval: input.billingInterval,
    showPricePerInterval: input.showPricePerInterval ?? input.billingInterval,
    custom,
    charge: input.charge ?? null,
    productSetOption: input.productSetOption ?? null,
    inUse: false,
    createdAt: at,
    updatedAt: at,
  };
  const { price, tiers, inUse: _inUse, ...rest } = pricePlan;
  await tx.products.insertPricePlan(org, {
    ...rest,
    price: price ? decimalTextOf(price.amount) : null,
    tiers: tiers
      ? tiers.map((t) => ({ upTo: t.upTo, unitAmount: decimalTextOf(t.unitAmount), flatAmount: t.flatAmount === null ? null : decimalTextOf(t.flatAmount) }))
      : null,
  });
  return pricePlan;
}

async function productRecord(tx: Tx, org: string, productId: string): Promise<ProductRecord> {
  const product = await tx.products.get(org, productId);
  if (!product) throw notFound('Product', productId);
  return product;
}

export async function createPricePlan(tx: Tx, org: string, productId: string, input: PricePlanInput, now: Date): Promise<PricePlan> {
  const product = await productRecord(tx, org, productId);
  return insertPricePlan(tx, org, product, input, false, now.toISOString(), '');
}

/**
 * A price plan for one subscription's item (`custom: true`, status active), not listed in the
 * catalogue and not usable in plans. `path` prefixes the violation paths (e.g. `products[0].customPricePlan.`).
 */
export async function createCustomPricePlan(
  tx: Tx,
  org: string,
  productId: string,
  input: CustomPricePlanInput,
  now: Date,
  path = '',
): Promise<PricePlan> {
  const product = await productRecord(tx, org, productId);
  return insertPricePlan(tx, org, product, { ...input, status: 'active' }, true, now.toISOString(), path);
}

export async function getPricePlan(tx: Tx, org: string, id: string): Promise<PricePlan> {
  const pricePlan = await tx.products.getPricePlan(org, id);
  if (!pricePlan) throw notFound('Price plan', id);
  return pricePlan;
}

/** Entries of a price plan's `priceHistory` at most. */
export const PRICE_HISTORY_LIMIT = 20;

/**
 * The price plan with its prices over time, newest first (at most `PRICE_HISTORY_LIMIT`): each price
 * change's new price from its instant, then, when the list has room, the first price from the plan's
 * creation. A billing period is priced as at its start (`pricePlanAt`), so the entry valid then
 * explains an invoice line. Tiered plans have no price and no history.
 */
export async function getPricePlanWithHistory(tx: Tx, org: string, id: string): Promise<PricePlanDetail> {
  const plan = await getPricePlan(tx, org, id);
  if (plan.price === null) return { ...plan, priceHistory: [] };
  const changes = await tx.products.latestPriceChanges(org, id, PRICE_HISTORY_LIMIT);
  const priceHistory = changes.map((c) => ({ amount: numberOfDecimalText(c.newPrice), validFrom: c.effectiveFrom }));
  if (changes.length < PRICE_HISTORY_LIMIT) {
    const first = changes.at(-1);
    priceHistory.push({ amount: first ? numberOfDecimalText(first.oldPrice) : plan.price.amount, validFrom: plan.createdAt });
  }
  return { ...plan, priceHistory };
}

export async function listPricePlans(
  tx: Tx,
  org: string,
  productId: string,
  filter: { status?: PricePlanStatus | undefined },
  page: PageRequest,
) {
  const product = await productRecord(tx, org, productId);
  return tx.products.listPricePlans(org, product.id, filter, page);
}

export interface PricePlanPatch {
  status?: PricePlanStatus | undefined;
  internalName?: string | null | undefined;
  price?: { amount: number } | undefined;
}

/** What still works, per the status of the offer whose accepted terms a price plan prices (`assertNotAccepted`). */
const ACCEPTED_PRICE_WAY_OUT = {
  signing: 'To propose another price, withdraw the offer (archive_offer) and make a new one (create_offer).',
  awaiting_invoice_details: 'It can no longer be withdrawn: submit_offer_invoice_details completes it at the accepted price.',
  signed: (subscription: string) =>
    `To bill subscription ${subscription} another price from now on, end its item (update_subscription_item with billingEnd) and order the product at the new price (order_subscription_products).`,
  archived: 'Nothing bills it; to propose another price, make a new offer (create_offer).',
} as const;

/**
 * A custom price plan that prices an offer's accepted terms (the copy made when the offer left open,
 * or one ordered onto its subscription while it was open) does not change: the recipient accepted
 * that price, the page and signed document show it and the subscription is billed it. A change (a
 * field sent with another value) is a 409 naming the offer and what works in its status. Custom price
 * plans of other subscriptions, and one ordered after the offer was signed, change as catalogue ones.
 */
async function assertNotAccepted(tx: Tx, org: string, current: PricePlan, patch: PricePlanPatch): Promise<void> {
  if (!current.custom) return;
  const changed = [
    patch.status !== undefined && patch.status !== current.status ? 'status' : undefined,
    patch.internalName !== undefined && patch.internalName !== current.internalName ? 'internalName' : undefined,
    patch.price !== undefined && patch.price.amount !== current.price?.amount ? 'price' : undefined,
  ].filter((f): f is string => f !== undefined);
  if (changed.length === 0) return;
  const offer = await tx.offers.findByPricePlan(org, current.id);
  if (!offer?.termsFrozenAt || current.createdAt > offer.termsFrozenAt || offer.status === 'open') return;
  const subscription = (await tx.subscriptions.get(org, offer.subscriptionId))!;
  const wayOut = offer.status === 'signed' ? ACCEPTED_PRICE_WAY_OUT.signed(subscription.number) : ACCEPTED_PRICE_WAY_OUT[offer.status];
  throw conflict(
    `Price plan ${current.id} prices the terms accepted in offer ${offer.number} (${offer.status}), for subscription ${subscription.number}: an accepted price does not change, so ${changed.join(', ')} cannot change (send the current value or leave it out). ${wayOut}`,
  );
}

/**
 * PUT: omitted fields stay. A new `price` applies to the billing periods that start from now on;
 * periods that started earlier keep the price they started with (the change is recorded with its
 * instant). Graduated and volume plans are priced by their tiers, which do not change: a new price
 * plan takes new tiers. A price plan of an offer's accepted terms does not change (`assertNotAccepted`).
 */
export async function updatePricePlan(tx: Tx, org: string, id: string, patch: PricePlanPatch, now: Date): Promise<PricePlan> {
  const current = await getPricePlan(tx, org, id);
  await assertNotAccepted(tx, org, current, patch);
  const at = now.toISOString();
  let price = current.price === null ? null : decimalTextOf(current.price.amount);
  if (patch.price !== undefined) {
    if (current.price === null) {
      throw invalid('price', `price cannot be set on a ${current.type} price plan: it is priced by its tiers, which cannot change; create a new price plan with the new tiers`, 'price_not_allowed');
    }
    // Only the new price is judged: the plan's other terms stand as they were accepted.
    const violations = pricePlanViolations({ ...current, price: patch.price, tiers: undefined, packageSize: current.packageSize ?? undefined }).filter((v) =>
      v.propertyPath.startsWith('price'),
    );
    if (violations.length) throw invalidMany(violations);
    const next = decimalTextOf(patch.price.amount);
    if (next !== price) {
      await tx.products.insertPriceChange(org, { id: newId(), pricePlanId: id, effectiveFrom: at, oldPrice: price as string, newPrice: next });
      price = next;
    }
  }
  await tx.products.updatePricePlan(org, id, {
    status: patch.status ?? current.status,
    internalName: patch.internalName === undefined ? current.internalName : patch.internalName,
    price,
    updatedAt: at,
  });
  return getPricePlan(tx, org, id);
}

/** The price changes of a price plan, oldest first (see `pricePlanAt`). */
export async function priceChangesOf(tx: Tx, org: string, pricePlanId: string): Promise<PriceChange[]> {
  return tx.products.priceChanges(org, pricePlanId);
}

/**
 * The price plan as priced at an instant: the price a change after that instant replaced (the first
 * such change's old price), else its current price. A billing period is priced as at its start.
 */
export function pricePlanAt(plan: PricePlan, changes: readonly PriceChange[], instant: string): PricePlan {
  const ms = Date.parse(instant);
  const later = changes.find((c) => Date.parse(c.effectiveFrom) > ms);
  if (!later || plan.price === null) return plan;
  return { ...plan, price: { ...plan.price, amount: numberOfDecimalText(later.oldPrice) } };
}
