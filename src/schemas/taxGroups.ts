import { z } from 'zod';
import { timestamps } from './common.js';

export const REVERSE_CHARGE_TYPES = [
  'REVERSE_CHARGE_DEACTIVATED',
  'REVERSE_CHARGE',
  'REVERSE_CHARGE_INTRA_EU_SUPPLY',
] as const;
export const TAX_GROUP_TYPES = ['standard', 'reduced'] as const;

export const taxSchema = z.object({
  id: z.string(),
  code: z.string(),
  rate: z.number(),
  countryCode: z.string(),
  description: z.string().nullable(),
  validFrom: z.string(),
});
export type Tax = z.infer<typeof taxSchema>;

export const taxGroupSchema = z.object({
  id: z.string(),
  internalDescription: z.string(),
  reverseChargeType: z.enum(REVERSE_CHARGE_TYPES),
  type: z.enum(TAX_GROUP_TYPES),
  taxes: z.array(taxSchema),
  ...timestamps,
});
export type TaxGroup = z.infer<typeof taxGroupSchema>;
