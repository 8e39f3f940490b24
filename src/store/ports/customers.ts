import type { PageRequest } from '../../schemas/common.js';
import type { Customer, CustomerEmail } from '../../schemas/customers.js';

export interface CustomerFilter {
  status?: string | undefined;
  /**
   * Text anywhere in the customer number, company, first or last name or one of the customer's
   * e-mail addresses, with A-Z folded to a-z (other letters compare as written, on both engines).
   */
  search?: string | undefined;
}

export interface CustomerRepo {
  insert(org: string, c: Customer): Promise<void>;
  update(org: string, c: Customer): Promise<void>;
  get(org: string, id: string): Promise<Customer | undefined>;
  /** The customers of these ids that exist, in no particular order (one statement). */
  getMany(org: string, ids: readonly string[]): Promise<Customer[]>;
  getByNumber(org: string, customerNumber: string): Promise<Customer | undefined>;
  numberTaken(org: string, customerNumber: string, exceptId?: string): Promise<boolean>;
  list(org: string, filter: CustomerFilter, page: PageRequest): Promise<{ rows: Customer[]; total: number }>;
  /**
   * The customer's subscriptions of a status in `running`, or of one in `ending` with an item still to
   * bill (its next billing date set): the numbers of the oldest `limit` of them and how many there are.
   */
  billingSubscriptions(
    org: string,
    customerId: string,
    statuses: { running: readonly string[]; ending: readonly string[] },
    limit: number,
  ): Promise<{ numbers: string[]; total: number }>;

  insertEmail(org: string, e: CustomerEmail): Promise<void>;
  updateEmail(org: string, e: CustomerEmail): Promise<void>;
  /** Whether the address was there to delete. */
  deleteEmail(org: string, id: string): Promise<boolean>;
  getEmail(org: string, id: string): Promise<CustomerEmail | undefined>;
  /** Whether another address of the customer than `exceptId` is `email`, compared with A-Z folded to a-z. */
  emailTaken(org: string, customerId: string, email: string, exceptId?: string): Promise<boolean>;
  listEmails(org: string, customerId: string, page: PageRequest): Promise<{ rows: CustomerEmail[]; total: number }>;
  clearDefaultEmail(org: string, customerId: string, at: string): Promise<void>;
  /** Adds `delta` (negative: takes it off) to the credit balance, which never goes below 0. */
  addCreditBalance(org: string, customerId: string, delta: number, at: string): Promise<void>;
}
