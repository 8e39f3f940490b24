import { z } from 'zod';
import { dateTime } from './common.js';

export const sellerAddressSchema = z.object({
  street: z.string(),
  houseNumber: z.string().nullable(),
  zip: z.string(),
  city: z.string(),
  countryCode: z.string(),
});
export type SellerAddress = z.infer<typeof sellerAddressSchema>;

/** The organisation as seller (CONTRACT section 8). */
export const organisationSchema = z.object({
  id: z.string(),
  name: z.string(),
  legalName: z.string().nullable(),
  address: sellerAddressSchema.nullable().describe("countryCode decides what is another EU country for reverse charge."),
  vatId: z.string().nullable(),
  taxNumber: z.string().nullable(),
  email: z.string().nullable(),
  paymentTermDays: z.number().int().nullable().describe('Days to pay unless the customer has its own; null: BILLING_PAYMENT_TERM_DAYS.'),
  invoiceFooter: z.string().nullable(),
  brandColor: z.string().nullable(),
  createdAt: dateTime,
  updatedAt: dateTime,
});
export type Organisation = z.infer<typeof organisationSchema>;
