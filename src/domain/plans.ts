import { conflict, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { Family, Plan, PlanStatus, PricePlan, Product } from '../schemas/catalogue.js';
import type { PageRequest } from '../schemas/common.js';
import type { PlanChargeRecord, PlanItemRecord, PlanRecord } from '../store/ports/plans.js';
import type { Tx } from '../store/store.js';
import { memo } from './memo.js';
import { findProduct } from './products.js';
import { microsOfNumber, numberOfMicros, QUANTITY_DIGITS } from './quantity.js';

/** Plan charge quantities: at most 6 fractional digits, kept as integers of millionths. */
export { QUANTITY_DIGITS };

export interface PlanAddonInput {
  product: string;
  pricePlan: string;
}

export interface PlanChargeInput extends PlanAddonInput {
  /** Omitted: 1. Refused for a product with a usage metric, whose usage events drive its quantity. */
  quantity?: number | undefined;
}

export interface PlanInput {
  code: string;
  name: string;
  description?: string | null | undefined;
  status: PlanStatus;
  allowCheckout: boolean;
  changeBehaviour: Plan['changeBehaviour'];
  changeApplyBehaviour: Plan['changeApplyBehaviour'];
  trialPeriod?: string | null | undefined;
  originProduct?: string | null | undefined;
  family?: string | undefined;
  charges: PlanChargeInput[];
  addons?: PlanAddonInput[] | undefined;
}

/** Subscription numbers named in a message, at most this many ("and 4 more" for the rest). */
const NAMED = 3;

/** Status changes of an existing plan; repeating the current status is a no-op. */
const TRANSITIONS: Record<PlanStatus, PlanStatus[]> = {
  draft: ['active', 'archived'],
  active: ['archived'],
  archived: ['active'],
};

interface Currency {
  code: string;
  /** Where it comes from, for messages: `charges[0].pricePlan`. */
  where: string;
}

/**
 * Each charge and addon: product and price plan exist, belong together, are catalogue prices, and
 * all share one currency (`currency`, when given, is that of the items an update keeps).
 */
async function itemViolations(
  tx: Tx,
  org: string,
  lists: Array<[string, PlanAddonInput[]]>,
  kept?: Currency,
): Promise<Violation[]> {
  const violations: Violation[] = [];
  let currency = kept;
  for (const [name, items] of lists) {
    for (const [i, item] of items.entries()) {
      const at = `${name}[${i}]`;
      const product = await tx.products.get(org, item.product);
      if (!product) {
        violations.push({
          propertyPath: `${at}.product`,
          message: `${at}.product '${item.product}' does not exist; pass the id of a product from list_products`,
          code: 'not_found',
        });
      }
      const pricePlan = await tx.products.getPricePlan(org, item.pricePlan);
      const fail = (message: string, code: string) => violations.push({ propertyPath: `${at}.pricePlan`, message, code });
      if (!pricePlan) {
        fail(`${at}.pricePlan '${item.pricePlan}' does not exist; pass the id of a price plan from list_price_plans of the product`, 'not_found');
        continue;
      }
      if (product && pricePlan.product !== product.id) {
        fail(
          `${at}.pricePlan ${pricePlan.id} belongs to product ${pricePlan.product}, not to ${product.id}; pick one of list_price_plans of product ${product.id}`,
          'price_plan_of_other_product',
        );
      } else if (pricePlan.custom) {
        fail(`${at}.pricePlan ${pricePlan.id} is a custom price plan of one subscription; plans take catalogue price plans only`, 'custom_price_plan');
      } else if (pricePlan.status === 'archived') {
        fail(`${at}.pricePlan ${pricePlan.id} is archived and cannot be used in a plan; pick an active or inactive price plan`, 'archived');
      } else if (currency && pricePlan.currencyCode !== currency.code) {
        fail(
          `${at}.pricePlan is in ${pricePlan.currencyCode} but ${currency.where} is in ${currency.code}; all charges and addons of a plan share one currency`,
          'currency_mismatch',
        );
      } else {
        currency ??= { code: pricePlan.currencyCode, where: `${at}.pricePlan` };
      }
    }
  }
  return violations;
}

/**
 * A quantity given for a charge whose product has a usage metric: its usage events alone drive the
 * item's quantity (interface section 9), as order_subscription_products and update_subscription_item
 * enforce for items.
 */
async function quantityViolations(tx: Tx, org: string, charges: PlanChargeInput[]): Promise<Violation[]> {
  const violations: Violation[] = [];
  for (const [i, charge] of charges.entries()) {
    if (charge.quantity === undefined) continue;
    const product = await tx.products.get(org, charge.product);
    if (!product?.usageMetric) continue;
    violations.push({
      propertyPath: `charges[${i}].quantity`,
      message: `charges[${i}].quantity cannot be set: product ${product.name} has a usage metric (event ${product.usageMetric.eventName}), and since the third quarter of 2026 usage events alone drive such an item's quantity (interface section 9); omit quantity`,
      code: 'usage_metric_quantity',
    });
  }
  return violations;
}

async function codeViolation(tx: Tx, org: string, code: string, exceptId?: string): Promise<Violation | undefined> {
  const other = await tx.plans.findByCode(org, code);
  if (!other || other.id === exceptId) return undefined;
  return { propertyPath: 'code', message: `code must be unique: plan ${other.id} already has the code '${code}'`, code: 'unique' };
}

async function originViolation(tx: Tx, org: string, originProduct: string | null | undefined): Promise<Violation | undefined> {
  if (originProduct == null || (await tx.products.get(org, originProduct))) return undefined;
  return {
    propertyPath: 'originProduct',
    message: `originProduct '${originProduct}' does not exist; pass the id of a product from list_products, or null`,
    code: 'not_found',
  };
}

async function familyViolation(tx: Tx, org: string, family: string | undefined): Promise<Violation | undefined> {
  if (family === undefined || (await tx.plans.getFamily(org, family))) return undefined;
  return {
    propertyPath: 'family',
    message: `family '${family}' does not exist; pass the family id of an existing plan (get_plan shows family.id), or omit it to start a new family`,
    code: 'not_found',
  };
}

function throwIfAny(violations: Array<Violation | undefined>): void {
  const found = violations.filter((v): v is Violation => v !== undefined);
  if (found.length) throw invalidMany(found);
}

/**
 * Item records for the new lists. An entry with the same product and price plan as a previous item
 * of the same kind keeps that item's id, so whatever refers to it stays valid.
 */
function itemRecords<T extends PlanItemRecord>(
  input: PlanAddonInput[],
  previous: T[],
  extra: (entry: PlanAddonInput, index: number) => Omit<T, keyof PlanItemRecord>,
): T[] {
  const unused = [...previous];
  return input.map((entry, i) => {
    const match = unused.findIndex((p) => p.productId === entry.product && p.pricePlanId === entry.pricePlan);
    const id = match === -1 ? newId() : (unused.splice(match, 1)[0] as T).id;
    return { id, productId: entry.product, pricePlanId: entry.pricePlan, ...extra(entry, i) } as T;
  });
}

function quantityE6(quantity: number): number {
  const scaled = microsOfNumber(quantity);
  if (scaled === undefined) throw new Error(`not a quantity with at most ${QUANTITY_DIGITS} fractional digits: ${quantity}`);
  return scaled;
}

function chargeRecords(charges: PlanChargeInput[], previous: PlanChargeRecord[]): PlanChargeRecord[] {
  return itemRecords<PlanChargeRecord>(charges, previous, (_entry, i) => ({
    quantityE6: quantityE6((charges[i] as PlanChargeInput).quantity ?? 1),
  }));
}

/** Products and price plans by id, for the plans of one read to share (a page of subscriptions reads each once). */
export interface CatalogueLookups {
  products: Map<string, Promise<Product>>;
  pricePlans: Map<string, Promise<PricePlan>>;
}

/** The stored plan with its products and price plans resolved (read once per `lookups`). */
async function resolve(tx: Tx, org: string, r: PlanRecord, lookups: CatalogueLookups = { products: new Map(), pricePlans: new Map() }): Promise<Plan> {
  const product = (id: string): Promise<Product> =>
    memo(lookups.products, id, async () => {
      const p = await findProduct(tx, org, id);
      if (!p) throw new Error(`plan ${r.id} refers to missing product ${id}`);
      return p;
    });
  const pricePlan = (id: string): Promise<PricePlan> =>
    memo(lookups.pricePlans, id, async () => {
      const p = await tx.products.getPricePlan(org, id);
      if (!p) throw new Error(`plan ${r.id} refers to missing price plan ${id}`);
      return p;
    });
  const { originProductId, charges, addons, ...rest } = r;
  const resolvedCharges: Plan['charges'] = [];
  for (const c of charges) {
    resolvedCharges.push({
      id: c.id,
      product: await product(c.productId),
      pricePlan: await pricePlan(c.pricePlanId),
      quantity: numberOfMicros(c.quantityE6),
    });
  }
  const resolvedAddons: Plan['addons'] = [];
  for (const a of addons) {
    resolvedAddons.push({ id: a.id, product: await product(a.productId), pricePlan: await pricePlan(a.pricePlanId) });
  }
  return {
    ...rest,
    originProduct: originProductId === null ? null : await product(originProductId),
    charges: resolvedCharges,
    addons: resolvedAddons,
  };
}

export async function createPlan(tx: Tx, org: string, input: PlanInput, now: Date): Promise<Plan> {
  const addons = input.addons ?? [];
  throwIfAny([
    await codeViolation(tx, org, input.code),
    await originViolation(tx, org, input.originProduct),
    await familyViolation(tx, org, input.family),
    ...(await itemViolations(tx, org, [
      ['charges', input.charges],
      ['addons', addons],
    ])),
    ...(await quantityViolations(tx, org, input.charges)),
  ]);
  const at = now.toISOString();
  let family: Family | undefined = input.family === undefined ? undefined : await tx.plans.getFamily(org, input.family);
  if (!family) {
    family = { id: newId(), createdAt: at, updatedAt: at };
    await tx.plans.insertFamily(org, family);
  }
  const record: PlanRecord = {
    id: newId(),
    family,
    code: input.code,
    name: input.name,
    description: input.description ?? null,
    status: input.status,
    allowCheckout: input.allowCheckout,
    changeBehaviour: input.changeBehaviour,
    changeApplyBehaviour: input.changeApplyBehaviour,
    trialPeriod: input.trialPeriod ?? null,
    originProductId: input.originProduct ?? null,
    charges: chargeRecords(input.charges, []),
    addons: itemRecords(addons, [], () => ({})),
    createdAt: at,
    updatedAt: at,
  };
  await tx.plans.insert(org, record);
  return resolve(tx, org, record);
}

/** The plan with its products and price plans, or undefined when the organisation has none with this id. */
/** The plan a reference names: its id, else its code (as a coupon by id or code). */
async function planRecordOf(tx: Tx, org: string, ref: string): Promise<PlanRecord | undefined> {
  return (await tx.plans.get(org, ref)) ?? (await tx.plans.findByCode(org, ref));
}

export async function findPlan(tx: Tx, org: string, ref: string, lookups?: CatalogueLookups): Promise<Plan | undefined> {
  const record = await planRecordOf(tx, org, ref);
  return record && resolve(tx, org, record, lookups);
}

export async function getPlan(tx: Tx, org: string, id: string, lookups?: CatalogueLookups): Promise<Plan> {
  const plan = await findPlan(tx, org, id, lookups);
  if (!plan) throw notFound('Plan', id);
  return plan;
}

export async function listPlans(tx: Tx, org: string, filter: { status?: PlanStatus | undefined }, page: PageRequest) {
  const { rows, total } = await tx.plans.list(org, filter, page);
  const plans: Plan[] = [];
  for (const r of rows) plans.push(await resolve(tx, org, r));
  return { rows: plans, total };
}

/** An omitted field (undefined) keeps its current value; null is a value and clears it. */
const given = <T>(value: T | undefined, current: T): T => (value === undefined ? current : value);

/**
 * PUT: omitted fields stay, null clears description or originProduct; charges and addons, when
 * given, replace the whole list. Status moves draft → active | archived, active → archived,
 * archived → active; anything else is a 409.
 */
export async function updatePlan(tx: Tx, org: string, ref: string, patch: Partial<PlanInput>, now: Date): Promise<Plan> {
  const current = await planRecordOf(tx, org, ref);
  if (!current) throw notFound('Plan', ref);
  const id = current.id;
  if (patch.status !== undefined && patch.status !== current.status && !TRANSITIONS[current.status].includes(patch.status)) {
    const allowed = TRANSITIONS[current.status];
    throw conflict(
      `plan ${id} is ${current.status} and cannot become ${patch.status}; from ${current.status} the status may change to ${allowed.join(' or ')} only`,
    );
  }
  const lists: Array<[string, PlanAddonInput[]]> = [];
  if (patch.charges !== undefined) lists.push(['charges', patch.charges]);
  if (patch.addons !== undefined) lists.push(['addons', patch.addons]);
  throwIfAny([
    patch.code === undefined ? undefined : await codeViolation(tx, org, patch.code, id),
    await originViolation(tx, org, patch.originProduct),
    await familyViolation(tx, org, patch.family),
    ...(await itemViolations(tx, org, lists, await keptCurrency(tx, org, current, patch))),
    ...(await quantityViolations(tx, org, patch.charges ?? [])),
  ]);
  if (lists.length) await assertCurrencyKept(tx, org, current, patch);
  const family = patch.family === undefined ? current.family : ((await tx.plans.getFamily(org, patch.family)) as Family);
  const next: PlanRecord = {
    ...current,
    family,
    code: given(patch.code, current.code),
    name: given(patch.name, current.name),
    description: given(patch.description, current.description),
    status: given(patch.status, current.status),
    allowCheckout: given(patch.allowCheckout, current.allowCheckout),
    changeBehaviour: given(patch.changeBehaviour, current.changeBehaviour),
    changeApplyBehaviour: given(patch.changeApplyBehaviour, current.changeApplyBehaviour),
    trialPeriod: given(patch.trialPeriod, current.trialPeriod),
    originProductId: given(patch.originProduct, current.originProductId),
    charges: patch.charges === undefined ? current.charges : chargeRecords(patch.charges, current.charges),
    addons: patch.addons === undefined ? current.addons : itemRecords(patch.addons, current.addons, () => ({})),
    updatedAt: now.toISOString(),
  };
  await tx.plans.update(org, next);
  return resolve(tx, org, next);
}

/** The currency of a plan's items: that of its first charge's price plan (all share one). */
async function currencyOf(tx: Tx, org: string, charges: PlanAddonInput[]): Promise<string> {
  const first = charges[0] as PlanAddonInput;
  return ((await tx.products.getPricePlan(org, first.pricePlan)) as PricePlan).currencyCode;
}

/**
 * New charges or addons in another currency than the plan's, refused (409) while subscriptions that
 * are not cancelled or terminated use the plan or wait to change to it: they are billed in the plan's
 * currency, and their plan would show charges their items are not priced in.
 */
async function assertCurrencyKept(tx: Tx, org: string, current: PlanRecord, patch: Partial<PlanInput>): Promise<void> {
  const toEntry = (c: PlanItemRecord): PlanAddonInput => ({ product: c.productId, pricePlan: c.pricePlanId });
  const was = await currencyOf(tx, org, current.charges.map(toEntry));
  const next = await currencyOf(tx, org, patch.charges ?? current.charges.map(toEntry));
  if (next === was) return;
  const { numbers, total } = await tx.plans.openSubscriptions(org, current.id, NAMED);
  if (total === 0) return;
  throw conflict(
    `plan ${current.code} cannot move from ${was} to ${next}: subscriptions ${numbers.join(', ')}${total > numbers.length ? ` and ${total - numbers.length} more` : ''}, not cancelled or terminated, use it and are billed in ${was}. Keep its charges and addons in ${was}, or create a new plan in ${next}`,
  );
}

/** When an update replaces only one of charges and addons, the currency of the list it keeps. */
async function keptCurrency(tx: Tx, org: string, current: PlanRecord, patch: Partial<PlanInput>): Promise<Currency | undefined> {
  if ((patch.charges === undefined) === (patch.addons === undefined)) return undefined;
  const [kept, name] = patch.charges === undefined ? [current.charges, 'charges'] : [current.addons, 'addons'];
  const first = kept[0];
  const pricePlan = first && (await tx.products.getPricePlan(org, first.pricePlanId));
  return pricePlan ? { code: pricePlan.currencyCode, where: `the plan's current ${name}` } : undefined;
}
