import { conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type {
  Card,
  InvoiceAddress,
  PaymentMethod,
  PaymentMethodType,
  Paypal,
  SepaDebit,
} from '../schemas/billingDetails.js';
import { bicInput, type PageRequest } from '../schemas/common.js';
import type { PaymentMethodRecord } from '../store/ports/billingDetails.js';
import type { Tx } from '../store/store.js';
import { getCustomer } from './customers.js';
import { ibanProblem, maskIban, normaliseIban, sepaIbanProblem } from './iban.js';
import { mandateReferenceProblem, mandateView, recordSepaMandate, signatureDateProblem } from './sepa.js';
import { validVatId } from './vatIds.js';

/*
 * Defaults: a customer has at most one default invoice address and one default payment method. The
 * first one created becomes the default whatever `default` says, so a customer with addresses or
 * (enabled) payment methods always has a default to fall back on (interface 2.1); a later one with
 * `default: true` takes the flag over in the same transaction.
 */

function throwIfAny(violations: Array<Violation | undefined>): void {
  const found = violations.filter((v): v is Violation => v !== undefined);
  if (found.length) throw invalidMany(found);
}

export interface InvoiceAddressInput {
  type: InvoiceAddress['type'];
  default: boolean;
  vatId?: string | null | undefined;
  companyName?: string | null | undefined;
  salutation?: string | null | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  street: string;
  houseNumber?: string | null | undefined;
  addition?: string | null | undefined;
  zip: string;
  city: string;
  countryCode: string;
  costCentre?: string | null | undefined;
}

/** `pathPrefix`: where the address sits in the request, for violations (`invoiceAddress.` when nested). */
export async function createInvoiceAddress(
  tx: Tx,
  org: string,
  customerId: string,
  input: InvoiceAddressInput,
  now: Date,
  pathPrefix = '',
): Promise<InvoiceAddress> {
  const vatId = input.vatId ? validVatId(input.countryCode, input.vatId, `${pathPrefix}vatId`) : null;
  const customer = await getCustomer(tx, org, customerId);
  const at = now.toISOString();
  const current = await tx.billingDetails.defaultInvoiceAddress(org, customer.id);
  const isDefault = input.default || current === undefined;
  if (isDefault && current) await tx.billingDetails.clearDefaultInvoiceAddress(org, customer.id, at);
  const address: InvoiceAddress = {
    id: newId(),
    customer: customer.id,
    vatId,
    type: input.type,
    default: isDefault,
    status: 'STATUS_ACTIVE',
    city: input.city,
    zip: input.zip,
    street: input.street,
    houseNumber: input.houseNumber ?? null,
    countryCode: input.countryCode,
    companyName: input.companyName ?? null,
    salutation: input.salutation ?? null,
    addition: input.addition ?? null,
    costCentre: input.costCentre ?? null,
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    createdAt: at,
    updatedAt: at,
  };
  await tx.billingDetails.insertInvoiceAddress(org, address);
  return address;
}

export async function listInvoiceAddresses(tx: Tx, org: string, customerId: string, page: PageRequest) {
  const customer = await getCustomer(tx, org, customerId);
  return tx.billingDetails.listInvoiceAddresses(org, customer.id, page);
}

/**
 * The invoice address `id` of that customer, or undefined when the customer (in this organisation)
 * has no such address. No error: the caller decides what an unknown reference is (a 422 at the
 * field that named it, for a subscription's `invoiceAddress`).
 */
export async function getInvoiceAddress(
  tx: Tx,
  org: string,
  customerId: string,
  id: string,
): Promise<InvoiceAddress | undefined> {
  return tx.billingDetails.getInvoiceAddress(org, customerId, id);
}

/** The customer's default invoice address, or undefined when the customer has none (or is unknown). */
export async function defaultInvoiceAddress(tx: Tx, org: string, customerId: string): Promise<InvoiceAddress | undefined> {
  return tx.billingDetails.defaultInvoiceAddress(org, customerId);
}

/**
 * The address a subscription's invoices go to: its own `invoiceAddress`, else the customer's default
 * one; undefined when the customer has none (no tax is applied then).
 */
export async function billingAddressOf(
  tx: Tx,
  org: string,
  subscription: { customerId: string; invoiceAddressId: string | null },
): Promise<InvoiceAddress | undefined> {
  const chosen = subscription.invoiceAddressId ? await getInvoiceAddress(tx, org, subscription.customerId, subscription.invoiceAddressId) : undefined;
  return chosen ?? (await defaultInvoiceAddress(tx, org, subscription.customerId));
}

/** The object of a payment method's input that carries the details of each type. */
export const DETAIL_FIELD = { sepa_debit: 'sepaDebit', card: 'card', paypal: 'paypal' } as const satisfies Record<
  PaymentMethodType,
  string
>;

const DETAIL_SHAPE: Record<PaymentMethodType, string> = {
  sepa_debit: '{ iban, accountHolder, bic?, mandateReference?, signingDate? }',
  card: '{ brand, last4, expMonth, expYear, cardHolder? }',
  paypal: '{ email, billingAgreementId? }',
};

export interface SepaDebitInput {
  iban: string;
  bic?: string | null | undefined;
  accountHolder: string;
  mandateReference?: string | null | undefined;
  signingDate?: string | null | undefined;
}

export interface CardInput {
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  cardHolder?: string | null | undefined;
}

export interface PaypalInput {
  email: string;
  billingAgreementId?: string | null | undefined;
}

export interface PaymentMethodInput {
  type: PaymentMethodType;
  gatewayName: string;
  name?: string | null | undefined;
  default: boolean;
  enabled: boolean;
  sepaDebit?: SepaDebitInput | null | undefined;
  card?: CardInput | null | undefined;
  paypal?: PaypalInput | null | undefined;
}

/** The type's own object must be given, the other types' objects must not. */
function detailViolations(input: PaymentMethodInput): Violation[] {
  const out: Violation[] = [];
  for (const [type, field] of Object.entries(DETAIL_FIELD) as Array<[PaymentMethodType, keyof PaymentMethodInput]>) {
    const given = input[field] !== undefined && input[field] !== null;
    if (type === input.type && !given) {
      out.push({
        propertyPath: field,
        message: `${field} is required when type is ${type}: give ${field}: ${DETAIL_SHAPE[type]}`,
        code: 'required',
      });
    }
    if (type !== input.type && given) {
      out.push({
        propertyPath: field,
        message: `${field} belongs to type ${type}, but type is ${input.type}: send only ${DETAIL_FIELD[input.type]} (or change type to ${type})`,
        code: 'type_mismatch',
      });
    }
  }
  return out;
}

/** The last instant of the card's expiry month, in UTC (a card is valid through its whole expiry month). */
export function cardExpiresAt(card: Pick<CardInput, 'expMonth' | 'expYear'>): Date {
  return new Date(Date.UTC(card.expYear, card.expMonth, 1) - 1);
}

function expiryViolation(card: CardInput, now: Date): Violation | undefined {
  if (cardExpiresAt(card).getTime() >= now.getTime()) return undefined;
  const month = String(card.expMonth).padStart(2, '0');
  return {
    propertyPath: 'card',
    message: `card expired at the end of ${month}/${card.expYear}: expMonth/expYear must not lie before the current month; add a card that is still valid`,
    code: 'card_expired',
  };
}

/** A sepa_debit method is for SEPA direct debit: a valid IBAN of a SEPA country. */
function ibanViolation(iban: string): Violation | undefined {
  const problem = ibanProblem(iban);
  if (problem !== undefined) return { propertyPath: 'sepaDebit.iban', message: `sepaDebit.iban ${problem}`, code: 'invalid_iban' };
  const outside = sepaIbanProblem(iban);
  if (outside !== undefined) return { propertyPath: 'sepaDebit.iban', message: `sepaDebit.iban ${outside}`, code: 'not_sepa_country' };
  return undefined;
}

/** A sepa_debit method's BIC, when it has one (bicInput, the rule update_sepa_creditor's input schema checks). */
function bicViolation(bic: string | null | undefined): Violation | undefined {
  if (bic === undefined || bic === null) return undefined;
  const issue = bicInput.safeParse(bic).error?.issues[0];
  return issue && { propertyPath: 'sepaDebit.bic', message: `sepaDebit.bic ${issue.message}`, code: issue.code };
}

/** The signed mandate `sepaDebit.mandateReference` and `signingDate` give, when they give one. */
function givenMandate(input: PaymentMethodInput): { mandateReference: string | null; signingDate: string | null } | undefined {
  const s = input.type === 'sepa_debit' ? input.sepaDebit : undefined;
  const mandateReference = s?.mandateReference ?? null;
  const signingDate = s?.signingDate ?? null;
  return mandateReference === null && signingDate === null ? undefined : { mandateReference, signingDate };
}

/**
 * `sepaDebit.mandateReference` and `signingDate` record the debtor's signed mandate on the new
 * method (create_sepa_mandate's checks, core scheme): both or neither, a reference of the SEPA
 * set, a signature neither in the future nor so far back that the mandate has expired, an enabled
 * method.
 */
function mandateViolations(input: PaymentMethodInput, now: Date): Violation[] {
  const given = givenMandate(input);
  if (!given) return [];
  const out: Violation[] = [];
  const later = 'or leave both out and record the mandate later with create_sepa_mandate';
  if (given.mandateReference === null) {
    out.push({
      propertyPath: 'sepaDebit.mandateReference',
      message: `sepaDebit.mandateReference is required with sepaDebit.signingDate: the two record the signed mandate; give both, ${later}`,
      code: 'required',
    });
  } else {
    const problem = mandateReferenceProblem(given.mandateReference);
    if (problem) out.push({ propertyPath: 'sepaDebit.mandateReference', message: `sepaDebit.mandateReference ${problem}`, code: 'invalid_format' });
  }
  if (given.signingDate === null) {
    out.push({
      propertyPath: 'sepaDebit.signingDate',
      message: `sepaDebit.signingDate is required with sepaDebit.mandateReference: the day the debtor signed the mandate; give both, ${later}`,
      code: 'required',
    });
  } else {
    const found = signatureDateProblem(given.signingDate, now);
    if (found) out.push({ propertyPath: 'sepaDebit.signingDate', message: `sepaDebit.signingDate ${given.signingDate} ${found.problem}`, code: found.code });
  }
  if (!input.enabled) {
    out.push({
      propertyPath: 'enabled',
      message: `a mandate is recorded on an enabled payment method: set enabled true with sepaDebit.mandateReference, ${later}`,
      code: 'disabled',
    });
  }
  return out;
}

function defaultViolation(input: PaymentMethodInput): Violation | undefined {
  if (input.enabled || !input.default) return undefined;
  return {
    propertyPath: 'default',
    message: 'a disabled payment method cannot be the default: set enabled true, or leave default false',
    code: 'disabled_default',
  };
}

/**
 * Adds a payment method. Only the last four digits of a card are ever accepted. A SEPA method keeps
 * the full IBAN in the store for collections; the returned resource, like every response, carries
 * it masked. A disabled method never becomes the default, not even as the customer's first. The
 * account of a SEPA method is checked here as a whole, IBAN, BIC, mandate reference and signing date
 * in the order of its fields: one answer names every problem of it.
 */
export async function createPaymentMethod(
  tx: Tx,
  org: string,
  customerId: string,
  input: PaymentMethodInput,
  now: Date,
): Promise<PaymentMethod> {
  const customer = await getCustomer(tx, org, customerId);
  const iban = input.type === 'sepa_debit' && input.sepaDebit ? normaliseIban(input.sepaDebit.iban) : null;
  throwIfAny([
    ...detailViolations(input),
    iban === null ? undefined : ibanViolation(iban),
    input.type === 'sepa_debit' ? bicViolation(input.sepaDebit?.bic) : undefined,
    ...mandateViolations(input, now),
    input.type === 'card' && input.card ? expiryViolation(input.card, now) : undefined,
    defaultViolation(input),
  ]);
  const mandate = givenMandate(input);
  const creditor = mandate ? await tx.sepa.getCreditor(org) : undefined;
  if (mandate && !creditor) {
    throw conflict(
      'No SEPA creditor is set up; sepaDebit.mandateReference and signingDate record a mandate given to the creditor: set it with update_sepa_creditor first, or leave them out',
    );
  }

  const at = now.toISOString();
  const current = await tx.billingDetails.defaultPaymentMethod(org, customer.id);
  const isDefault = input.default || (input.enabled && current === undefined);
  if (isDefault && current) await tx.billingDetails.clearDefaultPaymentMethod(org, customer.id, at);

  let card: Card | null = null;
  let sepaDebit: SepaDebit | null = null;
  let paypal: Paypal | null = null;
  if (input.type === 'card' && input.card) {
    const c = input.card;
    card = { brand: c.brand, last4: c.last4, expMonth: c.expMonth, expYear: c.expYear, cardHolder: c.cardHolder ?? null };
  }
  if (iban !== null && input.sepaDebit) {
    const s = input.sepaDebit;
    sepaDebit = {
      iban: maskIban(iban),
      bic: s.bic ?? null,
      // Shown from the method's mandate (`views`), never kept on the method.
      mandateReference: null,
      signingDate: null,
      accountHolder: s.accountHolder,
    };
  }
  if (input.type === 'paypal' && input.paypal) {
    paypal = { email: input.paypal.email, billingAgreementId: input.paypal.billingAgreementId ?? null };
  }

  const method: PaymentMethodRecord = {
    id: newId(),
    customer: customer.id,
    gatewayName: input.gatewayName,
    type: input.type,
    default: isDefault,
    enabled: input.enabled,
    name: input.name ?? null,
    creationDate: at,
    expirationDate: card ? cardExpiresAt(card).toISOString() : null,
    card,
    sepaDebit,
    paypal,
    createdAt: at,
    updatedAt: at,
  };
  await tx.billingDetails.insertPaymentMethod(org, method, iban);
  if (mandate && creditor) {
    await recordSepaMandate(
      tx,
      org,
      creditor,
      {
        customerId: customer.id,
        paymentMethodId: method.id,
        mandateReference: mandate.mandateReference as string,
        signatureDate: mandate.signingDate as string,
        sepaType: 'core',
      },
      now,
      'sepaDebit.mandateReference',
    );
  }
  return (await views(tx, org, [method], now))[0]!;
}

/** `disabled` when not enabled, else `expired` once its expirationDate has passed, else `active`. */
function withStatus(m: PaymentMethodRecord, now: Date): PaymentMethod {
  const status = !m.enabled ? 'disabled' : m.expirationDate !== null && Date.parse(m.expirationDate) <= now.getTime() ? 'expired' : 'active';
  return { ...m, status };
}

/**
 * Payment methods of one customer as every response shows them: with their status, and a SEPA
 * method's `mandateReference` and `signingDate` those of its active mandate (what it is collected
 * under), null while it has none (never given, revoked or expired). They are read from the mandate,
 * never from what was sent, so the method and list_sepa_mandates always agree.
 */
async function views(tx: Tx, org: string, methods: PaymentMethodRecord[], now: Date): Promise<PaymentMethod[]> {
  const out: PaymentMethod[] = [];
  for (const m of methods) {
    const view = withStatus(m, now);
    const stored = view.sepaDebit ? await tx.sepa.mandateOfMethod(org, m.id) : undefined;
    const active = stored && mandateView(stored, now).status === 'active' ? stored : undefined;
    out.push(view.sepaDebit ? { ...view, sepaDebit: { ...view.sepaDebit, mandateReference: active?.mandateReference ?? null, signingDate: active?.signatureDate ?? null } } : view);
  }
  return out;
}

export async function listPaymentMethods(tx: Tx, org: string, customerId: string, page: PageRequest, now: Date) {
  const customer = await getCustomer(tx, org, customerId);
  const { rows, total } = await tx.billingDetails.listPaymentMethods(org, customer.id, page);
  return { rows: await views(tx, org, rows, now), total };
}

/**
 * The payment method `id` of that customer (IBAN masked), or undefined when the customer (in this
 * organisation) has no such method. No error: the caller decides what an unknown reference is (a 422
 * at the field that named it, for a subscription's `paymentMethod`).
 */
export async function getPaymentMethod(
  tx: Tx,
  org: string,
  customerId: string,
  id: string,
  now: Date,
): Promise<PaymentMethod | undefined> {
  const method = await tx.billingDetails.getPaymentMethod(org, customerId, id);
  return method && (await views(tx, org, [method], now))[0];
}

/** One of the customer's invoice addresses (customer by id or number); a 404 when it has no such address. */
export async function showInvoiceAddress(tx: Tx, org: string, customerRef: string, id: string): Promise<InvoiceAddress> {
  const customer = await getCustomer(tx, org, customerRef);
  const address = await getInvoiceAddress(tx, org, customer.id, id);
  if (!address) throw notFound('Invoice address', id);
  return address;
}

/** One of the customer's payment methods as every response shows it (customer by id or number); a 404 when it has no such method. */
export async function showPaymentMethod(tx: Tx, org: string, customerRef: string, id: string, now: Date): Promise<PaymentMethod> {
  const customer = await getCustomer(tx, org, customerRef);
  const method = await getPaymentMethod(tx, org, customer.id, id, now);
  if (!method) throw notFound('Payment method', id);
  return method;
}

/** The customer's default payment method (always enabled), or undefined when it has none (or is unknown). */
export async function defaultPaymentMethod(tx: Tx, org: string, customerId: string, now: Date): Promise<PaymentMethod | undefined> {
  const method = await tx.billingDetails.defaultPaymentMethod(org, customerId);
  return method && (await views(tx, org, [method], now))[0];
}

/**
 * Why the customer's payment method `id` cannot pay something new (a subscription, a payment plan),
 * as a violation at `paymentMethod`: not the customer's, disabled or expired. Undefined when it can.
 * `instead` is how the caller goes without one (a subscription takes null, a payment plan none).
 */
export async function paymentMethodViolation(
  tx: Tx,
  org: string,
  customerId: string,
  id: string,
  now: Date,
  instead = "null for the customer's default",
): Promise<Violation | undefined> {
  const field = 'paymentMethod';
  const method = await getPaymentMethod(tx, org, customerId, id, now);
  if (!method) {
    return { propertyPath: field, message: `${field} '${id}' is not a payment method of the customer; use list_payment_methods, or ${instead}`, code: 'not_found' };
  }
  if (method.status === 'disabled') {
    return { propertyPath: field, message: `${field} ${method.id} is disabled; pick an enabled one (list_payment_methods), enable it with update_payment_method, or ${instead}`, code: 'disabled' };
  }
  if (method.status === 'expired') {
    return { propertyPath: field, message: `${field} ${method.id} expired at ${method.expirationDate}; pick a valid one, or ${instead}`, code: 'expired' };
  }
  return undefined;
}

export interface PaymentMethodPatch {
  name?: string | null | undefined;
  enabled?: boolean | undefined;
  default?: true | undefined;
}

/**
 * PUT: omitted fields stay. A disabled or expired method cannot become the default. Disabling the
 * default passes the flag to the customer's oldest usable method (none left: no default); enabling a
 * method of a customer without a default makes it the default, as on create.
 */
export async function updatePaymentMethod(
  tx: Tx,
  org: string,
  customerId: string,
  id: string,
  patch: PaymentMethodPatch,
  now: Date,
): Promise<PaymentMethod> {
  const customer = await getCustomer(tx, org, customerId);
  const current = await tx.billingDetails.getPaymentMethod(org, customer.id, id);
  if (!current) throw notFound('Payment method', id);
  const at = now.toISOString();
  const enabled = patch.enabled ?? current.enabled;
  const candidate = withStatus({ ...current, enabled }, now);
  if (patch.default && candidate.status !== 'active') {
    throw invalid('default', `a ${candidate.status} payment method cannot be the default: ${candidate.status === 'disabled' ? 'set enabled true with it' : 'add a valid one'}`, `${candidate.status}_default`);
  }
  const currentDefault = await tx.billingDetails.defaultPaymentMethod(org, customer.id);
  let isDefault = current.default;
  if (patch.default || (enabled && currentDefault === undefined)) isDefault = true;
  if (!enabled) isDefault = false;
  if (isDefault && currentDefault && currentDefault.id !== id) await tx.billingDetails.clearDefaultPaymentMethod(org, customer.id, at);
  const next: PaymentMethodRecord = { ...current, name: patch.name === undefined ? current.name : patch.name, enabled, default: isDefault, updatedAt: at };
  await tx.billingDetails.updatePaymentMethod(org, next);
  if (current.default && !isDefault) {
    const successor = await tx.billingDetails.oldestUsablePaymentMethod(org, customer.id, at, id);
    if (successor) await tx.billingDetails.updatePaymentMethod(org, { ...successor, default: true, updatedAt: at });
  }
  return (await views(tx, org, [next], now))[0]!;
}
