import type { BillingRun, BillingRunTrigger } from '../../schemas/billingRuns.js';
import type { PageRequest } from '../../schemas/common.js';

/** A charge billed once: its item, its period start (or the measurement value of an instant charge), its kind, and the invoice. */
export interface BilledChargeKey {
  itemId: string;
  periodKey: string;
  kind: 'flat' | 'usage' | 'instant';
}

/** A due item's place in the index of due items. */
export interface DueItem {
  nextBillingAt: string;
  org: string;
  subscriptionId: string;
  rowid: number;
}

export interface BillingRunRepo {
  /**
   * One page of the due items in the order of their index (next billing date, organisation,
   * subscription), after `after` (the last item of the previous page; null for the first). Items of
   * paused, draft and offer subscriptions are not due: a run would only skip them, every time.
   */
  dueItems(asOf: string, org: string | undefined, after: DueItem | null, limit: number): Promise<DueItem[]>;
  /** Claims the keys for the invoice; returns how many were free (a taken key is left as it is). */
  claim(org: string, keys: readonly BilledChargeKey[], invoiceId: string): Promise<number>;
  /** `claim` of many keys, each for its invoice, in multi-row statements; returns how many were free. */
  claimAll(org: string, claims: ReadonlyArray<BilledChargeKey & { invoiceId: string }>): Promise<number>;
  /** The invoice that billed this charge, or undefined when none did. */
  invoiceOfCharge(org: string, key: BilledChargeKey): Promise<string | undefined>;
  insertRun(org: string, run: BillingRun): Promise<void>;
  getRun(org: string, id: string): Promise<BillingRun | undefined>;
  listRuns(org: string, filter: { trigger?: BillingRunTrigger | undefined }, page: PageRequest): Promise<{ rows: BillingRun[]; total: number }>;
}
