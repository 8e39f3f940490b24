import { describe, expect, it } from 'vitest';
import { IBAN_LENGTHS, ibanProblem, maskIban, normaliseIban, SEPA_IBAN_COUNTRIES, sepaIbanProblem } from '../src/domain/iban.js';

describe('IBAN validation', () => {
  it.each([
    'DE89370400440532013000',
    'GB82WEST12345698765432',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'BE68539007547034',
    'AT611904300234573201',
    'CH9300762011623852957',
    'ES9121000418450200051332',
    'IT60X0542811101000000123456',
    'NO9386011117947',
    'MT84MALT011000012345MTLCAST001S',
    'LI21088100002324013AA',
    'PL61109010140000071219812874',
    'SE4550000000058398257466',
  ])('accepts %s', (iban) => {
    expect(ibanProblem(iban)).toBeUndefined();
  });

  it.each([
    ['DE89370400440532013001', 'one digit changed', /mod-97/],
    ['GB82WEST12345698765433', 'one digit changed', /mod-97/],
    ['FR1420041010050500013M02607', 'one digit changed', /mod-97/],
    ['NL92ABNA0417164300', 'check digits changed', /mod-97/],
    ['DE8937040044053201300', 'one character short', /22 characters for country DE; this one has 21/],
    ['DE893704004405320130000', 'one character too many', /22 characters for country DE; this one has 23/],
    ['NL91ABNA04171643000', 'too long for NL', /18 characters for country NL/],
    ['XX89370400440532013000', 'unknown country', /'XX' is not one/],
    ['US64SVBKUS6S3300958879', 'a country without IBANs', /'US' is not one/],
    ['12345678901234567890', 'no country code', /'12' is not one/],
    ['DEAB370400440532013000', 'letters in the check digits', /two check digits/],
    ['DE89-3704-0044-0532-0130-00', 'punctuation', /only letters A-Z and digits/],
    ['', 'empty', /is not one/],
  ])('rejects %s (%s)', (iban, _why, message) => {
    expect(ibanProblem(iban)).toMatch(message);
  });

  it('computes mod-97 on long IBANs exactly (no floating point)', () => {
    expect(ibanProblem('LC55HEMM000100010012001200023015')).toBeUndefined();
    expect(ibanProblem('LC55HEMM000100010012001200023016')).toMatch(/mod-97/);
    expect(ibanProblem('RU0204452560040702810412345678901')).toBeUndefined();
  });

  it('knows the lengths of the SEPA countries', () => {
    expect(IBAN_LENGTHS.get('DE')).toBe(22);
    expect(IBAN_LENGTHS.get('NO')).toBe(15);
    expect(IBAN_LENGTHS.get('MT')).toBe(31);
    for (const code of ['AT', 'BE', 'BG', 'CH', 'CY', 'CZ', 'DK', 'EE', 'ES', 'FI', 'FR', 'GB', 'GR', 'HR', 'HU', 'IE', 'IS', 'IT', 'LI', 'LT', 'LU', 'LV', 'MC', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK', 'SM', 'VA', 'AD']) {
      expect(IBAN_LENGTHS.has(code), code).toBe(true);
    }
  });
});

describe('IBANs of SEPA countries', () => {
  it.each([
    'DE89370400440532013000',
    'GB82WEST12345698765432',
    'CH9300762011623852957',
    'GI75NWBK000000007099453',
    'AD1200012030200359100100',
    'VA59001123000012345678',
    'MC5811222000010123456789030',
    'SM86U0322509800000000270100',
    'NO9386011117947',
    'ME25505000012345678951',
    'AL47212110090000000235698741',
    'MK07250120000058984',
    'MD24AG000225100013104168',
  ])('takes %s for SEPA direct debit', (iban) => {
    expect(ibanProblem(iban)).toBeUndefined();
    expect(sepaIbanProblem(iban)).toBeUndefined();
  });

  it.each([
    ['BR1800360305000010009795493C1', 'Brazil (BR)'],
    ['TR330006100519786457841326', '(TR)'],
    ['SA0380000000608010167519', 'Saudi Arabia (SA)'],
    ['FO6264600001631634', 'Faroe Islands (FO)'],
    ['XK051212012345678906', 'Kosovo (XK)'],
  ])('refuses the valid IBAN %s, naming its country', (iban, country) => {
    expect(ibanProblem(iban)).toBeUndefined();
    expect(sepaIbanProblem(iban)).toMatch(/^is an IBAN of /);
    expect(sepaIbanProblem(iban)).toContain(`${country}; SEPA direct debit takes IBANs of SEPA countries only`);
  });

  it('lists only countries that use IBANs', () => {
    for (const code of SEPA_IBAN_COUNTRIES) expect(IBAN_LENGTHS.has(code), code).toBe(true);
  });
});

describe('IBAN normalising and masking', () => {
  it('removes whitespace and upper-cases', () => {
    expect(normaliseIban(' de89 3704 0044 0532 0130 00 ')).toBe('DE89370400440532013000');
    expect(normaliseIban('fr14\t2004 1010 0505 0001 3m02 606')).toBe('FR1420041010050500013M02606');
  });

  it.each([
    ['DE89370400440532013000', 'DE89**************3000'],
    ['NO9386011117947', 'NO93*******7947'],
    ['FR1420041010050500013M02606', 'FR14*******************2606'],
  ])('masks %s as %s', (iban, masked) => {
    expect(maskIban(iban)).toBe(masked);
    expect(masked).toHaveLength(iban.length);
  });
});
