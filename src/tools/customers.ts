import { z } from 'zod';
import {
  createCustomer,
  createCustomerEmail,
  deleteCustomerEmail,
  getCustomer,
  getCustomerEmail,
  isTimeZone,
  listCustomerEmails,
  listCustomers,
  updateCustomer,
  updateCustomerEmail,
} from '../domain/customers.js';
import { UUID_RE } from '../ids.js';
import { defineOperation } from '../registry/operation.js';
import { elsewhere } from '../registry/validation.js';
import { idOrNumber, listOf, pageInput, pageRequest, pathId, text255, toPage } from '../schemas/common.js';
import { currencyCodeInput } from '../schemas/catalogue.js';
import { CUSTOMER_STATUSES, customerEmailSchema, customerSchema } from '../schemas/customers.js';
import { customerRow, listView } from '../schemas/views.js';

const customerNumber = z
  .string()
  .min(1, { message: 'must be 1 to 255 characters' })
  .max(255, { message: 'must be 1 to 255 characters' })
  .refine((s) => s === '' || s.trim() === s, { message: 'must not be blank or begin or end with whitespace: it is matched exactly' })
  .refine((s) => !UUID_RE.test(s), {
    message: 'must not have the form of an id (a UUID): every input naming a customer takes its id or its number',
  })
  .describe('Unique customer number.');
const nullableText = (what: string) => text255.nullable().describe(what);
const firstName = nullableText("Person's first name.");
const lastName = nullableText("Person's last name.");
const companyName = nullableText('Company name.');
const datevId = nullableText('DATEV account id.');
const timeZone = z
  .string()
  .refine(isTimeZone, { message: 'must be an IANA time zone name such as Europe/Berlin, America/New_York or UTC' })
  .describe('IANA time zone, e.g. Europe/Berlin.');
const currencyCode = currencyCodeInput.describe('ISO 4217 currency code, e.g. EUR.');
const status = z.enum(CUSTOMER_STATUSES).describe('Customer status.');
const paymentTermDays = z
  .number()
  .int({ message: 'must be a whole number of days from 0 to 365' })
  .min(0, { message: 'must be a whole number of days from 0 to 365' })
  .max(365, { message: 'must be a whole number of days from 0 to 365' })
  .nullable()
  .describe('Days from invoice issue to due date, 0-365; null: organisation default.');

const customFields = z
  .record(z.string(), z.unknown())
  .describe('Custom field values by key (list_custom_fields); update replaces the map.');

/**
 * What a model used to a customer object with e-mail, address and payment details sends to
 * create_customer or update_customer: each of those is a resource of its own, made by its own tool.
 */
const customerDetailElsewhere = (key: string): string | undefined => {
  if (/^(e)?mails?(address(es)?)?$/.test(key)) return 'e-mail addresses are added with create_customer_email_address once the customer exists';
  if (/address|street|city|zip|postal|country|vatid/.test(key)) return 'addresses are added with create_invoice_address once the customer exists';
  if (/payment|iban|card|mandate/.test(key)) return 'payment methods are added with create_payment_method once the customer exists';
  return undefined;
};

const email = z
  .email({ message: 'must be a valid e-mail address such as billing@example.com' })
  .max(255, { message: 'must be at most 255 characters' })
  .describe('E-mail address, unique per customer, e.g. billing@example.com.');
const receiverName = nullableText('Receiver name on mails.');
const emailFlag = (what: string) => z.boolean().describe(what);
const isInvoiceEmail = emailFlag('true: receives invoices and credits.');
const isDunningEmail = emailFlag('true: receives dunning letters.');
const isDefault = emailFlag("true: becomes the customer's default address.");

export const customerOperations = [
  defineOperation({
    name: 'create_customer',
    title: 'Create customer',
    description:
      'Create a customer, the owner of subscriptions, invoices and payment methods. Needs lastName or companyName; customerNumber is generated when omitted.',
    toolset: 'customers',
    method: 'POST',
    path: '/customers',
    permission: 'customer:write',
    kind: 'create',
    input: elsewhere(
      z.strictObject({
        customerNumber: customerNumber.optional(),
        firstName: firstName.optional(),
        lastName: lastName.optional(),
        companyName: companyName.optional(),
        datevId: datevId.optional(),
        timeZone: timeZone.default('Europe/Berlin'),
        currencyCode: currencyCode.default('EUR'),
        status: status.default('STATUS_ACTIVE'),
        paymentTermDays: paymentTermDays.optional(),
        customFields: customFields.optional(),
      }),
      customerDetailElsewhere,
    ),
    output: customerSchema,
    handler: (ctx, input) => createCustomer(ctx.tx, ctx.org, input, ctx.now),
  }),
  defineOperation({
    name: 'list_customers',
    title: 'List customers',
    description:
      'List customers, oldest first, optionally by status or search. Use it to find a customer id.',
    toolset: 'customers',
    method: 'GET',
    path: '/customers',
    permission: 'customer:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      status: status.optional().describe('Only customers with this status.'),
      search: z
        .string()
        .trim()
        .min(1, { message: 'must be 1 to 255 characters besides surrounding whitespace' })
        .max(255, { message: 'must be 1 to 255 characters besides surrounding whitespace' })
        .optional()
        .describe('Text in the number, names or e-mail addresses; A-Z in either case.'),
    }),
    output: listOf(customerSchema),
    mcp: listView(customerRow),
    handler: async (ctx, { status: wanted, search, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listCustomers(ctx.tx, ctx.org, { status: wanted, search }, page);
      return toPage(rows, total, page);
    },
  }),
  defineOperation({
    name: 'get_customer',
    title: 'Get customer',
    description: 'Get one customer by id or customerNumber.',
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
      "Change a customer's fields: omitted ones stay, null clears. lastName or companyName must remain.",
    toolset: 'customers',
    method: 'PUT',
    path: '/customers/{id}',
    permission: 'customer:write',
    kind: 'update',
    input: elsewhere(
      z.strictObject({
        id: idOrNumber('customer'),
        customerNumber: customerNumber.optional(),
        firstName: firstName.optional(),
        lastName: lastName.optional(),
        companyName: companyName.optional(),
        datevId: datevId.optional(),
        timeZone: timeZone.optional(),
        currencyCode: currencyCode.optional(),
        status: status.optional(),
        paymentTermDays: paymentTermDays.optional(),
        customFields: customFields.optional(),
      }),
      customerDetailElsewhere,
    ),
    output: customerSchema,
    handler: (ctx, { id, ...patch }) => updateCustomer(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'create_customer_email_address',
    title: 'Create customer e-mail address',
    description:
      'Add an e-mail address to a customer and mark what it receives (invoices, dunning).',
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/email-addresses',
    permission: 'customer:write',
    kind: 'create',
    input: z.strictObject({
      id: idOrNumber('customer'),
      email,
      receiverName: receiverName.optional(),
      isInvoiceEmail: isInvoiceEmail.default(false),
      isDunningEmail: isDunningEmail.default(false),
      default: isDefault.default(false),
    }),
    output: customerEmailSchema,
    location: (e) => `/customer-email-addresses/${e.id}`,
    handler: (ctx, { id, ...input }) => createCustomerEmail(ctx.tx, ctx.org, id, input, ctx.now),
  }),
  defineOperation({
    name: 'list_customer_email_addresses',
    title: 'List customer e-mail addresses',
    description:
      "List a customer's e-mail addresses, oldest first.",
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
    description: 'Get one customer e-mail address by its own id (not the customer id).',
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
  defineOperation({
    name: 'update_customer_email_address',
    title: 'Update customer e-mail address',
    description:
      'Change an e-mail address (by its own id): omitted fields stay, null clears receiverName, default true replaces the old default.',
    toolset: 'customers',
    method: 'PUT',
    path: '/customer-email-addresses/{id}',
    permission: 'customer:write',
    kind: 'update',
    input: z.strictObject({
      id: pathId('customer e-mail address'),
      email: email.optional(),
      receiverName: receiverName.optional(),
      isInvoiceEmail: isInvoiceEmail.optional(),
      isDunningEmail: isDunningEmail.optional(),
      default: isDefault.optional(),
    }),
    output: customerEmailSchema,
    handler: (ctx, { id, ...patch }) => updateCustomerEmail(ctx.tx, ctx.org, id, patch, ctx.now),
  }),
  defineOperation({
    name: 'delete_customer_email_address',
    title: 'Delete customer e-mail address',
    description: 'Remove an e-mail address (by its own id); no other becomes the default in its place.',
    toolset: 'customers',
    method: 'DELETE',
    path: '/customer-email-addresses/{id}',
    permission: 'customer:write',
    kind: 'delete',
    input: z.strictObject({ id: pathId('customer e-mail address') }),
    output: z.object({ id: z.string(), deleted: z.literal(true) }),
    handler: (ctx, input) => deleteCustomerEmail(ctx.tx, ctx.org, input.id),
  }),
];
