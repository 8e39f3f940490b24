import { foundation } from './001_foundation.js';
import { catalogue } from './002_catalogue.js';
import { billingDetails } from './003_billing_details.js';
import { subscriptions } from './004_subscriptions.js';
import { invoices } from './005_invoices.js';
import { usage } from './006_usage.js';
import { offersFeatures } from './007_offers_features.js';
import { customerTokens } from './008_customer_tokens.js';
import { deliveryTargets } from './009_delivery_targets.js';
import { minorUnits } from './010_minor_units.js';
import { pricing } from './011_pricing.js';
import { creditNotes } from './012_credit_notes.js';
import { billingRuns } from './013_billing_runs.js';
import { organisationSeller } from './015_organisation_seller.js';
import { couponForever } from './016_coupon_forever.js';
import { quantityChanges } from './017_quantity_changes.js';
import { subscriptionExternalId } from './018_subscription_external_id.js';
import { planChangesTrials } from './019_plan_changes_trials.js';
import { priceChanges } from './020_price_changes.js';
import { customerFieldsWithdrawnOffers } from './021_customer_fields_withdrawn_offers.js';
import { usageEvents } from './022_usage_events.js';
import { dunningEmails } from './023_dunning_emails.js';
import { sepaDirectDebit } from './024_sepa_direct_debit.js';
import { secrets } from './025_secrets.js';
import { offerSigning } from './026_offer_signing.js';
import { portalSessions } from './027_portal_sessions.js';
import { sepaMandateLifecycle } from './028_sepa_mandate_lifecycle.js';
import { sepaPreNotifications } from './029_sepa_pre_notifications.js';
import { dunningLetters } from './030_dunning_letters.js';
import { jobLeases } from './031_job_leases.js';
import { usageRollups } from './032_usage_rollups.js';
import { usageEventClaims } from './033_usage_event_claims.js';
import { usageEventClaimHashes } from './034_usage_event_claim_hashes.js';
import { offerSubscription } from './035_offer_subscription.js';
import { invoiceParties } from './036_invoice_parties.js';
import { openInvoices } from './037_open_invoices.js';
import { subscriptionInvoices } from './038_subscription_invoices.js';
import { offerFrozenTerms } from './039_offer_frozen_terms.js';
import { sepaCustomerPayments } from './040_sepa_customer_payments.js';

import { AppError } from '../../errors.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Append-only: a released migration is never edited, a change is a new one with the next version. */
export const MIGRATIONS: Migration[] = [
  foundation,
  catalogue,
  billingDetails,
  subscriptions,
  invoices,
  usage,
  offersFeatures,
  customerTokens,
  deliveryTargets,
  minorUnits,
  pricing,
  creditNotes,
  billingRuns,
  organisationSeller,
  couponForever,
  quantityChanges,
  subscriptionExternalId,
  planChangesTrials,
  priceChanges,
  customerFieldsWithdrawnOffers,
  usageEvents,
  dunningEmails,
  sepaDirectDebit,
  secrets,
  offerSigning,
  portalSessions,
  sepaMandateLifecycle,
  sepaPreNotifications,
  dunningLetters,
  jobLeases,
  usageRollups,
  usageEventClaims,
  usageEventClaimHashes,
  offerSubscription,
  invoiceParties,
  openInvoices,
  subscriptionInvoices,
  offerFrozenTerms,
  sepaCustomerPayments,
];

/** The schema version this billing-mcp writes, the same for both engines. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/**
 * The migrations of `list` that a database at schema version `current` lacks, oldest first; a
 * database of a newer schema than this billing-mcp knows is refused.
 */
export function pendingMigrations(list: readonly Migration[], current: number): Migration[] {
  if (current > SCHEMA_VERSION) {
    throw new AppError(
      'internal',
      `The database has schema version ${current}, newer than the ${SCHEMA_VERSION} this billing-mcp knows. ` +
        'Upgrade billing-mcp; it will not open a database written by a newer version.',
    );
  }
  return list.filter((m) => m.version > current).sort((a, b) => a.version - b.version);
}
