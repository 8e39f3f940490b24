import { knownCurrencies } from '../../values/money.js';
import type { Migration } from './index.js';

/**
 * Until this version every currency was kept in hundredths of its major unit; from it on each one is
 * kept in its ISO 4217 minor unit (CONTRACT section 8). The two decimal amounts stored as integers (a
 * price plan's `price_cents`, a coupon's `fixed_amount_cents`) of a currency whose minor unit is not 2
 * digits are rescaled: KWD 12.34 was 1234 hundredths and becomes 12340 fils; JPY 4900 was 490000 and
 * becomes 4900 yen, a former fraction of a yen rounded half-up to the yen (a coupon to at least 1).
 * EUR, USD and every other 2-digit currency are untouched, as are invoices and payment plans, whose
 * integers were always given in minor units. The currencies and their digits come from the data that
 * reads the rows back (`minorDigits`).
 */
function rescaled(column: string, digits: number): string {
  if (digits > 2) return `${column} * ${10 ** (digits - 2)}`;
  const p = 10 ** (2 - digits);
  return `(${column} + ${p / 2}) / ${p}`;
}

function update(table: string, column: string, currencyColumn: string, wrap: (expr: string) => string): string {
  const odd = knownCurrencies().filter((c) => c.digits !== 2 && /^[A-Z]{3}$/.test(c.code));
  if (odd.length === 0) return '';
  const cases = odd.map((c) => `WHEN '${c.code}' THEN ${rescaled(column, c.digits)}`).join(' ');
  const codes = odd.map((c) => `'${c.code}'`).join(', ');
  return `UPDATE ${table} SET ${column} = ${wrap(`CASE ${currencyColumn} ${cases} END`)} WHERE ${currencyColumn} IN (${codes});\n`;
}

export const minorUnits: Migration = {
  version: 10,
  name: 'minor_units',
  sql:
    update('price_plans', 'price_cents', 'currency_code', (e) => e) +
    update('coupons', 'fixed_amount_cents', 'fixed_amount_currency', (e) => `max(1, ${e})`),
};
