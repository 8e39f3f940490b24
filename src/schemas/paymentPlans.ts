import { z } from 'zod';
import { dateTime, MINOR } from './common.js';

export const PAYMENT_PLAN_STATUSES = ['active', 'completed', 'broken', 'canceled'] as const;
export type PaymentPlanStatus = (typeof PAYMENT_PLAN_STATUSES)[number];
export const INSTALLMENT_STATUSES = ['open', 'paid', 'failed'] as const;
export type InstallmentStatus = (typeof INSTALLMENT_STATUSES)[number];

export const installmentSchema = z.object({
  id: z.string(),
  position: z.number().int().describe('1-based order in the schedule.'),
  dueAt: z.string().describe('Due date, YYYY-MM-DD.'),
  amount: z.number().int().describe(`Amount of the installment; ${MINOR}.`),
  amountPaid: z.number().int().describe(`Part of it covered so far, equal to amount once paid; ${MINOR}.`),
  status: z.enum(INSTALLMENT_STATUSES),
  paidAt: dateTime.nullable().describe('When the installment was covered fully.'),
});
export type Installment = z.infer<typeof installmentSchema>;

export const paymentPlanSchema = z.object({
  id: z.string(),
  invoiceId: z.string().describe('The invoice that is split.'),
  status: z.enum(PAYMENT_PLAN_STATUSES),
  totalAmount: z.number().int().describe(`Sum of all installments; ${MINOR}.`),
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
