/**
 * The TARGET2 calendar SEPA direct debits settle on, and the earliest collection date of the SEPA
 * core scheme's D-1 rule. Calendar dates are `YYYY-MM-DD`; pure functions, no clock.
 */

/** Easter Sunday of a Gregorian year (the anonymous Gregorian computus of Meeus, Jones and Butcher). */
export function easterSunday(year: number): string {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function shift(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The days TARGET2 is closed besides weekends: 1 Jan, Good Friday, Easter Monday, 1 May, 25 and 26 Dec. */
export function target2Holidays(year: number): string[] {
  const easter = easterSunday(year);
  return [`${year}-01-01`, shift(easter, -2), shift(easter, 1), `${year}-05-01`, `${year}-12-25`, `${year}-12-26`];
}

export function isTarget2BusinessDay(date: string): boolean {
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
  if (weekday === 0 || weekday === 6) return false;
  return !target2Holidays(Number(date.slice(0, 4))).includes(date);
}

/** The first TARGET2 business day after `date`. */
export function nextBusinessDay(date: string): string {
  let next = shift(date, 1);
  while (!isTarget2BusinessDay(next)) next = shift(next, 1);
  return next;
}

/**
 * The earliest collection date for a file handed to the bank on `today` (D-1): the business day after
 * the day the bank processes it, which is `today` when that is a business day, else the next one.
 * Thursday 2027-03-25 → Tuesday 2027-03-30 (Good Friday and Easter Monday are closed).
 */
export function earliestCollectionDate(today: string): string {
  const processing = isTarget2BusinessDay(today) ? today : nextBusinessDay(today);
  return nextBusinessDay(processing);
}
