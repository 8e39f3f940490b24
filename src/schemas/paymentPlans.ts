import { z } from 'zod';
import { dateTime, MINOR } from './common.js';

export const PAYMENT_PLAN_STATUSES = ['active', 'completed', 'broken', 'canceled'] as const;
export type PaymentPlanStatus = (typeof PAYMENT_PLAN_STATUSES)[number];
export const INSTALLMENT_STATUSES = ['open', 'paid', 'failed'] as const;
export type InstallmentStatus = (typeof INSTALLMENT_STATUSES)[number];

export const installmentSchema = z.object({
  id: z.string(),
  position: z.number().int().describe('From 1.'),
  dueAt: z.string().describe('YYYY-MM-DD.'),
  amount: z.number().int().describe(MINOR),
  amountPaid: z.number().int().describe(MINOR),
  status: z.enum(INSTALLMENT_STATUSES),
  paidAt: dateTime.nullable(),
});
export type Installment = z.infer<typeof installmentSchema>;

export const paymentPlanSchema = z.object({
  id: z.string(),
  invoiceId: z.string(),
  status: z.enum(PAYMENT_PLAN_STATUSES),
  totalAmount: z.number().int().describe(MINOR),
  currencyCode: z.string(),
  paymentMethodId: z.string().nullable(),
  createdAt: dateTime,
  updatedAt: dateTime,
  completedAt: dateTime.nullable(),
  brokenAt: dateTime.nullable(),
  canceledAt: dateTime.nullable(),
  brokenReason: z.string().nullable(),
  installments: z.array(installmentSchema),
});
export type PaymentPlan = z.infer<typeof paymentPlanSchema>;

/**
 * A payment plan as list_payment_plans reads it: with the number of the invoice it splits (what the
 * MCP rows show); the REST body is the plan alone, as every other plan answer has it.
 */
export const paymentPlanListItemSchema = paymentPlanSchema.extend({ invoiceNumber: z.string().nullable() });
export type PaymentPlanListItem = z.infer<typeof paymentPlanListItemSchema>;
