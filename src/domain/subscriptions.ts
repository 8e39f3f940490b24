import type { DateTime } from 'luxon';
import { conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { Plan, PricePlan, Product } from '../schemas/catalogue.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer } from '../schemas/customers.js';
import type { Period, Subscription, SubscriptionItem } from '../schemas/subscriptions.js';
import type {
  AppliedDiscountRecord,
  CancellationReason,
  InlineDiscount,
  ItemRecord,
  PeriodRecord,
  SubscriptionRecord,
  SubscriptionStatus,
} from '../store/repos/subscriptions.js';
import type { Tx } from '../store/store.js';
import { findBillingGroup } from './billingGroups.js';
import { getInvoiceAddress, getPaymentMethod } from './billingDetails.js';
import { findCoupon } from './coupons.js';
import { customerIdOf, findCustomer } from './customers.js';
import { validateCustomFields } from './customFields.js';
import { grantActiveFeatures } from './features.js';
import { boundary, parseInterval, termsAfter, toIso, zoned, type Alignment, type Interval } from './dates.js';
import { findPlan, getPlan } from './plans.js';
import { createCustomPricePlan, getPricePlan, getProduct, pricePlanViolations, type CustomPricePlanInput } from './products.js';
import { amountViolation } from './money.js';
import { assertTransition } from './subscriptionStates.js';
import { recentMeasurementValues } from './usage.js';

export interface PeriodInput {
  contractPeriod: string;
  cancellationPeriod: string;
}

/** Subscriptions that can no longer change (CONTRACT section 5: cancelled and terminated are final). */
const FINAL: readonly SubscriptionStatus[] = ['cancelled', 'terminated'];

// ---------------------------------------------------------------------------------------------
// Reading: a record becomes the resource of interface 2.1, every derived field computed as of `now`.

/** Resources shared by the subscriptions of one list page, loaded once each. */
interface Lookups {
  products: Map<string, Promise<Product>>;
  pricePlans: Map<string, Promise<PricePlan>>;
  plans: Map<string, Promise<Plan>>;
  customers: Map<string, Promise<Customer>>;
}

const newLookups = (): Lookups => ({ products: new Map(), pricePlans: new Map(), plans: new Map(), customers: new Map() });

function cached<T>(map: Map<string, Promise<T>>, id: string, load: () => Promise<T>): Promise<T> {
  let hit = map.get(id);
  if (!hit) {
    hit = load();
    map.set(id, hit);
  }
  return hit;
}

function toPeriods(records: PeriodRecord[]): Period[] {
  return records.map((p) => ({ ...p, contractPeriodCount: parseInterval(p.contractPeriod).count }));
}

function intervalsOf(records: readonly PeriodInput[]): Array<{ contractPeriod: Interval; cancellationPeriod: Interval }> {
  return records.map((p) => ({ contractPeriod: parseInterval(p.contractPeriod), cancellationPeriod: parseInterval(p.cancellationPeriod) }));
}

/** Term ends that a cancellation can still reach as of `now` (the cancellation period before each end). */
function reachableTermEnds(start: DateTime, periods: readonly PeriodInput[], now: DateTime, until?: DateTime): DateTime[] {
  const out: DateTime[] = [];
  let after = now;
  for (let round = 0; round < 20 && out.length < 3; round++) {
    const terms = termsAfter(start, intervalsOf(periods), after, 50);
    for (const term of terms) {
      const c = term.cancellationPeriod;
      const noticeBy = term.end.minus({ [{ D: 'days', W: 'weeks', M: 'months', Y: 'years' }[c.unit]]: c.count });
      if (noticeBy >= now) out.push(term.end);
      if (until && term.end >= until) return out;
      if (!until && out.length === 3) return out;
    }
    after = terms[terms.length - 1]!.end;
  }
  return out;
}

export function alignmentOf(group: { type: string; customDay: number | null } | undefined): Alignment {
  if (group?.type === 'end_of_month') return { type: 'end_of_month' };
  if (group?.type === 'custom_day' && group.customDay) return { type: 'custom_day', customDay: group.customDay };
  return { type: 'anniversary' };
}

function itemStatus(record: SubscriptionRecord, item: ItemRecord, now: Date): SubscriptionItem['status'] {
  if (item.billingEnd && Date.parse(item.billingEnd) <= now.getTime()) return 'ended';
  return record.status;
}

async function toResource(tx: Tx, org: string, record: SubscriptionRecord, now: Date, lookups?: Lookups): Promise<Subscription> {
  const cache = lookups ?? newLookups();
  const customer = await cached(cache.customers, record.customerId, async () => (await tx.customers.get(org, record.customerId)) as Customer);
  const plan = await cached(cache.plans, record.planId, () => getPlan(tx, org, record.planId));
  const items = await tx.subscriptions.items(org, [record.id]);
  const discounts = await tx.subscriptions.discounts(
    org,
    items.map((i) => i.id),
  );
  const billingGroup = record.billingGroupId ? await findBillingGroup(tx, org, record.billingGroupId) : undefined;
  const paymentMethod = record.paymentMethodId ? await getPaymentMethod(tx, org, record.customerId, record.paymentMethodId) : undefined;
  const invoiceAddress = record.invoiceAddressId
    ? await getInvoiceAddress(tx, org, record.customerId, record.invoiceAddressId)
    : undefined;
  const subscriptionPeriods = toPeriods(record.periods);

  const itemResources: SubscriptionItem[] = [];
  for (const item of items) {
    const product = await cached(cache.products, item.productId, () => getProduct(tx, org, item.productId));
    const pricePlan = await cached(cache.pricePlans, item.pricePlanId, () => getPricePlan(tx, org, item.pricePlanId));
    const applied = [];
    for (const d of discounts.filter((x) => x.itemId === item.id)) {
      applied.push({
        id: d.id,
        coupon: d.couponId ? ((await findCoupon(tx, org, d.couponId)) ?? null) : null,
        status: d.status,
        discount: d.discount,
        appliedIntervals: d.appliedIntervals,
      });
    }
    const measurementValues = await recentMeasurementValues(tx, org, item, product.measurement);
    itemResources.push({
      id: item.id,
      subscription: record.id,
      parent: item.parentId,
      plan: { id: plan.id, code: plan.code, name: plan.name },
      measurementValues,
      billing: {
        lastBilledAt: item.lastBilledAt,
        lastBilledTo: item.lastBilledTo,
        lastBilledFrom: item.lastBilledFrom,
        nextBillingAt: item.nextBillingAt,
        billingInterval: pricePlan.billingInterval,
      },
      name: item.name ?? product.name,
      description: item.description,
      furtherInformation: item.furtherInformation,
      quantity: Number(item.quantity),
      pricePlan,
      status: itemStatus(record, item, now),
      product,
      appliedDiscounts: applied,
      periods: item.periods ? toPeriods(item.periods) : subscriptionPeriods,
      activatedAt: item.activatedAt,
      type: item.type,
      currentMeasurementValue: measurementValues[0] ?? null,
      inheritedPeriod: item.periods === null,
      startDate: item.startDate,
      billingStart: item.billingStart,
      billingEnd: item.billingEnd,
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
    });
  }

  const live = record.status === 'active' || record.status === 'paused';
  const nowZoned = zoned(now, customer.timeZone);
  let contractEnd: string | null = null;
  let nextPossible: string[] | null = null;
  if (record.startDate && live) {
    const start = zoned(record.startDate, customer.timeZone);
    const current = termsAfter(start, intervalsOf(record.periods), nowZoned, 1)[0]!;
    contractEnd = record.cancellationDate ?? toIso(current.end);
    if (!record.cancellationDate) nextPossible = reachableTermEnds(start, record.periods, nowZoned).map(toIso);
  } else if (record.status === 'cancelled') {
    contractEnd = record.cancelledAt;
  } else if (record.status === 'terminated') {
    contractEnd = record.terminatedAt;
  }
  const nextBillingDate =
    record.status === 'active'
      ? (items
          .filter((i) => i.nextBillingAt && !(i.billingEnd && Date.parse(i.billingEnd) <= now.getTime()))
          .map((i) => i.nextBillingAt as string)
          .sort()[0] ?? null)
      : null;

  return {
    id: record.id,
    externalId: record.externalId,
    paymentMethod: paymentMethod ?? null,
    invoiceAddress: invoiceAddress ?? null,
    number: record.number,
    customer,
    plan,
    name: record.name,
    items: itemResources,
    billingGroup: billingGroup ?? null,
    periods: subscriptionPeriods,
    status: record.status,
    activatedAt: record.activatedAt,
    poNumber: record.poNumber,
    contractDetails: { contractStart: record.startDate, contractEnd },
    trialEndsOn: record.trialEndsOn,
    customFields: record.customFields,
    defaultPaymentMethod: record.paymentMethodId === null,
    defaultInvoiceAddress: record.invoiceAddressId === null,
    nextBillingDate,
    lastBillingAt: record.lastBillingAt,
    cancellationDate: record.cancellationDate,
    cancelledAt: record.cancelledAt,
    cancellationReason: record.cancellationReason,
    isCancellationPending: live && record.cancellationDate !== null && Date.parse(record.cancellationDate) > now.getTime(),
    nextPossibleCancellationDate: nextPossible,
    partner: null,
    startDate: record.startDate,
    pausedAt: record.pausedAt,
    terminatedAt: record.terminatedAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The subscription `ref` (id or number) names; a 404 when none does. */
export async function loadSubscription(tx: Tx, org: string, ref: string): Promise<SubscriptionRecord> {
  const record = await findSubscription(tx, org, ref);
  if (!record) throw notFound('Subscription', ref);
  return record;
}

export async function getSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  return toResource(tx, org, await loadSubscription(tx, org, id), now);
}

export async function listSubscriptions(
  tx: Tx,
  org: string,
  filter: { customer?: string | undefined; status?: string | undefined },
  page: PageRequest,
  now: Date,
): Promise<{ rows: Subscription[]; total: number }> {
  const customer = filter.customer === undefined ? undefined : await customerIdOf(tx, org, filter.customer);
  const { rows, total } = await tx.subscriptions.list(org, { ...filter, customer }, page);
  const lookups = newLookups();
  const resources: Subscription[] = [];
  for (const r of rows) resources.push(await toResource(tx, org, r, now, lookups));
  return { rows: resources, total };
}

// ---------------------------------------------------------------------------------------------
// Writing.

function newPeriods(input: readonly PeriodInput[], at: string, previous: readonly PeriodRecord[] = []): PeriodRecord[] {
  return input.map((p, i) => {
    const same = previous[i];
    if (same && same.contractPeriod === p.contractPeriod && same.cancellationPeriod === p.cancellationPeriod) return same;
    return { id: newId(), contractPeriod: p.contractPeriod, cancellationPeriod: p.cancellationPeriod, createdAt: at, updatedAt: at };
  });
}

async function nextNumber(tx: Tx, org: string): Promise<string> {
  for (;;) {
    const candidate = `SUB-${String(await tx.system.nextCounter(org, 'subscription')).padStart(6, '0')}`;
    if (!(await tx.subscriptions.numberTaken(org, candidate))) return candidate;
  }
}

async function numberViolation(tx: Tx, org: string, number: string, exceptId?: string): Promise<Violation | undefined> {
  if (await tx.subscriptions.numberTaken(org, number, exceptId)) {
    return { propertyPath: 'number', message: `number must be unique: a subscription numbered '${number}' already exists`, code: 'unique' };
  }
  return undefined;
}

async function billingGroupViolation(tx: Tx, org: string, ref: string | null | undefined): Promise<[string | null | undefined, Violation?]> {
  if (ref === undefined || ref === null) return [ref];
  const group = await findBillingGroup(tx, org, ref);
  if (!group) {
    return [
      undefined,
      {
        propertyPath: 'billingGroup',
        message: `billingGroup '${ref}' does not exist; pass the ULID (or its UUID form) of a billing group from list_billing_groups, or null`,
        code: 'not_found',
      },
    ];
  }
  return [group.id];
}

async function billingDetailViolations(
  tx: Tx,
  org: string,
  customerId: string,
  input: { paymentMethod?: string | null | undefined; invoiceAddress?: string | null | undefined },
): Promise<Violation[]> {
  const out: Violation[] = [];
  if (input.paymentMethod && !(await getPaymentMethod(tx, org, customerId, input.paymentMethod))) {
    out.push({
      propertyPath: 'paymentMethod',
      message: `paymentMethod '${input.paymentMethod}' is not a payment method of the customer; use list_payment_methods, or null for the customer's default`,
      code: 'not_found',
    });
  }
  if (input.invoiceAddress && !(await getInvoiceAddress(tx, org, customerId, input.invoiceAddress))) {
    out.push({
      propertyPath: 'invoiceAddress',
      message: `invoiceAddress '${input.invoiceAddress}' is not an invoice address of the customer; use list_invoice_addresses, or null for the customer's default`,
      code: 'not_found',
    });
  }
  return out;
}

function throwIf(violations: Array<Violation | undefined>): void {
  const present = violations.filter((v): v is Violation => v !== undefined);
  if (present.length) throw invalidMany(present);
}

/** When an item's billing starts: the latest of the subscription start (now when unset), the item start and its billing start. */
export function itemBillingStart(record: SubscriptionRecord, item: ItemRecord, now: Date): string {
  const starts = [record.startDate ?? now.toISOString(), item.startDate, item.billingStart].filter((d): d is string => d !== null);
  return new Date(Math.max(...starts.map((d) => Date.parse(d)))).toISOString();
}

/** Billing start and next billing date of an item as the subscription becomes (or is) active. */
async function startBilling(tx: Tx, org: string, record: SubscriptionRecord, item: ItemRecord, timeZone: string, now: Date): Promise<ItemRecord> {
  const pricePlan = await getPricePlan(tx, org, item.pricePlanId);
  const group = record.billingGroupId ? await findBillingGroup(tx, org, record.billingGroupId) : undefined;
  const start = zoned(itemBillingStart(record, item, now), timeZone);
  const interval = parseInterval(pricePlan.billingInterval);
  const next = pricePlan.payInAdvance ? start : boundary(start, interval, alignmentOf(group), 1);
  return { ...item, activatedAt: item.activatedAt ?? now.toISOString(), nextBillingAt: toIso(next), updatedAt: now.toISOString() };
}

export interface CreateSubscriptionInput {
  customer: string;
  plan: string;
  periods: PeriodInput[];
  billingGroup?: string | null | undefined;
  startDate?: string | undefined;
  name?: string | null | undefined;
  number?: string | undefined;
  externalId?: string | null | undefined;
  poNumber?: string | null | undefined;
  customFields?: Record<string, unknown> | undefined;
  paymentMethod?: string | null | undefined;
  invoiceAddress?: string | null | undefined;
  addons?: Array<{ product: string; pricePlan: string }> | undefined;
  activate?: boolean | undefined;
}

/**
 * A subscription from a plan: items from its charges, addons only when asked for, in status draft
 * (or active with `activate`, or `offer` when an offer proposes it).
 */
export async function createSubscription(
  tx: Tx,
  org: string,
  input: CreateSubscriptionInput,
  now: Date,
  status: 'draft' | 'offer' = 'draft',
): Promise<Subscription> {
  const customer = await findCustomer(tx, org, input.customer);
  if (!customer) throw invalid('customer', `customer '${input.customer}' does not exist; create it with create_customer or pick one from list_customers`, 'not_found');
  const plan = await findPlan(tx, org, input.plan);
  if (!plan) throw invalid('plan', `plan '${input.plan}' does not exist; pick one from list_plans`, 'not_found');
  const violations: Array<Violation | undefined> = [];
  if (plan.status === 'archived') {
    violations.push({ propertyPath: 'plan', message: `plan ${plan.code} is archived; subscribe to a draft or active plan`, code: 'archived' });
  }
  const currencies = new Set(plan.charges.map((c) => c.pricePlan.currencyCode));
  if ([...currencies].some((c) => c !== customer.currencyCode)) {
    violations.push({
      propertyPath: 'plan',
      message: `plan ${plan.code} is priced in ${[...currencies].join(', ')} but the customer is billed in ${customer.currencyCode}; pick a plan in ${customer.currencyCode}`,
      code: 'currency_mismatch',
    });
  }
  const [billingGroupId, groupViolation] = await billingGroupViolation(tx, org, input.billingGroup);
  violations.push(groupViolation);
  violations.push(...(await billingDetailViolations(tx, org, customer.id, input)));
  if (input.number !== undefined) violations.push(await numberViolation(tx, org, input.number));
  violations.push(...(await validateCustomFields(tx, org, 'subscription', input.customFields ?? {})));
  const addons = (input.addons ?? []).map((a, i) => {
    const match = plan.addons.find((x) => x.product.id === a.product && x.pricePlan.id === a.pricePlan);
    if (!match) {
      const offered = plan.addons.map((x) => `{ product: ${x.product.id}, pricePlan: ${x.pricePlan.id} }`).join(', ') || 'none';
      violations.push({
        propertyPath: `addons[${i}]`,
        message: `addons[${i}] is not an addon of plan ${plan.code}; its addons are: ${offered}`,
        code: 'not_an_addon',
      });
    }
    return match;
  });
  throwIf(violations);

  const at = now.toISOString();
  const record: SubscriptionRecord = {
    id: newId(),
    customerId: customer.id,
    planId: plan.id,
    number: input.number ?? (await nextNumber(tx, org)),
    name: input.name === undefined ? plan.name : input.name,
    externalId: input.externalId ?? null,
    poNumber: input.poNumber ?? null,
    status,
    billingGroupId: billingGroupId ?? null,
    paymentMethodId: input.paymentMethod ?? null,
    invoiceAddressId: input.invoiceAddress ?? null,
    startDate: input.startDate ? new Date(input.startDate).toISOString() : null,
    activatedAt: null,
    trialEndsOn: null,
    customFields: input.customFields ?? {},
    periods: newPeriods(input.periods, at),
    cancellationDate: null,
    cancelledAt: null,
    cancellationReason: null,
    pausedAt: null,
    terminatedAt: null,
    lastBillingAt: null,
    createdAt: at,
    updatedAt: at,
  };
  await tx.subscriptions.insert(org, record);
  const sources = [
    ...plan.charges.map((c) => ({ product: c.product, pricePlan: c.pricePlan, quantity: c.quantity, type: 'charge' as const })),
    ...addons.map((a) => ({ product: a!.product, pricePlan: a!.pricePlan, quantity: 1, type: 'addon' as const })),
  ];
  for (const s of sources) await tx.subscriptions.insertItem(org, blankItem(record.id, s.product.id, s.pricePlan.id, s.type, String(s.quantity), at));
  await grantActiveFeatures(tx, org, record.id, now);
  if (input.activate) return activateSubscription(tx, org, record.id, now);
  return toResource(tx, org, record, now);
}

function blankItem(subscriptionId: string, productId: string, pricePlanId: string, type: 'charge' | 'addon', quantity: string, at: string): ItemRecord {
  return {
    id: newId(),
    subscriptionId,
    parentId: null,
    productId,
    pricePlanId,
    type,
    name: null,
    description: null,
    furtherInformation: null,
    quantity,
    periods: null,
    startDate: null,
    billingStart: null,
    billingEnd: null,
    activatedAt: null,
    lastBilledAt: null,
    lastBilledFrom: null,
    lastBilledTo: null,
    nextBillingAt: null,
    createdAt: at,
    updatedAt: at,
  };
}

export interface UpdateSubscriptionInput {
  periods: PeriodInput[];
  billingGroup?: string | null | undefined;
  startDate?: string | null | undefined;
  poNumber?: string | null | undefined;
  name?: string | null | undefined;
  number?: string | undefined;
  externalId?: string | null | undefined;
  customFields?: Record<string, unknown> | undefined;
  paymentMethod?: string | null | undefined;
  invoiceAddress?: string | null | undefined;
}

/** PUT: `periods` required; omitted fields stay, null clears; startDate only while draft. */
export async function updateSubscription(tx: Tx, org: string, id: string, input: UpdateSubscriptionInput, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  if (FINAL.includes(current.status)) {
    throw conflict(`Subscription ${current.number} is ${current.status}, which is final; it can no longer be updated`);
  }
  const wantedStart = input.startDate === undefined ? undefined : input.startDate && new Date(input.startDate).toISOString();
  if (wantedStart !== undefined && wantedStart !== current.startDate && current.status !== 'draft' && current.status !== 'offer') {
    throw conflict(`startDate of subscription ${current.number} is frozen: it may change only while the subscription is draft, and it is ${current.status}`);
  }
  const violations: Array<Violation | undefined> = [];
  const [billingGroupId, groupViolation] = await billingGroupViolation(tx, org, input.billingGroup);
  violations.push(groupViolation);
  violations.push(...(await billingDetailViolations(tx, org, current.customerId, input)));
  if (input.number !== undefined && input.number !== current.number) violations.push(await numberViolation(tx, org, input.number, current.id));
  if (input.customFields !== undefined) violations.push(...(await validateCustomFields(tx, org, 'subscription', input.customFields)));
  throwIf(violations);
  const at = now.toISOString();
  const next: SubscriptionRecord = {
    ...current,
    periods: newPeriods(input.periods, at, current.periods),
    billingGroupId: billingGroupId === undefined ? current.billingGroupId : billingGroupId,
    startDate: wantedStart === undefined ? current.startDate : wantedStart,
    poNumber: input.poNumber === undefined ? current.poNumber : input.poNumber,
    name: input.name === undefined ? current.name : input.name,
    number: input.number ?? current.number,
    externalId: input.externalId === undefined ? current.externalId : input.externalId,
    customFields: input.customFields ?? current.customFields,
    paymentMethodId: input.paymentMethod === undefined ? current.paymentMethodId : input.paymentMethod,
    invoiceAddressId: input.invoiceAddress === undefined ? current.invoiceAddressId : input.invoiceAddress,
    updatedAt: at,
  };
  await tx.subscriptions.update(org, next);
  return toResource(tx, org, next, now);
}

// ---------------------------------------------------------------------------------------------
// The state machine.

async function timeZoneOf(tx: Tx, org: string, record: SubscriptionRecord): Promise<string> {
  return ((await tx.customers.get(org, record.customerId)) as Customer).timeZone;
}

/**
 * Activation (draft → active, and offer → active when a signed offer activates it): the contract
 * starts at startDate (now when unset) and every item's billing starts.
 */
export async function activateRecord(tx: Tx, org: string, current: SubscriptionRecord, now: Date): Promise<SubscriptionRecord> {
  const at = now.toISOString();
  const record: SubscriptionRecord = { ...current, status: 'active', activatedAt: at, startDate: current.startDate ?? at, updatedAt: at };
  await tx.subscriptions.update(org, record);
  const timeZone = await timeZoneOf(tx, org, record);
  for (const item of await tx.subscriptions.items(org, [record.id])) {
    await tx.subscriptions.updateItem(org, await startBilling(tx, org, record, item, timeZone, now));
  }
  return record;
}

export async function activateSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('activate', current);
  return toResource(tx, org, await activateRecord(tx, org, current, now), now);
}

export async function pauseSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('pause', current);
  const at = now.toISOString();
  const record: SubscriptionRecord = { ...current, status: 'paused', pausedAt: at, updatedAt: at };
  await tx.subscriptions.update(org, record);
  return toResource(tx, org, record, now);
}

/**
 * paused → active. With `nextBillingDate` it becomes every item's next billing date (billing starts
 * from it, periods before it are never billed); without it the items keep their next billing dates,
 * so every period missed while paused is billed.
 */
export async function resumeSubscription(
  tx: Tx,
  org: string,
  id: string,
  input: { nextBillingDate?: string | null | undefined },
  now: Date,
): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('resume', current);
  const at = now.toISOString();
  if (input.nextBillingDate) {
    const next = new Date(input.nextBillingDate).toISOString();
    if (current.pausedAt && next < current.pausedAt) {
      throw invalid(
        'nextBillingDate',
        `nextBillingDate must not be before the pause began (${current.pausedAt}); send a later date, or null to bill every missed period`,
        'too_early',
      );
    }
    for (const item of await tx.subscriptions.items(org, [current.id])) {
      await tx.subscriptions.updateItem(org, { ...item, nextBillingAt: next, updatedAt: at });
    }
  }
  const record: SubscriptionRecord = { ...current, status: 'active', pausedAt: null, updatedAt: at };
  await tx.subscriptions.update(org, record);
  return toResource(tx, org, record, now);
}

/**
 * Schedules the cancellation at a term end the cancellation period still allows (the next possible
 * one when no date is given). Until then the cancellation is pending and can be revoked.
 */
export async function cancelSubscription(
  tx: Tx,
  org: string,
  id: string,
  input: { cancellationDate?: string | undefined; reason?: { code: string; name?: string | undefined } | undefined },
  now: Date,
): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('cancel', current);
  if (current.cancellationDate) {
    throw conflict(
      `Subscription ${current.number} is already scheduled to cancel at ${current.cancellationDate}; revoke_subscription_cancellation first to choose another date`,
    );
  }
  const timeZone = await timeZoneOf(tx, org, current);
  const start = zoned(current.startDate ?? now.toISOString(), timeZone);
  const nowZoned = zoned(now, timeZone);
  let date: string;
  if (input.cancellationDate) {
    const wanted = zoned(input.cancellationDate, timeZone);
    const reachable = reachableTermEnds(start, current.periods, nowZoned, wanted);
    if (!reachable.some((end) => end.toMillis() === wanted.toMillis())) {
      const options = reachableTermEnds(start, current.periods, nowZoned).map(toIso).join(', ');
      throw invalid(
        'cancellationDate',
        `cancellationDate must be a contract term end that the cancellation period still allows; the next possible dates are ${options} (or omit cancellationDate for the first of them)`,
        'not_possible',
      );
    }
    date = toIso(wanted);
  } else {
    date = toIso(reachableTermEnds(start, current.periods, nowZoned)[0]!);
  }
  const at = now.toISOString();
  const reason: CancellationReason | null = input.reason
    ? { id: newId(), code: input.reason.code, name: input.reason.name ?? input.reason.code, createdAt: at, updatedAt: at }
    : null;
  const record: SubscriptionRecord = { ...current, cancellationDate: date, cancellationReason: reason, updatedAt: at };
  await tx.subscriptions.update(org, record);
  return toResource(tx, org, record, now);
}

export async function revokeCancellation(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('revoke_cancellation', current);
  if (!current.cancellationDate) {
    throw conflict(`Subscription ${current.number} has no pending cancellation to revoke`);
  }
  const record: SubscriptionRecord = { ...current, cancellationDate: null, cancellationReason: null, updatedAt: now.toISOString() };
  await tx.subscriptions.update(org, record);
  return toResource(tx, org, record, now);
}

export async function terminateSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('terminate', current);
  const at = now.toISOString();
  const record: SubscriptionRecord = { ...current, status: 'terminated', terminatedAt: at, updatedAt: at };
  await tx.subscriptions.update(org, record);
  return toResource(tx, org, record, now);
}

/** Jobs: pending cancellations whose date has come become `cancelled`. */
export async function cancelDueSubscriptions(tx: Tx, now: Date): Promise<number> {
  const due = await tx.subscriptions.dueCancellations(now.toISOString());
  for (const { org, id } of due) {
    const current = (await tx.subscriptions.get(org, id)) as SubscriptionRecord;
    await tx.subscriptions.update(org, {
      ...current,
      status: 'cancelled',
      cancelledAt: current.cancellationDate,
      updatedAt: now.toISOString(),
    });
  }
  return due.length;
}

// ---------------------------------------------------------------------------------------------
// Items.

export interface DiscountInput {
  name?: string | null | undefined;
  coupon?: string | undefined;
  type?: 'percentage' | 'fixed_amount' | undefined;
  frequency?: 'once' | 'limited' | undefined;
  percentage?: number | undefined;
  fixedAmount?: { amount: number; currency: string } | undefined;
  frequencyInterval?: number | undefined;
}

export interface OrderEntry {
  product: string;
  quantity?: number | undefined;
  pricePlan?: string | undefined;
  customPricePlan?: CustomPricePlanInput | undefined;
  periods?: PeriodInput[] | undefined;
  customName?: string | undefined;
  customDescription?: string | undefined;
  discount?: DiscountInput | undefined;
  autoAssignProductGroup?: boolean | undefined;
}

export interface OrderInput {
  billingStart?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  products: Array<OrderEntry & { children?: OrderEntry[] | undefined }>;
}

const ORDERABLE: readonly SubscriptionStatus[] = ['draft', 'active', 'paused', 'offer'];

async function discountOf(
  tx: Tx,
  org: string,
  path: string,
  d: DiscountInput,
  currency: string,
  violations: Violation[],
): Promise<Pick<AppliedDiscountRecord, 'couponId' | 'discount'> | undefined> {
  const at = `${path}.discount`;
  if (d.coupon !== undefined) {
    const inline = (['type', 'frequency', 'percentage', 'fixedAmount', 'frequencyInterval'] as const).filter((k) => d[k] !== undefined);
    if (inline.length) {
      violations.push({ propertyPath: at, message: `${at} takes either a coupon or inline fields (${inline.join(', ')}), not both`, code: 'ambiguous' });
      return undefined;
    }
    const coupon = await findCoupon(tx, org, d.coupon);
    if (!coupon) {
      violations.push({ propertyPath: `${at}.coupon`, message: `${at}.coupon '${d.coupon}' does not exist; pick one from list_coupons`, code: 'not_found' });
      return undefined;
    }
    if (!coupon.isEnabled) {
      violations.push({ propertyPath: `${at}.coupon`, message: `coupon ${coupon.code} is disabled and cannot be applied`, code: 'disabled' });
      return undefined;
    }
    if (coupon.fixedAmount && coupon.fixedAmount.currency !== currency) {
      violations.push({
        propertyPath: `${at}.coupon`,
        message: `coupon ${coupon.code} takes off ${coupon.fixedAmount.currency} but the subscription is billed in ${currency}`,
        code: 'currency_mismatch',
      });
      return undefined;
    }
    return { couponId: coupon.id, discount: null };
  }
  const before = violations.length;
  if (!d.type) violations.push({ propertyPath: `${at}.type`, message: `${at}.type is required for an inline discount: percentage or fixed_amount (or give a coupon)`, code: 'required' });
  if (d.type === 'percentage' && d.percentage === undefined) {
    violations.push({ propertyPath: `${at}.percentage`, message: `${at}.percentage is required when type is percentage (more than 0, at most 100)`, code: 'required' });
  }
  if (d.type !== 'percentage' && d.percentage !== undefined) {
    violations.push({ propertyPath: `${at}.percentage`, message: `${at}.percentage is only for type percentage`, code: 'forbidden' });
  }
  if (d.type === 'fixed_amount' && d.fixedAmount === undefined) {
    violations.push({ propertyPath: `${at}.fixedAmount`, message: `${at}.fixedAmount { amount, currency } is required when type is fixed_amount`, code: 'required' });
  }
  if (d.type !== 'fixed_amount' && d.fixedAmount !== undefined) {
    violations.push({ propertyPath: `${at}.fixedAmount`, message: `${at}.fixedAmount is only for type fixed_amount`, code: 'forbidden' });
  }
  if (d.fixedAmount && d.fixedAmount.currency !== currency) {
    violations.push({
      propertyPath: `${at}.fixedAmount.currency`,
      message: `${at}.fixedAmount.currency must be the subscription's currency ${currency} (got ${d.fixedAmount.currency})`,
      code: 'currency_mismatch',
    });
  } else if (d.fixedAmount) {
    const amount = amountViolation(`${at}.fixedAmount.amount`, d.fixedAmount.amount, currency);
    if (amount) violations.push(amount);
  }
  const frequency = d.frequency ?? 'once';
  if (frequency === 'limited' && d.frequencyInterval === undefined) {
    violations.push({ propertyPath: `${at}.frequencyInterval`, message: `${at}.frequencyInterval (invoices to discount, >= 1) is required when frequency is limited`, code: 'required' });
  }
  if (frequency === 'once' && d.frequencyInterval !== undefined) {
    violations.push({ propertyPath: `${at}.frequencyInterval`, message: `${at}.frequencyInterval is only for frequency limited`, code: 'forbidden' });
  }
  if (violations.length > before) return undefined;
  const discount: InlineDiscount = {
    name: d.name ?? null,
    type: d.type!,
    frequency,
    percentage: d.percentage ?? null,
    fixedAmount: d.fixedAmount ?? null,
    frequencyInterval: d.frequencyInterval ?? null,
  };
  return { couponId: null, discount };
}

/**
 * Order products (interface: POST /subscriptions/{id}/products): each entry becomes an addon item
 * (its children items with `parent` set), priced by a price plan of its product or by a custom price
 * plan, optionally discounted. Everything is checked before anything is written.
 */
export async function orderProducts(tx: Tx, org: string, id: string, input: OrderInput, now: Date): Promise<Subscription> {
  const record = await loadSubscription(tx, org, id);
  if (!ORDERABLE.includes(record.status)) {
    throw conflict(`Cannot order products for subscription ${record.number}: its status is ${record.status}; ordering is allowed while ${ORDERABLE.join(', ')}`);
  }
  const customer = (await tx.customers.get(org, record.customerId)) as Customer;
  const violations: Violation[] = [];
  if (input.startDate && input.endDate && input.endDate <= input.startDate) {
    violations.push({ propertyPath: 'endDate', message: 'endDate must be after startDate', code: 'before_start' });
  }
  if (input.startDate && input.billingStart && Date.parse(input.billingStart) < Date.parse(input.startDate)) {
    violations.push({ propertyPath: 'billingStart', message: 'billingStart must not be before startDate', code: 'before_start' });
  }
  if (input.endDate && Date.parse(input.endDate) <= now.getTime()) {
    violations.push({ propertyPath: 'endDate', message: 'endDate must lie in the future', code: 'in_the_past' });
  }

  interface Planned {
    path: string;
    entry: OrderEntry;
    product: Product;
    pricePlan?: PricePlan;
    discount?: Pick<AppliedDiscountRecord, 'couponId' | 'discount'>;
    children: Planned[];
  }

  const check = async (entry: OrderEntry, path: string): Promise<Planned | undefined> => {
    const product = await tx.products.get(org, entry.product);
    if (!product) {
      violations.push({ propertyPath: `${path}.product`, message: `${path}.product '${entry.product}' does not exist; pick one from list_products`, code: 'not_found' });
      return undefined;
    }
    const resolved = await getProduct(tx, org, product.id);
    if ((entry.pricePlan === undefined) === (entry.customPricePlan === undefined)) {
      violations.push({
        propertyPath: path,
        message: `${path} needs exactly one of pricePlan (an id from list_price_plans of the product) or customPricePlan (a price just for this item)`,
        code: 'price_plan_choice',
      });
    }
    let pricePlan: PricePlan | undefined;
    if (entry.pricePlan !== undefined) {
      pricePlan = await tx.products.getPricePlan(org, entry.pricePlan);
      if (!pricePlan || pricePlan.product !== product.id) {
        violations.push({
          propertyPath: `${path}.pricePlan`,
          message: pricePlan
            ? `${path}.pricePlan ${pricePlan.id} belongs to another product; use a price plan of product ${product.id} (list_price_plans)`
            : `${path}.pricePlan '${entry.pricePlan}' does not exist; pick one from list_price_plans of the product`,
          code: pricePlan ? 'wrong_product' : 'not_found',
        });
        pricePlan = undefined;
      } else if (pricePlan.status === 'archived') {
        violations.push({ propertyPath: `${path}.pricePlan`, message: `${path}.pricePlan ${pricePlan.id} is archived`, code: 'archived' });
      } else if (pricePlan.currencyCode !== customer.currencyCode) {
        violations.push({
          propertyPath: `${path}.pricePlan`,
          message: `${path}.pricePlan is priced in ${pricePlan.currencyCode} but the subscription is billed in ${customer.currencyCode}`,
          code: 'currency_mismatch',
        });
      }
    }
    if (entry.customPricePlan && entry.customPricePlan.currencyCode !== customer.currencyCode) {
      violations.push({
        propertyPath: `${path}.customPricePlan.currencyCode`,
        message: `${path}.customPricePlan.currencyCode must be the subscription's currency ${customer.currencyCode}`,
        code: 'currency_mismatch',
      });
    } else if (entry.customPricePlan) {
      violations.push(...pricePlanViolations(entry.customPricePlan, `${path}.customPricePlan.`));
    }
    if (entry.quantity !== undefined && resolved.measurement) {
      violations.push({
        propertyPath: `${path}.quantity`,
        message: `${path}.quantity cannot be set: product ${resolved.name} is metered by ${resolved.measurement.code}, so its quantity comes from usage; omit quantity`,
        code: 'metered_quantity',
      });
    }
    const discount = entry.discount ? await discountOf(tx, org, path, entry.discount, customer.currencyCode, violations) : undefined;
    return { path, entry, product: resolved, ...(pricePlan ? { pricePlan } : {}), ...(discount ? { discount } : {}), children: [] };
  };

  const planned: Planned[] = [];
  for (const [i, entry] of input.products.entries()) {
    const p = await check(entry, `products[${i}]`);
    for (const [j, child] of (entry.children ?? []).entries()) {
      const c = await check(child, `products[${i}].children[${j}]`);
      if (p && c) p.children.push(c);
    }
    if (p) planned.push(p);
  }
  if (violations.length) throw invalidMany(violations);

  const at = now.toISOString();
  const timeZone = customer.timeZone;
  const write = async (p: Planned, parentId: string | null) => {
    const pricePlan =
      p.pricePlan ?? (await createCustomPricePlan(tx, org, p.product.id, p.entry.customPricePlan!, now, `${p.path}.customPricePlan.`));
    let item: ItemRecord = {
      ...blankItem(record.id, p.product.id, pricePlan.id, 'addon', String(p.entry.quantity ?? 1), at),
      parentId,
      name: p.entry.customName ?? null,
      description: p.entry.customDescription ?? null,
      periods: p.entry.periods ? newPeriods(p.entry.periods, at) : null,
      startDate: input.startDate ? new Date(input.startDate).toISOString() : null,
      billingStart: input.billingStart ? new Date(input.billingStart).toISOString() : null,
      billingEnd: input.endDate ? new Date(input.endDate).toISOString() : null,
    };
    if (record.status === 'active' || record.status === 'paused') item = await startBilling(tx, org, record, item, timeZone, now);
    await tx.subscriptions.insertItem(org, item);
    if (p.discount) {
      await tx.subscriptions.insertDiscount(org, { id: newId(), itemId: item.id, ...p.discount, status: 'active', appliedIntervals: 0, createdAt: at });
    }
    for (const c of p.children) await write(c, item.id);
  };
  for (const p of planned) await write(p, null);
  const updated = { ...record, updatedAt: at };
  await tx.subscriptions.update(org, updated);
  return toResource(tx, org, updated, now);
}

export async function getSubscriptionItem(tx: Tx, org: string, id: string, now: Date): Promise<SubscriptionItem> {
  const item = await tx.subscriptions.getItem(org, id);
  if (!item) throw notFound('Subscription item', id);
  const subscription = await getSubscription(tx, org, item.subscriptionId, now);
  return subscription.items.find((i) => i.id === id) as SubscriptionItem;
}

/**
 * Merge patch of an item: quantity, name, description. A quantity change on an item whose product
 * has a measurement is a 422 (interface sections 7 and 9: usage drives such quantities).
 */
export async function updateSubscriptionItem(
  tx: Tx,
  org: string,
  id: string,
  patch: { quantity?: number | undefined; name?: string | null | undefined; description?: string | null | undefined },
  now: Date,
): Promise<SubscriptionItem> {
  const item = await tx.subscriptions.getItem(org, id);
  if (!item) throw notFound('Subscription item', id);
  const subscription = await loadSubscription(tx, org, item.subscriptionId);
  if (FINAL.includes(subscription.status)) {
    throw conflict(`Subscription ${subscription.number} is ${subscription.status}, which is final; its items can no longer change`);
  }
  if (patch.quantity !== undefined) {
    const product = await getProduct(tx, org, item.productId);
    if (product.measurement) {
      throw invalid(
        'quantity',
        `quantity of this item cannot be changed by hand: its product ${product.name} is metered by measurement ${product.measurement.code}, so usage drives the quantity; record usage with create_subscription_measurement instead`,
        'metered_quantity',
      );
    }
  }
  await tx.subscriptions.updateItem(org, {
    ...item,
    quantity: patch.quantity === undefined ? item.quantity : String(patch.quantity),
    name: patch.name === undefined ? item.name : patch.name,
    description: patch.description === undefined ? item.description : patch.description,
    updatedAt: now.toISOString(),
  });
  return getSubscriptionItem(tx, org, id, now);
}

/** A subscription by id or by number: every input naming a subscription accepts both. */
export async function findSubscription(tx: Tx, org: string, ref: string): Promise<SubscriptionRecord | undefined> {
  return (await tx.subscriptions.get(org, ref)) ?? (await tx.subscriptions.getByNumber(org, ref));
}

/** The id of the subscription `ref` (id or number) names, for a list filter; `ref` itself, matching nothing, when none does. */
export async function subscriptionIdOf(tx: Tx, org: string, ref: string): Promise<string> {
  return (await findSubscription(tx, org, ref))?.id ?? ref;
}

/** A signed offer settles the subscription it proposes: offer → active (activate) or offer → draft. */
export async function settleOfferSubscription(tx: Tx, org: string, subscriptionId: string, activate: boolean, now: Date): Promise<void> {
  const current = await loadSubscription(tx, org, subscriptionId);
  if (current.status !== 'offer') {
    throw conflict(`Subscription ${current.number} is ${current.status}; only a subscription in status offer is settled by signing its offer`);
  }
  if (activate) await activateRecord(tx, org, current, now);
  else await tx.subscriptions.update(org, { ...current, status: 'draft', updatedAt: now.toISOString() });
}
