/**
 * The customer portal (issue 18): what one customer sees and may do through a portal session. Every
 * rule is the API's own: the same reads, payment methods checked as create_payment_method checks
 * them, cancellations computed and made by cancel_subscription's code.
 */
import { AppError, conflict, invalidMany, notFound, type Violation } from '../errors.js';
import { newUlid } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer } from '../schemas/customers.js';
import type { Invoice } from '../schemas/invoices.js';
import type { PaymentMethod } from '../schemas/billingDetails.js';
import type { Organisation } from '../schemas/organisation.js';
import type { SepaMandate } from '../schemas/sepa.js';
import type { Subscription } from '../schemas/subscriptions.js';
import type { Tx } from '../store/store.js';
import { createPaymentMethod, listPaymentMethods } from './billingDetails.js';
import { getCustomer } from './customers.js';
import { listInvoices } from './invoices.js';
import { getOrganisation } from './organisation.js';
import { createSepaMandate, listSepaMandates, sepaDay } from './sepa.js';
import { cancelSubscription, nextCancellationDate } from './subscriptions/lifecycle.js';
import { getSubscription, listSubscriptions } from './subscriptions/readModel.js';

/** The newest of each: a portal shows a customer's recent history, not an archive. */
const RECENT: PageRequest = { page: 1, limit: 100, descending: true };
const RECENT_INVOICES: PageRequest = { page: 1, limit: 50, descending: true };

/** Subscriptions the customer has (or had): not drafts, not offers still waiting to be signed. */
const SHOWN = new Set<Subscription['status']>(['active', 'paused', 'cancelled', 'terminated']);

/** Whether the portal shows the subscription: one that ran (a withdrawn offer or a draft ends terminated without ever being activated). */
const shown = (s: Subscription): boolean => SHOWN.has(s.status) && s.activatedAt !== null;

/** Whether, and when, a subscription can end. */
export type Cancellation =
  /** Cancelling now ends it at `date`: the next term end its cancellation period allows, or its trial's end. */
  | { kind: 'possible'; date: string; duringTrial: boolean }
  /** A cancellation is scheduled for `date`. */
  | { kind: 'scheduled'; date: string }
  /** A plan change applies at `date`; the subscription can be cancelled once it has (cancel_subscription refuses before). */
  | { kind: 'changing'; date: string }
  /** It has ended (cancelled or terminated) at `date`. */
  | { kind: 'ended'; date: string | null };

export interface PortalSubscription {
  subscription: Subscription;
  cancellation: Cancellation;
}

/** The creditor the customer gives a direct debit mandate to, when the organisation collects by direct debit. */
export interface PortalCreditor {
  name: string;
  creditorIdentifier: string;
}

export interface PortalOverview {
  seller: Organisation;
  customer: Customer;
  subscriptions: PortalSubscription[];
  /** Issued invoices, newest first (at most 50), and how many there are. */
  invoices: Invoice[];
  invoiceCount: number;
  paymentMethods: Array<{ method: PaymentMethod; mandate: SepaMandate | null }>;
}

async function cancellationOf(tx: Tx, org: string, s: Subscription, now: Date): Promise<Cancellation> {
  if (s.status === 'cancelled' || s.status === 'terminated') return { kind: 'ended', date: s.cancelledAt ?? s.terminatedAt };
  if (s.cancellationDate) return { kind: 'scheduled', date: s.cancellationDate };
  if (s.pendingPlanChange) return { kind: 'changing', date: s.pendingPlanChange.applyAt };
  const duringTrial = s.trialEndsOn !== null && Date.parse(s.trialEndsOn) > now.getTime();
  return { kind: 'possible', date: await nextCancellationDate(tx, org, s.id, now), duringTrial };
}

export async function portalOverview(tx: Tx, org: string, customerId: string, now: Date): Promise<PortalOverview> {
  const customer = await getCustomer(tx, org, customerId);
  const subscriptions: PortalSubscription[] = [];
  for (const subscription of (await listSubscriptions(tx, org, { customer: customer.id }, RECENT, now)).rows) {
    if (shown(subscription)) subscriptions.push({ subscription, cancellation: await cancellationOf(tx, org, subscription, now) });
  }
  const invoices = await listInvoices(tx, org, { customer: customer.id, issued: true }, RECENT_INVOICES);
  const mandates = new Map((await listSepaMandates(tx, org, customer.id, RECENT, now)).rows.map((m) => [m.bankAccount.id, m]));
  const methods = (await listPaymentMethods(tx, org, customer.id, RECENT, now)).rows;
  return {
    seller: await getOrganisation(tx, org),
    customer,
    subscriptions,
    invoices: invoices.rows,
    invoiceCount: invoices.total,
    paymentMethods: methods.map((method) => ({ method, mandate: mandates.get(method.id) ?? null })),
  };
}

/** A subscription of the customer that the portal shows; any other id is a 404. */
export async function ownedSubscription(tx: Tx, org: string, customerId: string, id: string, now: Date): Promise<Subscription> {
  const subscription = await getSubscription(tx, org, id, now);
  if (subscription.customer.id !== customerId || !shown(subscription)) throw notFound('Subscription', id);
  return subscription;
}

/** That subscription with whether, and when, it can end. */
export async function portalSubscription(tx: Tx, org: string, customerId: string, id: string, now: Date): Promise<PortalSubscription> {
  const subscription = await ownedSubscription(tx, org, customerId, id, now);
  return { subscription, cancellation: await cancellationOf(tx, org, subscription, now) };
}

/**
 * Cancels the customer's subscription at `date`, the date they were shown and confirmed: the next
 * possible one, and only that (the portal offers no other), through cancel_subscription's code, so
 * `subscription.cancellation_scheduled` is emitted. A date that is no longer the next possible one
 * (the notice period passed meanwhile, or the form was altered) is a 409 naming the one that is.
 */
export async function cancelFromPortal(tx: Tx, org: string, customerId: string, id: string, date: string, now: Date): Promise<Subscription> {
  await ownedSubscription(tx, org, customerId, id, now);
  const next = await nextCancellationDate(tx, org, id, now);
  if (Date.parse(date) !== Date.parse(next)) {
    throw conflict(`The portal cancels at the next possible date, ${next}, not ${date}; open the subscription again to confirm that date`);
  }
  return cancelSubscription(tx, org, id, { cancellationDate: date }, now);
}

export async function portalCreditor(tx: Tx, org: string): Promise<PortalCreditor | null> {
  const creditor = await tx.sepa.getCreditor(org);
  return creditor ? { name: creditor.name, creditorIdentifier: creditor.creditorIdentifier } : null;
}

export interface PortalBankAccount {
  iban: string;
  accountHolder: string;
  /** true: it becomes the customer's default payment method. */
  makeDefault: boolean;
  /** The customer confirmed the mandate text (needed when the organisation collects by direct debit). */
  mandateAccepted: boolean;
}

/**
 * Adds the customer's bank account as a SEPA direct debit payment method, checked as
 * create_payment_method checks it. When the organisation collects by direct debit (its SEPA creditor
 * is set up), the customer's confirmation of the mandate text is the mandate: it is recorded at once
 * (core scheme, signed today, a reference of its own), so the account can be debited; without that
 * confirmation nothing is added (a 422 at `mandate`, with the account's own violations if any).
 */
export async function addPortalBankAccount(
  tx: Tx,
  org: string,
  customerId: string,
  input: PortalBankAccount,
  now: Date,
): Promise<{ method: PaymentMethod; mandate: SepaMandate | null }> {
  const creditor = await tx.sepa.getCreditor(org);
  const signed = creditor && { mandateReference: `PORTAL-${newUlid()}`, signatureDate: sepaDay(now) };
  const refusal: Violation | undefined =
    creditor && !input.mandateAccepted
      ? { propertyPath: 'mandate', message: 'mandate must be accepted to pay by direct debit', code: 'required' }
      : undefined;
  const method = await createPaymentMethod(
    tx,
    org,
    customerId,
    {
      type: 'sepa_debit',
      gatewayName: 'manual',
      name: null,
      default: input.makeDefault,
      enabled: true,
      sepaDebit: {
        iban: input.iban,
        accountHolder: input.accountHolder,
        bic: null,
        mandateReference: signed?.mandateReference ?? null,
        signingDate: signed?.signatureDate ?? null,
      },
    },
    now,
  ).catch((err: unknown) => {
    throw refusal && err instanceof AppError && err.kind === 'validation' ? invalidMany([...(err.violations ?? []), refusal]) : err;
  });
  if (refusal) throw invalidMany([refusal]);
  if (!signed) return { method, mandate: null };
  const mandate = await createSepaMandate(tx, org, customerId, { paymentMethod: method.id, ...signed, sepaType: 'core' }, now);
  return { method, mandate };
}
