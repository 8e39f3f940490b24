/**
 * Plan changes (issue 17, docs/decisions.md "Plan changes and trials"): a subscription moves to
 * another active plan of its plan's family, as the current plan's `changeBehaviour` permits,
 * immediately or at the end of the current period (`changeApplyBehaviour` unless the caller says).
 * Applying a change ends the old plan's charges at the change, credits the unused part of fees paid
 * in advance on the invoices that billed them, starts the new plan's charges in the running billing
 * cycle and bills at once what is due at the change, all through the billing engine.
 */
import { conflict, invalid, invalidMany } from '../../errors.js';
import type { Plan } from '../../schemas/catalogue.js';
import type { CreditNote } from '../../schemas/creditNotes.js';
import type { Customer } from '../../schemas/customers.js';
import type { Invoice, InvoiceLine } from '../../schemas/invoices.js';
import type { Subscription } from '../../schemas/subscriptions.js';
import type { ItemRecord, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import type { Tx } from '../../store/store.js';
import { CatalogueCache, taxRateE4 } from '../billing/compute.js';
import { billSubscription, type BillingSettings } from '../billing/run.js';
import { alignmentOf, chargeKindOf, itemAnchor, itemTerms, periodFrom, proRataShare, type ChargeKind } from '../billing/schedule.js';
import { billingAddressOf } from '../billingDetails.js';
import { creditable } from '../creditNotes.js';
import { parseInterval, toIso, zoned } from '../dates.js';
import { emitEvent } from '../events.js';
import { getInvoice, invoiceTotals, issueCreditNote, refuseIfPlanned } from '../invoices.js';
import { grantActiveFeatures } from '../features.js';
import { rateOfE4 } from '../../values/money.js';
import { findPlan } from '../plans.js';
import { chargeCapProblem, priceCharge } from '../pricing.js';
import { toMicros } from '../quantity.js';
import { chargeViolations } from '../statusRules.js';
import { FINAL } from '../subscriptionStates.js';
import { scheduleItem } from './lifecycle.js';
import { toResource } from './readModel.js';
import { blankItem, loadSubscription } from './records.js';

export type ApplyAt = 'immediately' | 'end_of_period';

export interface PlanChangeInput {
  plan: string;
  applyAt?: ApplyAt | undefined;
  /** Default true: the new plan's charges keep the quantities of the current items of their products (`chargeQuantities`). */
  keepQuantities?: boolean | undefined;
}

export interface PlanChangeResult {
  subscription: Subscription;
  applyAt: string;
  applied: boolean;
  invoice: string | null;
  creditNotes: string[];
}

export interface CreditPreview {
  invoice: string;
  amount: number;
  lines: Array<{ description: string; netAmount: number; taxRate: number }>;
}

export interface PlanChangePreview {
  applyAt: string;
  creditNotes: CreditPreview[];
  invoice: (Pick<Invoice, 'netAmount' | 'taxAmount' | 'grossAmount'> & { lines: Array<Omit<InvoiceLine, 'id' | 'position' | 'unitAmount'>> }) | null;
}

/** How many periods of an interval make a year (0 for a one-off `0M` charge), to compare plans billed at different intervals. */
function periodsPerYear(billingInterval: string): number {
  const { count, unit } = parseInterval(billingInterval);
  if (count === 0) return 0;
  const days = { D: 1, W: 7, M: 365.2425 / 12, Y: 365.2425 }[unit];
  return 365.2425 / (days * count);
}

/**
 * The quantity of each of the plan's charges on the subscription: with `keep`, the quantity of the
 * subscription's charge item of the same product (the first of `items`, if several), as Stripe and
 * Chargebee keep quantities across a plan change; otherwise, or without such an item, the plan's own.
 */
function chargeQuantities(plan: Plan, items: readonly ItemRecord[], keep: boolean): string[] {
  return plan.charges.map((c) => (keep ? items.find((i) => i.productId === c.product.id)?.quantity : undefined) ?? String(c.quantity));
}

/**
 * A plan's recurring total per year, in minor units: its flat charges (usage is not recurring) at
 * `quantities` (`chargeQuantities`). Upgrade = the target's is higher, downgrade = lower.
 */
function recurringPerYear(plan: Plan, quantities: readonly string[]): number {
  let total = 0;
  for (const [i, c] of plan.charges.entries()) {
    if (chargeKindOf(c.product, c.pricePlan.type) !== 'flat') continue;
    const net = priceCharge(c.pricePlan, toMicros(quantities[i]!)).reduce((sum, l) => sum + l.netAmount, 0);
    total += net * periodsPerYear(c.pricePlan.billingInterval);
  }
  return total;
}

/** At most this many plans are named in a refused change's message. */
const CHOICES_NAMED = 10;

/**
 * What a refused change can pick instead, for its message: the active plans of the current plan's
 * family but the current one, by code and id (list_plans has no family filter; get_plan shows a
 * plan's family).
 */
async function familyChoices(tx: Tx, org: string, current: Plan): Promise<string> {
  const named: string[] = [];
  for (let page = 1; named.length < CHOICES_NAMED; page += 1) {
    const { rows } = await tx.plans.list(org, { status: 'active' }, { page, limit: 100, descending: false });
    for (const p of rows) if (p.family.id === current.family.id && p.id !== current.id && named.length < CHOICES_NAMED) named.push(`${p.code} (${p.id})`);
    if (rows.length < 100) break;
  }
  return named.length ? `the other active plans of its family ${current.family.id} are ${named.join(', ')}` : `its family ${current.family.id} has no other active plan`;
}

/**
 * The checks of a change: 409 for the subscription's state or a plan that allows none, 422 naming
 * `plan` otherwise (a charge of the target that at its quantity would cost more than an invoice may
 * total, too). `items` are the current plan's charge items.
 */
async function checkChange(
  tx: Tx,
  org: string,
  record: SubscriptionRecord,
  input: PlanChangeInput,
  items: readonly ItemRecord[],
  customer: Customer,
): Promise<{ current: Plan; target: Plan }> {
  const planRef = input.plan;
  if (record.status !== 'active') {
    const hint = record.status === 'paused' ? ' (resume_subscription first)' : record.status === 'draft' ? ' (a draft is made anew: create_subscription)' : '';
    throw conflict(`Subscription ${record.number} is ${record.status}; only an active subscription changes plan${hint}`);
  }
  if (record.pendingPlanId) {
    throw conflict(`Subscription ${record.number} changes plan at ${record.pendingPlanApplyAt} already; revoke_subscription_plan_change first to choose another change`);
  }
  if (record.cancellationDate) {
    throw conflict(`Subscription ${record.number} cancels at ${record.cancellationDate}; revoke_subscription_cancellation first to change its plan`);
  }
  const current = (await findPlan(tx, org, record.planId)) as Plan;
  const target = await findPlan(tx, org, planRef);
  const family = `family ${current.family.id}`;
  if (!target) throw invalid('plan', `plan '${planRef}' does not exist; ${await familyChoices(tx, org, current)}`, 'not_found');
  if (target.id === current.id) throw invalid('plan', `the subscription is on plan ${current.code} already; ${await familyChoices(tx, org, current)}`, 'same_plan');
  if (target.family.id !== current.family.id) {
    throw invalid(
      'plan',
      `plan ${target.code} is not of ${family} (the current plan's); a subscription changes only between plans of one family: ${await familyChoices(tx, org, current)}`,
      'other_family',
    );
  }
  if (target.status !== 'active') throw invalid('plan', `plan ${target.code} is ${target.status}; a subscription changes only to an active plan`, 'not_active');
  const inactive = chargeViolations(target)[0];
  if (inactive) throw invalidMany([inactive]);
  const currencies = [...new Set(target.charges.map((c) => c.pricePlan.currencyCode))];
  if (currencies.some((c) => c !== customer.currencyCode)) {
    throw invalid('plan', `plan ${target.code} is priced in ${currencies.join(', ')} but the subscription is billed in ${customer.currencyCode}`, 'currency_mismatch');
  }
  const behaviour = current.changeBehaviour;
  if (behaviour === 'not_changeable') throw conflict(`Plan ${current.code} is not_changeable (changeBehaviour): its subscriptions keep it`);
  const keep = input.keepQuantities ?? true;
  const quantities = chargeQuantities(target, items, keep);
  for (const [i, c] of target.charges.entries()) {
    const problem = chargeKindOf(c.product, c.pricePlan.type) === 'flat' ? chargeCapProblem(c.pricePlan, quantities[i]!) : undefined;
    if (problem) throw invalid('plan', `plan ${target.code}, charge ${c.product.name}: ${problem}`, 'too_large');
  }
  const from = recurringPerYear(current, chargeQuantities(current, items, true));
  const to = recurringPerYear(target, quantities);
  if (to > from && behaviour === 'downgradeable_only') {
    throw invalid('plan', `plan ${current.code} allows downgrades only and ${target.code} has a higher recurring total (an upgrade); pick a cheaper plan of ${family}`, 'upgrade_not_allowed');
  }
  if (to < from && behaviour === 'upgradeable_only') {
    throw invalid('plan', `plan ${current.code} allows upgrades only and ${target.code} has a lower recurring total (a downgrade); pick a dearer plan of ${family}`, 'downgrade_not_allowed');
  }
  return { current, target };
}

/** The charges of the plan in force at `at`: items from a plan (not addons) that have not ended before it. */
async function planItems(tx: Tx, org: string, record: SubscriptionRecord, at: string): Promise<ItemRecord[]> {
  return (await tx.subscriptions.items(org, [record.id])).filter((i) => i.type === 'charge' && (i.billingEnd === null || i.billingEnd >= at));
}

interface Pricing {
  cache: CatalogueCache;
  timeZone: string;
}

async function termsOf(tx: Tx, org: string, record: SubscriptionRecord, item: ItemRecord, pricing: Pricing, now: Date) {
  const plan = await pricing.cache.pricePlan(tx, org, item.pricePlanId);
  const product = await pricing.cache.product(tx, org, item.productId);
  const group = record.billingGroupId ? await pricing.cache.billingGroup(tx, org, record.billingGroupId) : undefined;
  const kind: ChargeKind = chargeKindOf(product, plan.type);
  return { plan, product, kind, terms: itemTerms(record, item, plan, kind === 'instant' ? 'usage' : kind, alignmentOf(group), pricing.timeZone, now) };
}

/** The end of the current period: the first period end after `now` among the plan's charges. */
async function currentPeriodEnd(tx: Tx, org: string, record: SubscriptionRecord, items: ItemRecord[], pricing: Pricing, now: Date): Promise<string> {
  let first: string | undefined;
  for (const item of items) {
    const { terms } = await termsOf(tx, org, record, item, pricing, now);
    const at = zoned(now, pricing.timeZone);
    const period = periodFrom(terms, at > terms.begin ? at : terms.begin);
    const end = period && toIso(period.end);
    if (end && (!first || end < first)) first = end;
  }
  return first ?? now.toISOString();
}

/**
 * What the unused part of the fees paid in advance comes to, per invoice that billed them: for each
 * `proRata` flat charge billed beyond `at`, the price for the days from `at` to the end of what was
 * billed, over the days of its aligned period, with its tax rate. Without `proRata` nothing is
 * credited, as a partial period costs the full amount.
 */
async function unusedCredits(tx: Tx, org: string, record: SubscriptionRecord, items: ItemRecord[], at: string, pricing: Pricing, now: Date) {
  const address = await billingAddressOf(tx, org, record);
  const seller = await pricing.cache.seller(tx, org);
  const byInvoice = new Map<string, Array<{ description: string; netAmount: number; taxRateE4: number }>>();
  for (const item of items) {
    if (item.lastBilledFrom === null || item.lastBilledTo === null || item.lastBilledTo <= at) continue;
    const { plan, product, kind, terms } = await termsOf(tx, org, record, item, pricing, now);
    if (kind !== 'flat' || !plan.payInAdvance || !plan.proRata) continue;
    const billed = periodFrom(terms, zoned(item.lastBilledFrom, pricing.timeZone));
    const invoice = await tx.billing.invoiceOfCharge(org, { itemId: item.id, periodKey: item.lastBilledFrom, kind });
    if (!billed || !invoice) continue;
    const from = zoned(at > item.lastBilledFrom ? at : item.lastBilledFrom, pricing.timeZone);
    const to = zoned(item.lastBilledTo, pricing.timeZone);
    const share = proRataShare(billed, from, to);
    const netAmount = priceCharge(plan, toMicros(item.quantity), share).reduce((sum, l) => sum + l.netAmount, 0);
    if (netAmount <= 0) continue;
    const days = share ? ` (pro rata ${share.days}/${share.of} days)` : '';
    const lines = byInvoice.get(invoice) ?? [];
    lines.push({
      description: `Unused ${item.name ?? product.name} ${from.toISODate()} – ${to.toISODate()}${days}`,
      netAmount,
      taxRateE4: taxRateE4(product, address, seller.address?.countryCode ?? null, from.toISODate() as string),
    });
    byInvoice.set(invoice, lines);
  }
  return byInvoice;
}

interface Applied {
  record: SubscriptionRecord;
  credits: CreditPreview[];
  creditNotes: CreditNote[];
  invoice: Invoice | null;
}

/**
 * Applies the change at `at`: credits the unused time paid in advance (capped at what each invoice
 * can still be credited, under the credit-note rules), ends the old plan's charges at `at`, starts
 * the new plan's there (in the running cycle when the billing interval is the same, in a new one
 * from `at` otherwise; at the old items' quantities with `keepQuantities`, `chargeQuantities`) and
 * bills what is due at `at`.
 */
async function applyChange(
  tx: Tx,
  org: string,
  record: SubscriptionRecord,
  change: { current: Plan; target: Plan; at: string; keepQuantities: boolean },
  now: Date,
  settings: BillingSettings,
): Promise<Applied> {
  const { current, target, at } = change;
  const customer = (await tx.customers.get(org, record.customerId)) as Customer;
  const pricing: Pricing = { cache: new CatalogueCache(), timeZone: customer.timeZone };
  const old = await planItems(tx, org, record, at);
  const reason = `Plan change from ${current.code} to ${target.code} on ${zoned(at, customer.timeZone).toISODate()}: time paid in advance and not used`;
  const credits: CreditPreview[] = [];
  const creditNotes: CreditNote[] = [];
  for (const [invoiceId, lines] of await unusedCredits(tx, org, record, old, at, pricing, now)) {
    const invoice = await getInvoice(tx, org, invoiceId);
    if (invoice.status !== 'open' && invoice.status !== 'paid') continue;
    await refuseIfPlanned(tx, org, invoice, 'crediting the unused time of a plan change');
    const amount = Math.min(invoiceTotals(lines).grossAmount, (await creditable(tx, org, invoice)).max);
    if (amount <= 0) continue;
    credits.push({ invoice: invoice.id, amount, lines: lines.map((l) => ({ description: l.description, netAmount: l.netAmount, taxRate: rateOfE4(l.taxRateE4) })) });
    creditNotes.push((await issueCreditNote(tx, org, invoice, { amount, reason }, now)).creditNote);
  }

  // A name that is still the plan's (the default) follows the plan; a name of the subscription's own stays.
  const name = record.name === current.name ? target.name : record.name;
  const next: SubscriptionRecord = { ...record, name, planId: target.id, pendingPlanId: null, pendingPlanApplyAt: null, updatedAt: now.toISOString() };
  await tx.subscriptions.update(org, next);
  const anchors = new Map<string, string>();
  for (const item of old) {
    const plan = await pricing.cache.pricePlan(tx, org, item.pricePlanId);
    if (!anchors.has(plan.billingInterval)) anchors.set(plan.billingInterval, itemAnchor(record, item, now, plan));
    await tx.subscriptions.updateItem(org, await scheduleItem(tx, org, next, { ...item, billingEnd: at }, customer.timeZone, now));
  }
  const quantities = chargeQuantities(target, old, change.keepQuantities);
  for (const [i, c] of target.charges.entries()) {
    const item: ItemRecord = {
      ...blankItem(record.id, c.product.id, c.pricePlan.id, 'charge', quantities[i]!, now.toISOString()),
      startDate: at,
      billingAnchor: anchors.get(c.pricePlan.billingInterval) ?? null,
    };
    await tx.subscriptions.insertItem(org, await scheduleItem(tx, org, next, item, customer.timeZone, now));
  }
  await grantActiveFeatures(tx, org, record.id, now);

  const outcome = await billSubscription(tx, org, record.id, new Date(at), now, settings, pricing.cache);
  const invoice = 'invoices' in outcome ? (outcome.invoices.find((i) => i.issuedAt !== null && Date.parse(i.issuedAt) === Date.parse(at)) ?? null) : null;
  await emitEvent(
    tx,
    org,
    {
      type: 'subscription.plan_changed',
      subjectId: record.id,
      data: { subscription: record.id, fromPlan: current.id, toPlan: target.id, appliedAt: at, invoice: invoice?.id ?? null, creditNotes: creditNotes.map((n) => n.id) },
    },
    now,
  );
  return { record: next, credits, creditNotes, invoice };
}

/**
 * When a change asked for now would apply, and the plans it is between. A change that waits for the
 * period end takes the quantities it finds when it applies, so it cannot leave them (422 at
 * `keepQuantities`).
 */
async function plannedChange(tx: Tx, org: string, record: SubscriptionRecord, input: PlanChangeInput, now: Date) {
  const customer = (await tx.customers.get(org, record.customerId)) as Customer;
  const items = await planItems(tx, org, record, now.toISOString());
  const { current, target } = await checkChange(tx, org, record, input, items, customer);
  const applyAt = input.applyAt ?? current.changeApplyBehaviour;
  const pricing: Pricing = { cache: new CatalogueCache(), timeZone: customer.timeZone };
  const at = applyAt === 'immediately' ? now.toISOString() : await currentPeriodEnd(tx, org, record, items, pricing, now);
  const keepQuantities = input.keepQuantities ?? true;
  if (!keepQuantities && at > now.toISOString()) {
    throw invalid(
      'keepQuantities',
      `keepQuantities false takes the new plan's quantities only for a change applied now; this one waits for the period end (${at}) and keeps the quantities it finds then: use applyAt immediately, or change the quantities after it applies (update_subscription_item)`,
      'not_possible',
    );
  }
  return { change: { current, target, at, keepQuantities }, customer };
}

/**
 * change_subscription_plan: applied at once (`immediately`, or a period end that is now), or
 * pending until the end of the current period: then the old plan's charges end there already (no
 * run bills past it) and `pendingPlanChange` shows it until the jobs apply it.
 */
export async function changeSubscriptionPlan(tx: Tx, org: string, id: string, input: PlanChangeInput, now: Date, settings: BillingSettings): Promise<PlanChangeResult> {
  const record = await loadSubscription(tx, org, id);
  const { change, customer } = await plannedChange(tx, org, record, input, now);
  const { target, at } = change;
  if (at <= now.toISOString()) {
    const applied = await applyChange(tx, org, record, change, now, settings);
    return {
      subscription: await toResource(tx, org, applied.record, now),
      applyAt: at,
      applied: true,
      invoice: applied.invoice?.id ?? null,
      creditNotes: applied.creditNotes.map((n) => n.id),
    };
  }
  const pending: SubscriptionRecord = { ...record, pendingPlanId: target.id, pendingPlanApplyAt: at, updatedAt: now.toISOString() };
  await tx.subscriptions.update(org, pending);
  for (const item of await planItems(tx, org, record, at)) {
    await tx.subscriptions.updateItem(org, await scheduleItem(tx, org, pending, { ...item, billingEnd: at }, customer.timeZone, now));
  }
  return { subscription: await toResource(tx, org, pending, now), applyAt: at, applied: false, invoice: null, creditNotes: [] };
}

/**
 * preview_subscription_plan_change: the change applied at the instant it would apply, by the same
 * code; the caller's unit of work is rolled back (`Operation.dryRun`), so nothing stays.
 */
export async function previewSubscriptionPlanChange(tx: Tx, org: string, id: string, input: PlanChangeInput, now: Date, settings: BillingSettings): Promise<PlanChangePreview> {
  const record = await loadSubscription(tx, org, id);
  const { change } = await plannedChange(tx, org, record, input, now);
  const applied = await applyChange(tx, org, record, change, now, settings);
  const invoice = applied.invoice;
  return {
    applyAt: change.at,
    creditNotes: applied.credits,
    invoice: invoice && {
      lines: invoice.lines.map(({ id: _id, position: _position, unitAmount: _unitAmount, ...line }) => line),
      netAmount: invoice.netAmount, taxAmount: invoice.taxAmount, grossAmount: invoice.grossAmount },
  };
}

/** revoke_subscription_plan_change: the pending change is dropped and the old plan's charges run on. A final subscription no longer changes (409). */
export async function revokeSubscriptionPlanChange(tx: Tx, org: string, id: string, now: Date): Promise<Subscription> {
  const record = await loadSubscription(tx, org, id);
  if (FINAL.includes(record.status)) throw conflict(`Subscription ${record.number} is ${record.status}, which is final; it can no longer change`);
  const applyAt = record.pendingPlanApplyAt;
  if (!record.pendingPlanId || !applyAt) throw conflict(`Subscription ${record.number} has no pending plan change to revoke`);
  const next: SubscriptionRecord = { ...record, pendingPlanId: null, pendingPlanApplyAt: null, updatedAt: now.toISOString() };
  await tx.subscriptions.update(org, next);
  const { timeZone } = (await tx.customers.get(org, record.customerId)) as Customer;
  for (const item of await planItems(tx, org, record, applyAt)) {
    if (item.billingEnd === applyAt) await tx.subscriptions.updateItem(org, await scheduleItem(tx, org, next, { ...item, billingEnd: null }, timeZone, now));
  }
  return toResource(tx, org, next, now);
}

/** Jobs: pending plan changes whose date has come are applied at that date, each in its own unit of work. */
export async function applyDuePlanChange(tx: Tx, org: string, id: string, now: Date, settings: BillingSettings): Promise<boolean> {
  const record = await tx.subscriptions.get(org, id);
  const targetId = record?.pendingPlanId;
  const at = record?.pendingPlanApplyAt;
  if (!record || !targetId || !at || at > now.toISOString() || record.status !== 'active') return false;
  const current = (await findPlan(tx, org, record.planId)) as Plan;
  const target = (await findPlan(tx, org, targetId)) as Plan;
  await applyChange(tx, org, record, { current, target, at, keepQuantities: true }, now, settings);
  return true;
}
