import { invalid, invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { AggregationType, Measurement, MeasurementType, Unit } from '../schemas/measurements.js';
import type { Tx } from '../store/store.js';

/**
 * A unit's name is unique regardless of the case of A-Z and of surrounding spaces ("GB" and "gb" would
 * be one unit to a reader), and has no surrounding whitespace of its own.
 */
export async function createUnit(tx: Tx, org: string, input: { name: string }, now: Date): Promise<Unit> {
  if (input.name.trim() !== input.name) {
    throw invalid('name', `name must not begin or end with whitespace (got ${JSON.stringify(input.name)}); send ${JSON.stringify(input.name.trim())}`, 'surrounding_whitespace');
  }
  const existing = await tx.catalogue.findUnitNamedAlike(org, input.name);
  if (existing) {
    const same = existing.name === input.name ? 'already exists' : `differs from it only in case or surrounding spaces`;
    throw invalid('name', `name must be unique: unit '${existing.name}' (id ${existing.id}) ${same}; use that unit`, 'unique');
  }
  const at = now.toISOString();
  const unit: Unit = { id: newId(), name: input.name, createdAt: at, updatedAt: at };
  await tx.catalogue.insertUnit(org, unit);
  return unit;
}

/** A unit by its id or its name, as measurements refer to units. */
export async function getUnit(tx: Tx, org: string, ref: string): Promise<Unit> {
  const unit = await tx.catalogue.findUnit(org, ref);
  if (!unit) throw notFound('Unit', ref);
  return unit;
}

/** `instant_metered` and `recurring` only make sense with `last_value` (interface 2.7). */
function typeViolation(type: MeasurementType, aggregationType: AggregationType): Violation | undefined {
  if (type !== 'metered' && aggregationType !== 'last_value') {
    return {
      propertyPath: 'aggregationType',
      message: `aggregationType must be last_value when type is ${type} (got ${aggregationType}); use type metered for other aggregations`,
      code: 'aggregation_type_mismatch',
    };
  }
  return undefined;
}

async function resolveUnit(tx: Tx, org: string, ref: string): Promise<Unit> {
  const unit = await tx.catalogue.findUnit(org, ref);
  if (!unit) {
    throw invalid('unit', `unit '${ref}' does not exist; pass the id or name of a unit from list_units, or create it with create_unit`, 'not_found');
  }
  return unit;
}

async function assertCodeFree(tx: Tx, org: string, code: string, exceptId?: string): Promise<void> {
  const other = await tx.catalogue.findMeasurementByCode(org, code);
  if (other && other.id !== exceptId) {
    throw invalid('code', `code must be unique: measurement ${other.id} already has the code '${code}'`, 'unique');
  }
}

export interface MeasurementInput {
  unit: string;
  code: string;
  description?: string | null | undefined;
  aggregationType: AggregationType;
  fairBilling: boolean;
  type: MeasurementType;
}

export async function createMeasurement(tx: Tx, org: string, input: MeasurementInput, now: Date): Promise<Measurement> {
  const mismatch = typeViolation(input.type, input.aggregationType);
  if (mismatch) throw invalidMany([mismatch]);
  const unit = await resolveUnit(tx, org, input.unit);
  await assertCodeFree(tx, org, input.code);
  const at = now.toISOString();
  const m: Measurement = {
    id: newId(),
    unit: { id: unit.id, name: unit.name },
    code: input.code,
    description: input.description ?? null,
    aggregationType: input.aggregationType,
    fairBilling: input.fairBilling,
    type: input.type,
    createdAt: at,
    updatedAt: at,
  };
  await tx.catalogue.insertMeasurement(org, m);
  return m;
}

export async function getMeasurement(tx: Tx, org: string, id: string): Promise<Measurement> {
  const m = await tx.catalogue.getMeasurement(org, id);
  if (!m) throw notFound('Measurement', id);
  return m;
}

export async function listMeasurements(tx: Tx, org: string, page: PageRequest) {
  return tx.catalogue.listMeasurements(org, page);
}

/** PUT: omitted fields stay; aggregationType and type may be repeated but never changed. */
export async function updateMeasurement(
  tx: Tx,
  org: string,
  id: string,
  patch: Partial<MeasurementInput>,
  now: Date,
): Promise<Measurement> {
  const current = await getMeasurement(tx, org, id);
  const violations: Violation[] = [];
  for (const field of ['aggregationType', 'type'] as const) {
    const value = patch[field];
    if (value !== undefined && value !== current[field]) {
      violations.push({
        propertyPath: field,
        message: `${field} cannot change after creation (it is ${current[field]}); create a new measurement instead`,
        code: 'immutable',
      });
    }
  }
  if (violations.length) throw invalidMany(violations);
  const next: Measurement = { ...current, updatedAt: now.toISOString() };
  if (patch.unit !== undefined) {
    const unit = await resolveUnit(tx, org, patch.unit);
    next.unit = { id: unit.id, name: unit.name };
  }
  if (patch.code !== undefined && patch.code !== current.code) {
    await assertCodeFree(tx, org, patch.code, id);
    next.code = patch.code;
  }
  if (patch.description !== undefined) next.description = patch.description;
  if (patch.fairBilling !== undefined) next.fairBilling = patch.fairBilling;
  await tx.catalogue.updateMeasurement(org, next);
  return next;
}
