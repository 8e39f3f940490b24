import type { PageRequest } from '../../schemas/common.js';
import type { CustomerEmail } from '../../schemas/customers.js';
import type { Email, EmailKind, EmailStatus } from '../../schemas/emails.js';

/** A file an e-mail carries: the PDF of an invoice, rendered when the e-mail is sent. */
export interface EmailAttachment {
  invoice: string;
  filename: string;
}

/** Whom an e-mail goes to: the address, with the name its To header shows when there is one. */
export interface Recipient {
  address: string;
  name: string | null;
}

/** An e-mail as it is queued. */
export interface NewEmail {
  id: string;
  kind: EmailKind;
  customer: string;
  invoice: string;
  to: Recipient[];
  subject: string;
  text: string;
  html: string | null;
  attachments: EmailAttachment[];
  status: 'queued' | 'not_sent';
  lastError: string | null;
  createdAt: string;
}

/** An e-mail claimed for sending. */
export interface OutgoingEmail {
  organisationId: string;
  id: string;
  to: Recipient[];
  subject: string;
  text: string;
  html: string | null;
  attachments: EmailAttachment[];
  attempts: number;
}

export interface EmailOutcome {
  status: EmailStatus;
  lastError: string | null;
  nextAttemptAt: string | null;
  sentAt: string | null;
}

export interface EmailFilter {
  kind?: EmailKind | undefined;
  status?: EmailStatus | undefined;
  invoice?: string | undefined;
  customer?: string | undefined;
}

export interface EmailRepo {
  /** Every e-mail address of the customer, oldest first. */
  addressesOf(org: string, customerId: string): Promise<CustomerEmail[]>;
  insert(org: string, email: NewEmail): Promise<void>;
  /** `insert` of many, in multi-row statements. */
  insertMany(org: string, emails: readonly NewEmail[]): Promise<void>;
  get(org: string, id: string): Promise<Email | undefined>;
  list(org: string, filter: EmailFilter, page: PageRequest): Promise<{ rows: Email[]; total: number }>;
  /**
   * Across organisations: up to `limit` queued e-mails due at `now` (none of `except`), earliest first,
   * leased until `leaseUntil` (their next attempt moves there, so no other pass takes them meanwhile).
   */
  claimDue(now: string, leaseUntil: string, except: readonly string[], limit: number): Promise<OutgoingEmail[]>;
  /** The outcome of an attempt (attempts + 1). */
  recordAttempt(org: string, id: string, outcome: EmailOutcome, at: string): Promise<void>;
  /** Every queued e-mail due at `now` becomes not_sent with `reason`; returns how many. */
  markDueNotSent(now: string, reason: string, at: string): Promise<number>;
}
