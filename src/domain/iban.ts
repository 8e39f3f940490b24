/**
 * IBANs (ISO 13616): normalising, validating and masking. The full IBAN is needed only for SEPA
 * collections; every response shows the masked form.
 */

/** IBAN length per country, from the SWIFT IBAN registry (SEPA countries and all others that use IBANs). */
export const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map([
  ['AD', 24], ['AE', 23], ['AL', 28], ['AT', 20], ['AZ', 28],
  ['BA', 20], ['BE', 16], ['BG', 22], ['BH', 22], ['BI', 27], ['BR', 29], ['BY', 28],
  ['CH', 21], ['CR', 22], ['CY', 28], ['CZ', 24],
  ['DE', 22], ['DJ', 27], ['DK', 18], ['DO', 28],
  ['EE', 20], ['EG', 29], ['ES', 24],
  ['FI', 18], ['FK', 18], ['FO', 18], ['FR', 27],
  ['GB', 22], ['GE', 22], ['GI', 23], ['GL', 18], ['GR', 27], ['GT', 28],
  ['HN', 28], ['HR', 21], ['HU', 28],
  ['IE', 22], ['IL', 23], ['IQ', 23], ['IS', 26], ['IT', 27],
  ['JO', 30],
  ['KW', 30], ['KZ', 20],
  ['LB', 28], ['LC', 32], ['LI', 21], ['LT', 20], ['LU', 20], ['LV', 21], ['LY', 25],
  ['MC', 27], ['MD', 24], ['ME', 22], ['MK', 19], ['MN', 20], ['MR', 27], ['MT', 31], ['MU', 30],
  ['NI', 28], ['NL', 18], ['NO', 15],
  ['OM', 23],
  ['PK', 24], ['PL', 28], ['PS', 29], ['PT', 25],
  ['QA', 29],
  ['RO', 24], ['RS', 22], ['RU', 33],
  ['SA', 24], ['SC', 31], ['SD', 18], ['SE', 24], ['SI', 19], ['SK', 24], ['SM', 27], ['SO', 23], ['ST', 25], ['SV', 28],
  ['TL', 23], ['TN', 24], ['TR', 26],
  ['UA', 29],
  ['VA', 22], ['VG', 24],
  ['XK', 20],
  ['YE', 30],
]);

/**
 * The IBAN country codes of the geographical scope of the SEPA schemes: the EPC's list of SEPA
 * scheme countries (EPC409-09, as extended in 2024 and 2025), the one place this project keeps it
 * (no maintained npm package the project depends on knows it; `ibantools`' `isSEPACountry` is not
 * installed). A SEPA direct debit can only be drawn on an account with one of these IBANs.
 *
 * - EU: AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK;
 * - EEA: IS LI NO; then CH, GB, MC, SM, AD, VA;
 * - joined 2024–2025: AL, ME (November 2024), MD, MK (March 2025), RS (2025);
 * - territories with IBANs of their own: GI (Gibraltar). The others the EPC lists bank with the
 *   IBANs of their country, so they are covered by its code: Guernsey, Jersey and the Isle of Man
 *   (GB); French Guiana, Guadeloupe, Martinique, Mayotte, Réunion, Saint Barthélemy, Saint Martin
 *   and Saint Pierre and Miquelon (FR); Åland (FI); the Azores and Madeira (PT); the Canary
 *   Islands, Ceuta and Melilla (ES).
 *
 * Not in SEPA although they use IBANs: the Faroe Islands (FO) and Greenland (GL), Kosovo (XK),
 * Bosnia and Herzegovina (BA), and every country outside Europe (BR, TR, SA, …).
 */
export const SEPA_IBAN_COUNTRIES: ReadonlySet<string> = new Set([
  'AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK',
  'IS', 'LI', 'NO',
  'CH', 'GB', 'MC', 'SM', 'AD', 'VA',
  'AL', 'ME', 'MD', 'MK', 'RS',
  'GI',
]);

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });

/**
 * Why a valid IBAN cannot be debited by SEPA direct debit (a phrase to follow the field name), or
 * undefined when its country is in the SEPA schemes' scope. Call it after `ibanProblem` passed.
 */
export function sepaIbanProblem(iban: string): string | undefined {
  const country = iban.slice(0, 2);
  if (SEPA_IBAN_COUNTRIES.has(country)) return undefined;
  const name = REGION_NAMES.of(country) ?? country;
  return `is an IBAN of ${name} (${country}); SEPA direct debit takes IBANs of SEPA countries only (the EU and EEA, Switzerland, the UK, Monaco, San Marino, Andorra, Vatican City, …)`;
}

/** The electronic form: whitespace removed, upper case (`de89 3704 …` → `DE893704…`). */
export function normaliseIban(raw: string): string {
  return raw.replace(/\s+/g, '').toUpperCase();
}

/**
 * ISO 7064 MOD 97-10 of a string of digits and letters (A = 10 … Z = 35), character by character so
 * no intermediate exceeds 4 digits. A valid IBAN or creditor identifier, rearranged, leaves 1.
 */
function mod97(rearranged: string): number {
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= 'A' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    remainder = (value >= 10 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder;
}

/**
 * Why a normalised IBAN is invalid (a phrase to follow the field name: "must have 22 characters …"),
 * or undefined when it is valid. The message never repeats the IBAN itself: error responses must not
 * carry it either.
 */
export function ibanProblem(iban: string): string | undefined {
  if (!/^[A-Z0-9]*$/.test(iban)) {
    return 'may contain only letters A-Z and digits (spaces are ignored), e.g. DE89 3704 0044 0532 0130 00';
  }
  const country = iban.slice(0, 2);
  const length = IBAN_LENGTHS.get(country);
  if (!/^[A-Z]{2}$/.test(country) || length === undefined) {
    return `must start with the code of a country that uses IBANs (DE, FR, GB, NL, …); '${country}' is not one`;
  }
  if (!/^[0-9]{2}$/.test(iban.slice(2, 4))) {
    return 'must have two check digits after the country code (characters 3 and 4), e.g. DE89…';
  }
  if (iban.length !== length) {
    return `must have ${length} characters for country ${country}; this one has ${iban.length}`;
  }
  if (mod97(iban.slice(4) + iban.slice(0, 4)) !== 1) {
    return 'fails the ISO 13616 mod-97 checksum: the check digits do not match the account number; check for a mistyped character';
  }
  return undefined;
}

/** The first 4 and last 4 characters with `*` between them: `DE89**************3000`. */
export function maskIban(iban: string): string {
  return `${iban.slice(0, 4)}${'*'.repeat(Math.max(0, iban.length - 8))}${iban.slice(-4)}`;
}

/**
 * Why a normalised SEPA creditor identifier is invalid (a phrase to follow the field name), or
 * undefined when it is valid. Its form (EPC262-08): country code, two check digits, a 3-character
 * creditor business code the check ignores, and the national identifier (at most 35 characters in
 * all); the check digits are ISO 7064 MOD 97-10 over national identifier + country code + check
 * digits, like an IBAN's. Example: DE98ZZZ09999999999.
 */
export function creditorIdentifierProblem(id: string): string | undefined {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{3}[A-Z0-9]{1,28}$/.test(id)) {
    return 'must be a country code, 2 check digits, a 3-character business code and the national identifier (8 to 35 letters A-Z and digits), e.g. DE98ZZZ09999999999';
  }
  if (mod97(id.slice(7) + id.slice(0, 4)) !== 1) {
    return 'fails the ISO 7064 mod-97 check: the check digits (characters 3 and 4) do not match the national identifier; check for a mistyped character';
  }
  return undefined;
}
