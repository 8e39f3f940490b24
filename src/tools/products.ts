import { z } from 'zod';
import {
  createPricePlan,
  createProduct,
  getPricePlanWithHistory,
  getProduct,
  listPricePlans,
  listProducts,
  updatePricePlan,
  updateProduct,
} from '../domain/products.js';
import { defineOperation } from '../registry/operation.js';
import {
  customPricePlanShape,
  INVOICE_VISIBILITIES,
  PRICE_PLAN_STATUSES,
  PROPERTY_NAME_RE,
  USAGE_AGGREGATIONS,
  USAGE_METRIC_TYPES,
  pricePlanDetailSchema,
  pricePlanInputShape,
  pricePlanSchema,
  PRODUCT_TYPES,
  productSchema,
  usageMetricSchema,
} from '../schemas/catalogue.js';
import { listOf, MAJOR, pageInput, pathId, text255, paged } from '../schemas/common.js';
import { listView, pricePlanRow, pricePlanUpdateView, productRow, productView } from '../schemas/views.js';

const type = z.enum(PRODUCT_TYPES).describe('product: a good or licence; service: work performed.');
const measurement = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .describe(
    'Deprecated: a unit on the product replaces it. Id of the measurement billed (list_measurements); per_unit price plans need it.',
  );
const propertyName = z
  .string()
  .refine((v) => PROPERTY_NAME_RE.test(v), { message: 'must be 1 to 64 letters, digits, _ or -' })
  .describe('An event property.');
const usageMetric = z
  .strictObject({
    eventName: z.string().min(1).max(255).describe('Events it bills (ingest_usage_events).'),
    aggregation: z.enum(USAGE_AGGREGATIONS).describe("Of the interval's events: their count, or of property."),
    property: propertyName.nullable().optional().describe('Property aggregated; not for count.'),
    filters: z
      .array(z.strictObject({ property: propertyName, values: z.array(z.union([z.string().max(255), z.number()])).min(1).max(100).describe('Values it may equal.') }))
      .max(20)
      .optional()
      .describe('Events must match every filter.'),
    type: z.enum(USAGE_METRIC_TYPES).default('metered').describe('metered: per interval; recurring: from the item start.'),
  })
  .nullable()
  .describe('Bills its usage events; not with measurement.');
const unit = z.string().min(1).max(255).nullable().describe('Unit of its quantity as shown, e.g. "API call"; free text.');
const taxGroup = z.string().min(1).max(255).nullable().describe('Id of the tax group setting its tax rates (list_tax_groups).');
const name = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .describe('Name, shown on invoices.');
const description = z
  .string()
  .max(1000, { message: 'must be at most 1000 characters' })
  .nullable()
  .describe('Longer text, at most 1000 characters.');
const internalName = text255.nullable().describe('Internal name, never shown to customers.');
const costCentre = text255.nullable().describe('Cost centre for accounting exports.');
const costCentre2 = text255.nullable().describe('Second cost centre for accounting exports.');
const invoiceVisibility = z
  .enum(INVOICE_VISIBILITIES)
  .describe('When its invoice lines show: always; if_not_zero or never: lines of 0 are left out (a charged line always shows).');
const customFields = z
  .record(z.string(), z.unknown())
  .describe(
    'Values of the configured product custom fields by key (list_custom_fields), e.g. {"sku": "A-1"}; dates as YYYY-MM-DD.',
  );

/** A summary row names the metric's event, so that a metered product does not pass for an unmetered one. */
const productListRow = productRow.extend({
  usageMetric: usageMetricSchema.pick({ eventName: true }).nullable().describe('Event name it bills, or null.'),
});

export const productOperations = [
  defineOperation({
    name: 'create_product',
    title: 'Create product',
    description: 'Create a catalogue product, what is sold as an invoice line; then add its prices (create_price_plan) and use it in plans.',
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/products',
    permission: 'product:write',
    kind: 'create',
    input: z.strictObject({
      type: type.default('product'),
      measurement: measurement.optional(),
      usageMetric: usageMetric.optional(),
      unit: unit.optional(),
      taxGroup: taxGroup.optional(),
      name,
      description: description.optional(),
      internalName: internalName.optional(),
      invoiceVisibility: invoiceVisibility.default('always'),
      costCentre: costCentre.optional(),
      costCentre2: costCentre2.optional(),
      customFields: customFields.optional(),
    }),
    output: productSchema,
    mcp: { output: productView },
    handler: (ctx, input) => createProduct(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_products',
    title: 'List products',
    description:
      'List the catalogue products. Use it to find a product id.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/products',
    permission: 'product:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(productSchema),
    mcp: listView(productListRow),
    handler: (ctx, input) => paged(input, (page) => listProducts(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_product',
    title: 'Get product',
    description: 'Get one product with its measurement and tax group.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/products/{id}',
    permission: 'product:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('product') }),
    output: productSchema,
    mcp: { output: productView },
    handler: (ctx, input) => getProduct(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_product',
    title: 'Update product',
    description: 'Change a product; omitted fields stay unchanged, null clears a field, customFields replaces the whole map.',
    toolset: 'catalogue',
    method: 'PUT',
    path: '/catalogue/products/{id}',
    permission: 'product:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('product'),
      type: type.optional(),
      measurement: measurement.optional(),
      usageMetric: usageMetric.optional(),
      unit: unit.optional(),
      taxGroup: taxGroup.optional(),
      name: name.optional(),
      description: description.optional(),
      internalName: internalName.optional(),
      invoiceVisibility: invoiceVisibility.optional(),
      costCentre: costCentre.optional(),
      costCentre2: costCentre2.optional(),
      customFields: customFields.optional(),
    }),
    output: productSchema,
    mcp: { output: productView },
    handler: (ctx, { id, ...patch }) => updateProduct(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'create_price_plan',
    title: 'Create price plan',
    description:
      'Add a price to a product, to use in plans (create_plan), per billing interval: flat_fee, per_unit, package, graduated or volume (see type).',
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/products/{id}/price-plans',
    permission: 'product:write',
    kind: 'create',
    location: (p) => `/catalogue/price-plans/${p.id}`,
    input: z.strictObject({ id: pathId('product'), ...pricePlanInputShape }),
    output: pricePlanSchema,
    handler: (ctx, { id, ...input }) => createPricePlan(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_price_plans',
    title: 'List price plans',
    description:
      "List a product's catalogue price plans (not custom ones made for single subscriptions), optionally by status.",
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/products/{id}/price-plans',
    permission: 'product:read',
    kind: 'list',
    input: z.strictObject({
      id: pathId('product'),
      ...pageInput,
      status: z.enum(PRICE_PLAN_STATUSES).optional().describe('Only price plans with this status.'),
    }),
    output: listOf(pricePlanSchema),
    mcp: listView(pricePlanRow),
    handler: (ctx, input) => paged(input, (page) => listPricePlans(ctx.tx, ctx.org, input.id, { status: input.status }, page)),
  }),
  defineOperation({
    name: 'get_price_plan',
    title: 'Get price plan',
    description: 'Get one price plan with its price history, also a custom one made for a subscription item (custom true).',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/price-plans/{id}',
    permission: 'product:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('price plan') }),
    output: pricePlanDetailSchema,
    handler: (ctx, input) => getPricePlanWithHistory(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_price_plan',
    title: 'Update price plan',
    description:
      'Change a price plan; omitted fields stay. A new price applies to billing periods starting from now on.',
    toolset: 'catalogue',
    method: 'PUT',
    path: '/catalogue/price-plans/{id}',
    permission: 'product:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('price plan'),
      status: z
        .enum(PRICE_PLAN_STATUSES)
        .optional()
        .describe('Only active ones take new items; existing items keep billing.'),
      internalName: customPricePlanShape.internalName,
      price: z.strictObject({ amount: customPricePlanShape.price.unwrap().shape.amount.describe(MAJOR) }).optional().describe(`amount: ${MAJOR}; not for graduated or volume plans.`),
    }),
    output: pricePlanSchema,
    mcp: { output: pricePlanUpdateView },
    handler: (ctx, { id, ...patch }) => updatePricePlan(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
];
