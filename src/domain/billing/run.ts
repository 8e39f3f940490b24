/**
 * Billing runs (CONTRACT section 8, "Billing runs"): every subscription with an item due is billed in
 * its own unit of work, exactly once however often or concurrently runs happen. Each run is recorded.
 */
import { invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import type { BillingRun, BillingRunTrigger } from '../../schemas/billingRuns.js';
import { RUN_LIST_LIMIT } from '../../schemas/billingRuns.js';
import type { PageRequest } from '../../schemas/common.js';
import type { Invoice } from '../../schemas/invoices.js';
import type { DueItem } from '../../store/ports/billingRuns.js';
import type { Store, Tx } from '../../store/store.js';
import { creditable } from '../creditNotes.js';
import { creditBalanceAfter, getInvoice, invoiceTotals, issueBilledInvoice, issueCreditNote, refuseIfPlanned } from '../invoices.js';
import { findSubscription } from '../subscriptions/records.js';
import { BillingBatch } from './batch.js';
import { CatalogueCache, computeDue, type DraftLine } from './compute.js';

/** Thrown inside a unit of work whose charge another run billed first: the unit rolls back, the subscription counts as skipped. */
class AlreadyBilled extends Error {}

export type BillingOutcome = { invoices: Invoice[] } | { skipped: string };

export interface BillingSettings {
  /** BILLING_PAYMENT_TERM_DAYS: days from issue to due date when the customer has no terms of their own. */
  paymentTermDays: number;
}

/**
 * Bills one subscription as of `asOf`, in the caller's unit of work: one invoice per billing date
 * that has come, its charges claimed by their unique keys, then the items' and discounts' progress
 * and the subscription's `lastBillingAt`. Draft, offer and paused subscriptions are skipped with the
 * reason; so is one with nothing due (another run billed it).
 */
export async function billSubscription(
  tx: Tx,
  org: string,
  subscriptionId: string,
  asOf: Date,
  now: Date,
  settings: BillingSettings,
  cache: CatalogueCache,
): Promise<BillingOutcome> {
  const record = await tx.subscriptions.get(org, subscriptionId);
  if (!record) return { skipped: 'the subscription no longer exists' };
  if (record.status === 'draft' || record.status === 'offer') return { skipped: `status ${record.status}: billing starts when it is activated` };
  if (record.status === 'paused') {
    return { skipped: `paused since ${record.pausedAt}: nothing is billed while paused; resume_subscription bills the periods that came due` };
  }
  const due = await computeDue(tx, org, record, { asOf, now, cache });
  if (!due.drafts.length) {
    return { skipped: due.nextBillingAt ? `nothing due by ${asOf.toISOString()}; next billing date ${due.nextBillingAt}` : 'nothing left to bill' };
  }
  const invoices: Invoice[] = [];
  // The customer as each invoice leaves it: a later invoice of the unit sees the credit balance the earlier ones left.
  let customer = due.customer;
  for (const draft of due.drafts) {
    // A draft whose only lines were credited has no invoice of its own: its charges are claimed by the invoice credited.
    const invoice = draft.lines.length || !draft.credits.length
      ? await issueBilledInvoice(
          tx,
          org,
          {
            customer,
            subscription: record,
            parties: { address: due.address ?? null, seller: due.seller, reverseCharges: draft.reverseCharges },
            issuedAt: draft.billingDate,
            lines: draft.lines.map(({ itemId: _item, adjusts: _adjusts, ...line }) => line),
            paymentTermDays: due.seller.paymentTermDays ?? settings.paymentTermDays,
          },
          now,
        )
      : undefined;
    const credited = await creditDecreases(tx, org, draft.credits, now);
    const claimant = invoice?.id ?? credited.invoices[0]!;
    const [claimed] = await Promise.all([tx.billing.claim(org, draft.keys, claimant), ...draft.discounts.map((d) => tx.subscriptions.updateDiscount(org, d))]);
    if (claimed < draft.keys.length) throw new AlreadyBilled();
    customer = { ...customer, creditBalance: (invoice ? creditBalanceAfter(customer.creditBalance, invoice) : customer.creditBalance) + credited.toBalance };
    if (invoice) invoices.push(invoice);
  }
  const at = now.toISOString();
  const last = due.drafts[due.drafts.length - 1]!;
  // The items computeDue read in this unit, where they stand after the last invoice that billed each.
  const progress = new Map(due.drafts.flatMap((d) => [...d.progress].map(([id, p]) => [id, { ...p, billedAt: d.billingDate }] as const)));
  await Promise.all([
    tx.subscriptions.updateItemsBilling(
      org,
      [...progress].map(([id, p]) => ({
        id,
        lastBilledAt: p.billedAt,
        lastBilledFrom: p.lastBilledFrom,
        lastBilledTo: p.lastBilledTo,
        nextBillingAt: p.nextBillingAt,
        updatedAt: at,
      })),
    ),
    tx.subscriptions.updateLastBilling(org, record.id, last.billingDate, at),
  ]);
  return { invoices };
}

/**
 * Quantity decreases that an invoice could not absorb (`DraftInvoice.credits`): one credit note per
 * invoice that billed the periods they adjust, for their gross (tax per rate on the summed net), at
 * most what that invoice can still be credited (`creditable`); none for a void one, whose charge is
 * owed no more. Returns the invoices credited and what the credit notes added to the customer's
 * credit balance (those on paid invoices).
 */
async function creditDecreases(tx: Tx, org: string, credits: readonly DraftLine[], now: Date): Promise<{ invoices: string[]; toBalance: number }> {
  const byInvoice = new Map<string, DraftLine[]>();
  for (const line of credits) {
    const id = await tx.billing.invoiceOfCharge(org, line.adjusts!);
    if (id === undefined) throw new Error(`no invoice billed the period from ${line.adjusts!.periodKey} of item ${line.adjusts!.itemId}, which "${line.description}" credits`);
    const lines = byInvoice.get(id);
    if (lines) lines.push(line);
    else byInvoice.set(id, [line]);
  }
  let toBalance = 0;
  for (const [id, lines] of byInvoice) {
    const invoice = await getInvoice(tx, org, id);
    if (invoice.status !== 'open' && invoice.status !== 'paid') continue;
    const amount = Math.min(-invoiceTotals(lines).grossAmount, (await creditable(tx, org, invoice)).max);
    if (amount <= 0) continue;
    await refuseIfPlanned(tx, org, invoice, 'the billing run credits a quantity decrease on it');
    const reason = lines.map((l) => l.description).join('; ');
    await issueCreditNote(tx, org, invoice, { amount, reason: reason.length > 255 ? `${reason.slice(0, 254)}…` : reason }, now);
    if (invoice.status === 'paid') toBalance += amount;
  }
  return { invoices: [...byInvoice.keys()], toBalance };
}

export interface RunRequest {
  trigger: BillingRunTrigger;
  asOf: Date;
  now: Date;
  /** One organisation (an API run); every organisation when absent (the job loop, `jobs run`). */
  org?: string;
  /** One subscription (id or number) of `org`; every due one when absent. */
  subscription?: string;
  /** A scheduled run is recorded only when it billed or failed something; api and cli runs always. */
  recordEmpty?: boolean;
}

export interface RunDeps {
  store: Store;
  settings: BillingSettings;
  /** Called after each unit of work that issued invoices commits (kicks the webhook delivery). */
  afterInvoices?: () => void;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const noop = () => undefined;

/**
 * How long a run bills subscriptions before it yields to the event loop (and the group of units it
 * ran commits). Requests wait at most about this long, plus the COMMIT's disk sync.
 */
const SLICE_MS = 10;

/**
 * How long the units of a run share one COMMIT (one disk sync with synchronous=full): the run yields
 * every SLICE_MS, but its group commits only every LINGER_MS, so a run of tens of thousands of
 * subscriptions syncs a few dozen times a second, not a hundred.
 */
const LINGER_MS = 50;

function recordOutcome(run: BillingRun, subscriptionId: string, outcome: BillingOutcome, deps: RunDeps): void {
  if ('skipped' in outcome) {
    run.subscriptionsSkipped += 1;
    if (run.skipped.length < RUN_LIST_LIMIT) run.skipped.push({ subscription: subscriptionId, reason: outcome.skipped });
  } else {
    run.subscriptionsBilled += 1;
    run.invoicesCreated += outcome.invoices.length;
    for (const i of outcome.invoices) if (run.invoices.length < RUN_LIST_LIMIT) run.invoices.push(i.id);
    deps.afterInvoices?.();
  }
}

function recordFailure(run: BillingRun, subscriptionId: string, err: unknown): void {
  if (err instanceof AlreadyBilled) {
    run.subscriptionsSkipped += 1;
    if (run.skipped.length < RUN_LIST_LIMIT) run.skipped.push({ subscription: subscriptionId, reason: 'billed by a concurrent run' });
  } else {
    run.subscriptionsFailed += 1;
    run.status = 'failed';
    if (run.failed.length < RUN_LIST_LIMIT) run.failed.push({ subscription: subscriptionId, error: err instanceof Error ? err.message : String(err) });
  }
}

/** Due items read per page: each page is a short read, with the event loop free between pages. */
const DUE_PAGE = 2000;

/**
 * The subscriptions with an item due by `asOf`, in the order of their first due item (next billing
 * date, then organisation and subscription): the due items' index read page by page, so that a run
 * over tens of thousands of subscriptions does not hold the event loop for one long query.
 */
async function dueSubscriptions(store: Store, asOf: string, org: string | undefined): Promise<Target[]> {
  const seen = new Set<string>();
  const out: Target[] = [];
  let after: DueItem | null = null;
  for (;;) {
    const from: DueItem | null = after;
    const page: DueItem[] = await store.read((tx): Promise<DueItem[]> => tx.billing.dueItems(asOf, org, from, DUE_PAGE));
    for (const item of page) {
      const key = `${item.org} ${item.subscriptionId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ org: item.org, subscriptionId: item.subscriptionId });
    }
    if (page.length < DUE_PAGE) return out;
    after = page[page.length - 1]!;
    await yieldToLoop();
  }
}

function emptyRun(request: RunRequest, subscription: string | null): BillingRun {
  const at = request.now.toISOString();
  return {
    id: newId(),
    trigger: request.trigger,
    status: 'completed',
    subscription,
    asOf: request.asOf.toISOString(),
    startedAt: at,
    finishedAt: at,
    subscriptionsBilled: 0,
    subscriptionsSkipped: 0,
    subscriptionsFailed: 0,
    invoicesCreated: 0,
    invoices: [],
    skipped: [],
    failed: [],
  };
}

interface Target {
  org: string;
  subscriptionId: string;
}

/** The run's outcomes per organisation, and where a subscription's outcome goes. */
class RunRecorder {
  readonly runs = new Map<string, BillingRun>();

  constructor(
    private readonly request: RunRequest,
    private readonly only: string | null,
    private readonly deps: RunDeps,
  ) {
    if (request.org) this.runs.set(request.org, emptyRun(request, only));
  }

  private runOf(org: string): BillingRun {
    let run = this.runs.get(org);
    if (!run) this.runs.set(org, (run = emptyRun(this.request, this.only)));
    return run;
  }

  outcome(target: Target, outcome: BillingOutcome): void {
    recordOutcome(this.runOf(target.org), target.subscriptionId, outcome, this.deps);
  }

  failure(target: Target, err: unknown): void {
    recordFailure(this.runOf(target.org), target.subscriptionId, err);
  }
}

/** A batch's unit failed as a whole: it rolls back (whatever the error) and its subscriptions are billed one at a time. */
class BatchFailed extends Error {}

/** At most this many subscriptions of one organisation share a batch (one savepoint, one read ahead, one flush of their writes). */
const BATCH_MAX = 64;

/** The size of a run's first batch, before the pace of billing is known. */
const FIRST_BATCH = 4;

/**
 * Each target billed in a unit of work of its own, yielding to the event loop every SLICE_MS; the
 * units of LINGER_MS commit together where the store has a group commit.
 */
async function billEach(deps: RunDeps, request: RunRequest, targets: readonly Target[], cache: CatalogueCache, recorder: RunRecorder): Promise<void> {
  const { store } = deps;
  const outcomes: Array<Promise<void>> = [];
  let slice = performance.now();
  for (const target of targets) {
    let ran!: () => void;
    const done = new Promise<void>((resolve) => (ran = resolve));
    const unit = store.transaction(
      async (tx) => {
        try {
          return await billSubscription(tx, target.org, target.subscriptionId, request.asOf, request.now, deps.settings, cache);
        } finally {
          ran();
        }
      },
      { lingerMs: LINGER_MS },
    );
    outcomes.push(unit.then((outcome) => recorder.outcome(target, outcome), (err: unknown) => recorder.failure(target, err)));
    // With a group commit the next unit starts as soon as this one has run, without waiting for its
    // COMMIT: the units of one slice share one disk sync, each still in its own savepoint. Where each
    // unit commits alone (PostgreSQL), the next one waits for it: two in flight would both move the
    // invoice number counter, and one of them would be aborted and run again.
    await (store.groupCommit ? Promise.race([done, unit.then(noop, noop)]) : unit.then(noop, noop));
    if (performance.now() - slice >= SLICE_MS) {
      await yieldToLoop();
      slice = performance.now();
    }
  }
  await Promise.all(outcomes);
}

/**
 * The targets billed in batches: a few subscriptions of one organisation share one unit of work
 * (`BillingBatch`): their rows read ahead in one statement each, their invoices, events, e-mails,
 * charge keys and progress written in multi-row statements at its end. With a group commit (SQLite,
 * whose statements run on the event loop) a batch is sized to fill what is left of the SLICE_MS
 * between two yields to the event loop, at the pace of the one before (at most twice its size and
 * BATCH_MAX), and the next batch runs while this one's COMMIT waits. Where each unit commits alone
 * (PostgreSQL, whose statements wait on the network with the event loop free), batches hold
 * BATCH_MAX subscriptions, saving round trips, and the next waits for this one's COMMIT (two in
 * flight would both move the invoice number counter). A batch in which anything fails (a
 * subscription's error, a charge another run billed) rolls back as a whole, and its subscriptions are
 * then billed one at a time (`billEach`), so that each still succeeds, is skipped or fails on its own.
 */
async function billInBatches(deps: RunDeps, request: RunRequest, targets: readonly Target[], cache: CatalogueCache, recorder: RunRecorder): Promise<void> {
  const { store } = deps;
  const outcomes: Array<Promise<void>> = [];
  const retry: Target[] = [];
  let next = 0;
  // The pace of the last batch (ms a subscription) and the most the next may hold.
  let each = SLICE_MS / FIRST_BATCH;
  let most = FIRST_BATCH;
  let slice = performance.now();
  while (next < targets.length) {
    // What is left of the slice at the last batch's pace, growing at most twofold: a batch of quick skips says little of the next.
    const size = store.groupCommit ? Math.max(1, Math.min(most, Math.floor((SLICE_MS - (performance.now() - slice)) / each))) : BATCH_MAX;
    const org = targets[next]!.org;
    let end = next + 1;
    while (end < targets.length && end - next < size && targets[end]!.org === org) end++;
    const batch = targets.slice(next, end);
    next = end;
    let ran!: () => void;
    const done = new Promise<void>((resolve) => (ran = resolve));
    const unit = store.transaction(
      async (tx) => {
        const started = performance.now();
        try {
          const shared = new BillingBatch(tx);
          await shared.prefetch(
            org,
            batch.map((t) => t.subscriptionId),
          );
          const billed: BillingOutcome[] = [];
          for (const target of batch) billed.push(await billSubscription(shared.tx, org, target.subscriptionId, request.asOf, request.now, deps.settings, cache));
          await shared.flush();
          return billed;
        } catch (err) {
          throw new BatchFailed(err instanceof Error ? err.message : String(err));
        } finally {
          each = Math.max((performance.now() - started) / batch.length, 0.01);
          most = Math.min(BATCH_MAX, 2 * batch.length);
          ran();
        }
      },
      { lingerMs: LINGER_MS },
    );
    outcomes.push(
      unit.then(
        (billed) => billed.forEach((outcome, i) => recorder.outcome(batch[i]!, outcome)),
        () => void retry.push(...batch),
      ),
    );
    await (store.groupCommit ? Promise.race([done, unit.then(noop, noop)]) : unit.then(noop, noop));
    if (performance.now() - slice + each > SLICE_MS) {
      await yieldToLoop();
      slice = performance.now();
    }
  }
  await Promise.all(outcomes);
  if (retry.length) await billEach(deps, request, retry, cache, recorder);
}

/**
 * One billing run: each due subscription (or the one asked for) billed in its own unit of work
 * (`billEach`), or, when there are several, in batches that behave as such (`billInBatches`),
 * yielding to the event loop every SLICE_MS so that the server stays responsive.
 * One recorded run per organisation. A subscription that fails is listed with its error and the run
 * goes on.
 */
export async function runBilling(deps: RunDeps, request: RunRequest): Promise<BillingRun[]> {
  const { store } = deps;
  const started = Date.now();
  let targets: Target[];
  let only: string | null = null;
  if (request.subscription !== undefined) {
    const org = request.org as string;
    const ref = request.subscription;
    const record = await store.read((tx) => findSubscription(tx, org, ref));
    if (!record) throw notFound('Subscription', ref);
    only = record.id;
    targets = [{ org, subscriptionId: record.id }];
  } else {
    targets = await dueSubscriptions(store, request.asOf.toISOString(), request.org);
  }
  const recorder = new RunRecorder(request, only, deps);
  const cache = new CatalogueCache();
  if (targets.length > 1) await billInBatches(deps, request, targets, cache, recorder);
  else await billEach(deps, request, targets, cache, recorder);
  const finishedAt = new Date(request.now.getTime() + (Date.now() - started)).toISOString();
  const recorded: BillingRun[] = [];
  for (const [org, run] of recorder.runs) {
    if (!request.recordEmpty && run.subscriptionsBilled === 0 && run.subscriptionsFailed === 0) continue;
    const final = { ...run, finishedAt };
    await store.transaction((tx) => tx.billing.insertRun(org, final));
    recorded.push(final);
  }
  return recorded;
}

/** `asOf` of an API run: now when absent, never in the future (only `jobs run --now` simulates the future). */
export function apiAsOf(asOf: string | undefined, now: Date): Date {
  if (asOf === undefined) return now;
  const at = new Date(asOf);
  if (at.getTime() > now.getTime()) {
    throw invalid('asOf', `asOf ${asOf} lies in the future; a billing run bills what is due up to now (omit asOf for now)`, 'in_the_future');
  }
  return at;
}

export async function getBillingRun(tx: Tx, org: string, id: string): Promise<BillingRun> {
  const run = await tx.billing.getRun(org, id);
  if (!run) throw notFound('Billing run', id);
  return run;
}

export async function listBillingRuns(tx: Tx, org: string, filter: { trigger?: BillingRunTrigger | undefined }, page: PageRequest) {
  return tx.billing.listRuns(org, filter, page);
}

