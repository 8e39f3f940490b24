import type { PageRequest } from '../../schemas/common.js';
import type {
  AcceptanceMode,
  ContactPerson,
  CustomVariables,
  DealType,
  OfferSectionTemplate,
  OfferStatus,
} from '../../schemas/offers.js';

export interface RecipientRecord {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  signingStatus: 'not_started' | 'signed';
  signingLog: string[];
  signedAt: string | null;
  createdAt: string;
}

/** An offer as stored: customer and subscription by id, recipients in their order. */
export interface OfferRecord {
  id: string;
  number: string;
  customerId: string;
  subscriptionId: string;
  status: OfferStatus;
  acceptanceMode: AcceptanceMode;
  dealType: DealType;
  name: string;
  description: string | null;
  locale: string;
  sections: OfferSectionTemplate[];
  customVariables: CustomVariables;
  validUntil: string;
  autoActivateSubscription: boolean;
  crmDealId: string | null;
  contactPerson: ContactPerson | null;
  signedAt: string | null;
  archivedAt: string | null;
  recipients: RecipientRecord[];
  createdAt: string;
  updatedAt: string;
}

export interface OfferFilter {
  customer?: string | undefined;
  status?: OfferStatus | undefined;
}

export interface OfferRepo {
  insert(org: string, o: OfferRecord): Promise<void>;
  /** Writes the offer's fields and each recipient's signing status, log and time. */
  update(org: string, o: OfferRecord): Promise<void>;
  get(org: string, id: string): Promise<OfferRecord | undefined>;
  list(org: string, filter: OfferFilter, page: PageRequest): Promise<{ rows: OfferRecord[]; total: number }>;
}
