import { invalidMany, type Violation } from '../errors.js';
import { newUlid, ULID_RE, UUID_RE, uuidToUlid } from '../ids.js';
import type { BillingGroup } from '../schemas/catalogue.js';
import type { PageRequest } from '../schemas/common.js';
import type { Tx } from '../store/store.js';

export interface BillingGroupInput {
  name: string;
  type: BillingGroup['type'];
  customDay?: number | null | undefined;
  customMonth?: number | null | undefined;
}

/** customDay belongs to custom_day (and is required there); customMonth only refines custom_day. */
function dayViolations(input: BillingGroupInput): Violation[] {
  const violations: Violation[] = [];
  const customDay = input.customDay ?? null;
  const customMonth = input.customMonth ?? null;
  if (input.type === 'custom_day' && customDay === null) {
    violations.push({
      propertyPath: 'customDay',
      message: 'customDay is required when type is custom_day: the day of the month (1 to 28) billing periods start on',
      code: 'custom_day_required',
    });
  }
  if (input.type !== 'custom_day' && customDay !== null) {
    violations.push({
      propertyPath: 'customDay',
      message: `customDay is only for type custom_day (got type ${input.type}); omit it or use type custom_day`,
      code: 'custom_day_forbidden',
    });
  }
  if (input.type !== 'custom_day' && customMonth !== null) {
    violations.push({
      propertyPath: 'customMonth',
      message: `customMonth is only for type custom_day (got type ${input.type}); omit it or use type custom_day with a customDay`,
      code: 'custom_month_forbidden',
    });
  }
  return violations;
}

export async function createBillingGroup(tx: Tx, org: string, input: BillingGroupInput, now: Date): Promise<BillingGroup> {
  const violations = dayViolations(input);
  if (violations.length) throw invalidMany(violations);
  const at = now.toISOString();
  const group: BillingGroup = {
    id: newUlid(),
    name: input.name,
    type: input.type,
    customDay: input.customDay ?? null,
    customMonth: input.customMonth ?? null,
    createdAt: at,
    updatedAt: at,
  };
  await tx.billingSetup.insertBillingGroup(org, group);
  return group;
}

export async function listBillingGroups(tx: Tx, org: string, page: PageRequest) {
  return tx.billingSetup.listBillingGroups(org, page);
}

/**
 * The billing group a reference names: its ULID (any case) or the same 128 bits written as a UUID.
 * Undefined when the organisation has none, so the caller decides between 404 and 422.
 */
export async function findBillingGroup(tx: Tx, org: string, ref: string): Promise<BillingGroup | undefined> {
  let id: string;
  if (ULID_RE.test(ref)) id = ref.toUpperCase();
  else if (UUID_RE.test(ref)) id = uuidToUlid(ref);
  else return undefined;
  return tx.billingSetup.getBillingGroup(org, id);
}
