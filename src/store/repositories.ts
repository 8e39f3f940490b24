import { SqlBillingDetailsRepo } from './repos/billingDetails.js';
import { SqlBillingRunRepo } from './repos/billingRuns.js';
import { SqlBillingSetupRepo } from './repos/billing.js';
import { SqlCatalogueRepo } from './repos/catalogue.js';
import { SqlCreditNoteRepo } from './repos/creditNotes.js';
import { SqlCustomerRepo } from './repos/customers.js';
import { SqlCustomerTokenRepo } from './repos/customerTokens.js';
import { SqlDunningRepo } from './repos/dunning.js';
import { SqlEmailRepo } from './repos/emails.js';
import { SqlEventRepo } from './repos/events.js';
import { SqlFeatureRepo } from './repos/features.js';
import { SqlInvoiceRepo } from './repos/invoices.js';
import { SqlJobLeaseRepo } from './repos/jobLeases.js';
import { SqlOfferRepo } from './repos/offers.js';
import { SqlOrganisationRepo } from './repos/organisations.js';
import { SqlPaymentPlanRepo } from './repos/paymentPlans.js';
import { SqlPlanRepo } from './repos/plans.js';
import { SqlPortalSessionRepo } from './repos/portalSessions.js';
import { SqlProductRepo } from './repos/products.js';
import { SqlSepaRepo } from './repos/sepa.js';
import { SqlSubscriptionRepo } from './repos/subscriptions.js';
import { SqlSystemRepo } from './repos/system.js';
import { SqlUsageEventRepo } from './repos/usageEvents.js';
import { SqlUsageRepo } from './repos/usage.js';
import { SqlWebhookRepo } from './repos/webhooks.js';
import { ClaimFilterCache } from './claimFilter.js';
import type { Sql } from './sql.js';
import type { Tx } from './store.js';

/**
 * The repositories of one connection: the same for both engines, over its `Sql`. `claimFilters` is
 * the store's cache of closed claim buckets, shared by all its connections.
 */
export function repositories(sql: Sql, claimFilters: ClaimFilterCache = new ClaimFilterCache()): Tx {
  return {
    system: new SqlSystemRepo(sql),
    organisations: new SqlOrganisationRepo(sql),
    catalogue: new SqlCatalogueRepo(sql),
    products: new SqlProductRepo(sql),
    plans: new SqlPlanRepo(sql),
    billingSetup: new SqlBillingSetupRepo(sql),
    billing: new SqlBillingRunRepo(sql),
    customers: new SqlCustomerRepo(sql),
    customerTokens: new SqlCustomerTokenRepo(sql),
    portalSessions: new SqlPortalSessionRepo(sql),
    billingDetails: new SqlBillingDetailsRepo(sql),
    subscriptions: new SqlSubscriptionRepo(sql),
    usage: new SqlUsageRepo(sql),
    usageEvents: new SqlUsageEventRepo(sql, claimFilters),
    webhooks: new SqlWebhookRepo(sql),
    invoices: new SqlInvoiceRepo(sql),
    creditNotes: new SqlCreditNoteRepo(sql),
    paymentPlans: new SqlPaymentPlanRepo(sql),
    events: new SqlEventRepo(sql),
    offers: new SqlOfferRepo(sql),
    features: new SqlFeatureRepo(sql),
    dunning: new SqlDunningRepo(sql),
    emails: new SqlEmailRepo(sql),
    sepa: new SqlSepaRepo(sql),
    jobLeases: new SqlJobLeaseRepo(sql),
  };
}
