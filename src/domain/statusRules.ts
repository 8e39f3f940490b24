/**
 * What the statuses of customers, plans and price plans forbid (issue 17). A reference given in the
 * input that names something unusable is a 422 at that field; the state of what an operation acts on
 * (a subscription to activate, an invoice to split) is a 409. Existing items keep billing.
 */
import { conflict, type Violation } from '../errors.js';
import type { Plan, PricePlan } from '../schemas/catalogue.js';
import type { Customer } from '../schemas/customers.js';
import type { SubscriptionRecord } from '../store/ports/subscriptions.js';
import type { Tx } from '../store/store.js';

const REACTIVATE_CUSTOMER = 'set its status STATUS_ACTIVE with update_customer first';
const ACTIVATE_PLAN = 'set its status active with update_plan first';

/** An inactive customer gets no new subscription (nor offer proposing one). */
export function customerViolation(customer: Customer, field = 'customer'): Violation | undefined {
  if (customer.status === 'STATUS_ACTIVE') return undefined;
  return {
    propertyPath: field,
    message: `${field} ${customer.customerNumber} is ${customer.status} and gets no new subscriptions; ${REACTIVATE_CUSTOMER}`,
    code: 'inactive',
  };
}

/** A draft plan cannot be subscribed. */
export function draftPlanViolation(plan: Plan, field = 'plan'): Violation | undefined {
  if (plan.status !== 'draft') return undefined;
  return { propertyPath: field, message: `${field} ${plan.code} is draft and cannot be subscribed yet; ${ACTIVATE_PLAN}`, code: 'draft' };
}

/** Only an active price plan prices a new item. */
export function pricePlanViolation(pricePlan: PricePlan, field: string): Violation | undefined {
  if (pricePlan.status === 'active') return undefined;
  return {
    propertyPath: field,
    message: `${field} uses price plan ${pricePlan.id}, which is ${pricePlan.status}: only active price plans take new items; set it active with update_price_plan, or pick an active one`,
    code: pricePlan.status,
  };
}

/** The price plans of a plan's charges that are not active, as violations at `field`. */
export function chargeViolations(plan: Plan, field = 'plan'): Violation[] {
  return plan.charges.map((c) => pricePlanViolation(c.pricePlan, field)).filter((v): v is Violation => v !== undefined);
}

/** A subscription is activated only from an active plan, for an active customer (409 naming which). */
export async function assertActivatable(tx: Tx, org: string, record: SubscriptionRecord): Promise<void> {
  const plan = await tx.plans.get(org, record.planId);
  if (plan?.status === 'draft') {
    throw conflict(`Subscription ${record.number} cannot be activated: its plan ${plan.code} is draft; ${ACTIVATE_PLAN}`);
  }
  const customer = (await tx.customers.get(org, record.customerId)) as Customer;
  if (customer.status !== 'STATUS_ACTIVE') {
    throw conflict(`Subscription ${record.number} cannot be activated: its customer ${customer.customerNumber} is ${customer.status}; ${REACTIVATE_CUSTOMER}`);
  }
}

/** An inactive customer's invoice gets no new payment plan (409). */
export function assertPayingCustomer(customer: Customer, invoiceNumber: string): void {
  if (customer.status !== 'STATUS_ACTIVE') {
    throw conflict(`Invoice ${invoiceNumber} gets no payment plan: its customer ${customer.customerNumber} is ${customer.status}; ${REACTIVATE_CUSTOMER}`);
  }
}
