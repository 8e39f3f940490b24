import type { BillingSetupRepo } from './ports/billing.js';
import type { BillingRunRepo } from './ports/billingRuns.js';
import type { BillingDetailsRepo } from './ports/billingDetails.js';
import type { CatalogueRepo } from './ports/catalogue.js';
import type { CreditNoteRepo } from './ports/creditNotes.js';
import type { CustomerRepo } from './ports/customers.js';
import type { CustomerTokenLookup, CustomerTokenRepo } from './ports/customerTokens.js';
import type { DunningRepo } from './ports/dunning.js';
import type { EmailRepo } from './ports/emails.js';
import type { EventRepo } from './ports/events.js';
import type { FeatureRepo } from './ports/features.js';
import type { InvoiceRepo } from './ports/invoices.js';
import type { JobLeaseRepo } from './ports/jobLeases.js';
import type { OfferRepo } from './ports/offers.js';
import type { OrganisationRepo } from './ports/organisations.js';
import type { PaymentPlanRepo } from './ports/paymentPlans.js';
import type { PlanRepo } from './ports/plans.js';
import type { PortalSessionRepo } from './ports/portalSessions.js';
import type { ProductRepo } from './ports/products.js';
import type { SepaRepo } from './ports/sepa.js';
import type { SubscriptionRepo } from './ports/subscriptions.js';
import type { UsageRepo } from './ports/usage.js';
import type { UsageEventRepo } from './ports/usageEvents.js';
import type { ApiKeyRecord, SystemRepo } from './ports/system.js';
import type { WebhookRepo } from './ports/webhooks.js';

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
  portalSessions: PortalSessionRepo;
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
  jobLeases: JobLeaseRepo;
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
  /**
   * A claim: the unit leases rows to this instance (due webhook deliveries, a job lease) and does
   * nothing else. On PostgreSQL it runs READ COMMITTED instead of SERIALIZABLE, and its queries lock
   * what they take with `FOR UPDATE SKIP LOCKED`: instances claiming at the same moment each skip the
   * rows another is taking and so take disjoint ones, where SERIALIZABLE would abort all but one
   * (rw-conflicts on the rows they all read) and SKIP LOCKED would be no help (a row committed by
   * another after the unit's snapshot is a serialization failure, not a skipped row). Each statement
   * sees what was committed before it began and re-checks a locked row's conditions on its latest
   * version, which is all a claim needs: "still due, not leased". SQLite ignores it: its write units
   * run one at a time anyway.
   */
  claim?: boolean;
  /**
   * Units with the same key run one after another, across processes: for units that all update one
   * row (an organisation's usage event sequence), which under SERIALIZABLE would abort one another
   * instead of waiting. On PostgreSQL the unit takes a session advisory lock on the key before its
   * BEGIN, so that its snapshot follows the previous unit's COMMIT (a lock taken inside the
   * transaction comes after its snapshot, too late); units of one process queue for the key before
   * they take a connection. SQLite ignores it: its write units run one at a time anyway.
   */
  serializeOn?: string;
}

/**
 * The store: write units run one at a time on the write connection, group-committed; `transaction`
 * commits or rolls back as a whole and answers only after its COMMIT. A `read` sees committed data
 * only (never a write unit's savepoint before the COMMIT), and never waits for another process's
 * write lock. No network I/O belongs inside either (docs/architecture.md, "Units of work").
 */
export interface Store {
  /**
   * Whether units that follow one another share a COMMIT (SQLite's group commit): a long run of
   * units may then start the next one before the previous one's COMMIT. False on PostgreSQL, where
   * every unit commits alone and two units in flight that write one row (the invoice number counter)
   * abort one another.
   */
  readonly groupCommit: boolean;
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
  /** Commits what was acknowledged and lets go of the database; nothing may use the store after it. */
  close(): Promise<void>;
}
