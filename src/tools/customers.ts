import { z } from 'zod';
import {
  createCustomer,
  createCustomerEmail,
  getCustomer,
  getCustomerEmail,
  isTimeZone,
  listCustomerEmails,
  listCustomers,
  updateCustomer,
} from '../domain/customers.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber, listOf, pageInput, pageRequest, pathId, text255, toPage } from '../schemas/common.js';
import { currencyCodeInput } from '../schemas/catalogue.js';
import { CUSTOMER_STATUSES, customerEmailSchema, customerSchema } from '../schemas/customers.js';
import { customerRow, listView } from '../schemas/views.js';

const customerNumber = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .describe(
    'Customer number, unique in this organisation, 1 to 255 characters. A number another customer already has is rejected (422).',
  );
const nullableText = (what: string) =>
  text255.nullable().describe(`${what}; at most 255 characters, null for none.`);
const firstName = nullableText("The person's first name");
const lastName = nullableText(
  "The person's last name. A customer needs lastName or companyName (at least one non-empty), else the call is rejected",
);
const companyName = nullableText(
  'Company name of a business customer. A customer needs lastName or companyName (at least one non-empty), else the call is rejected',
);
const datevId = nullableText('Account id of the customer in the DATEV accounting export');
const timeZone = z
  .string()
  .refine(isTimeZone, { message: 'must be an IANA time zone name such as Europe/Berlin, America/New_York or UTC' })
  .describe('IANA time zone name of the customer (Europe/Berlin, America/New_York, UTC); unknown names are rejected.');
const currencyCode = currencyCodeInput.describe('ISO 4217 currency code in upper case (EUR, USD, CHF); lower case and unknown codes are rejected.');
const status = z
  .enum(CUSTOMER_STATUSES)
  .describe('STATUS_ACTIVE or STATUS_INACTIVE; any other value is rejected.');

const emailFlag = (what: string) => z.boolean().default(false).describe(`${what}; default false.`);

export const customerOperations = [
  defineOperation({
    name: 'create_customer',
    title: 'Create customer',
    description:
      'Create a customer (the party subscriptions, invoices and payment methods belong to). Use it before creating a subscription or invoice for someone new. customerNumber is generated (CUS-000001, CUS-000002, …) when omitted; currencyCode defaults to EUR, timeZone to Europe/Berlin, status to STATUS_ACTIVE. Rejected (422): neither lastName nor companyName given, a customerNumber already used, an unknown time zone or currency code, strings over 255 characters.',
    toolset: 'customers',
    method: 'POST',
    path: '/customers',
    permission: 'customer:write',
    kind: 'create',
    input: z.strictObject({
      customerNumber: customerNumber.optional(),
      firstName: firstName.optional(),
      lastName: lastName.optional(),
      companyName: companyName.optional(),
      datevId: datevId.optional(),
      timeZone: timeZone.default('Europe/Berlin').describe(`${timeZone.description} Default Europe/Berlin.`),
      currencyCode: currencyCode.default('EUR').describe(`${currencyCode.description} Default EUR.`),
      status: status.default('STATUS_ACTIVE').describe(`${status.description} Default STATUS_ACTIVE.`),
    }),
    output: customerSchema,
    handler: (ctx, input) => createCustomer(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_customers',
    title: 'List customers',
    description:
      'List the customers of the organisation, oldest first, paginated (page, limit 0-100); optionally only those with a given status. Use it to find a customer id.',
    toolset: 'customers',
    method: 'GET',
    path: '/customers',
    permission: 'customer:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      status: status.optional().describe('Only customers with this status: STATUS_ACTIVE or STATUS_INACTIVE.'),
    }),
    output: listOf(customerSchema),
    mcp: listView(customerRow),
    handler: async (ctx, { status: wanted, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listCustomers(ctx.tx, ctx.org, { status: wanted }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_customer',
    title: 'Get customer',
    description: 'Get one customer by id or customerNumber. An unknown one is a 404.',
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}',
    permission: 'customer:read',
    kind: 'read',
    customerAccess: { permission: 'customer:self:read', customerField: 'id' },
    input: z.strictObject({ id: idOrNumber('customer') }),
    output: customerSchema,
    handler: (ctx, input) => getCustomer(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'update_customer',
    title: 'Update customer',
    description:
      "Change a customer's fields. Omitted fields stay unchanged; null clears firstName, lastName, companyName or datevId. Rejected (422): a change that leaves neither lastName nor companyName, a customerNumber another customer has, an unknown time zone or currency code, strings over 255 characters. An unknown id is a 404.",
    toolset: 'customers',
    method: 'PUT',
    path: '/customers/{id}',
    permission: 'customer:write',
    kind: 'update',
    input: z.strictObject({
      id: idOrNumber('customer'),
      customerNumber: customerNumber.optional(),
      firstName: firstName.optional(),
      lastName: lastName.optional(),
      companyName: companyName.optional(),
      datevId: datevId.optional(),
      timeZone: timeZone.optional(),
      currencyCode: currencyCode.optional(),
      status: status.optional(),
    }),
    output: customerSchema,
    handler: (ctx, { id, ...patch }) => updateCustomer(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'create_customer_email_address',
    title: 'Create customer e-mail address',
    description:
      'Add an e-mail address to a customer and mark what it is used for (invoices, dunning). A customer has at most one default address: creating one with default true makes the previous default a non-default address. Rejected: an invalid address or one over 255 characters (422); an unknown customer id (404).',
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/email-addresses',
    permission: 'customer:write',
    kind: 'create',
    input: z.strictObject({
      id: idOrNumber('customer', 'customer the address belongs to'),
      email: z
        .email({ message: 'must be a valid e-mail address such as billing@example.com' })
        .max(255, { message: 'must be at most 255 characters' })
        .describe('The e-mail address, e.g. billing@example.com; at most 255 characters. Invalid addresses are rejected.'),
      receiverName: nullableText('Name shown as the receiver of mails to this address').optional(),
      isInvoiceEmail: emailFlag('true: invoices, credits and other financial documents go to this address'),
      isDunningEmail: emailFlag('true: dunning letters and payment reminders go to this address'),
      default: emailFlag("true: this becomes the customer's only default address (the previous default loses the flag)"),
    }),
    output: customerEmailSchema,
    location: (e) => `/customer-email-addresses/${e.id}`,
    handler: (ctx, { id, ...input }) => createCustomerEmail(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_customer_email_addresses',
    title: 'List customer e-mail addresses',
    description:
      "List a customer's e-mail addresses, oldest first, paginated (page, limit 0-100). An unknown customer id is a 404.",
    toolset: 'customers',
    method: 'GET',
    path: '/customers/{id}/email-addresses',
    permission: 'customer:read',
    kind: 'list',
    customerAccess: { permission: 'customer:self:read', customerField: 'id' },
    input: z.strictObject({ id: idOrNumber('customer'), ...pageInput }),
    output: listOf(customerEmailSchema),
    handler: async (ctx, { id, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listCustomerEmails(ctx.tx, ctx.org, id, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_customer_email_address',
    title: 'Get customer e-mail address',
    description: 'Get one customer e-mail address by its own id (not the customer id). An unknown id is a 404.',
    toolset: 'customers',
    method: 'GET',
    path: '/customer-email-addresses/{id}',
    permission: 'customer:read',
    kind: 'read',
    customerAccess: { permission: 'customer:self:read', resultCustomer: (e) => e.customer },
    input: z.strictObject({ id: pathId('customer e-mail address') }),
    output: customerEmailSchema,
    handler: (ctx, input) => getCustomerEmail(ctx.tx, ctx.org, input.id),
  }),
];
