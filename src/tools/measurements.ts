import { z } from 'zod';
import {
  createMeasurement,
  createUnit,
  getMeasurement,
  getUnit,
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
  .describe('Unique code, e.g. api_calls.');
const description = z
  .string()
  .max(255, { message: 'must be at most 255 characters' })
  .nullable()
  .describe('Shown in the usage summary on the invoice.');
const aggregationType = z
  .enum(AGGREGATION_TYPES)
  .describe('How values combine per billing interval (count_unique: distinct value ids). Fixed once created.');
const type = z
  .enum(MEASUREMENT_TYPES)
  .describe(
    'metered: resets each interval; recurring: the last value carries over; instant_metered: billed at each push. The last two need aggregationType last_value. Fixed once created.',
  );
const fairBilling = z
  .boolean()
  .describe('true: billed time-weighted by days active; false: the whole interval at the aggregated value.');
const unitRef = z.string().min(1).max(255).describe('Id or name of a unit (list_units).');

const DEPRECATED = 'Deprecated: still works, but usage metrics on products replace it.';

export const measurementOperations = [
  defineOperation({
    name: 'create_unit',
    title: 'Create unit',
    description:
      'Create a unit of measure for measurements, e.g. "API call" or "GB".',
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/units',
    permission: 'measurement:write',
    kind: 'create',
    input: z.strictObject({ name: unitName.describe('Unique name, case aside; no surrounding spaces.') }),
    output: unitSchema,
    location: (u) => `/catalogue/units/${u.id}`,
    handler: (ctx, input) => createUnit(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_units',
    title: 'List units',
    description: 'List the units of measure of the organisation.',
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
    name: 'get_unit',
    title: 'Get unit',
    description: 'Get one unit of measure by its id or name.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/units/{id}',
    permission: 'measurement:read',
    kind: 'read',
    input: z.strictObject({ id: unitRef }),
    output: unitSchema,
    handler: (ctx, input) => getUnit(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'create_measurement',
    title: 'Create measurement',
    description: `${DEPRECATED} Create a measurement: what usage is recorded against.`,
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
      fairBilling: fairBilling.default(false),
      type,
    }),
    output: measurementSchema,
    handler: (ctx, input) => createMeasurement(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_measurements',
    title: 'List measurements',
    description: `${DEPRECATED} List the measurements.`,
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
    description: `${DEPRECATED} Get one measurement.`,
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
    description: `${DEPRECATED} Change a measurement; omitted fields stay unchanged.`,
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
