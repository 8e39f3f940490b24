import type { PageRequest } from '../../schemas/common.js';
import type { Customer, CustomerEmail } from '../../schemas/customers.js';

export interface CustomerRepo {
  insert(org: string, c: Customer): Promise<void>;
  update(org: string, c: Customer): Promise<void>;
  get(org: string, id: string): Promise<Customer | undefined>;
  /** The customers of these ids that exist, in no particular order (one statement). */
  getMany(org: string, ids: readonly string[]): Promise<Customer[]>;
  getByNumber(org: string, customerNumber: string): Promise<Customer | undefined>;
  numberTaken(org: string, customerNumber: string, exceptId?: string): Promise<boolean>;
  list(org: string, filter: { status?: string | undefined }, page: PageRequest): Promise<{ rows: Customer[]; total: number }>;

  insertEmail(org: string, e: CustomerEmail): Promise<void>;
  getEmail(org: string, id: string): Promise<CustomerEmail | undefined>;
  listEmails(org: string, customerId: string, page: PageRequest): Promise<{ rows: CustomerEmail[]; total: number }>;
  clearDefaultEmail(org: string, customerId: string, at: string): Promise<void>;
  /** Adds `delta` (negative: takes it off) to the credit balance, which never goes below 0. */
  addCreditBalance(org: string, customerId: string, delta: number, at: string): Promise<void>;
}
