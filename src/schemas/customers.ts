import { z } from 'zod';
import { MINOR, timestamps } from './common.js';

export const CUSTOMER_STATUSES = ['STATUS_ACTIVE', 'STATUS_INACTIVE'] as const;

export const customerSchema = z.object({
  id: z.string(),
  customerNumber: z.string(),
  timeZone: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  currencyCode: z.string(),
  companyName: z.string().nullable(),
  datevId: z.string().nullable(),
  status: z.enum(CUSTOMER_STATUSES),
  paymentTermDays: z.number().int().nullable().describe('null: organisation default.'),
  creditBalance: z.number().int().describe(MINOR),
  customFields: z.record(z.string(), z.unknown()),
  ...timestamps,
});
export type Customer = z.infer<typeof customerSchema>;

export const customerEmailSchema = z.object({
  id: z.string(),
  customer: z.string(),
  email: z.string(),
  receiverName: z.string().nullable(),
  isInvoiceEmail: z.boolean(),
  isDunningEmail: z.boolean(),
  default: z.boolean(),
  ...timestamps,
});
export type CustomerEmail = z.infer<typeof customerEmailSchema>;
