import { findPortalSession, type PortalSubject } from '../auth/portalSessions.js';
import {
  addPortalBankAccount,
  cancelFromPortal,
  ownedSubscription,
  portalCreditor,
  portalOverview,
  portalSubscription,
  type PortalCreditor,
  type PortalOverview,
  type PortalSubscription,
} from '../domain/portal.js';
import { customerName } from '../domain/emails.js';
import { getOrganisation } from '../domain/organisation.js';
import { AppError, invalidMany, type ErrorKind, type Violation } from '../errors.js';
import { inputError } from '../registry/validation.js';
import type { PaymentMethod } from '../schemas/billingDetails.js';
import { dateTimeInput } from '../schemas/common.js';
import type { SepaMandate } from '../schemas/sepa.js';
import type { Tx } from '../store/store.js';
import { sepaDebitFields } from '../tools/billingDetails.js';
import { formatMoney } from '../values/money.js';
import type { PageContext, PageRoute } from './app.js';
import { chip, day, invoiceStatus, moment } from './format.js';
import { document, html, pagesRoot, type Html } from './html.js';

/** Where the pages of one portal session are, relative to the page at `path`. */
function portalLinks(ctx: PageContext) {
  const root = pagesRoot(ctx.path);
  const token = ctx.params.token as string;
  const home = `${root}portal/${token}`;
  return {
    token,
    home,
    bankAccount: `${home}/bank-account`,
    cancel: (subscriptionId: string) => `${home}/subscriptions/${encodeURIComponent(subscriptionId)}/cancel`,
    invoice: (org: string, invoiceId: string) => `${root}invoices/${ctx.tokens.issue('invoice', { org, id: invoiceId })}`,
  };
}

/**
 * A unit of work as the session's customer: an unknown, expired or revoked session is the generic 404,
 * checked in the same unit that reads or writes.
 */
function asCustomer<T>(ctx: PageContext, unit: 'read' | 'write', fn: (tx: Tx, session: PortalSubject) => Promise<T>): Promise<T> {
  return ctx[unit](async (tx) => {
    const session = await findPortalSession(tx, ctx.params.token ?? '', ctx.now);
    if (!session) throw new AppError('not_found', 'Unknown portal session');
    return fn(tx, session);
  });
}

/** What the overview says after a form was sent (Post/Redirect/Get): fixed texts, nothing from the URL is shown. */
const NOTICES: Record<string, string> = {
  'bank-account-added': 'Your bank account was added.',
  'cancellation-scheduled': 'Your cancellation is confirmed. You can see the date your subscription ends below.',
};

function notice(ctx: PageContext): Html {
  const text = NOTICES[ctx.query.get('notice') ?? ''];
  return text ? html`<p class="card notice" role="status">${text}</p>` : html``;
}

function subscriptionStatus({ subscription, cancellation }: PortalSubscription): Html {
  if (cancellation.kind === 'ended') return chip(subscription.status === 'terminated' ? 'Terminated' : 'Cancelled');
  if (cancellation.kind === 'scheduled') return chip('Cancellation scheduled', 'warn');
  return subscription.status === 'paused' ? chip('Paused') : chip('Active', 'ok');
}

function subscriptionCard(s: PortalSubscription, links: ReturnType<typeof portalLinks>, zone: string): Html {
  const { subscription, cancellation } = s;
  const name = subscription.name ?? subscription.plan.name;
  const end =
    cancellation.kind === 'ended'
      ? html`<dt>Ended</dt><dd>${cancellation.date ? day(cancellation.date, zone) : ''}</dd>`
      : cancellation.kind === 'scheduled'
        ? html`<dt>Ends</dt><dd>${day(cancellation.date, zone)}</dd>`
        : cancellation.kind === 'changing'
          ? html`<dt>Plan changes</dt><dd>${day(cancellation.date, zone)}</dd>`
          : html`<dt>Ends</dt><dd>Renews automatically</dd>`;
  return html`<section class="card" aria-labelledby="sub-${subscription.id}">
<h3 id="sub-${subscription.id}">${name}</h3>
<dl><dt>Status</dt><dd>${subscriptionStatus(s)}</dd><dt>Plan</dt><dd>${subscription.plan.name}</dd><dt>Number</dt><dd>${subscription.number}</dd>
${subscription.nextBillingDate ? html`<dt>Next billing date</dt><dd>${day(subscription.nextBillingDate, zone)}</dd>` : ''}${end}</dl>
${cancellation.kind === 'possible' ? html`<p><a href="${links.cancel(subscription.id)}">Cancel ${name}</a></p>` : ''}
</section>`;
}

function paymentMethodText(m: PaymentMethod): string {
  if (m.sepaDebit) return `SEPA Direct Debit, ${m.sepaDebit.iban} (${m.sepaDebit.accountHolder})`;
  if (m.card) return `Card, ${m.card.brand} ending in ${m.card.last4}, expires ${String(m.card.expMonth).padStart(2, '0')}/${m.card.expYear}`;
  if (m.paypal) return `PayPal, ${m.paypal.email}`;
  return m.type;
}

function paymentMethodItem({ method, mandate }: { method: PaymentMethod; mandate: SepaMandate | null }): Html {
  const status = method.default ? chip('Default', 'ok') : method.status === 'active' ? '' : chip(method.status === 'expired' ? 'Expired' : 'Disabled');
  return html`<li>${paymentMethodText(method)} ${status}${mandate ? html`<br><span class="muted">Mandate reference ${mandate.mandateReference}</span>` : ''}</li>`;
}

function overviewPage(ctx: PageContext, page: PortalOverview, session: PortalSubject): string {
  const links = portalLinks(ctx);
  const zone = page.customer.timeZone;
  const org = session.org;
  const seller = page.seller.legalName ?? page.seller.name;
  const invoices = page.invoices.map(
    (i) => html`<tr><td><a href="${links.invoice(org, i.id)}">${i.number}</a></td><td>${i.issuedAt ? day(i.issuedAt, zone) : ''}</td>
<td class="num">${formatMoney(i.grossAmount, i.currencyCode)}</td><td>${invoiceStatus(i, ctx.now)}</td>
<td><a href="${links.invoice(org, i.id)}/pdf" download="${i.number}.pdf" aria-label="PDF of invoice ${i.number}">PDF</a></td></tr>`,
  );
  const body = html`<p class="muted">${seller}</p>
<h1>Your account</h1>
<p>${customerName(page.customer)}, customer number ${page.customer.customerNumber}</p>
${notice(ctx)}
<h2>Subscriptions</h2>
${page.subscriptions.length ? page.subscriptions.map((s) => subscriptionCard(s, links, zone)) : html`<p>You have no subscriptions.</p>`}
<h2>Invoices</h2>
${
  page.invoices.length
    ? html`<table><thead><tr><th scope="col">Invoice</th><th scope="col">Issued</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Download</th></tr></thead>
<tbody>${invoices}</tbody></table>${page.invoiceCount > page.invoices.length ? html`<p class="muted">The latest ${page.invoices.length} of ${page.invoiceCount} invoices.</p>` : ''}`
    : html`<p>You have no invoices yet.</p>`
}
<h2>Payment methods</h2>
${page.paymentMethods.length ? html`<ul>${page.paymentMethods.map(paymentMethodItem)}</ul>` : html`<p>You have no payment method yet.</p>`}
<p><a href="${links.bankAccount}">Add a bank account for SEPA Direct Debit</a></p>
<p class="muted">For your security, this page works until ${moment(session.expiresAt, zone)}. Ask ${seller} for a new link after that.</p>`;
  return document({ title: `Your account with ${seller}`, path: ctx.path, body });
}

/* ---------------------------------------------------------------------------------------------
 * Adding a bank account
 * ------------------------------------------------------------------------------------------- */

interface BankAccountForm {
  iban: string;
  accountHolder: string;
  makeDefault: boolean;
  mandateAccepted: boolean;
}

const FIELD_LABELS: Record<string, string> = { iban: 'IBAN', accountHolder: 'Account holder', mandate: 'Mandate' };

/** Violations by form field (create_payment_method's `sepaDebit.iban` is the form's `iban`), as sentences for people. */
function fieldErrors(violations: readonly Violation[]): Map<string, string> {
  const errors = new Map<string, string>();
  for (const v of violations) {
    const field = v.propertyPath.replace(/^sepaDebit\./, '');
    const text = field === 'mandate' ? 'Please confirm the mandate to pay by direct debit.' : `${FIELD_LABELS[field] ?? field} ${v.message.replace(/^\S+ /, '')}`;
    if (!errors.has(field)) errors.set(field, text.endsWith('.') ? text : `${text}.`);
  }
  return errors;
}

function bankAccountPage(ctx: PageContext, seller: string, creditor: PortalCreditor | null, form: BankAccountForm, errors: Map<string, string>): string {
  const links = portalLinks(ctx);
  const invalid = (field: string) => (errors.has(field) ? html` aria-invalid="true" aria-describedby="${field}-error"` : '');
  const error = (field: string) => (errors.has(field) ? html`<p class="field-error" id="${field}-error">${errors.get(field)}</p>` : '');
  const body = html`<p class="muted">${seller}</p>
<h1>Add a bank account</h1>
<p>Pay by SEPA Direct Debit from an account in the SEPA area.</p>
${errors.size ? html`<div class="errors" role="alert"><p>The bank account was not added. Please correct what is marked below.</p></div>` : ''}
<form method="post" action="${links.bankAccount}">
<input type="hidden" name="csrf" value="${ctx.csrf(links.token)}">
<label for="iban">IBAN</label>
<input type="text" id="iban" name="iban" value="${form.iban}" autocomplete="off" spellcheck="false" required${invalid('iban')}>
${error('iban')}
<label for="accountHolder">Account holder</label>
<input type="text" id="accountHolder" name="accountHolder" value="${form.accountHolder}" autocomplete="name" required${invalid('accountHolder')}>
${error('accountHolder')}
${
  creditor
    ? html`<h2>SEPA Direct Debit mandate</h2>
<p>By confirming, you authorise ${creditor.name} (creditor identifier ${creditor.creditorIdentifier}) to send instructions to your bank to debit your account, and your bank to debit your account in accordance with those instructions. You are entitled to a refund from your bank under the terms and conditions of your agreement with it; a refund must be claimed within eight weeks starting from the date on which your account was debited. The mandate reference is shown with your payment methods once the account is added.</p>
<label class="check"><input type="checkbox" name="mandate" value="yes" required${form.mandateAccepted ? html` checked` : ''}${invalid('mandate')}> I authorise this direct debit mandate</label>
${error('mandate')}`
    : ''
}
<label class="check"><input type="checkbox" name="default" value="yes"${form.makeDefault ? html` checked` : ''}> Use this account for my future payments</label>
<button type="submit">Add bank account</button>
</form>
<p><a href="${links.home}">Back to your account</a></p>`;
  return document({ title: 'Add a bank account', path: ctx.path, body });
}

/* ---------------------------------------------------------------------------------------------
 * Cancelling a subscription
 * ------------------------------------------------------------------------------------------- */

function cancelPage(ctx: PageContext, seller: string, zone: string, s: PortalSubscription, problem?: string): string {
  const links = portalLinks(ctx);
  const { subscription, cancellation } = s;
  const name = subscription.name ?? subscription.plan.name;
  let content: Html;
  if (cancellation.kind === 'possible') {
    const when = cancellation.duringTrial
      ? 'That is the end of your trial.'
      : 'That is the end of the contract term that your notice period still allows; until then your subscription continues as usual.';
    content = html`<p>If you cancel now, your subscription ends on <strong>${day(cancellation.date, zone)}</strong>. ${when}</p>
<form method="post" action="${links.cancel(subscription.id)}">
<input type="hidden" name="csrf" value="${ctx.csrf(links.token)}">
<input type="hidden" name="cancellationDate" value="${cancellation.date}">
<button type="submit">Cancel on ${day(cancellation.date, zone)}</button>
</form>
<p><a href="${links.home}">Keep my subscription</a></p>`;
  } else if (cancellation.kind === 'changing') {
    content = html`<p>Your plan changes on ${day(cancellation.date, zone)}. You can cancel once the change has taken effect.</p><p><a href="${links.home}">Back to your account</a></p>`;
  } else if (cancellation.kind === 'scheduled') {
    content = html`<p>This subscription is already cancelled: it ends on ${day(cancellation.date, zone)}.</p><p><a href="${links.home}">Back to your account</a></p>`;
  } else {
    content = html`<p>This subscription has ended and cannot be cancelled.</p><p><a href="${links.home}">Back to your account</a></p>`;
  }
  const body = html`<p class="muted">${seller}</p>
<h1>Cancel ${name}</h1>
<p class="muted">Subscription ${subscription.number}, plan ${subscription.plan.name}</p>
${problem ? html`<div class="errors" role="alert"><p>${problem}</p></div>` : ''}
${content}`;
  return document({ title: `Cancel ${name}`, path: ctx.path, body });
}

/** Runs a unit of work; a refusal of one of these kinds (the unit rolled back) is answered, not thrown. */
async function refusal(unit: () => Promise<unknown>, kinds: readonly ErrorKind[]): Promise<AppError | undefined> {
  try {
    await unit();
    return undefined;
  } catch (err) {
    if (err instanceof AppError && kinds.includes(err.kind)) return err;
    throw err;
  }
}

async function sellerName(tx: Tx, session: PortalSubject): Promise<string> {
  const seller = await getOrganisation(tx, session.org);
  return seller.legalName ?? seller.name;
}

/**
 * What the domain code (the IBAN's check, the mandate's) says of a form whose schema check failed
 * already, in a unit rolled back whatever it finds: the form shows every field's error at once, not
 * the IBAN's only after the account holder is fixed.
 */
async function domainViolations(ctx: PageContext, form: BankAccountForm): Promise<Violation[]> {
  const checked = new Error('bank account checked');
  try {
    await asCustomer(ctx, 'write', async (tx, s) => {
      await addPortalBankAccount(tx, s.org, s.customerId, form, ctx.now);
      throw checked;
    });
  } catch (err) {
    if (err instanceof AppError && err.kind === 'validation') return err.violations ?? [];
    if (err !== checked) throw err;
  }
  return [];
}

/** What the bank account form shows besides the form: the seller, and the creditor a mandate would be given to. */
async function bankAccountContext(tx: Tx, s: PortalSubject): Promise<{ seller: string; creditor: PortalCreditor | null }> {
  return { seller: await sellerName(tx, s), creditor: await portalCreditor(tx, s.org) };
}

async function cancelView(tx: Tx, ctx: PageContext, s: PortalSubject) {
  const subscription = await portalSubscription(tx, s.org, s.customerId, ctx.params.id as string, ctx.now);
  return { seller: await sellerName(tx, s), zone: subscription.subscription.customer.timeZone, subscription };
}

/** The customer portal (issue 18), opened by a portal session's URL. */
export const PORTAL_PAGES: readonly PageRoute[] = [
  {
    method: 'GET',
    path: '/pages/portal/:token',
    async handle(ctx) {
      const [page, session] = await asCustomer(ctx, 'read', async (tx, s) => [await portalOverview(tx, s.org, s.customerId, ctx.now), s] as const);
      return { html: overviewPage(ctx, page, session) };
    },
  },
  {
    method: 'GET',
    path: '/pages/portal/:token/bank-account',
    async handle(ctx) {
      const { seller, creditor } = await asCustomer(ctx, 'read', bankAccountContext);
      const form = { iban: '', accountHolder: '', makeDefault: true, mandateAccepted: false };
      return { html: bankAccountPage(ctx, seller, creditor, form, new Map()) };
    },
  },
  {
    method: 'POST',
    path: '/pages/portal/:token/bank-account',
    async handle(ctx) {
      // An unknown session is a 404 before the form and its CSRF field are read.
      await asCustomer(ctx, 'read', async () => undefined);
      const posted = await ctx.form(ctx.params.token as string);
      const form: BankAccountForm = {
        iban: posted.get('iban') ?? '',
        accountHolder: posted.get('accountHolder') ?? '',
        makeDefault: posted.get('default') === 'yes',
        mandateAccepted: posted.get('mandate') === 'yes',
      };
      // The account is checked by create_payment_method's own schema, then by its domain code.
      const parsed = sepaDebitFields.safeParse({ iban: form.iban, accountHolder: form.accountHolder });
      const refused = parsed.success
        ? await refusal(() => asCustomer(ctx, 'write', (tx, s) => addPortalBankAccount(tx, s.org, s.customerId, { ...form, ...parsed.data }, ctx.now)), ['validation'])
        : invalidMany([...(inputError(parsed.error, 'validation').violations ?? []), ...(await domainViolations(ctx, form))]);
      if (!refused) return { redirect: `${portalLinks(ctx).home}?notice=bank-account-added` };
      const { seller, creditor } = await asCustomer(ctx, 'read', bankAccountContext);
      return { html: bankAccountPage(ctx, seller, creditor, form, fieldErrors(refused.violations ?? [])), status: 422 };
    },
  },
  {
    method: 'GET',
    path: '/pages/portal/:token/subscriptions/:id/cancel',
    async handle(ctx) {
      const view = await asCustomer(ctx, 'read', (tx, s) => cancelView(tx, ctx, s));
      return { html: cancelPage(ctx, view.seller, view.zone, view.subscription) };
    },
  },
  {
    method: 'POST',
    path: '/pages/portal/:token/subscriptions/:id/cancel',
    async handle(ctx) {
      await asCustomer(ctx, 'read', (tx, s) => ownedSubscription(tx, s.org, s.customerId, ctx.params.id as string, ctx.now));
      const posted = await ctx.form(ctx.params.token as string);
      const date = dateTimeInput.safeParse(posted.get('cancellationDate') ?? '');
      // A date that is no longer possible, or a subscription changed meanwhile: the page shows it as it is now.
      const refused =
        !date.success ||
        (await refusal(() => asCustomer(ctx, 'write', (tx, s) => cancelFromPortal(tx, s.org, s.customerId, ctx.params.id as string, date.data, ctx.now)), ['validation', 'conflict']));
      if (!refused) return { redirect: `${portalLinks(ctx).home}?notice=cancellation-scheduled` };
      const view = await asCustomer(ctx, 'read', (tx, s) => cancelView(tx, ctx, s));
      const problem = 'Your subscription was not cancelled: what can be cancelled has changed since the page was shown. Please check the details below.';
      return { html: cancelPage(ctx, view.seller, view.zone, view.subscription, problem), status: 409 };
    },
  },
];
