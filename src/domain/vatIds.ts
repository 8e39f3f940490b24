/**
 * VAT identification numbers: each country's format and check digit come from `stdnum` (a port of
 * python-stdnum); this module picks the rules of a country, writes ids in one form and says what a
 * country's ids look like. Only a well-formed id makes an invoice address a business for reverse
 * charge (compute.ts `taxRateE4`).
 */
import { euVat, stdnum, type Validator } from 'stdnum';
import { invalid } from '../errors.js';

/**
 * The countries whose VAT ids are checked, with what their ids look like for error messages (the
 * check digit is checked too): the EU member states, Andorra and Switzerland (stdnum's `euVat`), the
 * UK and Norway.
 */
const FORMATS: Readonly<Record<string, string>> = {
  AD: 'AD + a letter, 6 digits and a letter',
  AT: 'ATU + 8 digits',
  BE: 'BE + 10 digits, the first 0 or 1',
  BG: 'BG + 9 or 10 digits',
  CH: 'CHE + 9 digits + MWST, TVA or IVA',
  CY: 'CY + 8 digits and a letter',
  CZ: 'CZ + 8 to 10 digits',
  DE: 'DE + 9 digits',
  DK: 'DK + 8 digits',
  EE: 'EE + 9 digits',
  ES: 'ES + a letter or digit, 7 digits and a letter or digit',
  FI: 'FI + 8 digits',
  FR: 'FR + 2 check characters and the 9-digit SIREN',
  GB: 'GB + 9 or 12 digits',
  GR: 'EL + 9 digits',
  HR: 'HR + 11 digits',
  HU: 'HU + 8 digits',
  IE: 'IE + 7 digits and 1 or 2 letters',
  IT: 'IT + 11 digits',
  LT: 'LT + 9 or 12 digits',
  LU: 'LU + 8 digits',
  LV: 'LV + 11 digits',
  MT: 'MT + 8 digits',
  NL: 'NL + 9 digits, B and 2 digits',
  NO: 'NO + 9 digits + MVA',
  PL: 'PL + 10 digits',
  PT: 'PT + 9 digits',
  RO: 'RO + 2 to 10 digits',
  SE: 'SE + 12 digits ending in 01',
  SI: 'SI + 8 digits',
  SK: 'SK + 10 digits',
};

const VALIDATORS: ReadonlyMap<string, { validator: Validator; format: string }> = new Map(
  Object.entries(FORMATS).flatMap(([country, format]) => {
    const validator = euVat[country]?.[0] ?? { GB: stdnum.GB?.vat, NO: stdnum.NO?.mva }[country];
    return validator ? [[country, { validator, format }] as const] : [];
  }),
);

/** The prefix of a country's VAT ids: its ISO code, except Greece (EL). */
const prefixOf = (country: string): string => (country === 'GR' ? 'EL' : country);

/** The country a VAT id's own prefix names (EL is Greece), for an id whose country is not given otherwise. */
export function countryOfVatId(vatId: string): string {
  const prefix = vatId.replace(/[\s.-]/g, '').slice(0, 2).toUpperCase();
  return prefix === 'EL' ? 'GR' : prefix;
}

type VatIdCheck = { vatId: string } | { problem: string };

/**
 * A VAT id checked against the rules of `country`: the id in one form (prefix and the compact
 * number: `fr 403 032 650 45` becomes `FR40303265045`), or why it is malformed (a phrase to follow
 * the field name). A country without rules here keeps the id as given, trimmed.
 */
function checkVatId(country: string, raw: string): VatIdCheck {
  const rules = VALIDATORS.get(country);
  if (!rules) return { vatId: raw.trim() };
  const result = rules.validator.validate(raw);
  if (!result.isValid) {
    return {
      problem: `must be a VAT id of ${country}: ${rules.format}, with a valid check digit (${result.error.message.replace(/\.$/, '').toLowerCase()})`,
    };
  }
  const prefix = prefixOf(country);
  return { vatId: result.compact.startsWith(prefix) ? result.compact : prefix + result.compact };
}

/** `checkVatId`, with a malformed id a 422 at `field`. */
export function validVatId(country: string, vatId: string, field: string): string {
  const checked = checkVatId(country, vatId);
  if ('problem' in checked) throw invalid(field, `${field} ${checked.problem}`, 'invalid_vat_id');
  return checked.vatId;
}

/** True when `vatId` is a well-formed VAT id of `country` (false for a country without rules here, or no id). */
export function isWellFormedVatId(country: string, vatId: string | null | undefined): boolean {
  return !!vatId && VALIDATORS.has(country) && 'vatId' in checkVatId(country, vatId);
}
