import { conflict, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Customer, CustomerEmail } from '../schemas/customers.js';
import type { CustomerFilter } from '../store/ports/customers.js';
import type { SubscriptionStatus } from '../store/ports/subscriptions.js';
import type { Tx } from '../store/store.js';
import { validateCustomFields } from './customFields.js';
import { FINAL } from './subscriptionStates.js';

/**
 * The zone the runtime's time zone database resolves `name` to (`US/Eastern` → `America/New_York`;
 * some ICU versions also `Asia/Kolkata` → `Asia/Calcutta`), or undefined for a name it does not know.
 * UTC offsets (`+01:00`, which newer runtimes accept) are not names.
 */
function resolvedZone(name: string): string | undefined {
  if (/^[+-]/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

/**
 * A time zone name of the runtime's database, canonical or a link (`Europe/Berlin`, `Asia/Kolkata`,
 * `US/Eastern`, `Etc/GMT+5`, `UTC`), written in its own case: `europe/berlin` is not one.
 */
export function isTimeZone(name: string): boolean {
  const zone = resolvedZone(name);
  return zone !== undefined && (zone === name || zone.toLowerCase() !== name.toLowerCase());
}

export type CustomerStatus = Customer['status'];

export interface CustomerInput {
  customerNumber?: string | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  companyName?: string | null | undefined;
  datevId?: string | null | undefined;
  timeZone: string;
  currencyCode: string;
  status: CustomerStatus;
  /** Days from issue to due date of the customer's invoices; null: the organisation default. */
  paymentTermDays?: number | null | undefined;
  customFields?: Record<string, unknown> | undefined;
}

const filled = (value: string | null) => value !== null && value.trim() !== '';

/** A customer is addressed by a company name, a last name, or both. */
function nameViolation(c: Pick<Customer, 'lastName' | 'companyName'>): Violation | undefined {
  if (filled(c.lastName) || filled(c.companyName)) return undefined;
  return {
    propertyPath: 'lastName',
    message: 'a customer needs a name: give lastName (a person) or companyName (a business), or both; at least one must be non-empty',
    code: 'name_required',
  };
}

async function numberViolation(tx: Tx, org: string, customerNumber: string, exceptId?: string): Promise<Violation | undefined> {
  if (!(await tx.customers.numberTaken(org, customerNumber, exceptId))) return undefined;
  return {
    propertyPath: 'customerNumber',
    message: `customerNumber must be unique: another customer already has the number '${customerNumber}'`,
    code: 'unique',
  };
}

/** CUS-000001, CUS-000002, …; numbers someone chose by hand are skipped. */
async function nextCustomerNumber(tx: Tx, org: string): Promise<string> {
  for (;;) {
    const n = await tx.system.nextCounter(org, 'customer');
    const candidate = `CUS-${String(n).padStart(6, '0')}`;
    if (!(await tx.customers.numberTaken(org, candidate))) return candidate;
  }
}

function throwIfAny(violations: Array<Violation | undefined>): void {
  const found = violations.filter((v): v is Violation => v !== undefined);
  if (found.length) throw invalidMany(found);
}

export async function createCustomer(tx: Tx, org: string, input: CustomerInput, now: Date): Promise<Customer> {
  const names = { lastName: input.lastName ?? null, companyName: input.companyName ?? null };
  throwIfAny([
    nameViolation(names),
    input.customerNumber === undefined ? undefined : await numberViolation(tx, org, input.customerNumber),
    ...(await validateCustomFields(tx, org, 'customer', input.customFields ?? {})),
  ]);
  const at = now.toISOString();
  const customer: Customer = {
    id: newId(),
    customerNumber: input.customerNumber ?? (await nextCustomerNumber(tx, org)),
    timeZone: input.timeZone,
    firstName: input.firstName ?? null,
    ...names,
    currencyCode: input.currencyCode,
    datevId: input.datevId ?? null,
    status: input.status,
    paymentTermDays: input.paymentTermDays ?? null,
    creditBalance: 0,
    customFields: input.customFields ?? {},
    createdAt: at,
    updatedAt: at,
  };
  await tx.customers.insert(org, customer);
  return customer;
}

/** A customer by id or by customer number: every input naming a customer accepts both. */
export async function findCustomer(tx: Tx, org: string, ref: string): Promise<Customer | undefined> {
  return (await tx.customers.get(org, ref)) ?? (await tx.customers.getByNumber(org, ref));
}

/** The customer `ref` (id or number) names; a 404 when none does (a list's `customer` filter too). */
export async function getCustomer(tx: Tx, org: string, ref: string): Promise<Customer> {
  const customer = await findCustomer(tx, org, ref);
  if (!customer) throw notFound('Customer', ref);
  return customer;
}

export async function listCustomers(tx: Tx, org: string, filter: CustomerFilter, page: PageRequest) {
  return tx.customers.list(org, filter, page);
}

/**
 * A customer's currency is fixed once anything is billed or priced in it: a subscription (its price
 * plans are in that currency), an invoice, or a credit balance. Before that it may change.
 */
async function assertCurrencyFree(tx: Tx, org: string, customer: Customer): Promise<void> {
  const none = { page: 1, limit: 0, descending: false };
  const subscriptions = (await tx.subscriptions.list(org, { customer: customer.id }, none)).total;
  const invoices = (await tx.invoices.list(org, { customer: customer.id }, none)).total;
  if (subscriptions === 0 && invoices === 0 && customer.creditBalance === 0) return;
  const what = [
    subscriptions ? `${subscriptions} subscription(s)` : '',
    invoices ? `${invoices} invoice(s)` : '',
    customer.creditBalance ? 'a credit balance' : '',
  ].filter(Boolean);
  throw conflict(
    `The currency of customer ${customer.customerNumber} is fixed at ${customer.currencyCode}: it has ${what.join(' and ')} in it. Create a new customer to bill in another currency`,
  );
}

/** Statuses of subscriptions billed in their customer's time zone; those of a FINAL status are until their final invoice. */
const RUNNING: readonly SubscriptionStatus[] = ['active', 'paused'];
/** Subscriptions a refusal names; the rest are counted. */
const NAMED = 3;

/**
 * A customer's time zone is fixed while a subscription bills: its periods, terms and billing days are
 * computed in that zone, so another zone would move them (a day billed twice or skipped). Active and
 * paused subscriptions hold it, cancelled and terminated ones until their final invoice is issued.
 */
async function assertTimeZoneFree(tx: Tx, org: string, customer: Customer): Promise<void> {
  const { numbers, total } = await tx.customers.billingSubscriptions(org, customer.id, { running: RUNNING, ending: FINAL }, NAMED);
  if (total === 0) return;
  const more = total > numbers.length ? ` and ${total - numbers.length} more` : '';
  throw conflict(
    `The timeZone of customer ${customer.customerNumber} is fixed at ${customer.timeZone}: subscription(s) ${numbers.join(', ')}${more} are billed in it, and another zone would move their billing days. Create a new customer to bill in another time zone`,
  );
}

/** An omitted field (undefined) keeps its current value; null is a value and clears it. */
const given = <T>(value: T | undefined, current: T): T => (value === undefined ? current : value);

/**
 * PUT: omitted fields stay, null clears a nullable field; the result must still have a name.
 * customFields, when given, replaces the whole map.
 */
export async function updateCustomer(
  tx: Tx,
  org: string,
  id: string,
  patch: Partial<CustomerInput>,
  now: Date,
): Promise<Customer> {
  const current = await getCustomer(tx, org, id);
  const next: Customer = {
    ...current,
    customerNumber: given(patch.customerNumber, current.customerNumber),
    timeZone: given(patch.timeZone, current.timeZone),
    firstName: given(patch.firstName, current.firstName),
    lastName: given(patch.lastName, current.lastName),
    currencyCode: given(patch.currencyCode, current.currencyCode),
    companyName: given(patch.companyName, current.companyName),
    datevId: given(patch.datevId, current.datevId),
    status: given(patch.status, current.status),
    paymentTermDays: given(patch.paymentTermDays, current.paymentTermDays),
    customFields: given(patch.customFields, current.customFields),
    updatedAt: now.toISOString(),
  };
  throwIfAny([
    nameViolation(next),
    next.customerNumber === current.customerNumber ? undefined : await numberViolation(tx, org, next.customerNumber, current.id),
    ...(patch.customFields === undefined ? [] : await validateCustomFields(tx, org, 'customer', patch.customFields)),
  ]);
  if (next.currencyCode !== current.currencyCode) await assertCurrencyFree(tx, org, current);
  if (next.timeZone !== current.timeZone) await assertTimeZoneFree(tx, org, current);
  await tx.customers.update(org, next);
  return next;
}

export interface CustomerEmailInput {
  email: string;
  receiverName?: string | null | undefined;
  isInvoiceEmail: boolean;
  isDunningEmail: boolean;
  default: boolean;
}

/** An address is unique per customer, compared without regard to the case of A-Z. */
async function emailViolation(tx: Tx, org: string, customerId: string, email: string, exceptId?: string): Promise<Violation | undefined> {
  if (!(await tx.customers.emailTaken(org, customerId, email, exceptId))) return undefined;
  return {
    propertyPath: 'email',
    message: `email must be unique per customer: the customer already has the address '${email}' (in any case); update that one instead`,
    code: 'unique',
  };
}

/** A customer has at most one default address: a new default takes over from the old one. */
export async function createCustomerEmail(
  tx: Tx,
  org: string,
  customerId: string,
  input: CustomerEmailInput,
  now: Date,
): Promise<CustomerEmail> {
  const customer = await getCustomer(tx, org, customerId);
  throwIfAny([await emailViolation(tx, org, customer.id, input.email)]);
  const at = now.toISOString();
  if (input.default) await tx.customers.clearDefaultEmail(org, customer.id, at);
  const email: CustomerEmail = {
    id: newId(),
    customer: customer.id,
    email: input.email,
    receiverName: input.receiverName ?? null,
    isInvoiceEmail: input.isInvoiceEmail,
    isDunningEmail: input.isDunningEmail,
    default: input.default,
    createdAt: at,
    updatedAt: at,
  };
  await tx.customers.insertEmail(org, email);
  return email;
}

export async function getCustomerEmail(tx: Tx, org: string, id: string): Promise<CustomerEmail> {
  const email = await tx.customers.getEmail(org, id);
  if (!email) throw notFound('Customer e-mail address', id);
  return email;
}

/**
 * PUT: omitted fields stay, null clears receiverName. `default: true` takes over from the customer's
 * old default, as on create; `default: false` on the default leaves the customer without one.
 */
export async function updateCustomerEmail(
  tx: Tx,
  org: string,
  id: string,
  patch: Partial<CustomerEmailInput>,
  now: Date,
): Promise<CustomerEmail> {
  const current = await getCustomerEmail(tx, org, id);
  const at = now.toISOString();
  const next: CustomerEmail = {
    ...current,
    email: given(patch.email, current.email),
    receiverName: given(patch.receiverName, current.receiverName),
    isInvoiceEmail: given(patch.isInvoiceEmail, current.isInvoiceEmail),
    isDunningEmail: given(patch.isDunningEmail, current.isDunningEmail),
    default: given(patch.default, current.default),
    updatedAt: at,
  };
  throwIfAny([next.email === current.email ? undefined : await emailViolation(tx, org, current.customer, next.email, current.id)]);
  if (next.default && !current.default) await tx.customers.clearDefaultEmail(org, current.customer, at);
  await tx.customers.updateEmail(org, next);
  return next;
}

/** E-mails already queued keep their recipients; removing the default address leaves the customer without one. */
export async function deleteCustomerEmail(tx: Tx, org: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await tx.customers.deleteEmail(org, id))) throw notFound('Customer e-mail address', id);
  return { id, deleted: true };
}

export async function listCustomerEmails(tx: Tx, org: string, customerId: string, page: PageRequest) {
  const customer = await getCustomer(tx, org, customerId);
  return tx.customers.listEmails(org, customer.id, page);
}
