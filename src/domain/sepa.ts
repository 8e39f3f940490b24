/**
 * SEPA direct debit (issue 13; CONTRACT section 8, "Dunning, e-mail and SEPA"): the organisation as
 * creditor, mandates on SEPA payment methods, collection runs that turn what is due into payments of
 * a pain.008 statement, and returns that undo what a payment paid.
 */
import { DateTime } from 'luxon';
import { parsePain002, paymentGroupId, type Pain008Source } from '../documents/sepaXml.js';
import { AppError, conflict, invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { SepaCreditor, SepaMandate, SepaType, SepaXmlPayment, SepaXmlStatement, SequenceType } from '../schemas/sepa.js';
import type {
  CollectionCandidate,
  SepaCreditorRecord,
  SepaPaymentFilter,
  SepaStatementRecord,
  StoredSepaMandate,
  StoredSepaXmlPayment,
} from '../store/ports/sepa.js';
import type { Tx } from '../store/store.js';
import { getPaymentMethod } from './billingDetails.js';
import { getCustomer } from './customers.js';
import { addressingOf, queueEmail } from './emails.js';
import { formatMoney } from '../values/money.js';
import { ibanProblem, maskIban, normaliseIban, sepaIbanProblem } from './iban.js';
import { applyInvoicePayment, getInvoice, reopenInvoicePayment } from './invoices.js';
import { recordPaymentPlanPayment, returnInstallmentCollection } from './paymentPlans.js';
import { earliestCollectionDate, isTarget2BusinessDay, nextBusinessDay } from './target2.js';

/** TARGET2 runs on Central European Time: the calendar day a collection run happens on is taken there. */
const TARGET2_ZONE = 'Europe/Berlin';

/** The SEPA calendar day (TARGET2's, Central European Time) of an instant: YYYY-MM-DD. */
export function sepaDay(now: Date): string {
  return DateTime.fromJSDate(now, { zone: TARGET2_ZONE }).toISODate() as string;
}

/**
 * The reason codes of SEPA direct debit R-transactions (rejects, refusals, returns, refunds) as the
 * EPC's guidance on reason codes lists them, with their ISO 20022 meaning for brokenReason. The
 * return tools take only these (a typo such as ZZZZ would be recorded as a reason no bank gives); a
 * pain.002 is taken as the bank reports it.
 */
const RETURN_REASONS: Record<string, string> = {
  AC01: 'incorrect account number',
  AC04: 'account closed',
  AC06: 'account blocked',
  AC13: 'debtor account is a consumer account',
  AG01: 'transaction forbidden on this account',
  AG02: 'invalid operation code',
  AM04: 'insufficient funds',
  AM05: 'duplicate collection',
  BE05: 'creditor unknown to the debtor bank',
  CNOR: 'creditor bank not registered',
  DNOR: 'debtor bank not registered',
  ED05: 'settlement failed',
  FF01: 'invalid file format',
  FF05: 'direct debit type incorrect',
  MD01: 'no valid mandate',
  MD02: 'mandate data missing or wrong',
  MD06: 'refund requested by the debtor',
  MD07: 'debtor deceased',
  MS02: 'refused by the debtor',
  MS03: 'reason not specified',
  RC01: 'incorrect BIC',
  RR01: 'regulatory reason: debtor account or identification missing',
  RR02: "regulatory reason: debtor's name or address missing",
  RR03: "regulatory reason: creditor's name or address missing",
  RR04: 'regulatory reason',
  SL01: 'specific service of the debtor bank',
  SL11: "creditor not on the debtor's whitelist",
  SL12: "creditor on the debtor's blacklist",
  SL13: 'maximum number of direct debits exceeded',
  SL14: 'maximum direct debit amount exceeded',
};

export const SEPA_RETURN_REASONS: readonly string[] = Object.keys(RETURN_REASONS);

/**
 * Returns that say the mandate itself is gone: the debtor bank knows no valid mandate (MD01), or the
 * account is closed (AC04) or its holder deceased (MD07). Collecting under it again would only come
 * back the same way, so the return revokes the mandate.
 */
const MANDATE_ENDING_RETURNS = new Set(['MD01', 'AC04', 'MD07']);

/* ---------------------------------------------------------------------------------------------
 * Creditor
 * ------------------------------------------------------------------------------------------- */

export interface SepaCreditorInput {
  creditorIdentifier: string;
  name: string;
  iban: string;
  bic?: string | null | undefined;
}

const creditorView = (c: { creditorIdentifier: string; name: string; iban: string; bic: string | null; updatedAt: string }): SepaCreditor => ({
  creditorIdentifier: c.creditorIdentifier,
  name: c.name,
  iban: maskIban(c.iban),
  bic: c.bic,
  updatedAt: c.updatedAt,
});

export async function getSepaCreditor(tx: Tx, org: string): Promise<SepaCreditor> {
  const creditor = await tx.sepa.getCreditor(org);
  if (!creditor) throw new AppError('not_found', 'No SEPA creditor is set up yet; set it with update_sepa_creditor');
  return creditorView(creditor);
}

/**
 * Why a creditor's account cannot be collected into (a phrase to follow the field name), or undefined:
 * a valid IBAN (normalised) of a SEPA country.
 */
export function creditorIbanProblem(iban: string): string | undefined {
  return ibanProblem(iban) ?? sepaIbanProblem(iban);
}

/**
 * PUT: the creditor identifier and the account collections are paid into. The input schema checks
 * both (creditorIdentifierProblem, creditorIbanProblem), so their violations come with those of the
 * other fields; they are stored normalised.
 */
export async function updateSepaCreditor(tx: Tx, org: string, input: SepaCreditorInput, now: Date): Promise<SepaCreditor> {
  const record = {
    creditorIdentifier: normaliseIban(input.creditorIdentifier),
    name: input.name,
    iban: normaliseIban(input.iban),
    bic: input.bic ?? null,
    updatedAt: now.toISOString(),
  };
  await tx.sepa.putCreditor(org, record);
  return creditorView(record);
}

/* ---------------------------------------------------------------------------------------------
 * Mandates
 * ------------------------------------------------------------------------------------------- */

/** SEPA Core rulebook: a mandate under which no collection was presented for 36 months expires. */
const MANDATE_EXPIRY_MONTHS = 36;

/** A mandate last used (or, never used, signed) on or before this day has expired by `day`. */
export function mandateUsedAfter(day: string): string {
  return DateTime.fromISO(day, { zone: 'UTC' }).minus({ months: MANDATE_EXPIRY_MONTHS }).toISODate() as string;
}

/** A stored mandate as the tools show it on the day of `now`: revoked, expired or active. */
export function mandateView(m: StoredSepaMandate, now: Date): SepaMandate {
  const { lastCollectionDate, ...rest } = m;
  const expired = (lastCollectionDate ?? m.signatureDate) <= mandateUsedAfter(sepaDay(now));
  return { ...rest, status: m.revokedAt ? 'revoked' : expired ? 'expired' : 'active' };
}

/** A stored collection as the tools show it; it is captured when the bank debits it, at the start of its execution date. */
function paymentView(p: StoredSepaXmlPayment, now: Date): SepaXmlPayment {
  const autoCaptureAt = DateTime.fromISO(p.executionDate, { zone: TARGET2_ZONE }).toUTC().toISO() as string;
  return { ...p, autoCaptureAt, sepaMandate: mandateView(p.sepaMandate, now) };
}

export interface SepaMandateInput {
  paymentMethod: string;
  mandateReference: string;
  signatureDate: string;
  sepaType: SepaType;
}

/** A mandate reference: 1 to 35 characters of the SEPA identifier set, no spaces (EPC implementation guidelines for `MndtId`). */
export const MANDATE_REFERENCE = /^[A-Za-z0-9+?/\-:().,']{1,35}$/;

/** Why a mandate reference is not one (a phrase to follow the field name), or undefined (MANDATE_REFERENCE). */
export function mandateReferenceProblem(reference: string): string | undefined {
  if (MANDATE_REFERENCE.test(reference)) return undefined;
  return "must be 1 to 35 characters of A-Z, a-z, 0-9 and + ? / - : ( ) . , ' (no spaces), e.g. MND-2027-0001";
}

/** The earliest signature date of a mandate recorded on `day` that has not expired at once. */
function earliestSignatureDate(day: string): string {
  return DateTime.fromISO(mandateUsedAfter(day), { zone: 'UTC' }).plus({ days: 1 }).toISODate() as string;
}

/**
 * Why a mandate's signature date cannot be recorded on the SEPA day of `now` (a phrase to follow the
 * date, and its code), or undefined: not in the future, and not so far back that the mandate would
 * be expired when recorded (a typo in the year would leave the method with a mandate never collected,
 * and a method holds one mandate).
 */
export function signatureDateProblem(date: string, now: Date): { problem: string; code: 'future' | 'expired' } | undefined {
  const today = sepaDay(now);
  if (date > today) return { problem: 'lies in the future; a mandate is recorded once signed', code: 'future' };
  if (date > mandateUsedAfter(today)) return undefined;
  return {
    problem: `lies ${MANDATE_EXPIRY_MONTHS} months or more back: a mandate under which nothing was collected for ${MANDATE_EXPIRY_MONTHS} months has expired; the earliest signature date accepted today is ${earliestSignatureDate(today)}`,
    code: 'expired',
  };
}

export interface NewMandate {
  customerId: string;
  paymentMethodId: string;
  mandateReference: string;
  signatureDate: string;
  sepaType: SepaType;
}

/**
 * Records a signed mandate given to the creditor on a payment method whose checks passed. The same
 * mandate recorded again (same method, creditor, reference, signature date and type, not revoked)
 * answers the one recorded: a client that gave the mandate with create_payment_method and then calls
 * create_sepa_mandate with it, as before the method's fields recorded it, gets that mandate. Another
 * mandate with the reference is a 422 at `referenceField`; another mandate on the method, a 409.
 */
export async function recordSepaMandate(
  tx: Tx,
  org: string,
  creditor: SepaCreditorRecord,
  mandate: NewMandate,
  now: Date,
  referenceField = 'mandateReference',
): Promise<StoredSepaMandate> {
  const id = newId();
  const outcome = await tx.sepa.insertMandate(org, { id, ...mandate, creditorIdentifier: creditor.creditorIdentifier, createdAt: now.toISOString() });
  if (outcome === 'inserted') return (await tx.sepa.getMandate(org, id))!;
  const existing = await tx.sepa.mandateOfMethod(org, mandate.paymentMethodId);
  if (
    existing &&
    !existing.revokedAt &&
    existing.creditorIdentifier === creditor.creditorIdentifier &&
    existing.mandateReference === mandate.mandateReference &&
    existing.signatureDate === mandate.signatureDate &&
    existing.sepaType === mandate.sepaType
  ) {
    return existing;
  }
  if (outcome === 'duplicate_reference') {
    throw invalid(
      referenceField,
      `${referenceField} ${mandate.mandateReference} is already used by creditor ${creditor.creditorIdentifier}; a reference identifies one mandate per creditor`,
      'unique',
    );
  }
  throw methodTaken(mandate.paymentMethodId, existing, now);
}

/**
 * The 409 of a second mandate on a payment method, saying what became of the one it holds: a method
 * holds one mandate for good, so after a revoked or expired one a new mandate needs a new method.
 */
function methodTaken(methodId: string, existing: StoredSepaMandate | undefined, now: Date): AppError {
  const status = existing && mandateView(existing, now).status;
  if (!existing || status === 'active') {
    const which = existing ? `the active SEPA mandate ${existing.mandateReference}` : 'a SEPA mandate';
    return conflict(`Payment method ${methodId} already has ${which} (list_sepa_mandates); a payment method holds one mandate`);
  }
  const ended =
    status === 'revoked'
      ? `revoked at ${existing.revokedAt}`
      : `expired: no collection was presented under it for ${MANDATE_EXPIRY_MONTHS} months`;
  return conflict(
    `Payment method ${methodId} already has SEPA mandate ${existing.mandateReference}, ${ended}; a payment method holds one mandate, so record the new one on a new sepa_debit payment method: create_payment_method with sepaDebit and its mandateReference and signingDate`,
  );
}

export async function createSepaMandate(tx: Tx, org: string, customerRef: string, input: SepaMandateInput, now: Date): Promise<SepaMandate> {
  const customer = await getCustomer(tx, org, customerRef);
  const creditor = await tx.sepa.getCreditor(org);
  if (!creditor) throw conflict('No SEPA creditor is set up; a mandate is given to a creditor: set it with update_sepa_creditor first');
  const violations: Violation[] = [];
  const method = await getPaymentMethod(tx, org, customer.id, input.paymentMethod, now);
  if (!method) {
    violations.push({
      propertyPath: 'paymentMethod',
      message: `paymentMethod '${input.paymentMethod}' is not a payment method of customer ${customer.customerNumber}; use list_payment_methods`,
      code: 'not_found',
    });
  } else if (method.type !== 'sepa_debit') {
    violations.push({
      propertyPath: 'paymentMethod',
      message: `paymentMethod ${method.id} is of type ${method.type}; a mandate needs a sepa_debit method (create_payment_method with sepaDebit)`,
      code: 'not_sepa_debit',
    });
  } else if (method.status !== 'active') {
    violations.push({ propertyPath: 'paymentMethod', message: `paymentMethod ${method.id} is ${method.status}; enable it first`, code: method.status });
  } else {
    // Methods stored before IBANs outside SEPA were refused: no mandate on them.
    const iban = await tx.billingDetails.sepaIban(org, method.id);
    const outside = iban === undefined ? undefined : sepaIbanProblem(iban);
    if (outside) violations.push({ propertyPath: 'paymentMethod', message: `paymentMethod ${method.id} ${outside}`, code: 'not_sepa_country' });
  }
  const referenceProblem = mandateReferenceProblem(input.mandateReference);
  if (referenceProblem) violations.push({ propertyPath: 'mandateReference', message: `mandateReference ${referenceProblem}`, code: 'invalid_mandate_reference' });
  const dateProblem = signatureDateProblem(input.signatureDate, now);
  if (dateProblem) violations.push({ propertyPath: 'signatureDate', message: `signatureDate ${input.signatureDate} ${dateProblem.problem}`, code: dateProblem.code });
  if (violations.length) throw invalidMany(violations);
  const mandate = await recordSepaMandate(
    tx,
    org,
    creditor,
    { customerId: customer.id, paymentMethodId: input.paymentMethod, mandateReference: input.mandateReference, signatureDate: input.signatureDate, sepaType: input.sepaType },
    now,
  );
  return mandateView(mandate, now);
}

export async function listSepaMandates(tx: Tx, org: string, customerRef: string, page: PageRequest, now: Date) {
  const customer = await getCustomer(tx, org, customerRef);
  const { rows, total } = await tx.sepa.listMandates(org, customer.id, page);
  return { rows: rows.map((m) => mandateView(m, now)), total };
}

/** One of the customer's mandates (customer by id or number); a 404 when the customer has no such mandate. */
export async function getSepaMandate(tx: Tx, org: string, customerRef: string, id: string, now: Date): Promise<SepaMandate> {
  const customer = await getCustomer(tx, org, customerRef);
  const mandate = await tx.sepa.getMandate(org, id);
  if (!mandate || mandate.customer !== customer.id) throw notFound('SEPA mandate', id);
  return mandateView(mandate, now);
}

/**
 * The debtor withdraws the mandate (SEPA Core rulebook): nothing more is collected under it; what a
 * statement already presented stands (a return comes back through the bank).
 */
export async function revokeSepaMandate(tx: Tx, org: string, customerRef: string, id: string, now: Date): Promise<SepaMandate> {
  const customer = await getCustomer(tx, org, customerRef);
  const mandate = await tx.sepa.getMandate(org, id);
  if (!mandate || mandate.customer !== customer.id) throw notFound('SEPA mandate', id);
  if (mandate.revokedAt) throw conflict(`SEPA mandate ${mandate.mandateReference} was already revoked at ${mandate.revokedAt}`);
  const at = now.toISOString();
  await tx.sepa.revokeMandate(org, id, at);
  return mandateView({ ...mandate, revokedAt: at }, now);
}

/* ---------------------------------------------------------------------------------------------
 * Collection runs and statements
 * ------------------------------------------------------------------------------------------- */

/** A statement as the tools show it (its figures, its payments and where its file is), and as stored. */
async function statementResult(
  tx: Tx,
  org: string,
  id: string,
  baseUrl: string,
  now: Date,
): Promise<{ result: SepaXmlStatement; stored: SepaStatementRecord }> {
  const statement = await tx.sepa.getStatement(org, id);
  if (!statement) throw notFound('SEPA XML statement', id);
  const payments = (await tx.sepa.statementPayments(org, id)).map((p) => paymentView(p, now));
  const result: SepaXmlStatement = {
    id: statement.id,
    messageId: statement.messageId,
    collectionDate: statement.collectionDate,
    numberOfTransactions: payments.length,
    controlSum: payments.reduce((sum, p) => sum + p.amount, 0),
    currencyCode: 'EUR',
    creditorIdentifier: statement.creditorIdentifier,
    createdAt: statement.createdAt,
    url: `${baseUrl}/sepa-xml-statements/${encodeURIComponent(statement.id)}`,
    payments,
  };
  return { result, stored: statement };
}

/**
 * Collects every open EUR invoice and every open installment of an active plan due by the collection
 * date whose payment method is SEPA with an active mandate of the current creditor, each exactly once
 * (the payment row is the claim), into one statement. A collection is recorded as a payment at once
 * (the file is handed to the bank); a return undoes it. The date is the earliest the D-1 rule allows
 * unless a later TARGET2 business day is given.
 */
export async function runSepaCollection(tx: Tx, org: string, input: { collectionDate?: string | undefined }, now: Date, baseUrl: string): Promise<SepaXmlStatement> {
  const creditor = await tx.sepa.getCreditor(org);
  if (!creditor) throw conflict('No SEPA creditor is set up; set the creditor identifier and account with update_sepa_creditor first');
  const today = sepaDay(now);
  const earliest = earliestCollectionDate(today);
  const collectionDate = input.collectionDate ?? earliest;
  if (collectionDate < earliest) {
    throw invalid(
      'collectionDate',
      `collectionDate ${collectionDate} is too early: a file handed over on ${today} can be collected on ${earliest} at the earliest (one TARGET2 business day ahead, D-1)`,
      'too_early',
    );
  }
  if (!isTarget2BusinessDay(collectionDate)) {
    throw invalid(
      'collectionDate',
      `collectionDate ${collectionDate} is not a TARGET2 business day (weekends, 1 Jan, Good Friday, Easter Monday, 1 May, 25 and 26 Dec are closed); the next one is ${nextBusinessDay(collectionDate)}`,
      'not_business_day',
    );
  }
  const candidates = await tx.sepa.collectionCandidates(org, collectionDate, creditor.creditorIdentifier, mandateUsedAfter(collectionDate));
  if (candidates.length === 0) {
    throw conflict(
      `Nothing to collect by ${collectionDate}: no open EUR invoice or installment due by then is paid by a SEPA payment method with an active mandate and not yet collected`,
    );
  }
  return collect(tx, org, creditor, collectionDate, candidates, now, baseUrl);
}

/** One statement of the candidates for the collection date, each claimed exactly once and recorded as paid. */
async function collect(
  tx: Tx,
  org: string,
  creditor: SepaCreditorRecord,
  collectionDate: string,
  candidates: CollectionCandidate[],
  now: Date,
  baseUrl: string,
): Promise<SepaXmlStatement> {
  const at = now.toISOString();
  const year = collectionDate.slice(0, 4);
  const counter = await tx.system.nextCounter(org, `sepa_statement:${year}`);
  const statementId = newId();
  await tx.sepa.insertStatement(org, {
    id: statementId,
    messageId: `SEPA-${year}-${String(counter).padStart(6, '0')}`,
    collectionDate,
    creditorIdentifier: creditor.creditorIdentifier,
    creditorName: creditor.name,
    creditorIban: creditor.iban,
    creditorBic: creditor.bic,
    createdAt: at,
  });
  // Each mandate's sequence type as it stood before this run: all its debits in its first run are FRST.
  const sequenceOf = new Map<string, SequenceType>();
  for (const c of candidates) {
    if (!sequenceOf.has(c.mandateId)) sequenceOf.set(c.mandateId, (await tx.sepa.getMandate(org, c.mandateId))!.sequenceType);
    const id = newId();
    const invoicePaymentId = newId();
    const claimed = await tx.sepa.claimPayment(org, {
      id,
      statementId,
      mandateId: c.mandateId,
      customerId: c.customerId,
      invoiceId: c.invoiceId,
      paymentPlanId: c.paymentPlanId,
      installmentId: c.installmentId,
      invoicePaymentId,
      endToEndId: id.replaceAll('-', ''),
      amount: c.amount,
      sequenceType: sequenceOf.get(c.mandateId) as SequenceType,
      remittanceInformation: c.installmentId ? `Invoice ${c.invoiceNumber}, installment ${c.position} of ${c.installmentCount}` : `Invoice ${c.invoiceNumber}`,
      dueDate: c.dueDate,
      executionDate: collectionDate,
      createdAt: at,
    });
    if (!claimed) continue;
    await tx.sepa.setPaymentNotification(org, id, await preNotify(tx, org, creditor, c, collectionDate, now));
    if (c.paymentPlanId) {
      await recordPaymentPlanPayment(tx, org, c.paymentPlanId, { amount: c.amount, paidAt: at }, now, invoicePaymentId);
    } else {
      const invoice = await getInvoice(tx, org, c.invoiceId);
      await applyInvoicePayment(tx, org, invoice, { id: invoicePaymentId, amount: c.amount, paidAt: at, paymentPlanId: null }, now);
    }
  }
  return (await statementResult(tx, org, statementId, baseUrl, now)).result;
}

/**
 * The debtor's pre-notification (SEPA Core rulebook): amount, execution date, mandate reference and
 * creditor identifier, by e-mail to the customer's invoice addresses, in the unit that collects;
 * it greets its recipients by name as the invoice e-mail does.
 */
async function preNotify(tx: Tx, org: string, creditor: SepaCreditorRecord, c: CollectionCandidate, executionDate: string, now: Date): Promise<string> {
  const customer = await getCustomer(tx, org, c.customerId);
  const mandate = (await tx.sepa.getMandate(org, c.mandateId))!;
  const amount = formatMoney(c.amount, 'EUR');
  const { to, addressee } = await addressingOf(tx, org, customer, 'sepa_pre_notification');
  const what = c.installmentId ? `installment ${c.position} of ${c.installmentCount} of invoice ${c.invoiceNumber}` : `invoice ${c.invoiceNumber}`;
  const text = [
    `Dear ${addressee},`,
    '',
    `we will collect ${amount} for ${what} by SEPA direct debit from your account ${mandate.bankAccount.iban} (${mandate.bankAccount.accountHolder}) on ${executionDate}.`,
    `Mandate reference: ${mandate.mandateReference}`,
    `Creditor identifier: ${creditor.creditorIdentifier} (${creditor.name})`,
    '',
    'Please make sure the account is covered on that day.',
    '',
  ].join('\n');
  const subject = `Direct debit of ${amount} on ${executionDate} for ${what}`;
  return queueEmail(tx, org, { kind: 'sepa_pre_notification', customer, invoice: c.invoiceId, to, subject, text, html: null, attachments: [] }, now);
}

/**
 * The collection job (CONTRACT section 6): once per organisation and collection date, everything due
 * by the earliest date the D-1 rule allows goes into one statement; nothing due, no statement. Items
 * that fall due later that day wait for the next day's statement. Null when nothing was collected.
 */
export async function collectDueSepa(tx: Tx, org: string, now: Date, baseUrl: string): Promise<SepaXmlStatement | null> {
  const creditor = await tx.sepa.getCreditor(org);
  if (!creditor) return null;
  const collectionDate = earliestCollectionDate(sepaDay(now));
  if (await tx.sepa.hasStatementFor(org, collectionDate)) return null;
  const candidates = await tx.sepa.collectionCandidates(org, collectionDate, creditor.creditorIdentifier, mandateUsedAfter(collectionDate));
  return candidates.length ? collect(tx, org, creditor, collectionDate, candidates, now, baseUrl) : null;
}

export type SepaStatementDocument = Omit<SepaXmlStatement, 'payments'> & { document: Pain008Source };

/** A statement's figures and what its pain.008 file is rendered from (the debtors' full IBANs included). */
export async function getSepaXmlStatement(tx: Tx, org: string, id: string, baseUrl: string, now: Date): Promise<SepaStatementDocument> {
  const {
    result: { payments, ...statement },
    stored,
  } = await statementResult(tx, org, id, baseUrl, now);
  const transactions = [];
  for (const p of payments) {
    const account = p.sepaMandate.bankAccount;
    transactions.push({
      endToEndId: p.endToEndId,
      amount: p.amount,
      sequenceType: p.sequenceType,
      sepaType: p.sepaMandate.sepaType,
      mandateReference: p.sepaMandate.mandateReference,
      signatureDate: p.sepaMandate.signatureDate,
      debtorName: account.accountHolder,
      debtorIban: (await tx.billingDetails.sepaIban(org, account.id)) as string,
      debtorBic: account.bic,
      remittanceInformation: p.remittanceInformation,
    });
  }
  return {
    ...statement,
    document: {
      messageId: stored.messageId,
      createdAt: stored.createdAt,
      collectionDate: stored.collectionDate,
      creditor: { identifier: stored.creditorIdentifier, name: stored.creditorName, iban: stored.creditorIban, bic: stored.creditorBic },
      transactions,
    },
  };
}

async function storedPayment(tx: Tx, org: string, id: string): Promise<StoredSepaXmlPayment> {
  const payment = await tx.sepa.getPayment(org, id);
  if (!payment) throw notFound('SEPA XML payment', id);
  return payment;
}

export async function getSepaXmlPayment(tx: Tx, org: string, id: string, now: Date): Promise<SepaXmlPayment> {
  return paymentView(await storedPayment(tx, org, id), now);
}

/** Collections filtered by statement (id), invoice and customer (id or number) and status. */
export async function listSepaXmlPayments(tx: Tx, org: string, filter: SepaPaymentFilter, page: PageRequest, now: Date) {
  const invoice = filter.invoice === undefined ? undefined : (await getInvoice(tx, org, filter.invoice)).id;
  const customer = filter.customer === undefined ? undefined : (await getCustomer(tx, org, filter.customer)).id;
  const query: SepaPaymentFilter = { ...filter, invoice, customer };
  const { rows, total } = await tx.sepa.listPayments(org, query, page);
  return { rows: rows.map((p) => paymentView(p, now)), total };
}

/* ---------------------------------------------------------------------------------------------
 * Returns
 * ------------------------------------------------------------------------------------------- */

export interface SepaReturnInput {
  reasonCode: string;
  returnedAt?: string | undefined;
}

/**
 * When the bank reported the return: not in the future, not before the collection. It may lie before
 * the execution date: a reject or a refusal comes back before settlement (a pain.002 reports them so).
 */
function returnTime(payment: StoredSepaXmlPayment, returnedAt: string | undefined, now: Date): string {
  if (returnedAt === undefined) return now.toISOString();
  const at = new Date(returnedAt);
  if (at.getTime() > now.getTime()) throw invalid('returnedAt', `returnedAt ${returnedAt} lies in the future; omit it for now`, 'future');
  if (at.toISOString() < payment.createdAt) {
    throw invalid('returnedAt', `returnedAt ${returnedAt} lies before the collection (${payment.createdAt})`, 'before_collection');
  }
  return at.toISOString();
}

/**
 * A direct debit came back: the payment is returned, the invoice payment it recorded no longer
 * counts (a paid invoice is open again, unless credit in the customer's balance settles it), and an
 * installment it paid fails, breaking an active plan (or the plan it had completed) with a
 * brokenReason naming the reason code when its invoice is open again.
 */
async function returnPayment(tx: Tx, org: string, payment: StoredSepaXmlPayment, reasonCode: string, returnedAt: string, now: Date): Promise<SepaXmlPayment> {
  if (payment.status === 'returned') {
    throw conflict(`SEPA payment ${payment.endToEndId} was already returned (${payment.returnReasonCode} at ${payment.returnedAt})`);
  }
  await tx.sepa.markReturned(org, payment.id, reasonCode, returnedAt);
  if (MANDATE_ENDING_RETURNS.has(reasonCode) && !payment.sepaMandate.revokedAt) await tx.sepa.revokeMandate(org, payment.sepaMandate.id, returnedAt);
  await reopenInvoicePayment(tx, org, payment.invoice, payment.transaction, returnedAt, now);
  if (payment.paymentPlan && payment.installment) {
    const meaning = RETURN_REASONS[reasonCode];
    const reason = `SEPA direct debit ${payment.endToEndId} returned: ${reasonCode}${meaning ? ` (${meaning})` : ''}`;
    await returnInstallmentCollection(tx, org, payment.paymentPlan, payment.installment, payment.amount, reason, now);
  }
  return getSepaXmlPayment(tx, org, payment.id, now);
}

export async function returnSepaXmlPayment(tx: Tx, org: string, id: string, input: SepaReturnInput, now: Date): Promise<SepaXmlPayment> {
  const payment = await storedPayment(tx, org, id);
  return returnPayment(tx, org, payment, input.reasonCode, returnTime(payment, input.returnedAt, now), now);
}

export async function recordSepaReturn(tx: Tx, org: string, input: SepaReturnInput & { endToEndId: string }, now: Date): Promise<SepaXmlPayment> {
  const payment = await tx.sepa.getPaymentByEndToEndId(org, input.endToEndId);
  if (!payment) {
    throw invalid('endToEndId', `endToEndId ${input.endToEndId} is not a SEPA payment of this organisation (list_sepa_xml_payments)`, 'unknown_reference');
  }
  return returnPayment(tx, org, payment, input.reasonCode, returnTime(payment, input.returnedAt, now), now);
}

export interface StatusReportResult {
  statement: string;
  messageId: string;
  returned: SepaXmlPayment[];
  alreadyReturned: string[];
  unknown: string[];
}

/**
 * A pain.002 status report for one of the organisation's statements: every payment it rejects (the
 * whole message, a payment group or a transaction, status RJCT) is returned with the reason code
 * given (MS03, reason not specified, when none is). Payments already returned are listed, not
 * returned twice; end-to-end ids the statement does not hold are listed as unknown.
 */
export async function importSepaStatusReport(tx: Tx, org: string, document: string, now: Date): Promise<StatusReportResult> {
  const report = parsePain002(document, (message) => invalid('document', `document ${message}`, 'invalid_status_report'));
  const statement = await tx.sepa.getStatementByMessageId(org, report.originalMessageId);
  if (!statement) {
    throw invalid('document', `document reports on message ${report.originalMessageId}, which is not a statement of this organisation`, 'unknown_reference');
  }
  const payments = await tx.sepa.statementPayments(org, statement.id);
  const reasons = new Map<string, string>();
  const unknown: string[] = [];
  for (const rejection of report.rejections) {
    const code = rejection.reasonCode ?? 'MS03';
    const hit =
      rejection.scope === 'message'
        ? payments
        : rejection.scope === 'group'
          ? payments.filter((p) => paymentGroupId(statement.messageId, p.sequenceType, p.sepaMandate.sepaType) === rejection.paymentGroupId)
          : payments.filter((p) => p.endToEndId === rejection.endToEndId);
    if (rejection.scope === 'transaction' && hit.length === 0) unknown.push(rejection.endToEndId);
    for (const p of hit) if (!reasons.has(p.id)) reasons.set(p.id, code);
  }
  const returned: SepaXmlPayment[] = [];
  const alreadyReturned: string[] = [];
  const at = now.toISOString();
  for (const p of payments) {
    const code = reasons.get(p.id);
    if (code === undefined) continue;
    if (p.status === 'returned') alreadyReturned.push(p.endToEndId);
    else returned.push(await returnPayment(tx, org, p, code, at, now));
  }
  return { statement: statement.id, messageId: statement.messageId, returned, alreadyReturned, unknown };
}
