import { invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { Tax, TaxGroup } from '../schemas/taxGroups.js';
import type { Tx } from '../store/store.js';
import { COUNTRY_CODES } from './countries.js';

export interface TaxInput {
  code: string;
  rate: number;
  countryCode: string;
  description?: string | null | undefined;
  validFrom: string;
}

export interface TaxGroupInput {
  internalDescription: string;
  reverseChargeType: TaxGroup['reverseChargeType'];
  type: TaxGroup['type'];
  taxes: TaxInput[];
}

/**
 * A rate's shortest decimal form (what `String` gives) with at most 4 fractional digits. Any number
 * JavaScript writes with an exponent (1e-7) has more than 4, so it fails too.
 */
const RATE_FORM = /^\d+(\.\d{1,4})?$/;

const taxKey = (t: { countryCode: string; validFrom: string }) => `${t.countryCode} ${t.validFrom}`;

/** Rules the input schema cannot express: rate precision, assigned country codes, one rate per (country, validFrom). */
function taxViolations(taxes: TaxInput[]): Violation[] {
  const violations: Violation[] = [];
  const firstIndex = new Map<string, number>();
  taxes.forEach((t, i) => {
    if (!RATE_FORM.test(String(t.rate))) {
      violations.push({
        propertyPath: `taxes[${i}].rate`,
        message: `taxes[${i}].rate must have at most 4 fractional digits (got ${t.rate}), e.g. 19, 8.1 or 5.5`,
        code: 'rate_precision',
      });
    }
    if (!COUNTRY_CODES.has(t.countryCode)) {
      violations.push({
        propertyPath: `taxes[${i}].countryCode`,
        message: `taxes[${i}].countryCode must be an officially assigned ISO 3166-1 alpha-2 code (got ${t.countryCode}), e.g. DE, AT, GB`,
        code: 'unknown_country',
      });
    }
    const earlier = firstIndex.get(taxKey(t));
    if (earlier === undefined) {
      firstIndex.set(taxKey(t), i);
    } else {
      violations.push({
        propertyPath: `taxes[${i}].validFrom`,
        message: `taxes[${i}].validFrom collides with taxes[${earlier}]: both set the ${t.countryCode} rate from ${t.validFrom}; a tax group holds one rate per (countryCode, validFrom)`,
        code: 'unique',
      });
    }
  });
  return violations;
}

/** New entries get new ids; an entry replacing one with the same (countryCode, validFrom) keeps its id. */
function toTaxes(input: TaxInput[], previous: Tax[]): Tax[] {
  const violations = taxViolations(input);
  if (violations.length) throw invalidMany(violations);
  const ids = new Map(previous.map((t) => [taxKey(t), t.id]));
  return input.map((t) => ({
    id: ids.get(taxKey(t)) ?? newId(),
    code: t.code,
    rate: t.rate,
    countryCode: t.countryCode,
    description: t.description ?? null,
    validFrom: t.validFrom,
  }));
}

export async function createTaxGroup(tx: Tx, org: string, input: TaxGroupInput, now: Date): Promise<TaxGroup> {
  const taxes = toTaxes(input.taxes, []);
  const at = now.toISOString();
  const group: TaxGroup = {
    id: newId(),
    internalDescription: input.internalDescription,
    reverseChargeType: input.reverseChargeType,
    type: input.type,
    taxes,
    createdAt: at,
    updatedAt: at,
  };
  await tx.catalogue.insertTaxGroup(org, group);
  return group;
}

export async function getTaxGroup(tx: Tx, org: string, id: string): Promise<TaxGroup> {
  const group = await tx.catalogue.getTaxGroup(org, id);
  if (!group) throw notFound('Tax group', id);
  return group;
}

export async function listTaxGroups(tx: Tx, org: string, page: PageRequest) {
  return tx.catalogue.listTaxGroups(org, page);
}

/** PUT: omitted fields stay; `taxes`, when given, replaces the whole list. */
export async function updateTaxGroup(
  tx: Tx,
  org: string,
  id: string,
  patch: Partial<TaxGroupInput>,
  now: Date,
): Promise<TaxGroup> {
  const current = await getTaxGroup(tx, org, id);
  const next: TaxGroup = { ...current, updatedAt: now.toISOString() };
  if (patch.internalDescription !== undefined) next.internalDescription = patch.internalDescription;
  if (patch.reverseChargeType !== undefined) next.reverseChargeType = patch.reverseChargeType;
  if (patch.type !== undefined) next.type = patch.type;
  if (patch.taxes !== undefined) next.taxes = toTaxes(patch.taxes, current.taxes);
  await tx.catalogue.updateTaxGroup(org, next);
  return next;
}
