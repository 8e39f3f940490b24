import { z } from 'zod';
import {
  createPricePlan,
  createProduct,
  getPricePlan,
  getProduct,
  listPricePlans,
  listProducts,
  updateProduct,
} from '../domain/products.js';
import { defineOperation } from '../registry/operation.js';
import {
  INVOICE_VISIBILITIES,
  PRICE_PLAN_STATUSES,
  pricePlanInputShape,
  pricePlanSchema,
  PRODUCT_TYPES,
  productSchema,
} from '../schemas/catalogue.js';
import { listOf, pageInput, pathId, text255, paged } from '../schemas/common.js';
import { listView, pricePlanRow, productRow, productView } from '../schemas/views.js';

const type = z
  .enum(PRODUCT_TYPES)
  .describe('product (a good or licence) or service (work performed); any other value is rejected.');
const measurement = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .describe(
    'Deprecated (interface section 9: the measurement property is being replaced by a unit on the product; it keeps working). Id of the measurement this product bills usage of (list_measurements), or null for none. Needed for per_unit price plans; it cannot be removed while the product has one. An unknown id is rejected.',
  );
const taxGroup = z
  .string()
  .min(1)
  .max(255)
  .nullable()
  .describe('Id of the tax group that sets the tax rates of this product (list_tax_groups), or null for none. An unknown id is rejected.');
const name = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .describe('Name of the product as shown on invoices, 1 to 255 characters.');
const description = z
  .string()
  .max(1000, { message: 'must be at most 1000 characters' })
  .nullable()
  .describe('Longer text about the product; at most 1000 characters, null for none.');
const nullableText = (what: string) => text255.nullable().describe(`${what}; at most 255 characters, null for none.`);
const internalName = nullableText('Name shown only internally, never to customers');
const costCentre = nullableText('Cost centre booked in the accounting export');
const costCentre2 = nullableText('Second cost centre booked in the accounting export');
const invoiceVisibility = z
  .enum(INVOICE_VISIBILITIES)
  .describe('When the product appears as a line on invoices: always, never, or if_not_zero (only when its amount is not 0).');
const customFields = z
  .record(z.string(), z.unknown())
  .describe(
    'Values of the product custom fields (list_custom_fields with entity product), by key, e.g. {"sku": "A-1"}. Rejected: keys that are not configured, values of the wrong type (string; number; boolean; date as YYYY-MM-DD; select: one of its options), and a missing required key.',
  );

const PRODUCT_RULES =
  'Rejected (422): name empty or over 255 characters, description over 1000, internalName, costCentre or costCentre2 over 255, an unknown measurement or taxGroup id, custom field values that do not fit the configuration (unknown key, wrong type, required key missing).';

export const productOperations = [
  defineOperation({
    name: 'create_product',
    title: 'Create product',
    description: `Create a catalogue product: what is sold and shows up as an invoice line. Add prices with create_price_plan afterwards, then use the product in plans (create_plan). type defaults to product, invoiceVisibility to always. ${PRODUCT_RULES}`,
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/products',
    permission: 'product:write',
    kind: 'create',
    input: z.strictObject({
      type: type.default('product').describe(`${type.description} Default product.`),
      measurement: measurement.optional(),
      taxGroup: taxGroup.optional(),
      name,
      description: description.optional(),
      internalName: internalName.optional(),
      invoiceVisibility: invoiceVisibility.default('always').describe(`${invoiceVisibility.description} Default always.`),
      costCentre: costCentre.optional(),
      costCentre2: costCentre2.optional(),
      customFields: customFields.optional().describe(`${customFields.description} Default {}.`),
    }),
    output: productSchema,
    mcp: { output: productView },
    handler: (ctx, input) => createProduct(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_products',
    title: 'List products',
    description:
      'List the catalogue products of the organisation with their measurement and tax group, oldest first, paginated (page, limit 0-100). Use it to find a product id.',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/products',
    permission: 'product:read',
    kind: 'list',
    input: z.strictObject({ ...pageInput }),
    output: listOf(productSchema),
    mcp: listView(productRow),
    handler: (ctx, input) => paged(input, (page) => listProducts(ctx.tx, ctx.org, page)),
  }),
  defineOperation({
    name: 'get_product',
    title: 'Get product',
    description: 'Get one product by id, with its measurement and tax group objects. An unknown id is a 404.',
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
    description: `Change a product. Omitted fields stay unchanged; null clears measurement, taxGroup, description, internalName, costCentre or costCentre2; customFields, when given, replaces the whole map. ${PRODUCT_RULES} Also rejected: measurement null while the product has per_unit price plans. An unknown id is a 404.`,
    toolset: 'catalogue',
    method: 'PUT',
    path: '/catalogue/products/{id}',
    permission: 'product:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('product'),
      type: type.optional(),
      measurement: measurement.optional(),
      taxGroup: taxGroup.optional(),
      name: name.optional(),
      description: description.optional(),
      internalName: internalName.optional(),
      invoiceVisibility: invoiceVisibility.optional(),
      costCentre: costCentre.optional(),
      costCentre2: costCentre2.optional(),
      customFields: customFields.optional().describe(`${customFields.description} Replaces the stored map as a whole.`),
    }),
    output: productSchema,
    mcp: { output: productView },
    handler: (ctx, { id, ...patch }) => updateProduct(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'create_price_plan',
    title: 'Create price plan',
    description:
      'Add a price to a product: type (flat_fee or per_unit), currency, amount in major units and billing interval. Use it before create_plan, whose charges and addons each name a product and one of its price plans. Defaults: status active, payInAdvance true, applyTrial and proRata false, freeUnits 0, showPricePerInterval = billingInterval. Rejected (422): per_unit for a product without a measurement; a currencyCode that is not an upper-case ISO 4217 code; an amount below 0 or with more fractional digits than the minor unit of the currency (EUR 2, JPY 0, KWD 3); a billingInterval or showPricePerInterval not of the form 1-999 + D/W/M/Y (1M, 12M, 1Y, 2W); freeUnits below 0 or fractional. An unknown product id is a 404.',
    toolset: 'catalogue',
    method: 'POST',
    path: '/catalogue/products/{id}/price-plans',
    permission: 'product:write',
    kind: 'create',
    location: (p) => `/catalogue/price-plans/${p.id}`,
    input: z.strictObject({ id: pathId('product the price plan belongs to'), ...pricePlanInputShape }),
    output: pricePlanSchema,
    handler: (ctx, { id, ...input }) => createPricePlan(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_price_plans',
    title: 'List price plans',
    description:
      "List a product's catalogue price plans (not the custom ones made for single subscriptions), oldest first, paginated (page, limit 0-100); optionally only those with a given status. inUse tells whether a plan uses the price plan. An unknown product id is a 404.",
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/products/{id}/price-plans',
    permission: 'product:read',
    kind: 'list',
    input: z.strictObject({
      id: pathId('product'),
      ...pageInput,
      status: z.enum(PRICE_PLAN_STATUSES).optional().describe('Only price plans with this status: active, inactive or archived.'),
    }),
    output: listOf(pricePlanSchema),
    mcp: listView(pricePlanRow),
    handler: (ctx, input) => paged(input, (page) => listPricePlans(ctx.tx, ctx.org, input.id, { status: input.status }, page)),
  }),
  defineOperation({
    name: 'get_price_plan',
    title: 'Get price plan',
    description: 'Get one price plan by id, a catalogue one or a custom one made for a subscription item (custom true).',
    toolset: 'catalogue',
    method: 'GET',
    path: '/catalogue/price-plans/{id}',
    permission: 'product:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('price plan') }),
    output: pricePlanSchema,
    handler: (ctx, input) => getPricePlan(ctx.tx, ctx.org, input.id),
  }),
];
