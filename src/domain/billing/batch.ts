import type { BilledChargeKey } from '../../store/ports/billingRuns.js';
import type { NewEmail } from '../../store/ports/emails.js';
import type { EventRecord, NewDelivery } from '../../store/ports/events.js';
import type { IssuedParties } from '../../store/ports/invoices.js';
import type { AppliedDiscountRecord, ItemBillingProgress, ItemRecord, QuantityChange, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import type { Tx } from '../../store/store.js';
import type { InvoiceAddress } from '../../schemas/billingDetails.js';
import type { Customer } from '../../schemas/customers.js';
import type { Invoice } from '../../schemas/invoices.js';

/** A flush claimed fewer charge keys than were billed: another run billed one of them first. */
export class ChargeAlreadyClaimed extends Error {}

/** What one organisation's units deferred, in the order a flush writes it (rows before the rows naming them). */
interface Pending {
  invoices: Invoice[];
  parties: Array<{ invoiceId: string; parties: IssuedParties }>;
  events: EventRecord[];
  deliveries: NewDelivery[];
  emails: NewEmail[];
  claims: Array<BilledChargeKey & { invoiceId: string }>;
  items: ItemBillingProgress[];
  lastBillings: Array<{ id: string; lastBillingAt: string; updatedAt: string }>;
}

const emptyPending = (): Pending => ({ invoices: [], parties: [], events: [], deliveries: [], emails: [], claims: [], items: [], lastBillings: [] });

/** A counter the batch numbers from: the value `nextCounter` last handed out, and the value stored. */
interface Counter {
  org: string;
  name: string;
  value: number;
  stored: number;
}

/**
 * The rows of the batch's subscriptions read in one statement each, handed out once: the first read of
 * a subscription, of its items, of its items' quantity changes or discounts. A second read goes to the
 * database (the unit may have changed what it read).
 */
class Prefetched {
  readonly records = new Map<string, SubscriptionRecord>();
  readonly items = new Map<string, ItemRecord[]>();
  /** By item, for the items whose rows were read ahead and not handed out yet. */
  readonly changes = new Map<string, QuantityChange[]>();
  readonly discounts = new Map<string, AppliedDiscountRecord[]>();
  /**
   * The batch's customers and their default invoice addresses (null: none), shared by every unit of
   * the batch rather than handed out once (several subscriptions of a customer share them), until a
   * unit calls any other method of the repository (a credit balance moves, an address changes): then
   * they are all forgotten and read from the database.
   */
  readonly customers = new Map<string, Customer>();
  readonly defaultAddresses = new Map<string, InvoiceAddress | null>();

  /** The rows of every item in `itemIds` (each item's once), in the order the repository gives them; undefined unless all were read ahead. */
  static take<T extends { id: string }>(rows: Map<string, T[]>, itemIds: readonly string[], order: (a: T, b: T) => number): T[] | undefined {
    if (!itemIds.every((id) => rows.has(id))) return undefined;
    const out: T[] = [];
    for (const id of itemIds) {
      out.push(...rows.get(id)!);
      rows.delete(id);
    }
    return out.length > 1 ? out.sort(order) : out;
  }
}

const byTime = <T extends { id: string }>(time: (row: T) => string) => (a: T, b: T) => time(a).localeCompare(time(b)) || a.id.localeCompare(b.id);
const changeOrder = byTime<QuantityChange>((c) => c.changedAt);
const discountOrder = byTime<AppliedDiscountRecord>((d) => d.createdAt);

/**
 * A repository whose `replaced` methods answer in its place, and every other method of which flushes
 * the batch's deferred writes before it runs (a read there might look for a row not yet written),
 * after `onOther` (what was read ahead of the repository's rows may be stale then).
 */
function intercepting<R extends object>(repo: R, replaced: Partial<R>, flush: () => Promise<void>, onOther: () => void = () => undefined): R {
  const methods = new Map<PropertyKey, unknown>(Object.entries(replaced));
  return new Proxy(repo, {
    get(target, key) {
      let method = methods.get(key);
      if (method === undefined) {
        const own = Reflect.get(target, key) as unknown;
        if (typeof own !== 'function') return own;
        const bound = (own as (...args: unknown[]) => unknown).bind(target);
        method = async (...args: unknown[]) => {
          onOther();
          await flush();
          return bound(...args);
        };
        methods.set(key, method);
      }
      return method;
    },
  });
}

/**
 * One unit of work shared by a batch of billing units (docs/performance.md, "Set-based billing"):
 * `tx` is the unit of work's `Tx` with the rows the units first read taken from `prefetch` (the
 * subscriptions, their items, the items' quantity changes and discounts, the customers and their
 * default invoice addresses: one statement each for the batch), the rows a billed invoice adds kept
 * back (the invoice with its lines and parties, its event and deliveries, its e-mail, its charge
 * keys, the items' and the subscription's progress) and invoice numbers counted in memory; `flush`
 * writes what was kept back, many units' rows per statement.
 *
 * Safe for units that each bill their own subscription, one after another in one transaction that no
 * other writer interleaves with: a unit reads another subscription's rows of the batch never, and
 * what is kept back is read again only through the repositories intercepted here, any other method of
 * which flushes first. Through the passing methods (`subscribers`, `addressesOf`, `updateDiscount`,
 * `getInvoiceAddress`) a unit reads or writes rows no unit defers: the webhooks subscribed, the
 * customer's e-mail addresses, the unit's own discounts, a subscription's own invoice address. The
 * customers and default addresses read ahead are shared by the units (`Prefetched.customers`) until
 * any other method of their repository runs, which is how a unit moves a credit balance.
 *
 * A claimed charge key is answered as free; `flush` throws `ChargeAlreadyClaimed` when one was not,
 * and the caller rolls every unit of the batch back and bills them one at a time.
 */
export class BillingBatch {
  readonly tx: Tx;
  private pending = new Map<string, Pending>();
  private readonly counters = new Map<string, Counter>();
  private readonly prefetched = new Prefetched();

  constructor(private readonly base: Tx) {
    const of = (org: string): Pending => {
      let p = this.pending.get(org);
      if (!p) this.pending.set(org, (p = emptyPending()));
      return p;
    };
    const flush = () => this.flush();
    const ahead = this.prefetched;
    this.tx = {
      ...base,
      system: intercepting(base.system, { nextCounter: (org, name) => this.nextCounter(org, name) }, flush),
      invoices: intercepting(
        base.invoices,
        {
          insert: async (org, invoice) => void of(org).invoices.push(invoice),
          insertParties: async (org, invoiceId, parties) => void of(org).parties.push({ invoiceId, parties }),
        },
        flush,
      ),
      events: intercepting(
        base.events,
        {
          insertEvent: async (org, event) => void of(org).events.push(event),
          insertDelivery: async (org, delivery) => void of(org).deliveries.push(delivery),
          subscribers: (org, type) => base.events.subscribers(org, type),
        },
        flush,
      ),
      emails: intercepting(
        base.emails,
        { insert: async (org, email) => void of(org).emails.push(email), addressesOf: (org, customerId) => base.emails.addressesOf(org, customerId) },
        flush,
      ),
      billing: intercepting(
        base.billing,
        {
          claim: async (org, keys, invoiceId) => {
            for (const k of keys) of(org).claims.push({ ...k, invoiceId });
            return keys.length;
          },
        },
        flush,
      ),
      customers: intercepting(
        base.customers,
        { get: async (org, id) => ahead.customers.get(id) ?? base.customers.get(org, id) },
        flush,
        () => ahead.customers.clear(),
      ),
      billingDetails: intercepting(
        base.billingDetails,
        {
          getInvoiceAddress: (org, customerId, id) => base.billingDetails.getInvoiceAddress(org, customerId, id),
          defaultInvoiceAddress: async (org, customerId) => {
            const known = ahead.defaultAddresses.get(customerId);
            return known === undefined ? base.billingDetails.defaultInvoiceAddress(org, customerId) : (known ?? undefined);
          },
        },
        flush,
        () => ahead.defaultAddresses.clear(),
      ),
      subscriptions: intercepting(
        base.subscriptions,
        {
          get: async (org, id) => {
            const record = ahead.records.get(id);
            if (!record) return base.subscriptions.get(org, id);
            ahead.records.delete(id);
            return record;
          },
          items: async (org, ids) => {
            const items = ids.length === 1 ? ahead.items.get(ids[0]!) : undefined;
            if (!items) return base.subscriptions.items(org, ids);
            ahead.items.delete(ids[0]!);
            return items;
          },
          quantityChanges: async (org, itemIds) => Prefetched.take(ahead.changes, itemIds, changeOrder) ?? base.subscriptions.quantityChanges(org, itemIds),
          discounts: async (org, itemIds) => Prefetched.take(ahead.discounts, itemIds, discountOrder) ?? base.subscriptions.discounts(org, itemIds),
          updateDiscount: (org, discount) => base.subscriptions.updateDiscount(org, discount),
          updateItemsBilling: async (org, progress) => void of(org).items.push(...progress),
          updateLastBilling: async (org, id, lastBillingAt, updatedAt) => void of(org).lastBillings.push({ id, lastBillingAt, updatedAt }),
        },
        flush,
      ),
    };
  }

  /**
   * Reads the subscriptions, their items, the items' quantity changes and discounts, and the
   * subscriptions' customers with their default invoice addresses, one statement each, for the units to come.
   */
  async prefetch(org: string, subscriptionIds: readonly string[]): Promise<void> {
    const { base, prefetched } = this;
    const [records, items] = await Promise.all([base.subscriptions.getMany(org, subscriptionIds), base.subscriptions.items(org, subscriptionIds)]);
    const customerIds = [...new Set(records.map((r) => r.customerId))];
    const itemIds = items.map((i) => i.id);
    const [customers, addresses, changes, discounts] = await Promise.all([
      base.customers.getMany(org, customerIds),
      base.billingDetails.defaultInvoiceAddresses(org, customerIds),
      base.subscriptions.quantityChanges(org, itemIds),
      base.subscriptions.discounts(org, itemIds),
    ]);
    for (const r of records) prefetched.records.set(r.id, r);
    for (const id of subscriptionIds) prefetched.items.set(id, []);
    for (const item of items) prefetched.items.get(item.subscriptionId)!.push(item);
    for (const c of customers) prefetched.customers.set(c.id, c);
    for (const id of customerIds) prefetched.defaultAddresses.set(id, null);
    for (const a of addresses) prefetched.defaultAddresses.set(a.customer, a);
    for (const id of itemIds) {
      prefetched.changes.set(id, []);
      prefetched.discounts.set(id, []);
    }
    for (const c of changes) prefetched.changes.get(c.itemId)!.push(c);
    for (const d of discounts) prefetched.discounts.get(d.itemId)!.push(d);
  }

  /** The next number of a counter: the first from the database, the following counted here and stored by `flush`. */
  private async nextCounter(org: string, name: string): Promise<number> {
    const key = `${org} ${name}`;
    const counter = this.counters.get(key);
    if (counter) return ++counter.value;
    const value = await this.base.system.nextCounter(org, name);
    this.counters.set(key, { org, name, value, stored: value });
    return value;
  }

  /** Writes what was kept back, in multi-row statements; throws `ChargeAlreadyClaimed` when a charge key was taken. */
  async flush(): Promise<void> {
    const tx = this.base;
    for (const c of this.counters.values()) {
      if (c.value === c.stored) continue;
      await tx.system.setCounter(c.org, c.name, c.value);
      c.stored = c.value;
    }
    const pending = this.pending;
    if (!pending.size) return;
    this.pending = new Map();
    for (const [org, p] of pending) {
      await tx.invoices.insertMany(org, p.invoices);
      await tx.invoices.insertManyParties(org, p.parties);
      await tx.events.insertEvents(org, p.events);
      await tx.events.insertDeliveries(org, p.deliveries);
      await tx.emails.insertMany(org, p.emails);
      const claimed = await tx.billing.claimAll(org, p.claims);
      if (claimed < p.claims.length) throw new ChargeAlreadyClaimed(`${p.claims.length - claimed} of ${p.claims.length} charges were billed by another run`);
      await tx.subscriptions.updateItemsBilling(org, p.items);
      await tx.subscriptions.updateLastBillings(org, p.lastBillings);
    }
  }
}
