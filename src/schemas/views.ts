import { z } from 'zod';
import { billingRunSchema } from './billingRuns.js';
import { project, reference, type McpView } from '../registry/view.js';
import { paymentMethodSchema, invoiceAddressSchema } from './billingDetails.js';
import { billingGroupSchema, couponSchema, familySchema, planAddonSchema, planSchema, pricePlanPriceSchema, pricePlanSchema, productSchema } from './catalogue.js';
import { listOf, MAJOR, MINOR, type Page } from './common.js';
import { creditNoteSchema } from './creditNotes.js';
import { customerSchema } from './customers.js';
import { overdueRuleSchema } from './dunning.js';
import { emailSchema } from './emails.js';
import { featureSchema, subscriptionEntitlementSchema } from './features.js';
import { invoiceListItemSchema, invoiceSchema } from './invoices.js';
import { measurementSchema } from './measurements.js';
import { offerListItemSchema, offerRecipientSchema, offerSchema, offerSectionSchema } from './offers.js';
import { installmentSchema, paymentPlanSchema, type PaymentPlanListItem } from './paymentPlans.js';
import { sepaMandateSchema, sepaXmlPaymentSchema, sepaXmlStatementSchema } from './sepa.js';
import { periodSchema, subscriptionItemSchema, subscriptionSchema, type Subscription } from './subscriptions.js';
import { taxGroupSchema } from './taxGroups.js';
import { measurementValueSchema, usageEntrySchema, type MeasurementValue } from './usage.js';
import { usageEventListSchema, usageEventSchema } from './usageEvents.js';
import { webhookDeliveryRowSchema } from './webhookDeliveries.js';

/**
 * The compact forms MCP answers with (CONTRACT section 8, "MCP results"): nested resources become
 * references `{ id, <what a model recognises it by> }`, lists become summary rows. Each is a zod
 * schema picked from the full resource schema, so the result is its projection (registry/view.ts)
 * and REST keeps the full objects.
 */

/** A list tool's view: its rows in the usual envelope. */
export const listView = (row: z.ZodObject): McpView => ({ output: listOf(row) });

const customerRef = reference(customerSchema, 'customerNumber', 'companyName', 'firstName', 'lastName');
const planRef = reference(planSchema, 'code', 'name');
const productRef = reference(productSchema, 'name');
const measurementRef = reference(measurementSchema, 'code');
const taxGroupRef = reference(taxGroupSchema, 'internalDescription');
const featureRef = reference(featureSchema, 'name', 'type');
const pricePlanRef = pricePlanSchema
  .pick({ id: true, type: true, currencyCode: true, billingInterval: true, payInAdvance: true })
  .extend({ price: pricePlanPriceSchema.pick({ amount: true }).nullable().describe(`amount: ${MAJOR}; null for graduated, volume.`) });

export const productView = productSchema.extend({
  measurement: measurementRef.nullable().describe('The measurement billed by this product (deprecated), or null.'),
  taxGroup: taxGroupRef.nullable().describe('The tax group deciding the tax rate, or null.'),
});
export const productRow = productView.pick({ id: true, name: true, type: true, measurement: true, taxGroup: true, createdAt: true });

export const pricePlanRow = pricePlanRef.extend(pricePlanSchema.pick({ product: true, status: true, custom: true, inUse: true, createdAt: true }).shape);
export const pricePlanUpdateView = pricePlanRow.extend(pricePlanSchema.pick({ internalName: true, updatedAt: true }).shape);
export const paymentMethodUpdateView = paymentMethodSchema.pick({
  id: true,
  customer: true,
  type: true,
  name: true,
  default: true,
  enabled: true,
  status: true,
  expirationDate: true,
  updatedAt: true,
});

const charge = planAddonSchema.extend({ product: productRef, pricePlan: pricePlanRef });
export const planView = planSchema.extend({
  originProduct: productRef.nullable(),
  charges: z.array(charge.extend({ quantity: z.number() })).describe('Items every subscription of the plan gets.'),
  addons: z.array(charge).describe('Items a subscription may add.'),
});
export const planRow = planSchema
  .pick({ id: true, code: true, name: true, family: true, status: true, createdAt: true })
  .extend({ family: reference(familySchema).describe('Plans a subscription may change between.') });

export const couponRow = couponSchema.omit({ updatedAt: true });

export const measurementRow = measurementSchema.pick({ id: true, code: true, unit: true, aggregationType: true, type: true, createdAt: true });

export const customerRow = customerSchema.pick({
  id: true,
  customerNumber: true,
  companyName: true,
  firstName: true,
  lastName: true,
  currencyCode: true,
  status: true,
  createdAt: true,
});

const itemView = subscriptionItemSchema
  .pick({
    id: true,
    parent: true,
    type: true,
    status: true,
    name: true,
    quantity: true,
    inheritedPeriod: true,
    startDate: true,
    billingStart: true,
    billingEnd: true,
    currentUsage: true,
  })
  .extend({
    product: productRef,
    pricePlan: pricePlanRef,
    billing: subscriptionItemSchema.shape.billing.pick({ nextBillingAt: true, lastBilledTo: true }),
    appliedDiscounts: z
      .array(subscriptionItemSchema.shape.appliedDiscounts.element.pick({ id: true, status: true, appliedIntervals: true }))
      .describe('Discounts on the item; get_subscription_item shows their terms.'),
  });

const periodView = periodSchema.pick({ contractPeriod: true, cancellationPeriod: true });

const subscriptionOutput = subscriptionSchema
  .omit({ partner: true, createdAt: true, updatedAt: true })
  .extend({
    customer: customerRef,
    plan: planRef,
    paymentMethod: reference(paymentMethodSchema, 'type').nullable().describe("null: the customer's default payment method applies."),
    invoiceAddress: reference(invoiceAddressSchema, 'city').nullable().describe("null: the customer's default invoice address applies."),
    billingGroup: reference(billingGroupSchema, 'name', 'type').nullable(),
    periods: z.array(periodView),
    items: z.array(itemView).describe('The items not ended; get_subscription_item shows one in full, get_subscription_usage its usage.'),
    endedItems: z.array(itemView.pick({ id: true, name: true, billingEnd: true })).describe('Items that have ended (a plan change, billingEnd).'),
  });

/**
 * A subscription as a model reads it: references instead of embedded customer, plan and catalogue,
 * and the items that have ended (each plan change leaves the old plan's) as references.
 */
export const subscriptionView: McpView<Subscription> = {
  output: subscriptionOutput,
  from: (subscription) => {
    const view = project(subscriptionOutput, subscription) as z.output<typeof subscriptionOutput>;
    const ended = view.items.filter((i) => i.status === 'ended');
    return {
      ...view,
      items: view.items.filter((i) => i.status !== 'ended'),
      endedItems: ended.map(({ id, name, billingEnd }) => ({ id, name, billingEnd })),
    };
  },
};

export const subscriptionRow = subscriptionSchema
  .pick({ id: true, number: true, name: true, status: true, nextBillingDate: true, isCancellationPending: true })
  .extend({ customer: customerRef, plan: planRef });

/** What a plan change answers about the subscription: its row and the change waiting, if any. */
export const subscriptionPlanView = subscriptionRow.extend({ pendingPlanChange: subscriptionSchema.shape.pendingPlanChange.unwrap().nullable() });

/**
 * What a state transition answers (activate, pause, resume, cancel, revoke, terminate): the
 * subscription's state and dates, and each item's status and next billing date.
 */
export const subscriptionStateView = subscriptionRow
  .extend(
    subscriptionSchema.pick({
      startDate: true,
      activatedAt: true,
      trialEndsOn: true,
      pendingPlanChange: true,
      pausedAt: true,
      cancellationDate: true,
      cancelledAt: true,
      terminatedAt: true,
      contractDetails: true,
      nextPossibleCancellationDate: true,
    }).shape,
  )
  .extend({
    cancellationReason: subscriptionSchema.shape.cancellationReason.unwrap().pick({ code: true, name: true }).nullable(),
    items: z
      .array(itemView.pick({ id: true, status: true, product: true, billing: true }))
      .describe('Each item with its status and next billing date; get_subscription shows the rest.'),
  });

export const subscriptionItemView = subscriptionItemSchema.omit({ measurementValues: true, currentMeasurementValue: true }).extend({
  product: productRef.extend({ measurement: measurementRef.nullable() }),
  plan: planRef,
  pricePlan: pricePlanSchema.omit({ price: true, createdAt: true, updatedAt: true }).extend({ price: pricePlanRef.shape.price }),
  appliedDiscounts: z.array(
    subscriptionItemSchema.shape.appliedDiscounts.element.extend({ coupon: reference(couponSchema, 'code', 'name').nullable() }),
  ),
  periods: z.array(periodView),
  currentMeasurementValue: z
    .object({ quantity: z.string(), measuredAt: measurementValueSchema.shape.measuredAt })
    .nullable()
    .describe('The latest value recorded on the item (deprecated), or null; get_subscription_usage lists them.'),
});

export const measurementValueView = measurementValueSchema.extend({ measurement: measurementRef });

export const usageEventListView: McpView = {
  output: usageEventListSchema.extend({ data: z.array(usageEventSchema.omit({ receivedAt: true })) }),
};

/** A measurement value (quantity, measuredAt, valueId) or a usage event (timestamp, properties, late): one object, the other kind's fields absent. */
const usageEvent = measurementValueSchema
  .pick({ id: true, quantity: true, measuredAt: true, valueId: true })
  .partial()
  .extend(usageEventSchema.pick({ timestamp: true, properties: true, late: true }).partial().shape)
  .required({ id: true });
export const usageView = z.object({
  data: z.array(usageEntrySchema.extend({ measurement: measurementRef.nullable(), events: z.array(usageEvent) })),
});

export const billingRunRow = billingRunSchema.pick({
  id: true,
  trigger: true,
  status: true,
  asOf: true,
  finishedAt: true,
  subscriptionsBilled: true,
  subscriptionsSkipped: true,
  subscriptionsFailed: true,
  invoicesCreated: true,
});

/** An invoice's row: its customer by number and name, and whether an active payment plan covers it (`dunningPaused`). */
export const invoiceRow = invoiceListItemSchema.pick({
  id: true,
  number: true,
  customer: true,
  subscription: true,
  status: true,
  currencyCode: true,
  grossAmount: true,
  amountDue: true,
  issuedAt: true,
  dueAt: true,
  dunningPaused: true,
});

export const creditNoteRow = creditNoteSchema.omit({ reason: true });

/**
 * A payment plan's row: its invoice by number, the amounts and, while active, the next installment;
 * get_payment_plan shows the schedule, the payment method and how the plan ended.
 */
export const paymentPlanRow = z.object({
  id: paymentPlanSchema.shape.id,
  invoice: reference(invoiceSchema, 'number'),
  status: paymentPlanSchema.shape.status,
  totalAmount: paymentPlanSchema.shape.totalAmount,
  amountPaid: z.number().int().describe(`Paid of totalAmount; ${MINOR}.`),
  currencyCode: paymentPlanSchema.shape.currencyCode,
  nextInstallment: z
    .object({ dueAt: installmentSchema.shape.dueAt, amount: z.number().int().describe(`Still open of it; ${MINOR}.`) })
    .nullable()
    .describe('An active plan: its first open installment; else null.'),
  createdAt: paymentPlanSchema.shape.createdAt,
});

export const paymentPlanListView: McpView<Page<PaymentPlanListItem>> = {
  output: listOf(paymentPlanRow),
  from: (page) => ({
    ...page,
    data: page.data.map((p): z.infer<typeof paymentPlanRow> => {
      const next = p.status === 'active' ? p.installments.find((i) => i.status === 'open') : undefined;
      return {
        id: p.id,
        invoice: { id: p.invoiceId, number: p.invoiceNumber },
        status: p.status,
        totalAmount: p.totalAmount,
        amountPaid: p.installments.reduce((sum, i) => sum + i.amountPaid, 0),
        currencyCode: p.currencyCode,
        nextInstallment: next ? { dueAt: next.dueAt, amount: next.amount - next.amountPaid } : null,
        createdAt: p.createdAt,
      };
    }),
  }),
};

const offerCommon = { customer: customerRef };

/** What a recipient's link is (create_offer answers it always; reads to keys with offer:write). */
const PAGE = "The recipient's offer page (URL with their own token, no key); once signed, link + \"/signed.pdf\" is their signed PDF.";
/** A recipient without its signedDocument, which is its link + "/signed.pdf". */
const offerRecipientView = offerRecipientSchema.omit({ signedDocument: true }).extend({
  link: offerRecipientSchema.shape.link.describe(`${PAGE} null without offer:write.`),
});

/**
 * get_offer: each section once, as written (the form update_offer takes back; `rendered` would be the
 * same text with the customVariables beside it filled in, and a model that sent it back would lose
 * the placeholders).
 */
export const offerView = offerSchema.extend({
  ...offerCommon,
  recipients: z.array(offerRecipientView),
  sections: z.array(
    offerSectionSchema.omit({ rendered: true }).extend({
      content: offerSectionSchema.shape.content.describe('As written: recipients read its {{name}} placeholders filled from customVariables.'),
    }),
  ),
});

export const offerRow = offerListItemSchema
  .pick({ id: true, number: true, name: true, status: true, expired: true, acceptanceMode: true, validUntil: true, signedAt: true })
  .extend({ ...offerCommon, subscription: offerListItemSchema.shape.subscription.pick({ id: true, number: true, status: true }) });

/**
 * create_offer: what a model goes on with, not what it just sent: the row, the defaults it may have
 * left out, each recipient's id (for accept_offer) and page to pass on, and the sections by title.
 */
export const offerCreatedView = offerRow
  .extend(offerSchema.pick({ dealType: true, locale: true, autoActivateSubscription: true }).shape)
  .extend({
    recipients: z.array(offerRecipientView.pick({ id: true, email: true, firstName: true, lastName: true }).extend({ link: z.string().describe(PAGE) })),
    sections: z.array(offerSectionSchema.pick({ id: true, title: true })).describe('get_offer shows their text.'),
  });

/**
 * What a transition answers (accept, invoice details, archive): the offer's state, that is its row,
 * its subscription's status and dates, each recipient's signing status and, once signed, the PDF.
 */
export const offerStateView = offerRow.extend({
  subscription: offerSchema.shape.subscription.pick({ id: true, number: true, status: true, startDate: true, activatedAt: true }),
  recipients: z
    .array(offerRecipientSchema.pick({ id: true, email: true, signingStatus: true, signedAt: true }))
    .describe('get_offer shows their signing logs and pages.'),
  signedDocument: offerSchema.shape.signedDocument,
});

export const featureRow = featureSchema.omit({ config: true, description: true });

export const subscriptionEntitlementRow = subscriptionEntitlementSchema.extend({ feature: featureRef });

/** REST's row too (list_webhook_deliveries): get_webhook_delivery shows the body and attempt log. */
export const deliveryRow = webhookDeliveryRowSchema;

export const overdueRuleRow = overdueRuleSchema.omit({ emailTemplate: true, documentTemplate: true, createdAt: true, updatedAt: true });

export const emailRow = emailSchema.pick({ id: true, kind: true, invoice: true, to: true, subject: true, status: true, attempts: true, lastError: true, sentAt: true });

/** At most this many ids in a batch answer; a larger batch answers counts only. */
const BATCH_IDS_SHOWN = 20;

/** A batch answers what it stored as counts per item, not the values echoed back. */
export const measurementBatchView: McpView<{ data: MeasurementValue[] }> = {
  output: z.object({
    recorded: z.number().int().describe('Values stored; an entry addressed by measurementCode stores one per item measuring that code.'),
    items: z
      .array(
        z.object({
          subscriptionItem: z.string(),
          subscription: z.string(),
          values: z.number().int().describe('Values stored on the item.'),
          firstMeasuredAt: measurementValueSchema.shape.measuredAt,
          lastMeasuredAt: measurementValueSchema.shape.measuredAt,
        }),
      )
      .describe('One entry per item that got values.'),
    ids: z
      .array(z.string())
      .optional()
      .describe(`Ids of the stored values in request order, when at most ${BATCH_IDS_SHOWN}; get_subscription_usage lists values of larger batches.`),
  }),
  from: ({ data }) => {
    const items = new Map<string, { subscriptionItem: string; subscription: string; values: number; firstMeasuredAt: string; lastMeasuredAt: string }>();
    for (const v of data) {
      const item = items.get(v.subscriptionItem);
      if (!item) {
        items.set(v.subscriptionItem, { subscriptionItem: v.subscriptionItem, subscription: v.subscription, values: 1, firstMeasuredAt: v.measuredAt, lastMeasuredAt: v.measuredAt });
        continue;
      }
      item.values++;
      if (v.measuredAt < item.firstMeasuredAt) item.firstMeasuredAt = v.measuredAt;
      if (v.measuredAt > item.lastMeasuredAt) item.lastMeasuredAt = v.measuredAt;
    }
    return { recorded: data.length, items: [...items.values()], ...(data.length <= BATCH_IDS_SHOWN ? { ids: data.map((v) => v.id) } : {}) };
  },
};

export const sepaMandateRow = sepaMandateSchema
  .pick({ id: true, status: true, mandateReference: true, signatureDate: true, sequenceType: true, sepaType: true, createdAt: true })
  .extend({ bankAccount: sepaMandateSchema.shape.bankAccount.pick({ id: true, iban: true, accountHolder: true }) });
export const sepaPaymentRow = sepaXmlPaymentSchema
  .pick({
    id: true,
    status: true,
    endToEndId: true,
    amount: true,
    sequenceType: true,
    invoice: true,
    installment: true,
    sepaXmlStatement: true,
    executionDate: true,
    returnReasonCode: true,
  })
  .extend({ sepaMandate: sepaMandateSchema.pick({ id: true, mandateReference: true }) });
export const sepaStatementView: McpView = { output: sepaXmlStatementSchema.extend({ payments: z.array(sepaPaymentRow) }) };
export const sepaStatusReportView: McpView = {
  output: z.object({
    statement: z.string(),
    messageId: z.string(),
    returned: z.array(sepaPaymentRow),
    alreadyReturned: z.array(z.string()),
    unknown: z.array(z.string()),
  }),
};
