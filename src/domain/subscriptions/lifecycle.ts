/** Creating and updating subscriptions, and their state machine (CONTRACT section 5, "Subscriptions"). */
import { conflict, invalid, invalidMany, type Violation } from '../../errors.js';
import { newId } from '../../ids.js';
import type { PricePlan } from '../../schemas/catalogue.js';
import type { Customer } from '../../schemas/customers.js';
import type { Subscription } from '../../schemas/subscriptions.js';
import type { CancellationReason, ItemRecord, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import type { Tx } from '../../store/store.js';
import {
  alignmentOf,
  awaitsSettlement,
  chargeKindOf,
  cursorOf,
  isRestarted,
  itemTerms,
  nextBillingDate,
  periodFrom,
  restartItem,
  unrestartItem,
} from '../billing/schedule.js';
import { findBillingGroup } from '../billingGroups.js';
import { getInvoiceAddress, paymentMethodViolation } from '../billingDetails.js';
import { findCustomer } from '../customers.js';
import { validateCustomFields } from '../customFields.js';
import { addInterval, parseInterval, toIso, zoned } from '../dates.js';
import { emitEvent } from '../events.js';
import { grantActiveFeatures } from '../features.js';
import { findPlan } from '../plans.js';
import { chargeCapProblem } from '../pricing.js';
import { getPricePlan, getProduct } from '../products.js';
import { assertActivatable, chargeViolations, customerViolation, draftPlanViolation, pricePlanViolation } from '../statusRules.js';
import { assertTransition, FINAL } from '../subscriptionStates.js';
import { toResource } from './readModel.js';
import { blankItem, loadSubscription } from './records.js';
import { cancelsInTrial, newPeriods, reachableTermEnd, type DateAsked, type PeriodInput } from './terms.js';



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
  now: Date,
): Promise<Array<Violation | undefined>> {
  const out: Array<Violation | undefined> = [];
  if (input.paymentMethod) out.push(await paymentMethodViolation(tx, org, customerId, input.paymentMethod, now));
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


/**
 * An item's next billing date from where its billing stands: as the subscription becomes (or is)
 * active, and whenever its end moves (cancellation, its revocation, termination) or billing restarts
 * (resume with a date). Items of `instant_metered` usage have none: each value is billed as recorded.
 */
export async function scheduleItem(tx: Tx, org: string, record: SubscriptionRecord, item: ItemRecord, timeZone: string, now: Date): Promise<ItemRecord> {
  const pricePlan = await getPricePlan(tx, org, item.pricePlanId);
  const product = await getProduct(tx, org, item.productId);
  const group = record.billingGroupId ? await findBillingGroup(tx, org, record.billingGroupId) : undefined;
  const kind = chargeKindOf(product, pricePlan.type);
  const at = now.toISOString();
  const activatedAt = item.activatedAt ?? at;
  if (kind === 'instant') return { ...item, activatedAt, nextBillingAt: null, updatedAt: at };
  const terms = itemTerms(record, item, pricePlan, kind, alignmentOf(group), timeZone, now);
  const cursor = cursorOf(terms, item);
  // Once its periods have ended, an item may still owe the settlement of a quantity change.
  const settles = !periodFrom(terms, cursor) && kind === 'flat' && awaitsSettlement(item, pricePlan, await tx.subscriptions.quantityChanges(org, [item.id]));
  return { ...item, activatedAt, nextBillingAt: nextBillingDate(terms, cursor, settles), updatedAt: at };
}

/** Every started item of the subscription scheduled anew (see `scheduleItem`), after `change` (given the item's price plan) when given. */
async function rescheduleItems(
  tx: Tx,
  org: string,
  record: SubscriptionRecord,
  now: Date,
  change?: (item: ItemRecord, plan: PricePlan) => ItemRecord,
): Promise<void> {
  const timeZone = await timeZoneOf(tx, org, record);
  for (const item of await tx.subscriptions.items(org, [record.id])) {
    if (item.activatedAt === null) continue;
    const changed = change ? change(item, await getPricePlan(tx, org, item.pricePlanId)) : item;
    await tx.subscriptions.updateItem(org, await scheduleItem(tx, org, record, changed, timeZone, now));
  }
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
  const violations: Array<Violation | undefined> = [customerViolation(customer), draftPlanViolation(plan), ...chargeViolations(plan)];
  if (plan.status === 'archived') {
    violations.push({
      propertyPath: 'plan',
      message: `plan ${plan.code} is archived; subscribe to an active plan (list_plans with status active), or set this one active with update_plan`,
      code: 'archived',
    });
  }
  const currencies = new Set(plan.charges.map((c) => c.pricePlan.currencyCode));
  if ([...currencies].some((c) => c !== customer.currencyCode)) {
    violations.push({
      propertyPath: 'plan',
      message: `plan ${plan.code} is priced in ${[...currencies].join(', ')} but the customer is billed in ${customer.currencyCode}; pick a plan in ${customer.currencyCode}`,
      code: 'currency_mismatch',
    });
  }
  for (const c of plan.charges) {
    const problem = chargeKindOf(c.product, c.pricePlan.type) === 'flat' ? chargeCapProblem(c.pricePlan, c.quantity) : undefined;
    if (problem) violations.push({ propertyPath: 'plan', message: `plan ${plan.code}, charge ${c.product.name}: ${problem}`, code: 'too_large' });
  }
  const [billingGroupId, groupViolation] = await billingGroupViolation(tx, org, input.billingGroup);
  violations.push(groupViolation);
  violations.push(...(await billingDetailViolations(tx, org, customer.id, input, now)));
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
    } else {
      const problem = chargeKindOf(match.product, match.pricePlan.type) === 'flat' ? chargeCapProblem(match.pricePlan, 1) : undefined;
      violations.push(pricePlanViolation(match.pricePlan, `addons[${i}]`));
      if (problem) violations.push({ propertyPath: `addons[${i}]`, message: `addons[${i}]: ${problem}`, code: 'too_large' });
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
    trialEndingNotifiedAt: null,
    pendingPlanId: null,
    pendingPlanApplyAt: null,
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

/**
 * What can still be done about an offer's terms once it has left open, per its status: only an open
 * or signing offer can be archived (CONTRACT section 5, "Offers").
 */
const FROZEN_TERMS_WAY_OUT = {
  signing: 'To change the terms, withdraw the offer (archive_offer) and make a new one (create_offer) with the new terms; only name may still change.',
  awaiting_invoice_details:
    "It can no longer be withdrawn: it waits only for the invoice address, and submit_offer_invoice_details completes it (signed); from then on the subscription is the customer's own and changes like any other. Only name may change meanwhile.",
  archived: 'Nothing of it changes any more; to propose other terms, make a new offer (create_offer).',
} as const;

/**
 * The terms an offer proposes are its subscription's (items, quantities, discounts, periods, billing
 * group, start date, ...): they may change while the offer is open (its page shows them as they are),
 * and are frozen once it has left open, since a recipient has then accepted or signed them: a change
 * (`changes` names what the request would change; none, nothing is refused) is a 409 naming the
 * offer, its status and what still works in that status (`FROZEN_TERMS_WAY_OUT`). A subscription
 * still in status offer belongs to a signing or awaiting_invoice_details offer; a terminated one that
 * never ran to an archived offer. A signed offer's subscription is the customer's own (active or
 * draft): its signed document is kept as signed, and the subscription changes as any other.
 */
export async function assertOfferTermsOpen(tx: Tx, org: string, record: SubscriptionRecord, changes: readonly string[]): Promise<void> {
  if (changes.length === 0) return;
  if (record.status !== 'offer' && !(record.status === 'terminated' && record.activatedAt === null)) return;
  const offer = await tx.offers.findBySubscription(org, record.id);
  if (!offer || offer.status === 'open' || offer.status === 'signed') return;
  const signed = offer.recipients.filter((r) => r.signingStatus === 'signed').length;
  const state =
    offer.status === 'archived'
      ? 'archived (withdrawn), and the subscription it proposed is terminated'
      : `${offer.status} (${signed} of ${offer.recipients.length} recipient${offer.recipients.length > 1 ? 's' : ''} ${offer.acceptanceMode === 'click' ? 'accepted' : 'signed'})`;
  throw conflict(
    `Subscription ${record.number} is proposed by offer ${offer.number}, which is ${state}: the terms of an offer are frozen once it has left open, so ${changes.join(', ')} cannot change. ` +
      FROZEN_TERMS_WAY_OUT[offer.status],
  );
}

/** JSON with sorted keys: two flat maps with the same entries compare equal. */
function canonicalMap(value: Record<string, unknown>): string {
  return JSON.stringify(Object.keys(value).sort().map((k) => [k, value[k]]));
}

/** The fields other than name whose value the update changes (a field sent with its current value changes nothing). */
function updatedTerms(
  current: SubscriptionRecord,
  input: UpdateSubscriptionInput,
  billingGroupId: string | null | undefined,
  wantedStart: string | null | undefined,
): string[] {
  const changed: string[] = [];
  const samePeriods =
    input.periods.length === current.periods.length &&
    input.periods.every((p, i) => p.contractPeriod === current.periods[i]!.contractPeriod && p.cancellationPeriod === current.periods[i]!.cancellationPeriod);
  if (!samePeriods) changed.push('periods');
  if (input.billingGroup !== undefined && billingGroupId !== current.billingGroupId) changed.push('billingGroup');
  if (wantedStart !== undefined && wantedStart !== current.startDate) changed.push('startDate');
  if (input.poNumber !== undefined && input.poNumber !== current.poNumber) changed.push('poNumber');
  if (input.number !== undefined && input.number !== current.number) changed.push('number');
  if (input.externalId !== undefined && input.externalId !== current.externalId) changed.push('externalId');
  if (input.customFields !== undefined && canonicalMap(input.customFields) !== canonicalMap(current.customFields)) changed.push('customFields');
  if (input.paymentMethod !== undefined && input.paymentMethod !== current.paymentMethodId) changed.push('paymentMethod');
  if (input.invoiceAddress !== undefined && input.invoiceAddress !== current.invoiceAddressId) changed.push('invoiceAddress');
  return changed;
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

/**
 * PUT: `periods` required; omitted fields stay, null clears; startDate only while draft (or offer).
 * The subscription of an offer that has left open changes only its name (`assertOfferTermsOpen`).
 */
export async function updateSubscription(tx: Tx, org: string, id: string, input: UpdateSubscriptionInput, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  const wantedStart = input.startDate === undefined ? undefined : input.startDate && new Date(input.startDate).toISOString();
  const [billingGroupId, groupViolation] = await billingGroupViolation(tx, org, input.billingGroup);
  await assertOfferTermsOpen(tx, org, current, updatedTerms(current, input, billingGroupId, wantedStart));
  if (FINAL.includes(current.status)) {
    throw conflict(`Subscription ${current.number} is ${current.status}, which is final; it can no longer be updated`);
  }
  if (wantedStart !== undefined && wantedStart !== current.startDate && current.status !== 'draft' && current.status !== 'offer') {
    throw conflict(`startDate of subscription ${current.number} is frozen: it may change only while the subscription is draft, and it is ${current.status}`);
  }
  const violations: Array<Violation | undefined> = [];
  violations.push(groupViolation);
  // An offer proposes its start as create_offer takes it: not in the past (signing would bill every period since).
  if (current.status === 'offer' && wantedStart && wantedStart !== current.startDate && Date.parse(wantedStart) < now.getTime()) {
    violations.push({
      propertyPath: 'startDate',
      message: `startDate of an offer's subscription must not lie in the past (before ${now.toISOString()}): signing would bill every period since then at once; give a later date, or null to start it when the offer is signed`,
      code: 'in_the_past',
    });
  }
  violations.push(...(await billingDetailViolations(tx, org, current.customerId, input, now)));
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
  // A new billing group aligns the periods from where billing stands: the rest of the current period
  // up to the new alignment, then aligned periods.
  if (next.billingGroupId !== current.billingGroupId) await rescheduleItems(tx, org, next, now);
  return toResource(tx, org, next, now);
}

export async function timeZoneOf(tx: Tx, org: string, record: SubscriptionRecord): Promise<string> {
  return ((await tx.customers.get(org, record.customerId)) as Customer).timeZone;
}

/**
 * The trial activation gives: the plan's `trialPeriod`, except for a subscription proposed by an offer
 * whose terms froze (a recipient accepted or signed; in status offer, or draft once signed without
 * activation): the trial its plan had then (`frozenTrialPeriod`), the one the recipient saw.
 */
async function trialPeriodOf(tx: Tx, org: string, record: SubscriptionRecord): Promise<string | null> {
  if (record.status === 'offer' || record.status === 'draft') {
    const offer = await tx.offers.findBySubscription(org, record.id);
    if (offer?.termsFrozenAt) return offer.frozenTrialPeriod;
  }
  return (await tx.plans.get(org, record.planId))?.trialPeriod ?? null;
}

/**
 * The subscription and its items as activation at `now` leaves them, nothing written: the contract
 * starts at startDate (now when unset), the trial (`trialPeriodOf`; if any) runs from the later of
 * the start and the activation, on the customer's wall clock, and every item's billing starts. The
 * estimate of a draft or offer subscription bills this state.
 */
export async function activatedState(
  tx: Tx,
  org: string,
  current: SubscriptionRecord,
  now: Date,
): Promise<{ record: SubscriptionRecord; items: ItemRecord[] }> {
  const at = now.toISOString();
  const timeZone = await timeZoneOf(tx, org, current);
  const startDate = current.startDate ?? at;
  const trialPeriod = await trialPeriodOf(tx, org, current);
  const trialFrom = startDate > at ? startDate : at;
  const trialEndsOn = trialPeriod ? toIso(addInterval(zoned(trialFrom, timeZone), parseInterval(trialPeriod))) : null;
  const record: SubscriptionRecord = { ...current, status: 'active', activatedAt: at, startDate, trialEndsOn, updatedAt: at };
  const items: ItemRecord[] = [];
  for (const item of await tx.subscriptions.items(org, [record.id])) items.push(await scheduleItem(tx, org, record, item, timeZone, now));
  return { record, items };
}

/** Activation (draft → active, and offer → active when a signed offer activates it): `activatedState`, written. */
export async function activateRecord(tx: Tx, org: string, current: SubscriptionRecord, now: Date): Promise<SubscriptionRecord> {
  await assertActivatable(tx, org, current);
  const { record, items } = await activatedState(tx, org, current, now);
  await tx.subscriptions.update(org, record);
  for (const item of items) await tx.subscriptions.updateItem(org, item);
  return record;
}

export async function activateSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('activate', current);
  return toResource(tx, org, await activateRecord(tx, org, current, now), now);
}

/**
 * active → paused. Paused again before the date a resume restarted its billing at (`isRestarted`),
 * the earlier pause goes on: its start stays `pausedAt`, as nothing was billed since.
 */
export async function pauseSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('pause', current);
  const at = now.toISOString();
  const items = current.pausedAt === null ? [] : await tx.subscriptions.items(org, [current.id]);
  const restartPending = items.some((i) => isRestarted(i) && (i.billingStart as string) > at);
  const record: SubscriptionRecord = { ...current, status: 'paused', pausedAt: restartPending ? current.pausedAt : at, updatedAt: at };
  await tx.subscriptions.update(org, record);
  return toResource(tx, org, record, now);
}

/**
 * paused → active. With `nextBillingDate` it becomes every item's next billing date (CONTRACT section
 * 5): billing restarts from it (`restartItem`), the pause is never billed, and on it each item is
 * billed what it owes from before the pause (the part of its period up to the pause's start that no
 * invoice billed) and, paid in advance, its first period from it. The subscription keeps `pausedAt`
 * for that (shown only while paused). Without it the pause is billed as if there had been none: every
 * period missed while paused is billed (`unrestartItem`), and `pausedAt` is cleared.
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
    if (current.pausedAt && new Date(input.nextBillingDate).toISOString() < current.pausedAt) {
      throw invalid(
        'nextBillingDate',
        `nextBillingDate must not be before the pause began (${current.pausedAt}); send a later date, or null to bill every missed period`,
        'too_early',
      );
    }
  }
  const record: SubscriptionRecord = { ...current, status: 'active', pausedAt: input.nextBillingDate ? current.pausedAt : null, updatedAt: at };
  await tx.subscriptions.update(org, record);
  const restart = input.nextBillingDate ? new Date(input.nextBillingDate).toISOString() : null;
  await rescheduleItems(tx, org, record, now, (item, plan) =>
    restart ? restartItem(current, item, now, plan, restart) : unrestartItem(current, item, now, plan),
  );
  return toResource(tx, org, record, now);
}

/**
 * During a trial a cancellation takes effect at `trialEndsOn` at the latest, without cancellation
 * period (at the trial's end when no date is given; any date from now up to it). Items with
 * `applyTrial` therefore bill nothing.
 */
function trialCancellationDate(current: SubscriptionRecord, wanted: string | undefined, now: Date, asked: DateAsked): string {
  const trialEndsOn = current.trialEndsOn as string;
  if (wanted === undefined) return trialEndsOn;
  const date = new Date(wanted).toISOString();
  if (date < now.toISOString() || date > trialEndsOn) {
    throw invalid(
      asked.field,
      `during the trial a cancellation takes effect by the trial's end: ${asked.field} must lie between now and trialEndsOn ${trialEndsOn}${asked.omittable ? ` (or omit it for the trial's end)` : ''}`,
      'not_possible',
    );
  }
  return date;
}

/** A cancellation needs an active or paused subscription without one already scheduled. */
function assertCancellable(current: SubscriptionRecord): void {
  assertTransition('cancel', current);
  if (current.cancellationDate) {
    throw conflict(
      `Subscription ${current.number} is already scheduled to cancel at ${current.cancellationDate}; revoke_subscription_cancellation first to choose another date`,
    );
  }
}

const CANCELLATION: DateAsked = { field: 'cancellationDate', omittable: true };

/**
 * When a cancellation asked for `wanted` takes effect: a term end the cancellation period still
 * allows (the next possible one when no date is given), or by the trial's end during a trial. A date
 * that is not possible is a 422 at `asked.field` naming the possible ones. An item that inherits the
 * subscription's periods ends by the same rule (`update_subscription_item` billingEnd).
 */
export async function cancellationDateOf(
  tx: Tx,
  org: string,
  current: SubscriptionRecord,
  wanted: string | undefined,
  now: Date,
  asked: DateAsked = CANCELLATION,
): Promise<string> {
  if (cancelsInTrial(current, now)) return trialCancellationDate(current, wanted, now, asked);
  const timeZone = await timeZoneOf(tx, org, current);
  const start = zoned(current.startDate ?? now.toISOString(), timeZone);
  return reachableTermEnd(start, current.periods, zoned(now, timeZone), wanted === undefined ? undefined : zoned(wanted, timeZone), asked);
}

/**
 * The date `cancelSubscription` without a date would set now, with nothing written (what a customer
 * is shown before confirming). A subscription that cannot be cancelled is refused as it would be.
 */
export async function nextCancellationDate(tx: Tx, org: string, id: string, now: Date): Promise<string> {
  const current = await loadSubscription(tx, org, id);
  assertCancellable(current);
  return cancellationDateOf(tx, org, current, undefined, now);
}

/**
 * Schedules the cancellation at a term end the cancellation period still allows (the next possible
 * one when no date is given), or by the trial's end during a trial. Until then the cancellation is
 * pending and can be revoked. Emits `subscription.cancellation_scheduled`.
 */
export async function cancelSubscription(
  tx: Tx,
  org: string,
  id: string,
  input: { cancellationDate?: string | undefined; reason?: { code: string; name?: string | undefined } | undefined },
  now: Date,
): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertCancellable(current);
  // The reverse of change_subscription_plan refusing while a cancellation is pending: a subscription
  // that ends never applies a change.
  if (current.pendingPlanId) {
    throw conflict(
      `Subscription ${current.number} changes plan at ${current.pendingPlanApplyAt}; revoke_subscription_plan_change first to cancel it (or terminate_subscription to end it now)`,
    );
  }
  const date = await cancellationDateOf(tx, org, current, input.cancellationDate, now);
  const at = now.toISOString();
  const reason: CancellationReason | null = input.reason
    ? { id: newId(), code: input.reason.code, name: input.reason.name ?? input.reason.code, createdAt: at, updatedAt: at }
    : null;
  const record: SubscriptionRecord = { ...current, cancellationDate: date, cancellationReason: reason, updatedAt: at };
  await tx.subscriptions.update(org, record);
  await rescheduleItems(tx, org, record, now);
  const data = { subscription: record.id, cancellationDate: date, reason: reason && { code: reason.code, name: reason.name } };
  await emitEvent(tx, org, { type: 'subscription.cancellation_scheduled', subjectId: record.id, data }, now);
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
  await rescheduleItems(tx, org, record, now);
  return toResource(tx, org, record, now);
}

/**
 * The `pausedAt` a subscription ending at `end` ends with: its pause's start when it ends paused, or
 * before the date a resume restarted its billing at (`isRestarted`): nothing from the pause on is
 * billed (`itemEnd`), what came before it is; none when it ends active after billing restarted.
 */
async function endedPause(tx: Tx, org: string, current: SubscriptionRecord, end: string): Promise<string | null> {
  if (current.pausedAt === null || current.status === 'paused') return current.pausedAt;
  const items = await tx.subscriptions.items(org, [current.id]);
  return items.some((i) => isRestarted(i) && (i.billingStart as string) > end) ? current.pausedAt : null;
}

/** Ends the subscription now (final); a pending plan change is dropped with it, as it can never apply. */
export async function terminateSubscription(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const current = await loadSubscription(tx, org, id);
  assertTransition('terminate', current);
  const at = now.toISOString();
  const record: SubscriptionRecord = {
    ...current,
    status: 'terminated',
    terminatedAt: at,
    pausedAt: await endedPause(tx, org, current, at),
    pendingPlanId: null,
    pendingPlanApplyAt: null,
    updatedAt: at,
  };
  await tx.subscriptions.update(org, record);
  await rescheduleItems(tx, org, record, now);
  return toResource(tx, org, record, now);
}

/**
 * Jobs: pending cancellations whose date has come become `cancelled`. One that ends paused (or before
 * its billing restarted) stops its items at the pause's start (`itemEnd`), one that ends active drops
 * the pause a resume kept (`endedPause`): either way its items are scheduled anew.
 */
export async function cancelDueSubscriptions(tx: Tx, now: Date): Promise<number> {
  const due = await tx.subscriptions.dueCancellations(now.toISOString());
  for (const { org, id } of due) {
    const current = (await tx.subscriptions.get(org, id)) as SubscriptionRecord;
    const cancelledAt = current.cancellationDate as string;
    const pausedAt = await endedPause(tx, org, current, cancelledAt);
    const record: SubscriptionRecord = { ...current, status: 'cancelled', cancelledAt, pausedAt, updatedAt: now.toISOString() };
    await tx.subscriptions.update(org, record);
    if (current.pausedAt) await rescheduleItems(tx, org, record, now);
  }
  return due.length;
}

/** How long before its end a trial is announced (`subscription.trial_ending`). */
const TRIAL_NOTICE_MS = 3 * 24 * 60 * 60 * 1000;

/** Jobs: `subscription.trial_ending` for every active subscription whose trial ends within three days, once. */
export async function announceEndingTrials(tx: Tx, now: Date): Promise<number> {
  const at = now.toISOString();
  const due = await tx.subscriptions.trialsEnding(at, new Date(now.getTime() + TRIAL_NOTICE_MS).toISOString());
  for (const { org, id } of due) {
    const current = (await tx.subscriptions.get(org, id)) as SubscriptionRecord;
    await tx.subscriptions.update(org, { ...current, trialEndingNotifiedAt: at });
    await emitEvent(tx, org, { type: 'subscription.trial_ending', subjectId: id, data: { subscription: id, trialEndsOn: current.trialEndsOn } }, now);
  }
  return due.length;
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

/** A withdrawn (archived) offer ends the subscription it proposed: offer → terminated, never billed. */
export async function withdrawOfferSubscription(tx: Tx, org: string, subscriptionId: string, now: Date): Promise<void> {
  const current = await loadSubscription(tx, org, subscriptionId);
  if (current.status !== 'offer') {
    throw conflict(`Subscription ${current.number} is ${current.status}; only a subscription in status offer ends with its offer`);
  }
  const at = now.toISOString();
  await tx.subscriptions.update(org, { ...current, status: 'terminated', terminatedAt: at, updatedAt: at });
}

