import type { Operation } from '../registry/operation.js';
import { billingOperations } from './billing.js';
import { billingDetailOperations } from './billingDetails.js';
import { billingGroupOperations } from './billingGroups.js';
import { couponOperations } from './coupons.js';
import { creditNoteOperations } from './creditNotes.js';
import { customFieldOperations } from './customFields.js';
import { customerAuthOperations } from './customerAuth.js';
import { customerOperations } from './customers.js';
import { dunningOperations } from './dunning.js';
import { emailOperations } from './emails.js';
import { featureOperations } from './features.js';
import { invoiceOperations } from './invoices.js';
import { invoicePdfOperations } from './invoicePdf.js';
import { dunningLetterOperations } from './dunningLetter.js';
import { measurementOperations } from './measurements.js';
import { offerDocumentOperations } from './offerDocuments.js';
import { offerOperations } from './offers.js';
import { organisationOperations } from './organisation.js';
import { paymentPlanOperations } from './paymentPlans.js';
import { planChangeOperations } from './planChanges.js';
import { planOperations } from './plans.js';
import { portalOperations } from './portal.js';
import { productOperations } from './products.js';
import { sepaOperations } from './sepa.js';
import { subscriptionOperations } from './subscriptions.js';
import { taxGroupOperations } from './taxGroups.js';
import { usageOperations } from './usage.js';
import { usageEventOperations } from './usageEvents.js';
import { webhookDeliveryOperations } from './webhookDeliveries.js';
import { webhookOperations } from './webhooks.js';

/** The one list of every operation; MCP tools, REST routes and OpenAPI are all generated from it. */
export const OPERATIONS: Operation[] = [
  ...measurementOperations,
  ...productOperations,
  ...planOperations,
  ...billingGroupOperations,
  ...couponOperations,
  ...customFieldOperations,
  ...customerOperations,
  ...customerAuthOperations,
  ...portalOperations,
  ...billingDetailOperations,
  ...subscriptionOperations,
  ...planChangeOperations,
  ...usageOperations,
  ...usageEventOperations,
  ...taxGroupOperations,
  ...webhookOperations,
  ...invoiceOperations,
  ...billingOperations,
  ...organisationOperations,
  ...invoicePdfOperations,
  ...dunningLetterOperations,
  ...creditNoteOperations,
  ...paymentPlanOperations,
  ...dunningOperations,
  ...emailOperations,
  ...sepaOperations,
  ...webhookDeliveryOperations,
  ...offerOperations,
  ...offerDocumentOperations,
  ...featureOperations,
];

/** Every permission any operation needs, with both halves of each resource. */
export const ALL_PERMISSIONS: string[] = [
  ...new Set(
    OPERATIONS.flatMap((op) => {
      if (!op.permission) return [];
      const resource = op.permission.slice(0, op.permission.lastIndexOf(':'));
      return [`${resource}:read`, `${resource}:write`];
    }),
  ),
].sort();
