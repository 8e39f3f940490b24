/** The read model: a subscription record becomes the resource of interface 2.1, every derived field computed as of `now`. */
import { notFound } from '../../errors.js';
import type { Plan } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';
import type { Customer } from '../../schemas/customers.js';
import type { Subscription, SubscriptionItem } from '../../schemas/subscriptions.js';
import type { MeasurementValue } from '../../schemas/usage.js';
import type { AppliedDiscountRecord, ItemRecord, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import type { Tx } from '../../store/store.js';
import { findBillingGroup } from '../billingGroups.js';
import { getInvoiceAddress, getPaymentMethod } from '../billingDetails.js';
import { discountsByItem, findCoupon } from '../coupons.js';
import { getCustomer } from '../customers.js';
import { termsAfter, toIso, zoned } from '../dates.js';
import { memo } from '../memo.js';
import { type CatalogueLookups, getPlan } from '../plans.js';
import { getPricePlan, getProduct } from '../products.js';
import { currentMetricUsage, recentMeasurementValues } from '../usage.js';
import { formatQuantity } from '../quantity.js';
import { FINAL } from '../subscriptionStates.js';
import { loadSubscription } from './records.js';
import { cancelsInTrial, intervalsOf, reachableTermEnds, toPeriods } from './terms.js';

/** What a read of subscriptions looks up again and again, each once (products and price plans also for their plans). */
interface Lookups extends CatalogueLookups {
  plans: Map<string, Promise<Plan>>;
  customers: Map<string, Promise<Customer>>;
}

const newLookups = (): Lookups => ({ products: new Map(), pricePlans: new Map(), plans: new Map(), customers: new Map() });

function itemStatus(record: SubscriptionRecord, item: ItemRecord, now: Date): SubscriptionItem['status'] {
  if (item.billingEnd && Date.parse(item.billingEnd) <= now.getTime()) return 'ended';
  return record.status;
}

/** An item's `currentUsage` (interface section 9: it replaces `currentMeasurementValue` for usage-based products). */
async function currentUsageOf(...args: Parameters<typeof currentMetricUsage>): Promise<SubscriptionItem['currentUsage']> {
  const u = await currentMetricUsage(...args);
  return { value: formatQuantity(u.value), eventCount: u.events, periodStart: u.periodStart, periodEnd: u.periodEnd };
}

/** What the resources of a page of subscriptions share, each read once for all of them. */
interface PageParts {
  lookups: Lookups;
  /** By subscription id, in creation order. */
  items: Map<string, ItemRecord[]>;
  /** By item id. */
  discounts: Map<string, AppliedDiscountRecord[]>;
  /** The latest measurement values by item id (items whose product has a measurement). */
  values: Map<string, MeasurementValue[]>;
}

async function pageParts(tx: Tx, org: string, records: readonly SubscriptionRecord[]): Promise<PageParts> {
  const lookups = newLookups();
  const customerIds = [...new Set(records.map((r) => r.customerId))];
  const [customers, all] = await Promise.all([
    tx.customers.getMany(org, customerIds),
    tx.subscriptions.items(
      org,
      records.map((r) => r.id),
    ),
  ]);
  for (const c of customers) lookups.customers.set(c.id, Promise.resolve(c));
  const items = new Map<string, ItemRecord[]>(records.map((r) => [r.id, []]));
  for (const item of all) items.get(item.subscriptionId)?.push(item);
  // The discounts, the items' products and price plans and the subscriptions' plans are read together
  // (pipelined on PostgreSQL); the resources then find the catalogue in the lookups.
  const planIds = [...new Set(records.flatMap((r) => (r.pendingPlanId ? [r.planId, r.pendingPlanId] : [r.planId])))];
  const [discountRows, products] = await Promise.all([
    tx.subscriptions.discounts(
      org,
      all.map((i) => i.id),
    ),
    Promise.all(all.map((item) => memo(lookups.products, item.productId, () => getProduct(tx, org, item.productId)))),
    Promise.all([
      ...all.map((item) => memo(lookups.pricePlans, item.pricePlanId, () => getPricePlan(tx, org, item.pricePlanId))),
      ...planIds.map((id) => memo(lookups.plans, id, () => getPlan(tx, org, id, lookups))),
    ]),
  ]);
  const metered = all.flatMap((item, i) => {
    const { measurement } = products[i]!;
    return measurement ? [{ item, measurement }] : [];
  });
  return { lookups, items, discounts: discountsByItem(discountRows), values: await recentMeasurementValues(tx, org, metered) };
}

/** The resources of these subscription records, as of `now`, reading what they share once. */
export async function toResources(tx: Tx, org: string, records: readonly SubscriptionRecord[], now: Date): Promise<Subscription[]> {
  const parts = await pageParts(tx, org, records);
  const resources: Subscription[] = [];
  for (const record of records) resources.push(await resourceOf(tx, org, record, now, parts));
  return resources;
}

export async function toResource(tx: Tx, org: string, record: SubscriptionRecord, now: Date): Promise<Subscription> {
  return (await toResources(tx, org, [record], now))[0]!;
}

async function resourceOf(tx: Tx, org: string, record: SubscriptionRecord, now: Date, parts: PageParts): Promise<Subscription> {
  const cache = parts.lookups;
  const customer = await memo(cache.customers, record.customerId, async () => (await tx.customers.get(org, record.customerId)) as Customer);
  const plan = await memo(cache.plans, record.planId, () => getPlan(tx, org, record.planId, cache));
  const items = parts.items.get(record.id) ?? [];
  const billingGroup = record.billingGroupId ? await findBillingGroup(tx, org, record.billingGroupId) : undefined;
  const paymentMethod = record.paymentMethodId ? await getPaymentMethod(tx, org, record.customerId, record.paymentMethodId, now) : undefined;
  const invoiceAddress = record.invoiceAddressId
    ? await getInvoiceAddress(tx, org, record.customerId, record.invoiceAddressId)
    : undefined;
  const subscriptionPeriods = toPeriods(record.periods);
  const pendingPlan = record.pendingPlanId ? await memo(cache.plans, record.pendingPlanId, () => getPlan(tx, org, record.pendingPlanId!, cache)) : undefined;

  const itemResources: SubscriptionItem[] = [];
  for (const item of items) {
    const product = await memo(cache.products, item.productId, () => getProduct(tx, org, item.productId));
    const pricePlan = await memo(cache.pricePlans, item.pricePlanId, () => getPricePlan(tx, org, item.pricePlanId));
    const applied = [];
    for (const d of parts.discounts.get(item.id) ?? []) {
      applied.push({
        id: d.id,
        coupon: d.couponId ? ((await findCoupon(tx, org, d.couponId)) ?? null) : null,
        status: d.status,
        discount: d.discount,
        appliedIntervals: d.appliedIntervals,
      });
    }
    const measurementValues = parts.values.get(item.id) ?? [];
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
      currentUsage: product.usageMetric
        ? await currentUsageOf(tx, org, record, item, product.usageMetric, customer.timeZone, now, { pricePlan, group: billingGroup })
        : null,
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
    if (!record.cancellationDate) {
      // During a trial a cancellation takes effect by its end: that is the date cancel_subscription takes without one.
      nextPossible = cancelsInTrial(record, now) ? [record.trialEndsOn as string] : reachableTermEnds(start, record.periods, nowZoned).map(toIso);
    }
  } else if (record.status === 'cancelled') {
    contractEnd = record.cancelledAt;
  } else if (record.status === 'terminated') {
    contractEnd = record.terminatedAt;
  }
  // A cancelled or terminated subscription still has the invoice of its final period to come.
  const nextBillingDate =
    record.status === 'active' || FINAL.includes(record.status)
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
    // A final subscription applies no change (one cancelled before cancel_subscription refused pending changes may still hold one).
    pendingPlanChange:
      pendingPlan && record.pendingPlanApplyAt && !FINAL.includes(record.status)
        ? { plan: { id: pendingPlan.id, code: pendingPlan.code, name: pendingPlan.name }, applyAt: record.pendingPlanApplyAt }
        : null,
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
    // Kept after a resume with a nextBillingDate, for the billing before the pause (`isRestarted`): shown only while paused or ended paused.
    pausedAt: record.status === 'active' ? null : record.pausedAt,
    terminatedAt: record.terminatedAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}


export async function getSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  return toResource(tx, org, await loadSubscription(tx, org, id), now);
}

export async function listSubscriptions(
  tx: Tx,
  org: string,
  filter: { customer?: string | undefined; status?: string | undefined; externalId?: string | undefined },
  page: PageRequest,
  now: Date,
): Promise<{ rows: Subscription[]; total: number }> {
  const customer = filter.customer === undefined ? undefined : (await getCustomer(tx, org, filter.customer)).id;
  const { rows, total } = await tx.subscriptions.list(org, { ...filter, customer }, page);
  return { rows: await toResources(tx, org, rows, now), total };
}

export async function getSubscriptionItem(tx: Tx, org: string, id: string, now: Date): Promise<SubscriptionItem> {
  const item = await tx.subscriptions.getItem(org, id);
  if (!item) throw notFound('Subscription item', id);
  const subscription = await getSubscription(tx, org, item.subscriptionId, now);
  return subscription.items.find((i) => i.id === id) as SubscriptionItem;
}

