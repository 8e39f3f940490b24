import { knownCurrencies } from '../../values/money.js';
import type { Migration } from './index.js';

/**
 * Price plan types graduated, volume and package, and unit prices of up to 10 fractional digits
 * (CONTRACT section 8, "Pricing models"; issue 11).
 *
 * - `type`: its CHECK widened to the five types. SQLite cannot alter a CHECK, and rebuilding the table
 *   would drop a parent of `plan_items`, `subscription_items` and `entitlements` while foreign keys
 *   are on (the runner applies each migration in one transaction, where they cannot be turned off).
 *   So the column is renamed, a new one with the wider CHECK added, filled and the old one dropped
 *   (a column's own CHECK does not prevent DROP COLUMN). Its DEFAULT exists only because ADD COLUMN
 *   NOT NULL needs one; every insert gives the type.
 * - `price_cents` (an integer of the currency's minor unit, NOT NULL) becomes `price`: the exact
 *   decimal text of major units ("49.9", "0.002", "4900"), NULL for graduated and volume plans. Every
 *   row keeps its meaning: 4990 EUR cents is "49.9", 4900 JPY is "4900", 12340 KWD fils is "12.34".
 * - `tiers`: JSON text `[{ "upTo": 10, "unitAmount": "0.002", "flatAmount": "5" | null }]`, amounts as
 *   exact decimal texts of major units; NULL for the other types.
 * - `package_size`: units per package, NULL for the other types.
 */
function priceText(): string {
  const byDigits = new Map<number, string[]>();
  for (const c of knownCurrencies()) {
    if (c.digits === 2 || !/^[A-Z]{3}$/.test(c.code)) continue;
    byDigits.set(c.digits, [...(byDigits.get(c.digits) ?? []), `'${c.code}'`]);
  }
  const text = (digits: number) =>
    digits === 0 ? 'CAST(price_cents AS TEXT)' : `printf('%d.%0${digits}d', price_cents / ${10 ** digits}, price_cents % ${10 ** digits})`;
  const cases = [...byDigits].map(([digits, codes]) => `WHEN currency_code IN (${codes.join(', ')}) THEN ${text(digits)}`).join(' ');
  return `CASE ${cases} ELSE ${text(2)} END`;
}

export const pricing: Migration = {
  version: 11,
  name: 'pricing',
  sql: `
ALTER TABLE price_plans RENAME COLUMN type TO type_before_011;
ALTER TABLE price_plans ADD COLUMN type TEXT NOT NULL DEFAULT 'flat_fee'
  CHECK (type IN ('flat_fee','per_unit','graduated','volume','package'));
UPDATE price_plans SET type = type_before_011;
ALTER TABLE price_plans DROP COLUMN type_before_011;

ALTER TABLE price_plans ADD COLUMN price TEXT;
UPDATE price_plans SET price = ${priceText()};
UPDATE price_plans SET price = rtrim(rtrim(price, '0'), '.') WHERE instr(price, '.') > 0;
ALTER TABLE price_plans DROP COLUMN price_cents;

ALTER TABLE price_plans ADD COLUMN tiers TEXT;
ALTER TABLE price_plans ADD COLUMN package_size INTEGER CHECK (package_size >= 1);
`,
};
