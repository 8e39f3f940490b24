import { z } from 'zod';
import {
  createMeasurement,
  createUnit,
  getMeasurement,
  listMeasurements,
  updateMeasurement,
} from '../domain/measurements.js';
import { defineOperation } from '../registry/operation.js';
import { listOf, pageInput, pathId, paged } from '../schemas/common.js';
import { AGGREGATION_TYPES, MEASUREMENT_TYPES, measurementSchema, unitSchema } from '../schemas/measurements.js';
import { listView, measurementRow } from '../schemas/views.js';

const unitName = z.string().min(1).max(255, { message: 'must be 1 to 255 characters' });
const code = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .describe('Unique code of the measurement in this organisation, 1 to 255 characters, e.g. api_calls.');
const description = z
  .string()
  .max(255, { message: 'must be at most 255 characters' })
  .nullable()
  .describe('Shown in the usage summary on the invoice; at most 255 characters.');
const aggregationType = z
  .enum(AGGREGATION_TYPES)
  .describe(
    'How values combine per billing interval: count, count_unique (distinct value ids), max, sum, last_value, average. Immutable after creation.',
  );
const type = z
  .enum(MEASUREMENT_TYPES)
  .describe(
    'metered (resets each billing interval), recurring (last value carries over; needs last_value), instant_metered (billed at each push; needs last_value). Immutable after creation.',
  );
const fairBilling = z
  .boolean()
  .describe('true: bill time-weighted for the days active; false: bill the whole interval at the aggregated value.');
const unitRef = z.string().min(1).max(255).describe('Id or name of an existing unit (see list_units / create_unit).');

const DEPRECATED =
  'Deprecated: the measurement API is being replaced by usage metrics on products (interface section 9); it keeps working.';

export const measurementOperations = [
  defineOperation({
    name: 'create_unit',
    title: 'Create unit',
    description:
      'Create a unit of measure (e.g. "API call", "GB") that measurements refer to. Use before create_measurement when list_units has no fitting unit. Rejected: a name already used (422).',
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/units',
    permission: 'measurement:write',
    kind: 'create',
    input: z.strictObject({ name: unitName.describe('Name of the unit, unique, 1 to 255 characters.') }),
    output: unitSchema,
    location: (u) => `/catalogue/units/${u.id}`,
    handler: (ctx, input) => createUnit(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_units',
    title: 'List units',
    description: 'List the units of measure of the organisation, oldest first, paginated (page, limit 0-100).',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/units',
    permission: 'measurement:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(unitSchema),
    handler: (ctx, input) => paged(input, (page) => ctx.tx.catalogue.listUnits(ctx.org, page)),
  }),
  defineOperation({
    name: 'create_measurement',
    title: 'Create measurement',
    description: `${DEPRECATED} Create a measurement (what usage is recorded against, e.g. api_calls). Rules: code unique (1-255 chars); unit must exist; type recurring or instant_metered requires aggregationType last_value; aggregationType and type can never change later.`,
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/measurements',
    permission: 'measurement:write',
    kind: 'create',
    deprecated: true,
    input: z.strictObject({
      unit: unitRef,
      code,
      description: description.optional(),
      aggregationType,
      fairBilling: fairBilling.default(false).describe('See fairBilling; default false.'),
      type,
    }),
    output: measurementSchema,
    handler: (ctx, input) => createMeasurement(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_measurements',
    title: 'List measurements',
    description: `${DEPRECATED} List the measurement catalogue, oldest first, paginated (page, limit 0-100).`,
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/measurements',
    permission: 'measurement:read',
    kind: 'list',
    deprecated: true,
    input: z.strictObject({ ...pageInput }),
    output: listOf(measurementSchema),
    mcp: listView(measurementRow),
    handler: (ctx, input) => paged(input, (page) => listMeasurements(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_measurement',
    title: 'Get measurement',
    description: `${DEPRECATED} Get one measurement by id.`,
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/measurements/{id}',
    permission: 'measurement:read',
    kind: 'read',
    deprecated: true,
    input: z.strictObject({ id: pathId('measurement') }),
    output: measurementSchema,
    handler: (ctx, input) => getMeasurement(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_measurement',
    title: 'Update measurement',
    description: `${DEPRECATED} Change a measurement's unit, code, description or fairBilling; omitted fields stay unchanged. aggregationType and type may be sent only with their current value: changing them is rejected (422).`,
    toolset: 'catalogue',
    method: 'PUT',
    path: '/catalogue/measurements/{id}',
    permission: 'measurement:write',
    kind: 'update',
    deprecated: true,
    input: z.strictObject({
      id: pathId('measurement'),
      unit: unitRef.optional(),
      code: code.optional(),
      description: description.optional(),
      aggregationType: aggregationType.optional(),
      fairBilling: fairBilling.optional(),
      type: type.optional(),
    }),
    output: measurementSchema,
    handler: (ctx, { id, ...patch }) => updateMeasurement(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
