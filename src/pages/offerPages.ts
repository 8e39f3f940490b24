/**
 * The offer page of each recipient (issue 18), opened by the token in their link: the offer as they
 * will be billed, and the one action their state allows (accept, sign, give the invoice address).
 * Forms are Post/Redirect/Get; a form with mistakes is shown again with them next to its fields, a
 * refused step that the page's state does not explain with the refusal above the offer. The accept
 * and sign forms carry the fingerprint of the terms shown, so that what is accepted is what was read.
 */
import { COUNTRY_CODES } from '../domain/countries.js';
import type { OfferPresentation } from '../domain/offerPresentation.js';
import {
  acceptAsRecipient,
  recipientPage,
  recipientSignedDocument,
  recordRecipientView,
  showsOffer,
  submitInvoiceDetailsAsRecipient,
  type OfferShownState,
  type RecipientPage,
} from '../domain/offerRecipients.js';
import { AppError, type Violation } from '../errors.js';
import { violationsOf } from '../registry/validation.js';
import type { Estimate } from '../schemas/estimate.js';
import { offerInvoiceAddress } from '../tools/offers.js';
import { formatMoney, formatUnitAmount } from '../values/money.js';
import type { PageContext, PageResult, PageRoute } from './app.js';
import { document, html, pagesRoot, type Html } from './html.js';
import { renderMarkdown } from './markdown.js';

/**
 * What a form sent back with mistakes: a message per field, and the values to show again; or a
 * refusal of the step as a whole (`refusal`), which the page shows above the offer.
 */
interface FormState {
  errors: Record<string, string>;
  values: Record<string, string>;
  refusal?: string;
}

const BLANK: FormState = { errors: {}, values: {} };

/** The recipient a genuine token names; anything else is the generic 404. */
function subject(ctx: PageContext): { org: string; id: string; token: string } {
  const token = ctx.params.token ?? '';
  const found = ctx.tokens.verify('offer-recipient', token);
  if (!found) throw new AppError('not_found', 'Unknown offer link');
  return { ...found, token };
}

/** The page's own addresses, relative to the request path (a public URL with a path prefix works). */
function addresses(ctx: PageContext, token: string) {
  const page = `${pagesRoot(ctx.path)}offers/${token}`;
  return { page, accept: `${page}/accept`, sign: `${page}/sign`, invoiceDetails: `${page}/invoice-details`, pdf: `${page}/signed.pdf` };
}

// ---------------------------------------------------------------------------------------------
// Formatting.

const dateFormats = new Map<string, { date: Intl.DateTimeFormat; time: Intl.DateTimeFormat }>();

function formatsFor(timeZone: string) {
  let f = dateFormats.get(timeZone);
  if (!f) {
    f = {
      date: new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone }),
      time: new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone }),
    };
    dateFormats.set(timeZone, f);
  }
  return f;
}

const onDate = (instant: string, timeZone: string) => formatsFor(timeZone).date.format(new Date(instant));
const atTime = (instant: string, timeZone: string) => `${formatsFor(timeZone).time.format(new Date(instant))} (${timeZone})`;

const STATUS_LABEL = {
  open: ['Open', ''],
  signing: ['Being signed', 'warn'],
  awaiting_invoice_details: ['Accepted: invoice address needed', 'warn'],
  signed: ['Signed', 'ok'],
  archived: ['Withdrawn', ''],
} as const;

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const COUNTRIES = [...COUNTRY_CODES].map((code) => ({ code, name: regionNames.of(code) ?? code })).sort((a, b) => a.name.localeCompare(b.name, 'en'));

// ---------------------------------------------------------------------------------------------
// The parts of the page.

function header(p: OfferPresentation): Html {
  const { offer } = p;
  const [label, tone] = STATUS_LABEL[offer.status];
  const contact = offer.contactPerson;
  return html`<header>
<p class="muted">Offer from ${p.seller.legalName ?? p.seller.name}</p>
<h1 lang="${offer.locale}">${offer.name}</h1>
<p>Offer ${offer.number} for ${p.customerName} <span class="status ${tone}">${label}</span></p>
<dl><dt>Valid until</dt><dd>${atTime(offer.validUntil, p.timeZone)}</dd>${
    contact ? html`<dt>Your contact</dt><dd>${contact.firstName} ${contact.lastName}, <a href="mailto:${contact.email}">${contact.email}</a></dd>` : ''
  }</dl>
</header>`;
}

function sections(p: OfferPresentation): Html {
  const { offer } = p;
  return html`${offer.description ? html`<p lang="${offer.locale}">${offer.description}</p>` : ''}${offer.sections.map(
    (s, i) =>
      html`<section lang="${offer.locale}" aria-labelledby="section-${i}"><h2 id="section-${i}">${s.rendered.title}</h2><div class="section-content">${renderMarkdown(s.rendered.content)}</div></section>`,
  )}`;
}

/** When the subscription starts: a start date ahead, else what activates it. */
function startText(p: OfferPresentation): string {
  const { start, activatedBy } = p.contract;
  if (start) return onDate(start, p.timeZone);
  return activatedBy === 'signing' ? 'When the offer is signed' : `When ${p.seller.legalName ?? p.seller.name} activates it, after the offer is signed`;
}

function items(p: OfferPresentation): Html {
  const trial = p.trial;
  return html`<section aria-labelledby="subscription"><h2 id="subscription">Your subscription</h2>
<p>Plan: <strong>${p.offer.subscription.plan.name}</strong></p>
<dl><dt>Starts</dt><dd>${startText(p)}</dd><dt>Term</dt><dd>${p.contract.term}</dd></dl>
<table><caption>Items and their prices</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="num">Quantity</th><th scope="col">Price</th></tr></thead>
<tbody>${p.items.map(
    (i) =>
      html`<tr><td>${i.name}<br><span class="muted">${i.billing}</span>${i.discounts.map((d) => html`<br>${d}`)}</td><td class="num">${i.quantity}</td><td>${i.price}</td></tr>`,
  )}</tbody></table>${
    trial ? html`<p>Free trial until ${onDate(trial.until, p.timeZone)}: ${trial.items.join(', ')} ${trial.items.length > 1 ? 'are' : 'is'} free until then and billed from then.</p>` : ''
  }</section>`;
}

/**
 * Why the first invoice shows no tax: tax follows the invoice address. Only a `click` offer asks the
 * recipient for it after accepting; otherwise the seller gives it, or the invoice is issued without.
 */
const NO_ADDRESS: Record<OfferPresentation['offer']['acceptanceMode'], string> = {
  click: 'No tax is shown yet: tax follows the invoice address, which you give after accepting.',
  esignature: 'No tax is shown: tax follows your invoice address, which the seller does not have yet.',
  print: 'No tax is shown: tax follows your invoice address, which the seller does not have yet.',
};

function firstInvoice(e: Estimate, p: OfferPresentation): Html {
  const money = (minor: number) => formatMoney(minor, e.currencyCode);
  return html`<section aria-labelledby="first-invoice"><h2 id="first-invoice">Your first invoice</h2>
<p>An estimate of the first invoice if the offer is signed today, as billing will compute it.</p>
<table><caption>First invoice, on ${onDate(e.billingDate, p.timeZone)}</caption>
<thead><tr><th scope="col">Description</th><th scope="col" class="num">Tax</th><th scope="col" class="num">Net</th></tr></thead>
<tbody>${e.lines.map(
    (l) =>
      html`<tr><td>${l.description}${
        l.periodStart && l.periodEnd
          ? html`<br><span class="muted">${l.quantity} × ${formatUnitAmount(l.unitAmountDecimal, e.currencyCode)}</span>`
          : ''
      }</td><td class="num">${l.taxRate}%</td><td class="num">${money(l.netAmount)}</td></tr>`,
  )}</tbody>
<tfoot><tr><th scope="row" colspan="2">Net</th><td class="num">${money(e.netAmount)}</td></tr>${e.taxes.map(
    (t) => html`<tr><th scope="row" colspan="2">Tax ${t.rate}% on ${money(t.netAmount)}</th><td class="num">${money(t.taxAmount)}</td></tr>`,
  )}<tr><th scope="row" colspan="2">Total</th><td class="num" id="total">${money(e.grossAmount)}</td></tr></tfoot></table>
${p.hasInvoiceAddress ? '' : html`<p class="muted">${NO_ADDRESS[p.offer.acceptanceMode]}</p>`}
</section>`;
}

const SIGNING_RULE = {
  click: 'One of the recipients accepts the offer; the others need not.',
  esignature: 'Every recipient signs; the offer is signed once all of them have.',
  print: 'The offer is signed on paper.',
} as const;

function signatures(page: RecipientPage, timeZone: string): Html {
  const { offer } = page;
  return html`<section aria-labelledby="signatures"><h2 id="signatures">Signatures</h2>
<p>${SIGNING_RULE[offer.acceptanceMode]}</p>
<ul class="plain">${offer.recipients.map(
    (r) =>
      html`<li>${r.firstName} ${r.lastName}${r.id === page.recipient.id ? ' (you)' : ''}: ${
        r.signedAt ? html`<span class="status ok">signed ${atTime(r.signedAt, timeZone)}</span>` : html`<span class="status">not signed</span>`
      }</li>`,
  )}</ul></section>`;
}

/** A refusal of the step, above the offer: what is the case, and that nothing was recorded. */
function refusal(form: FormState): Html | '' {
  return form.refusal ? html`<div class="errors" role="alert"><p>${form.refusal}</p></div>` : '';
}

function errorSummary(form: FormState): Html | '' {
  return Object.keys(form.errors).length ? html`<div class="errors" role="alert"><p>Please correct the fields marked below.</p></div>` : '';
}

function fieldError(name: string, form: FormState): { attrs: Html | ''; message: Html | '' } {
  const error = form.errors[name];
  if (!error) return { attrs: '', message: '' };
  return { attrs: html` aria-invalid="true" aria-describedby="${name}-error"`, message: html`<p class="field-error" id="${name}-error">${error}</p>` };
}

interface TextField {
  name: string;
  label: string;
  value: string;
  required?: boolean;
  autocomplete?: string;
}

function textField(f: TextField, form: FormState): Html {
  const { attrs, message } = fieldError(f.name, form);
  const value = form.values[f.name] ?? f.value;
  return html`<label for="${f.name}">${f.label}${f.required ? '' : html` <span class="muted">(optional)</span>`}</label>
<input type="text" id="${f.name}" name="${f.name}" value="${value}"${f.autocomplete ? html` autocomplete="${f.autocomplete}"` : ''}${f.required ? html` required` : ''}${attrs}>${message}`;
}

function agreeBox(text: string, form: FormState): Html {
  const { attrs, message } = fieldError('agree', form);
  return html`<label class="check"><input type="checkbox" id="agree" name="agree" value="yes" required${attrs}> ${text}</label>${message}`;
}

/** The part of the page that says what the recipient can do, per state. */
const ACTIONS: Record<OfferShownState, (ctx: PageContext, token: string, page: RecipientPage, form: FormState) => Html> = {
  act(ctx, token, page, form) {
    const a = addresses(ctx, token);
    const name = `${page.recipient.firstName} ${page.recipient.lastName}`;
    if (page.offer.acceptanceMode === 'click') {
      return html`<form method="post" action="${a.accept}" class="card" aria-labelledby="act"><h2 id="act">Accept this offer</h2>${errorSummary(form)}${csrfField(ctx, token)}${termsField(page)}
${textField({ name: 'fullName', label: 'Your full name', value: name, required: true, autocomplete: 'name' }, form)}
${agreeBox('I have read this offer and accept it, with its prices and terms.', form)}
<button type="submit">Accept offer</button></form>`;
    }
    return html`<form method="post" action="${a.sign}" class="card" aria-labelledby="act"><h2 id="act">Sign this offer</h2>${errorSummary(form)}${csrfField(ctx, token)}${termsField(page)}
<p>Type your full name (${name}) to sign.</p>
${textField({ name: 'fullName', label: 'Your full name', value: '', required: true, autocomplete: 'name' }, form)}
${agreeBox('I sign this offer electronically and agree to its prices and terms.', form)}
<button type="submit">Sign offer</button></form>`;
  },
  waiting(_ctx, _token, page) {
    const others = page.offer.recipients.filter((r) => !r.signedAt).map((r) => `${r.firstName} ${r.lastName}`);
    return html`<div class="card" role="status"><h2>You have signed</h2><p>You signed this offer on ${atTime(page.recipient.signedAt!, page.offer.customer.timeZone)}. It is signed once ${others.join(', ')} ${others.length > 1 ? 'have' : 'has'} signed too.</p></div>`;
  },
  print(_ctx, _token, page) {
    const seller = page.seller.legalName ?? page.seller.name;
    return html`<div class="card"><h2>Signing on paper</h2><p>Print this offer, sign it and return it to ${seller}. ${seller} records your signed printout; there is nothing to do on this page.</p></div>`;
  },
  invoice_details: (ctx, token, page, form) => invoiceDetailsForm(ctx, token, page, form),
};

function csrfField(ctx: PageContext, token: string): Html {
  return html`<input type="hidden" name="csrf" value="${ctx.csrf(token)}">`;
}

/** The fingerprint of the terms this page shows: accepting or signing is of these terms only. */
function termsField(page: RecipientPage): Html {
  return html`<input type="hidden" name="terms" value="${page.terms ?? ''}">`;
}

function invoiceDetailsForm(ctx: PageContext, token: string, page: RecipientPage, form: FormState): Html {
  const accepted = page.offer.recipients.find((r) => r.signedAt)!;
  const tz = page.offer.customer.timeZone;
  const field = (name: string, label: string, required = false, autocomplete?: string, value = '') =>
    textField({ name, label, value, required, ...(autocomplete ? { autocomplete } : {}) }, form);
  const country = fieldError('countryCode', form);
  const chosen = form.values.countryCode ?? '';
  return html`<form method="post" action="${addresses(ctx, token).invoiceDetails}" class="card" aria-labelledby="act"><h2 id="act">Your invoice address</h2>${errorSummary(form)}${csrfField(ctx, token)}
<p>${accepted.firstName} ${accepted.lastName} accepted this offer on ${atTime(accepted.signedAt!, tz)}. Give the address invoices go to, and the offer is signed.</p>
${field('companyName', 'Company', false, 'organization', page.offer.customer.companyName ?? '')}
${field('firstName', 'First name', false, 'given-name', page.recipient.firstName)}
${field('lastName', 'Last name', false, 'family-name', page.recipient.lastName)}
${field('street', 'Street', true, 'address-line1')}
${field('houseNumber', 'House number')}
${field('addition', 'Address addition (c/o, floor)', false, 'address-line2')}
${field('zip', 'Postal code', true, 'postal-code')}
${field('city', 'City', true, 'address-level2')}
<label for="countryCode">Country</label>
<select id="countryCode" name="countryCode" required autocomplete="country"${country.attrs}><option value="">Choose a country</option>${COUNTRIES.map(
    (c) => html`<option value="${c.code}"${c.code === chosen ? html` selected` : ''}>${c.name}</option>`,
  )}</select>${country.message}
${field('vatId', 'VAT ID')}
${field('costCentre', 'Cost centre')}
<button type="submit">Complete the offer</button></form>`;
}

// ---------------------------------------------------------------------------------------------
// Whole pages.

function message(ctx: PageContext, token: string, page: RecipientPage): PageResult {
  const { offer } = page;
  const seller = page.seller.legalName ?? page.seller.name;
  const tz = offer.customer.timeZone;
  const what = `${offer.name} (${offer.number}) from ${seller}`;
  const show = (title: string, body: Html, status: number): PageResult => ({
    html: document({ title, path: ctx.path, body: html`<h1>${title}</h1>${body}` }),
    status,
  });
  if (page.state === 'signed') {
    return show(
      'This offer is signed',
      html`<p>The offer ${what} was signed on ${atTime(offer.signedAt!, tz)}. There is nothing more to do here.</p>${
        page.recipient.signedDocument ? html`<p><a href="${addresses(ctx, token).pdf}">Download the signed offer (PDF)</a></p>` : ''
      }`,
      200,
    );
  }
  if (page.state === 'archived') {
    return show('This offer was withdrawn', html`<p>${seller} withdrew the offer ${what}. It can no longer be accepted; ask ${seller} for a new offer if you need one.</p>`, 410);
  }
  return show('This offer has expired', html`<p>The offer ${what} could be accepted until ${atTime(offer.validUntil, tz)}. Ask ${seller} for a new offer.</p>`, 410);
}

function render(ctx: PageContext, token: string, page: RecipientPage, form: FormState = BLANK, status = 200): PageResult {
  const p = page.presentation;
  if (!p || !showsOffer(page.state)) return message(ctx, token, page);
  const body = html`${refusal(form)}${header(p)}${sections(p)}${items(p)}${p.estimate ? firstInvoice(p.estimate, p) : ''}${signatures(page, p.timeZone)}${ACTIONS[page.state](ctx, token, page, form)}`;
  return { html: document({ title: `${p.offer.name} – offer ${p.offer.number}`, path: ctx.path, body }), status };
}

async function show(ctx: PageContext, form: FormState = BLANK, status = 200): Promise<PageResult> {
  const { org, id, token } = subject(ctx);
  const page = await ctx.read((tx) => recipientPage(tx, org, id, ctx.now, ctx.links, ctx.client));
  if (page.logView) await ctx.write((tx) => recordRecipientView(tx, org, id, ctx.client, ctx.now));
  return render(ctx, token, page, form, status);
}

/** A message for a field, as the page shows it next to the field: without the field's path, capitalised. */
function fieldErrors(violations: readonly Violation[], prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of violations) {
    const field = v.propertyPath.startsWith(prefix) ? v.propertyPath.slice(prefix.length) : v.propertyPath;
    const text = v.message.startsWith(`${v.propertyPath} `) ? v.message.slice(v.propertyPath.length + 1) : v.message;
    out[field] ??= `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
  }
  return out;
}

/**
 * A refused step (409). When the page no longer offers the form (`offered`: expired meanwhile, signed
 * in another tab, the other mode's form, a second click), back to the page, whose state says what is
 * the case. When it still does, the state explains nothing: the page is shown again with the refusal
 * above the offer (the terms changed since it was loaded, the customer is inactive).
 */
async function refused(ctx: PageContext, detail: string, values: Record<string, string>, offered: (page: RecipientPage) => boolean): Promise<PageResult> {
  const { org, id, token } = subject(ctx);
  const page = await ctx.read((tx) => recipientPage(tx, org, id, ctx.now, ctx.links, ctx.client));
  if (!offered(page)) return { redirect: addresses(ctx, token).page };
  return render(ctx, token, page, { errors: {}, values, refusal: detail }, 409);
}

/**
 * Runs a step of the recipient; then back to the page (303). A refusal (409) goes back to the page
 * too, or shows it with the refusal (`refused`); mistakes show the form again (422).
 */
async function step(
  ctx: PageContext,
  values: Record<string, string>,
  offered: (page: RecipientPage) => boolean,
  run: () => Promise<unknown>,
  prefix = '',
): Promise<PageResult> {
  const { token } = subject(ctx);
  try {
    await run();
  } catch (err) {
    if (err instanceof AppError && err.kind === 'validation') return show(ctx, { errors: fieldErrors(err.violations ?? [], prefix), values }, 422);
    if (err instanceof AppError && err.kind === 'conflict') return refused(ctx, err.message, values, offered);
    throw err;
  }
  return { redirect: addresses(ctx, token).page };
}

function consentRoute(path: string, mode: 'click' | 'esignature'): PageRoute {
  return {
    method: 'POST',
    path,
    async handle(ctx) {
      const { org, id, token } = subject(ctx);
      const form = await ctx.form(token);
      const fullName = form.get('fullName') ?? '';
      const consent = { fullName, agreed: form.get('agree') === 'yes', terms: form.get('terms') ?? '' };
      const offered = (page: RecipientPage) => page.state === 'act' && page.offer.acceptanceMode === mode;
      return step(ctx, { fullName }, offered, () => ctx.write((tx) => acceptAsRecipient(tx, org, id, mode, consent, ctx.client, ctx.now, ctx.links)));
    },
  };
}

/** The fields of the invoice address form; an empty optional field is left out, as an API caller would. */
const ADDRESS_FIELDS = ['companyName', 'firstName', 'lastName', 'street', 'houseNumber', 'addition', 'zip', 'city', 'countryCode', 'vatId', 'costCentre'];
const REQUIRED_ADDRESS_FIELDS = new Set(['street', 'zip', 'city', 'countryCode']);

export const OFFER_PAGES: readonly PageRoute[] = [
  { method: 'GET', path: '/pages/offers/:token', handle: (ctx) => show(ctx) },
  consentRoute('/pages/offers/:token/accept', 'click'),
  consentRoute('/pages/offers/:token/sign', 'esignature'),
  {
    method: 'POST',
    path: '/pages/offers/:token/invoice-details',
    async handle(ctx) {
      const { org, id, token } = subject(ctx);
      const form = await ctx.form(token);
      const entered = Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, form.get(field) ?? '']));
      const input = Object.fromEntries(Object.entries(entered).filter(([field, value]) => value !== '' || REQUIRED_ADDRESS_FIELDS.has(field)));
      const parsed = offerInvoiceAddress.safeParse(input);
      if (!parsed.success) return show(ctx, { errors: fieldErrors(violationsOf(parsed.error, offerInvoiceAddress)), values: entered }, 422);
      const address = parsed.data;
      return step(
        ctx,
        entered,
        (page) => page.state === 'invoice_details',
        () => ctx.write((tx) => submitInvoiceDetailsAsRecipient(tx, org, id, address, ctx.client, ctx.now, ctx.links)),
        'invoiceAddress.',
      );
    },
  },
  {
    method: 'GET',
    path: '/pages/offers/:token/signed.pdf',
    async handle(ctx) {
      const { org, id } = subject(ctx);
      return ctx.read((tx) => recipientSignedDocument(tx, org, id));
    },
  },
];
