import type { PageRequest } from '../../schemas/common.js';

export type SubscriptionStatus = 'draft' | 'active' | 'paused' | 'cancelled' | 'terminated' | 'offer';

export interface PeriodRecord {
  id: string;
  contractPeriod: string;
  cancellationPeriod: string;
  createdAt: string;
  updatedAt: string;
}

export interface CancellationReason {
  id: string;
  code: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface SubscriptionRecord {
  id: string;
  customerId: string;
  planId: string;
  number: string;
  name: string | null;
  externalId: string | null;
  poNumber: string | null;
  status: SubscriptionStatus;
  billingGroupId: string | null;
  paymentMethodId: string | null;
  invoiceAddressId: string | null;
  startDate: string | null;
  activatedAt: string | null;
  trialEndsOn: string | null;
  /** When `subscription.trial_ending` was sent (three days before `trialEndsOn`). */
  trialEndingNotifiedAt: string | null;
  /** A plan change waiting for the end of the current period (`pendingPlanChange`). */
  pendingPlanId: string | null;
  pendingPlanApplyAt: string | null;
  customFields: Record<string, unknown>;
  periods: PeriodRecord[];
  cancellationDate: string | null;
  cancelledAt: string | null;
  cancellationReason: CancellationReason | null;
  pausedAt: string | null;
  terminatedAt: string | null;
  lastBillingAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ItemRecord {
  id: string;
  subscriptionId: string;
  parentId: string | null;
  productId: string;
  pricePlanId: string;
  type: 'charge' | 'addon';
  name: string | null;
  description: string | null;
  furtherInformation: string | null;
  /** Decimal string. */
  quantity: string;
  /** null: the item inherits the subscription's periods. */
  periods: PeriodRecord[] | null;
  startDate: string | null;
  billingStart: string | null;
  /** When set, the item's periods count from this instant (a running cycle it joined), not from its billing start. */
  billingAnchor: string | null;
  billingEnd: string | null;
  activatedAt: string | null;
  lastBilledAt: string | null;
  lastBilledFrom: string | null;
  lastBilledTo: string | null;
  nextBillingAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A quantity change of an item while it bills (decimal strings). */
export interface QuantityChange {
  id: string;
  itemId: string;
  changedAt: string;
  oldQuantity: string;
  newQuantity: string;
}

export type ItemBillingProgress = Pick<ItemRecord, 'id' | 'lastBilledAt' | 'lastBilledFrom' | 'lastBilledTo' | 'nextBillingAt' | 'updatedAt'>;

export interface InlineDiscount {
  name: string | null;
  type: 'percentage' | 'fixed_amount';
  frequency: 'once' | 'limited' | 'forever';
  percentage: number | null;
  fixedAmount: { amount: number; currency: string } | null;
  frequencyInterval: number | null;
}

export interface AppliedDiscountRecord {
  id: string;
  itemId: string;
  couponId: string | null;
  discount: InlineDiscount | null;
  status: 'active' | 'expired';
  appliedIntervals: number;
  createdAt: string;
}

export interface SubscriptionRepo {
  insert(org: string, s: SubscriptionRecord): Promise<void>;
  update(org: string, s: SubscriptionRecord): Promise<void>;
  get(org: string, id: string): Promise<SubscriptionRecord | undefined>;
  /** The subscriptions of these ids that exist, in no particular order. */
  getMany(org: string, ids: readonly string[]): Promise<SubscriptionRecord[]>;
  getByNumber(org: string, number: string): Promise<SubscriptionRecord | undefined>;
  numberTaken(org: string, number: string, exceptId?: string): Promise<boolean>;
  list(
    org: string,
    filter: { customer?: string | undefined; status?: string | undefined; externalId?: string | undefined },
    page: PageRequest,
  ): Promise<{ rows: SubscriptionRecord[]; total: number }>;
  /** Active or paused subscriptions whose cancellation date has come. */
  dueCancellations(now: string): Promise<Array<{ org: string; id: string }>>;
  /** Active subscriptions whose pending plan change is due. */
  duePlanChanges(now: string): Promise<Array<{ org: string; id: string }>>;
  /** Active subscriptions whose trial ends in (now, until] and whose `subscription.trial_ending` was not sent. */
  trialsEnding(now: string, until: string): Promise<Array<{ org: string; id: string }>>;

  insertItem(org: string, item: ItemRecord): Promise<void>;
  updateItem(org: string, item: ItemRecord): Promise<void>;
  insertQuantityChange(org: string, change: QuantityChange): Promise<void>;
  /** The quantity changes of these items, oldest first. */
  quantityChanges(org: string, itemIds: readonly string[]): Promise<QuantityChange[]>;
  /** Where the billing of these items stands, written in one statement. */
  updateItemsBilling(org: string, progress: readonly ItemBillingProgress[]): Promise<void>;
  /** `lastBillingAt` of a subscription after a billing run's invoices (only it and updatedAt change). */
  updateLastBilling(org: string, id: string, lastBillingAt: string, updatedAt: string): Promise<void>;
  /** `updateLastBilling` of many subscriptions, in multi-row statements. */
  updateLastBillings(org: string, rows: ReadonlyArray<{ id: string; lastBillingAt: string; updatedAt: string }>): Promise<void>;
  getItem(org: string, id: string): Promise<ItemRecord | undefined>;
  items(org: string, subscriptionIds: readonly string[]): Promise<ItemRecord[]>;

  insertDiscount(org: string, d: AppliedDiscountRecord): Promise<void>;
  discounts(org: string, itemIds: readonly string[]): Promise<AppliedDiscountRecord[]>;
  /** Status and appliedIntervals of a discount a billing run consumed. */
  updateDiscount(org: string, d: AppliedDiscountRecord): Promise<void>;
}
