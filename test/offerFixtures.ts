/**
 * What the offer page tests (offerPages, offerTerms, offerAcceptedTerms) share: the seller, customers
 * and offers made through the tools, and a recipient's page loaded and its form posted over HTTP as
 * the browser that shows it would.
 */
import { postForm } from './forms.js';
import { ok, type TestEnv } from './helpers.js';
import { pdfText } from './pdf.js';

export const NOW = '2026-01-15T10:00:00.000Z';
export const VALID_UNTIL = '2026-02-15T00:00:00.000Z';
export const periods = [{ contractPeriod: '12M', cancellationPeriod: '3M' }];
export const address = { street: 'Friedrichstraße', houseNumber: '12', zip: '10117', city: 'Berlin', countryCode: 'DE' };
export const jane = { email: 'jane@acme.example', firstName: 'Jane', lastName: 'Doe' };
export const john = { email: 'john@acme.example', firstName: 'John', lastName: 'Roe' };

/** Makes the organisation Seller GmbH in München and returns its tax group: 19 % in DE. */
export async function seller(env: TestEnv): Promise<any> {
  await ok(env.mcp, 'update_organisation', { name: 'Seller GmbH', address: { street: 'Hauptstraße', houseNumber: '1', zip: '80331', city: 'München', countryCode: 'DE' } });
  return ok(env.mcp, 'create_tax_group', { internalDescription: 'Standard', taxes: [{ code: 'DE', rate: 19, countryCode: 'DE', validFrom: '2021-01-01' }] });
}

/** A new customer ACME GmbH in Europe/Berlin, with `address` as its invoice address unless `withAddress` is false. */
export async function customer(env: TestEnv, withAddress = true): Promise<any> {
  const c = await ok(env.mcp, 'create_customer', { companyName: 'ACME GmbH', timeZone: 'Europe/Berlin', currencyCode: 'EUR' });
  if (withAddress) await ok(env.mcp, 'create_invoice_address', { id: c.id, ...address });
  return c;
}

/** An offer of `plan` to Jane at a new customer with an invoice address, accepted by a click; `extra` adds or overrides fields. */
export async function offer(env: TestEnv, plan: any, extra: Record<string, unknown> = {}): Promise<any> {
  return ok(env.mcp, 'create_offer', {
    customer: (await customer(env)).id,
    acceptanceMode: 'click',
    name: 'Seats for ACME',
    recipients: [jane],
    validUntil: VALID_UNTIL,
    subscription: { plan: plan.id, periods },
    ...extra,
  });
}

export interface Page {
  status: number;
  text: string;
  headers: Headers;
}

export async function open(url: string, headers: Record<string, string> = {}): Promise<Page> {
  const res = await fetch(url, { headers });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

export const csrfOf = (page: Page) => /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
/** The fingerprint of the terms an accept or sign form carries ('' on other forms). */
export const termsOf = (page: Page) => /name="terms" value="([^"]*)"/.exec(page.text)?.[1] ?? '';

/** Posts the form of a page already loaded (`page`) to `action` with the page's CSRF token and terms, as the browser that shows it would. */
export function post(link: string, action: string, page: Page, fields: Record<string, string>) {
  return postForm(`${link}/${action}`, { csrf: csrfOf(page), terms: termsOf(page), ...fields });
}

/** Loads the page, then posts its form. */
export async function submit(link: string, action: string, fields: Record<string, string>) {
  return post(link, action, await open(link), fields);
}

/** The offer as REST answers it: in full, with each recipient's signed document. */
export const getOffer = async (env: TestEnv, o: any) => (await env.http('GET', `/offers/${o.id}`)).body;
export const subscriptionOf = (env: TestEnv, o: any) => ok(env.mcp, 'get_subscription', { id: o.subscription.id });

/** The text of the offer's signed PDF. */
export async function signedPdf(env: TestEnv, o: any): Promise<string> {
  const res = await fetch((await getOffer(env, o)).signedDocument, { headers: { authorization: `Bearer ${env.org.apiKey}` } });
  return pdfText(new Uint8Array(await res.arrayBuffer()));
}
