/**
 * The billing computation (ARCHITECTURE principle 11): from a subscription, its items' price plans,
 * their usage aggregates and the dates, the invoices that are due as of an instant, with nothing
 * written. The billing run writes what it returns; the estimated invoice shows its first invoice. For
 * a subscription unchanged between the two, the next invoice therefore equals the estimate line for
 * line and cent for cent.
 */
import type { DateTime, Zone } from 'luxon';
import { conflict } from '../../errors.js';
import type { BillingGroup, PricePlan, Product } from '../../schemas/catalogue.js';
import type { Customer } from '../../schemas/customers.js';
import type { Organisation } from '../../schemas/organisation.js';
import type { InvoiceAddress } from '../../schemas/billingDetails.js';
import type { AppliedDiscountRecord, ItemRecord, QuantityChange, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import type { BilledChargeKey } from '../../store/ports/billingRuns.js';
import type { ReverseCharge } from '../../store/ports/invoices.js';
import type { PriceChange } from '../../store/ports/products.js';
import type { Tx } from '../../store/store.js';
import { intervalValue, metricValue, timeWeightedValue, type ItemInterval } from '../aggregation.js';
import { billingAddressOf } from '../billingDetails.js';
import { findBillingGroup } from '../billingGroups.js';
import { EU_MEMBER_STATES } from '../countries.js';
import { discountsByItem, findCoupon, percentageE2 } from '../coupons.js';
import { periodText, toIso, zoned, zoneOf } from '../dates.js';
import type { BilledLineInput } from '../invoices.js';
import { formatMoney, percentOf, rateToE4, toMinor } from '../../values/money.js';
import { priceCharge, type PricedLine } from '../pricing.js';
import { memo } from '../memo.js';
import { getOrganisation } from '../organisation.js';
import { invoiceTotals, MAX_AMOUNT_CENTS } from '../invoices.js';
import { getPricePlan, getProduct, priceChangesOf, pricePlanAt } from '../products.js';
import { formatQuantity, toMicros } from '../quantity.js';
import { isWellFormedVatId } from '../vatIds.js';
import {
  alignmentOf,
  awaitsSettlement,
  chargeKindOf,
  cursorOf,
  itemTerms,
  periodFrom,
  proRataShare,
  type BillingPeriod,
  type ChargeKind,
  type ItemTerms,
} from './schedule.js';

/**
 * Catalogue entries a billing run reads again and again (products with their tax groups, price
 * plans, billing groups, the seller), loaded once per run. Never shared between runs.
 */
export class CatalogueCache {
  private readonly products = new Map<string, Promise<Product>>();
  private readonly plans = new Map<string, Promise<PricePlan>>();
  private readonly prices = new Map<string, Promise<PriceChange[]>>();
  private readonly groups = new Map<string, Promise<BillingGroup | undefined>>();
  private readonly sellers = new Map<string, Promise<Organisation>>();

  product(tx: Tx, org: string, id: string): Promise<Product> {
    return memo(this.products, `${org} ${id}`, () => getProduct(tx, org, id));
  }

  pricePlan(tx: Tx, org: string, id: string): Promise<PricePlan> {
    return memo(this.plans, `${org} ${id}`, () => getPricePlan(tx, org, id));
  }

  priceChanges(tx: Tx, org: string, pricePlanId: string): Promise<PriceChange[]> {
    return memo(this.prices, `${org} ${pricePlanId}`, () => priceChangesOf(tx, org, pricePlanId));
  }

  billingGroup(tx: Tx, org: string, id: string): Promise<BillingGroup | undefined> {
    return memo(this.groups, `${org} ${id}`, () => findBillingGroup(tx, org, id));
  }

  seller(tx: Tx, org: string): Promise<Organisation> {
    return memo(this.sellers, org, () => getOrganisation(tx, org));
  }
}

/** A line of a due invoice: the invoice line, and the item it bills (null for none). */
export interface DraftLine extends BilledLineInput {
  itemId: string | null;
  /** For the difference a quantity change makes to a period already billed: that period's charge. */
  adjusts?: BilledChargeKey;
}

/** Where an item's billing stands after an invoice: what the run writes back to the item. */
export interface ItemProgress {
  lastBilledFrom: string;
  lastBilledTo: string;
  nextBillingAt: string | null;
}

export interface DraftInvoice {
  billingDate: string;
  lines: DraftLine[];
  /**
   * Quantity decreases the invoice cannot absorb: when its lines would total below 0, the decreases
   * leave them and are credited on the invoices that billed their periods (`creditDecreases`).
   */
  credits: DraftLine[];
  keys: BilledChargeKey[];
  /** The items this invoice bills, as they stand after it. */
  progress: Map<string, ItemProgress>;
  /** The discounts this invoice consumed, as they stand after it. */
  discounts: AppliedDiscountRecord[];
  /** The reverse charges that zero-rated its items' lines (the invoice states them). */
  reverseCharges: ReverseCharge[];
}

export interface DueBilling {
  record: SubscriptionRecord;
  customer: Customer;
  seller: Organisation;
  address: InvoiceAddress | undefined;
  drafts: DraftInvoice[];
  /** The billing date of the first invoice due after `asOf` (of the next one when nothing is due), or null. */
  nextBillingAt: string | null;
}

/**
 * The tax rate of a line, in 1/10,000 percent: the rate of the product's tax group for the invoice
 * address's country valid on the billing date (the latest `validFrom` not after it). Reverse charge
 * (0 %), when the group has one (`REVERSE_CHARGE` or `REVERSE_CHARGE_INTRA_EU_SUPPLY`), only for a
 * business buyer, one whose address has a well-formed VAT id of its country, in another EU member
 * state than the seller's (the organisation's address; without one, never). No tax group or no
 * invoice address: 0 %.
 */
export function taxRateE4(product: Product, address: Pick<InvoiceAddress, 'countryCode' | 'vatId'> | undefined, sellerCountry: string | null, onDate: string): number {
  const group = product.taxGroup;
  if (!group || !address) return 0;
  if (reverseChargeOf(product, address, sellerCountry)) return 0;
  let best: { validFrom: string; rate: number } | undefined;
  for (const t of group.taxes) {
    if (t.countryCode === address.countryCode && t.validFrom <= onDate && (!best || t.validFrom > best.validFrom)) best = t;
  }
  return best ? (rateToE4(best.rate) ?? 0) : 0;
}

/** The reverse charge (the tax group's kind) that zero-rates the product's lines for this buyer (`taxRateE4`), if one does. */
export function reverseChargeOf(product: Product, address: Pick<InvoiceAddress, 'countryCode' | 'vatId'> | undefined, sellerCountry: string | null): ReverseCharge | undefined {
  const kind = product.taxGroup?.reverseChargeType;
  if (!kind || kind === 'REVERSE_CHARGE_DEACTIVATED' || !address || sellerCountry === null) return undefined;
  const applies =
    address.countryCode !== sellerCountry &&
    EU_MEMBER_STATES.has(address.countryCode) &&
    EU_MEMBER_STATES.has(sellerCountry) &&
    isWellFormedVatId(address.countryCode, address.vatId);
  return applies ? kind : undefined;
}

interface ItemState {
  item: ItemRecord;
  product: Product;
  plan: PricePlan;
  /** Its price plan's price changes: a period is priced as at its start (`pricePlanAt`). */
  prices: PriceChange[];
  kind: ChargeKind;
  terms: ItemTerms;
  /** What its periods depend on besides the cursor (the alignment is the subscription's, the same for every item). */
  termsKey: string;
  /** Its quantity changes while it bills, oldest first (flat charges). */
  changes: QuantityChange[];
}

/** The item's quantity at an instant: set by the last change at or before it, else as before the first change after it, else its quantity. */
function quantityAt(state: ItemState, at: DateTime): string {
  const ms = at.toMillis();
  let quantity: string | undefined;
  for (const c of state.changes) {
    if (Date.parse(c.changedAt) <= ms) quantity = c.newQuantity;
    else return quantity ?? c.oldQuantity;
  }
  return quantity ?? state.item.quantity;
}

/**
 * The parts of a flat charge's period and the quantity each was billed at: in advance, the quantity at
 * the period's start (a later change is settled on the next invoice, see `quantityAdjustments`); in
 * arrears, each quantity for the days it held when `proRata`, else the last quantity of the period.
 */
function flatParts(state: ItemState, period: BillingPeriod, at: (instant: string) => DateTime): Array<{ from: DateTime; to: DateTime; quantity: string }> {
  if (state.terms.inAdvance) return [{ from: period.start, to: period.end, quantity: quantityAt(state, period.start) }];
  const inside = state.changes.filter((c) => {
    const t = at(c.changedAt);
    return t > period.start && t < period.end;
  });
  if (!inside.length) return [{ from: period.start, to: period.end, quantity: quantityAt(state, period.start) }];
  if (!state.plan.proRata) return [{ from: period.start, to: period.end, quantity: inside[inside.length - 1]!.newQuantity }];
  const parts = [];
  let from = period.start;
  let quantity = inside[0]!.oldQuantity;
  for (const c of inside) {
    const t = at(c.changedAt);
    parts.push({ from, to: t, quantity });
    from = t;
    quantity = c.newQuantity;
  }
  parts.push({ from, to: period.end, quantity });
  return parts;
}

/**
 * The calendar of one subscription's computation: its items mostly share their start, interval and
 * dates, and each date is asked about several times (due periods, next billing dates, upcoming), so
 * parsed instants, periods and ISO strings are remembered for the computation. All are immutable.
 */
class Calendar {
  private readonly instants = new Map<string, DateTime>();
  /** By the terms' key (one string per item state), then by the cursor's milliseconds; null: no period. */
  private readonly periods = new Map<string, Map<number, BillingPeriod | null>>();
  private readonly isos = new Map<number, string>();

  constructor(private readonly zone: Zone) {}

  readonly at = (instant: string): DateTime => {
    let dt = this.instants.get(instant);
    if (!dt) {
      dt = zoned(instant, this.zone);
      this.instants.set(instant, dt);
    }
    return dt;
  };

  iso(dt: DateTime): string {
    const ms = dt.toMillis();
    let text = this.isos.get(ms);
    if (text === undefined) {
      text = toIso(dt);
      this.isos.set(ms, text);
    }
    return text;
  }

  /** `periodFrom` of the item's terms. */
  period(state: ItemState, cursor: DateTime): BillingPeriod | undefined {
    let byCursor = this.periods.get(state.termsKey);
    if (!byCursor) this.periods.set(state.termsKey, (byCursor = new Map()));
    const ms = cursor.toMillis();
    let p = byCursor.get(ms);
    if (p === undefined) {
      p = periodFrom(state.terms, cursor) ?? null;
      byCursor.set(ms, p);
    }
    return p ?? undefined;
  }

  /** `nextBillingDate` of the item's terms, as it stands (`state.item`, with its quantity changes). */
  nextBillingDate(state: ItemState, cursor: DateTime): string | null {
    const p = this.period(state, cursor);
    if (p) return this.iso(p.billDate);
    return awaitsSettlement(state.item, state.plan, state.changes) ? this.iso(cursor) : null;
  }
}

function termsKey(terms: ItemTerms): string {
  const b = terms.beforePause;
  const before = b ? `${b.anchor.toMillis()} ${b.begin.toMillis()} ${b.until.toMillis()} ${b.restart.toMillis()}` : '-';
  return `${terms.anchor.toMillis()} ${terms.begin.toMillis()} ${terms.interval.count}${terms.interval.unit} ${terms.end?.toMillis() ?? '-'} ${terms.inAdvance} ${before}`;
}

/** The pro-rata fraction of a period that costs nothing (`paidInFullFrom`). */
const NOTHING = { num: 0n, den: 1n };

/**
 * Where the full price of `period`'s aligned period was already billed, for a flat charge without
 * `proRata`: the start of its last billed part, when that part lies in the same aligned period and
 * ends where `period` starts (a period a cancellation cut short, billed at the full price as a
 * partial period is, and the cancellation then revoked). The rest of the period then costs nothing:
 * without `proRata` an aligned period costs its full price once, however often it is cut.
 */
function paidInFullFrom(state: ItemState, period: BillingPeriod, calendar: Calendar): DateTime | undefined {
  const { lastBilledFrom, lastBilledTo } = state.item;
  if (state.plan.proRata || lastBilledFrom === null || lastBilledTo === null) return undefined;
  const from = calendar.at(lastBilledFrom);
  return calendar.at(lastBilledTo).toMillis() === period.start.toMillis() && from >= period.fullStart ? from : undefined;
}

/** At most this many periods of one item are billed in one go (a daily item after years of downtime bills in several runs). */
const MAX_PERIODS_PER_ITEM = 1000;

/** The periods of an item billable by `asOf` (only its first unbilled one when `asOf` is null), oldest first. */
function duePeriods(calendar: Calendar, state: ItemState, asOf: DateTime | null): BillingPeriod[] {
  const out: BillingPeriod[] = [];
  let cursor = cursorOf(state.terms, state.item, calendar.at);
  for (let p = calendar.period(state, cursor); p && out.length < MAX_PERIODS_PER_ITEM; p = calendar.period(state, cursor)) {
    if (asOf && p.billDate > asOf) break;
    out.push(p);
    if (!asOf) break;
    cursor = p.end;
  }
  return out;
}

async function usageMicros(tx: Tx, org: string, state: ItemState, p: BillingPeriod): Promise<bigint> {
  // A restarted item's period before its pause measures the item as it ran then, up to the pause.
  const { beforePause: before, end } = state.terms;
  const earlier = before !== null && p.start < before.until;
  const stop = earlier && (!end || before.until < end) ? before.until : end;
  const interval: ItemInterval = {
    itemId: state.item.id,
    itemStart: toIso(earlier ? before.begin : state.terms.begin),
    from: toIso(p.start),
    to: toIso(p.end),
    end: stop ? toIso(stop) : null,
  };
  const metric = state.product.usageMetric;
  if (metric) return metricValue(tx, org, interval, state.item.subscriptionId, metric);
  const m = state.product.measurement!;
  if (m.type === 'recurring' && m.fairBilling) {
    return timeWeightedValue(tx, org, { ...interval, from: toIso(p.fullStart), to: toIso(p.fullEnd) }, m);
  }
  return intervalValue(tx, org, interval, m);
}

/** A line's description followed by the item's own description and its furtherInformation, as every line billing the item prints them. */
export function itemLineText(item: Pick<ItemRecord, 'description' | 'furtherInformation'>, description: string): string {
  return [description, item.description, item.furtherInformation].filter(Boolean).join(' – ');
}

/** What a usage line summarises (the interface: a measurement's description is shown in the usage summary on the invoice). */
export function usageLabel(product: Product): string {
  const m = product.measurement;
  return product.usageMetric?.eventName ?? (m?.description || m?.code || product.name);
}


/** A charge line's description: the product, then what it measured, free units, pro rata share, part and tier label, and its period. */
function chargeDescription(state: ItemState, period: BillingPeriod, quantityMicros: bigint, share: ReturnType<typeof proRataShare>, label: string | null): string {
  const name = state.item.name ?? state.product.name;
  const parts: string[] = [];
  if (state.kind === 'usage') {
    parts.push(`${usageLabel(state.product)}: ${formatQuantity(quantityMicros)}`);
  }
  if (state.plan.freeUnits > 0) parts.push(`${state.plan.freeUnits} free`);
  if (share) parts.push(`pro rata ${share.days}/${share.of} days`);
  if (label) parts.push(label);
  parts.push(periodText(period.start, period.end));
  return itemLineText(state.item, `${name} (${parts.join(', ')})`);
}

/** The discount lines of one item on one invoice, before tax: percentage of its net, or a fixed amount capped at what is left of it. */
export async function discountLines(
  tx: Tx,
  org: string,
  discounts: AppliedDiscountRecord[],
  itemNet: number,
  taxRate: number,
  currency: string,
): Promise<{ lines: Array<Omit<DraftLine, 'itemId'>>; consumed: AppliedDiscountRecord[] }> {
  const lines: Array<Omit<DraftLine, 'itemId'>> = [];
  const consumed: AppliedDiscountRecord[] = [];
  let left = itemNet;
  for (const d of discounts) {
    if (d.status !== 'active' || left <= 0) continue;
    const coupon = d.couponId ? await findCoupon(tx, org, d.couponId) : undefined;
    const spec = coupon ?? d.discount;
    if (!spec) continue;
    const label = coupon ? `coupon ${coupon.code}` : (d.discount?.name ?? 'discount');
    let off = 0;
    let what = `Discount ${label}`;
    if (spec.type === 'percentage' && spec.percentage !== null) {
      off = Math.min(left, percentOf(left, percentageE2(spec.percentage) ?? 0, 2));
      what = `Discount ${label} (${spec.percentage}%)`;
    } else if (spec.fixedAmount) {
      off = Math.min(toMinor(spec.fixedAmount.amount, currency), left);
    }
    left -= off;
    lines.push({ description: what, quantity: '1', unitAmountDecimal: String(-off), netAmount: -off, taxRateE4: taxRate, periodStart: null, periodEnd: null });
    const applied = d.appliedIntervals + 1;
    const limit = spec.frequency === 'forever' ? Number.POSITIVE_INFINITY : spec.frequency === 'once' ? 1 : (spec.frequencyInterval ?? 1);
    consumed.push({ ...d, appliedIntervals: applied, status: applied >= limit ? 'expired' : 'active' });
  }
  return { lines, consumed };
}

/**
 * What the quantity changes within an item's last billed in-advance period cost for the rest of it,
 * billed with its next period starting at `from`, or at its end when no period follows (`proRata`
 * only; without it the new quantity counts from the next period): per change made after that period
 * was billed, the price at the new quantity less the price at the old one, each for the days from the
 * change to the period's end. Negative for a decrease.
 */
function quantityAdjustments(
  state: ItemState,
  from: DateTime,
  calendar: Calendar,
): Array<{ change: QuantityChange; adjusts: BilledChargeKey; line: Omit<BilledLineInput, 'taxRateE4'> }> {
  const { lastBilledFrom, lastBilledTo, lastBilledAt } = state.item;
  if (!state.terms.inAdvance || !state.plan.proRata || lastBilledFrom === null || lastBilledTo === null || !state.changes.length) return [];
  if (calendar.iso(from) !== lastBilledTo) return [];
  const billed = calendar.period(state, calendar.at(lastBilledFrom));
  if (!billed) return [];
  const end = calendar.at(lastBilledTo);
  // A settlement at the period's end (no period followed) bills the item with a later date.
  const settledUpTo = lastBilledAt === null ? billed.start : calendar.at(lastBilledAt);
  const out = [];
  for (const change of state.changes) {
    const at = calendar.at(change.changedAt);
    if (at <= billed.start || at >= end || at < settledUpTo) continue;
    const share = proRataShare(billed, at, end);
    const plan = pricePlanAt(state.plan, state.prices, lastBilledFrom);
    const net = (q: string) => priceCharge(plan, toMicros(q), share).reduce((sum, l) => sum + l.netAmount, 0);
    const diff = net(change.newQuantity) - net(change.oldQuantity);
    if (diff === 0) continue;
    const name = state.item.name ?? state.product.name;
    const days = share ? `, pro rata ${share.days}/${share.of} days` : '';
    out.push({
      change,
      adjusts: { itemId: state.item.id, periodKey: lastBilledFrom, kind: 'flat' as const },
      line: {
        description: itemLineText(state.item, `${name} (quantity ${change.oldQuantity} → ${change.newQuantity} from ${periodText(at, end)}${days})`),
        quantity: '1',
        unitAmountDecimal: String(diff),
        netAmount: diff,
        periodStart: calendar.iso(at),
        periodEnd: lastBilledTo,
      },
    });
  }
  return out;
}

/**
 * The invoices due for a subscription as of `asOf`, oldest billing date first: every period of every
 * item whose billing date has come, one invoice per billing date, one line per charge and period, then
 * each item's discount lines. A line of 0 is left out when its product's `invoiceVisibility` is
 * `never` or `if_not_zero` (the period is billed all the same); a line that charges is always shown. With `asOf` null only the next invoice is computed, whenever it falls
 * due (the estimate). Usage counts as measured so far. `items` are the subscription's items as they
 * would stand (a subscription treated as activated: see `activatedState`); default as stored.
 */
export async function computeDue(
  tx: Tx,
  org: string,
  record: SubscriptionRecord,
  options: { asOf: Date | null; now: Date; cache: CatalogueCache; items?: ItemRecord[] | undefined },
): Promise<DueBilling> {
  const { cache, now } = options;
  // Reads that do not depend on one another are issued together (one round trip on PostgreSQL).
  const [customerRecord, group, items, address, seller] = await Promise.all([
    tx.customers.get(org, record.customerId),
    record.billingGroupId ? cache.billingGroup(tx, org, record.billingGroupId) : undefined,
    options.items ?? tx.subscriptions.items(org, [record.id]),
    billingAddressOf(tx, org, record),
    cache.seller(tx, org),
  ]);
  const customer = customerRecord as Customer;
  const timeZone = zoneOf(customer.timeZone);
  const calendar = new Calendar(timeZone);
  const alignment = alignmentOf(group);

  const states: ItemState[] = [];
  for (const item of items) {
    if (item.nextBillingAt === null) continue;
    const product = await cache.product(tx, org, item.productId);
    const plan = await cache.pricePlan(tx, org, item.pricePlanId);
    const kind = chargeKindOf(product, plan.type);
    if (kind === 'instant') continue;
    const terms = itemTerms(record, item, plan, kind, alignment, timeZone, now, calendar.at);
    const prices = await cache.priceChanges(tx, org, item.pricePlanId);
    states.push({ item, product, plan, prices, kind, terms, termsKey: termsKey(terms), changes: [] });
  }
  const flat = states.filter((s) => s.kind === 'flat');
  const [changes, appliedDiscounts] = await Promise.all([
    tx.subscriptions.quantityChanges(
      org,
      flat.map((s) => s.item.id),
    ),
    tx.subscriptions.discounts(
      org,
      items.map((i) => i.id),
    ),
  ]);
  for (const c of changes) flat.find((s) => s.item.id === c.itemId)!.changes.push(c);

  const asOf = options.asOf ? zoned(options.asOf, timeZone) : null;
  // A period of an item, or (null) the settlement of its quantity changes after its last period.
  const byDate = new Map<string, Array<{ state: ItemState; period: BillingPeriod | null }>>();
  const add = (date: string, entry: { state: ItemState; period: BillingPeriod | null }) => {
    let group = byDate.get(date);
    if (!group) byDate.set(date, (group = []));
    group.push(entry);
  };
  let next: string | null = null;
  for (const state of states) {
    const periods = duePeriods(calendar, state, asOf);
    for (const period of periods) add(calendar.iso(period.billDate), { state, period });
    if (!periods.length && state.kind === 'flat') {
      const cursor = cursorOf(state.terms, state.item, calendar.at);
      const date = calendar.period(state, cursor) ? null : calendar.nextBillingDate(state, cursor);
      if (date !== null && (!asOf || calendar.at(date) <= asOf)) add(date, { state, period: null });
    }
  }
  let dates = [...byDate.keys()].sort();
  if (!asOf) dates = dates.slice(0, 1);

  const sellerCountry = seller.address?.countryCode ?? null;
  const discounts = discountsByItem(appliedDiscounts);
  // Every usage period of the invoices to compute, measured together.
  const usagePeriods = dates.flatMap((date) => byDate.get(date)!.filter((e): e is { state: ItemState; period: BillingPeriod } => e.state.kind !== 'flat'));
  const measured = await Promise.all(usagePeriods.map((e) => usageMicros(tx, org, e.state, e.period)));
  // By entry (item and period): items of equal terms share their period objects.
  const usage = new Map<object, bigint>(usagePeriods.map((e, i) => [e, measured[i]!]));

  const drafts: DraftInvoice[] = [];
  for (const date of dates) {
    const localDate = calendar.at(date).toISODate() as string;
    const draft: DraftInvoice = { billingDate: date, lines: [], credits: [], keys: [], progress: new Map(), discounts: [], reverseCharges: [] };
    const entries = byDate.get(date)!;
    for (const state of states) {
      const own = entries.filter((e) => e.state === state);
      if (!own.length) continue;
      const rate = taxRateE4(state.product, address, sellerCountry, localDate);
      const reverseCharge = reverseChargeOf(state.product, address, sellerCountry);
      if (reverseCharge && !draft.reverseCharges.includes(reverseCharge)) draft.reverseCharges.push(reverseCharge);
      let itemNet = 0;
      for (const entry of own) {
        const { period } = entry;
        if (period === null) {
          itemNet += settle(state, date, draft, rate, calendar);
          continue;
        }
        const periodStart = calendar.iso(period.start);
        const periodEnd = calendar.iso(period.end);
        const plan = pricePlanAt(state.plan, state.prices, periodStart);
        const priced: Array<{ line: PricedLine; q: bigint; share: ReturnType<typeof proRataShare>; part: string | null }> = [];
        if (state.kind === 'flat') {
          for (const a of quantityAdjustments(state, period.start, calendar)) {
            draft.lines.push({ itemId: state.item.id, ...a.line, taxRateE4: rate, adjusts: a.adjusts });
            draft.keys.push({ itemId: state.item.id, periodKey: `change:${a.change.id}`, kind: 'flat' });
            itemNet += a.line.netAmount;
          }
          const paidFrom = paidInFullFrom(state, period, calendar);
          const parts = flatParts(state, period, calendar.at);
          for (const part of parts) {
            const q = toMicros(part.quantity);
            const share = state.plan.proRata ? proRataShare(period, part.from, part.to) : undefined;
            const labels = [parts.length > 1 ? `quantity ${part.quantity} from ${part.from.toISODate()}` : null, paidFrom ? `paid in full from ${paidFrom.toISODate()}` : null];
            const label = labels.filter(Boolean).join(', ') || null;
            for (const line of priceCharge(plan, q, paidFrom ? NOTHING : share)) priced.push({ line, q, share, part: label });
          }
        } else {
          const q = usage.get(entry)!;
          for (const line of priceCharge(plan, q)) priced.push({ line, q, share: undefined, part: null });
        }
        for (const { line, q, share, part } of priced) {
          if (line.netAmount === 0 && state.product.invoiceVisibility !== 'always') continue;
          draft.lines.push({
            itemId: state.item.id,
            description: chargeDescription(state, period, q, share, [part, line.label].filter(Boolean).join(', ') || null),
            quantity: line.quantity,
            unitAmountDecimal: line.unitAmountDecimal,
            netAmount: line.netAmount,
            taxRateE4: rate,
            periodStart,
            periodEnd,
          });
          itemNet += line.netAmount;
        }
        draft.keys.push({ itemId: state.item.id, periodKey: periodStart, kind: state.kind });
        state.item = { ...state.item, lastBilledAt: date, lastBilledFrom: periodStart, lastBilledTo: periodEnd };
        draft.progress.set(state.item.id, {
          lastBilledFrom: periodStart,
          lastBilledTo: periodEnd,
          nextBillingAt: calendar.nextBillingDate(state, period.end),
        });
      }
      const itemDiscounts = discounts.get(state.item.id) ?? [];
      const { lines, consumed } = await discountLines(tx, org, itemDiscounts, itemNet, rate, customer.currencyCode);
      for (const l of lines) draft.lines.push({ ...l, itemId: state.item.id });
      for (const c of consumed) {
        draft.discounts.push(c);
        itemDiscounts[itemDiscounts.findIndex((d) => d.id === c.id)] = c;
      }
    }
    const gross = invoiceTotals(draft.lines).grossAmount;
    assertWithinCap(record, draft, gross, customer.currencyCode);
    if (gross < 0) {
      // Only a quantity decrease goes below 0 (discounts stop at an item's net): it is credited instead.
      draft.credits = draft.lines.filter((l) => l.adjusts && l.netAmount < 0);
      draft.lines = draft.lines.filter((l) => !(l.adjusts && l.netAmount < 0));
    }
    drafts.push(draft);
  }

  if (!asOf) {
    next = dates[0] ?? null;
  } else {
    const upcoming = states
      .map((s) => calendar.nextBillingDate(s, cursorOf(s.terms, s.item, calendar.at)))
      .filter((d): d is string => d !== null)
      .sort();
    next = upcoming[0] ?? null;
  }
  return { record, customer, seller, address, drafts, nextBillingAt: next };
}

/**
 * A due invoice must stay within what an invoice may total (`MAX_AMOUNT_CENTS`), each line and its
 * `gross`: otherwise a 409 naming the subscription, the billing date and the line, which fails the
 * run's unit of that subscription and answers the estimate alike. Quantities and prices are checked
 * where items get them (`chargeCapProblem`); usage, or many periods billed at once, can still get here.
 */
function assertWithinCap(record: SubscriptionRecord, draft: DraftInvoice, gross: number, currency: string): void {
  const line = draft.lines.find((l) => !Number.isSafeInteger(l.netAmount) || Math.abs(l.netAmount) > MAX_AMOUNT_CENTS);
  if (!line && gross <= MAX_AMOUNT_CENTS) return;
  const what = line ? `its line "${line.description}"` : 'its total';
  throw conflict(
    `Subscription ${record.number} cannot be billed on ${draft.billingDate}: ${what} comes to more than the ${formatMoney(MAX_AMOUNT_CENTS, currency)} an invoice may total; lower the item's quantity (update_subscription_item) or price`,
  );
}

/**
 * The settlement of an item whose periods have ended (see `awaitsSettlement`): the quantity
 * adjustments of its last billed period, on the invoice at that period's end. Its periods stay as
 * they were; nothing is left to bill after it. Returns the net it adds.
 */
function settle(state: ItemState, date: string, draft: DraftInvoice, rate: number, calendar: Calendar): number {
  const { lastBilledFrom, lastBilledTo } = state.item as { lastBilledFrom: string; lastBilledTo: string };
  let net = 0;
  for (const a of quantityAdjustments(state, calendar.at(lastBilledTo), calendar)) {
    draft.lines.push({ itemId: state.item.id, ...a.line, taxRateE4: rate, adjusts: a.adjusts });
    draft.keys.push({ itemId: state.item.id, periodKey: `change:${a.change.id}`, kind: 'flat' });
    net += a.line.netAmount;
  }
  state.item = { ...state.item, lastBilledAt: date };
  draft.progress.set(state.item.id, { lastBilledFrom, lastBilledTo, nextBillingAt: null });
  return net;
}
