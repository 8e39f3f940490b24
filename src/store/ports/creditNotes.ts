import type { PageRequest } from '../../schemas/common.js';
import type { CreditNote } from '../../schemas/creditNotes.js';

export interface CreditNoteFilter {
  invoice?: string | undefined;
  customer?: string | undefined;
}

export interface CreditNoteRepo {
  insert(org: string, note: CreditNote): Promise<void>;
  get(org: string, id: string): Promise<CreditNote | undefined>;
  getByNumber(org: string, number: string): Promise<CreditNote | undefined>;
  list(org: string, filter: CreditNoteFilter, page: PageRequest): Promise<{ rows: CreditNote[]; total: number }>;
  /** The sum of every credit note of the invoice, in minor units. */
  totalForInvoice(org: string, invoiceId: string): Promise<number>;
}
