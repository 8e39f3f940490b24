import { DateTime } from 'luxon';
import { zoned } from '../domain/dates.js';
import { html, type Html } from './html.js';

/** The pages are in English; dates read "4 Dec 2026". */
const LOCALE = 'en-GB';

/**
 * A calendar day for people, in a `<time>` element: an instant's day in the customer's time zone, or
 * a date (YYYY-MM-DD) as it is.
 */
export function day(value: string, timeZone?: string): Html {
  const dt = timeZone ? zoned(value, timeZone) : DateTime.fromISO(value, { zone: 'UTC' });
  return html`<time datetime="${dt.toISODate()}">${dt.setLocale(LOCALE).toLocaleString(DateTime.DATE_MED)}</time>`;
}

/** A status as a labelled chip: `ok` green, `warn` orange, otherwise neutral. */
export function chip(label: string, tone?: 'ok' | 'warn'): Html {
  return html`<span class="${tone ? `status ${tone}` : 'status'}">${label}</span>`;
}

/** An instant for people, in the customer's time zone: "4 Dec 2026, 11:00 CET". */
export function moment(value: string, timeZone: string): Html {
  const dt = zoned(value, timeZone).setLocale(LOCALE);
  return html`<time datetime="${dt.toUTC().toISO()}">${dt.toFormat('d LLL yyyy, HH:mm ZZZZ')}</time>`;
}

/** The status of an issued invoice for its customer: an open one past its due date is overdue. */
export function invoiceStatus(invoice: { status: string; dueAt: string | null }, now: Date): Html {
  if (invoice.status === 'paid') return chip('Paid', 'ok');
  if (invoice.status === 'void') return chip('Void');
  return invoice.dueAt && Date.parse(invoice.dueAt) < now.getTime() ? chip('Overdue', 'warn') : chip('Open');
}
