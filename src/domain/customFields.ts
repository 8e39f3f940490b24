import { invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { CustomField, CustomFieldEntity } from '../schemas/catalogue.js';
import type { PageRequest } from '../schemas/common.js';
import type { Tx } from '../store/store.js';

export interface CustomFieldInput {
  key: string;
  entity: CustomFieldEntity;
  type: CustomField['type'];
  options?: string[] | null | undefined;
  required: boolean;
}

export const CUSTOM_STRING_MAX = 255;

function optionViolations(input: CustomFieldInput): Violation[] {
  const options = input.options ?? null;
  if (input.type !== 'select') {
    return options === null
      ? []
      : [
          {
            propertyPath: 'options',
            message: `options are only for type select (got type ${input.type}); omit options or use type select`,
            code: 'options_forbidden',
          },
        ];
  }
  if (options === null || options.length === 0) {
    return [
      {
        propertyPath: 'options',
        message: 'options are required for type select: give a non-empty array of distinct strings, e.g. ["small", "large"]',
        code: 'options_required',
      },
    ];
  }
  const violations: Violation[] = [];
  const seen = new Map<string, number>();
  options.forEach((option, i) => {
    const first = seen.get(option);
    if (first === undefined) seen.set(option, i);
    else {
      violations.push({
        propertyPath: `options[${i}]`,
        message: `options[${i}] repeats options[${first}] ('${option}'); every option must be distinct`,
        code: 'unique',
      });
    }
  });
  return violations;
}

export async function createCustomField(tx: Tx, org: string, input: CustomFieldInput, now: Date): Promise<CustomField> {
  const violations = optionViolations(input);
  const existing = await tx.billingSetup.findCustomField(org, input.entity, input.key);
  if (existing) {
    violations.push({
      propertyPath: 'key',
      message: `key must be unique per entity: the ${input.entity} custom field '${input.key}' already exists (id ${existing.id})`,
      code: 'unique',
    });
  }
  if (violations.length) throw invalidMany(violations);
  const field: CustomField = {
    id: newId(),
    key: input.key,
    entity: input.entity,
    type: input.type,
    options: input.type === 'select' ? (input.options ?? null) : null,
    required: input.required,
    createdAt: now.toISOString(),
  };
  await tx.billingSetup.insertCustomField(org, field);
  return field;
}

export async function listCustomFields(
  tx: Tx,
  org: string,
  filter: { entity?: CustomFieldEntity | undefined },
  page: PageRequest,
) {
  return tx.billingSetup.listCustomFields(org, filter, page);
}

export async function deleteCustomField(tx: Tx, org: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await tx.billingSetup.deleteCustomField(org, id))) throw notFound('Custom field', id);
  return { id, deleted: true };
}

const DATE_FORM = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written YYYY-MM-DD (2026-02-30 is not one). */
function isCalendarDate(value: string): boolean {
  const m = DATE_FORM.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** What is wrong with `value` for the field, or undefined when it fits. */
function typeProblem(field: CustomField, value: unknown): string | undefined {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' && value.length <= CUSTOM_STRING_MAX
        ? undefined
        : `must be a string of at most ${CUSTOM_STRING_MAX} characters`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number (a JSON number, not a string)';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be a boolean, true or false';
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? undefined : 'must be a calendar date written YYYY-MM-DD, e.g. 2026-01-31';
    case 'select': {
      const options = field.options ?? [];
      return typeof value === 'string' && options.includes(value)
        ? undefined
        : `must be one of ${options.map((o) => `'${o}'`).join(', ')}`;
    }
  }
}

const show = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

/** A field's value is missing without its key, and a string field's also when it is blank ("" or only whitespace). */
function missing(field: CustomField, values: Record<string, unknown>): boolean {
  const value = values[field.key];
  return !Object.hasOwn(values, field.key) || (field.type === 'string' && typeof value === 'string' && value.trim() === '');
}

/**
 * Violations of a custom-field map against the configuration of the entity, each at
 * `customFields.<key>`: keys that are not configured, values of the wrong type, required keys missing.
 */
export async function validateCustomFields(
  tx: Tx,
  org: string,
  entity: CustomFieldEntity,
  values: Record<string, unknown>,
): Promise<Violation[]> {
  const fields = await tx.billingSetup.customFieldsOf(org, entity);
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const configured = fields.length
    ? `the configured ${entity} keys are ${fields.map((f) => f.key).join(', ')}`
    : `no ${entity} custom fields are configured`;
  const violations: Violation[] = [];
  for (const [key, value] of Object.entries(values)) {
    const field = byKey.get(key);
    if (!field) {
      violations.push({
        propertyPath: `customFields.${key}`,
        message: `customFields.${key} is not a custom field of ${entity}s: ${configured} (create_custom_field adds one)`,
        code: 'unknown_custom_field',
      });
      continue;
    }
    const problem = typeProblem(field, value);
    if (problem) {
      violations.push({
        propertyPath: `customFields.${key}`,
        message: `customFields.${key} ${problem} (got ${show(value)})`,
        code: 'custom_field_type',
      });
    }
  }
  for (const field of fields) {
    if (field.required && missing(field, values)) {
      violations.push({
        propertyPath: `customFields.${field.key}`,
        message: `customFields.${field.key} is required: every ${entity} needs a value for this ${field.type} custom field${field.type === 'string' ? ' (blank text is no value)' : ''}`,
        code: 'custom_field_required',
      });
    }
  }
  return violations;
}
