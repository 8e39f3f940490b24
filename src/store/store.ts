import type { BillingSetupRepo } from './repos/billing.js';
import type { BillingRunRepo } from './repos/billingRuns.js';
import type { BillingDetailsRepo } from './repos/billingDetails.js';
import type { CatalogueRepo } from './repos/catalogue.js';
import type { CreditNoteRepo } from './repos/creditNotes.js';
import type { CustomerRepo } from './repos/customers.js';
import type { CustomerTokenLookup, CustomerTokenRepo } from './repos/customerTokens.js';
import type { DunningRepo } from './repos/dunning.js';
import type { EmailRepo } from './repos/emails.js';
import type { EventRepo } from './repos/events.js';
import type { FeatureRepo } from './repos/features.js';
import type { InvoiceRepo } from './repos/invoices.js';
import type { OfferRepo } from './repos/offers.js';
import type { OrganisationRepo } from './repos/organisations.js';
import type { PaymentPlanRepo } from './repos/paymentPlans.js';
import type { PlanRepo } from './repos/plans.js';
import type { ProductRepo } from './repos/products.js';
import type { SepaRepo } from './repos/sepa.js';
import type { SubscriptionRepo } from './repos/subscriptions.js';
import type { UsageRepo } from './repos/usage.js';
import type { UsageEventRepo } from './repos/usageEvents.js';
import type { ApiKeyRecord, SystemRepo } from './repos/system.js';
import type { WebhookRepo } from './repos/webhooks.js';

/** The repositories one unit of work sees. Domain code only talks to these. */
export interface Tx {
  system: SystemRepo;
  organisations: OrganisationRepo;
  catalogue: CatalogueRepo;
  products: ProductRepo;
  plans: PlanRepo;
  billingSetup: BillingSetupRepo;
  billing: BillingRunRepo;
  customers: CustomerRepo;
  customerTokens: CustomerTokenRepo;
  billingDetails: BillingDetailsRepo;
  subscriptions: SubscriptionRepo;
  usage: UsageRepo;
  usageEvents: UsageEventRepo;
  webhooks: WebhookRepo;
  invoices: InvoiceRepo;
  creditNotes: CreditNoteRepo;
  paymentPlans: PaymentPlanRepo;
  events: EventRepo;
  offers: OfferRepo;
  features: FeatureRepo;
  dunning: DunningRepo;
  emails: EmailRepo;
  sepa: SepaRepo;
}

export interface UnitOptions {
  /**
   * Keep the commit group this unit joins open for this many milliseconds after it opened, so that
   * the units that follow share one COMMIT (one disk sync): for a long run of units such as a billing
   * run. Units are acknowledged at the COMMIT, so this is also how long they may wait for it.
   */
  lingerMs?: number;
  /**
   * Roll the unit's writes back and answer its result: a dry run (a preview computed by the very
   * code of the change it previews, invoice numbers and events included, none of it kept).
   */
  rollback?: boolean;
}

/**
 * The store: write units run one at a time on the write connection, group-committed; `transaction`
 * commits or rolls back as a whole and answers only after its COMMIT. A `read` sees committed data
 * only (never a write unit's savepoint before the COMMIT), and never waits for another process's
 * write lock. No network I/O belongs inside either (docs/architecture.md, "Units of work").
 */
export interface Store {
  read<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: UnitOptions): Promise<T>;
  /**
   * The API key with this hash, read outside the unit-of-work queue: authentication never waits
   * behind other operations, and api_keys is written only by key management, never by an operation.
   */
  findApiKey(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** A customer token by hash, read outside the queue like `findApiKey`. */
  findCustomerToken(tokenHash: string): Promise<CustomerTokenLookup | undefined>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): void;
}
