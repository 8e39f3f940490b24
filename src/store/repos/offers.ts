import type { PageRequest } from '../../schemas/common.js';
import type {
  AcceptanceMode,
  ContactPerson,
  CustomVariables,
  DealType,
  OfferSectionTemplate,
  OfferStatus,
} from '../../schemas/offers.js';
import type { OfferFilter, OfferRecord, OfferRepo, RecipientRecord } from '../ports/offers.js';
import { bool, int, type Sql } from '../sql.js';

interface OfferRow {
  id: string;
  number: string;
  customer_id: string;
  subscription_id: string;
  status: OfferStatus;
  acceptance_mode: AcceptanceMode;
  deal_type: DealType;
  name: string;
  description: string | null;
  locale: string;
  sections: string;
  custom_variables: string;
  valid_until: string;
  auto_activate_subscription: number;
  crm_deal_id: string | null;
  contact_person: string | null;
  signed_at: string | null;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

interface RecipientRow {
  id: string;
  offer_id: string;
  email: string;
  first_name: string;
  last_name: string;
  signing_status: RecipientRecord['signingStatus'];
  signing_log: string;
  signed_at: string | null;
  created_at: string;
}

const toRecipient = (r: RecipientRow): RecipientRecord => ({
  id: r.id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  signingStatus: r.signing_status,
  signingLog: JSON.parse(r.signing_log) as string[],
  signedAt: r.signed_at,
  createdAt: r.created_at,
});

const toOffer = (r: OfferRow, recipients: RecipientRecord[]): OfferRecord => ({
  id: r.id,
  number: r.number,
  customerId: r.customer_id,
  subscriptionId: r.subscription_id,
  status: r.status,
  acceptanceMode: r.acceptance_mode,
  dealType: r.deal_type,
  name: r.name,
  description: r.description,
  locale: r.locale,
  sections: JSON.parse(r.sections) as OfferSectionTemplate[],
  customVariables: JSON.parse(r.custom_variables) as CustomVariables,
  validUntil: r.valid_until,
  autoActivateSubscription: bool(r.auto_activate_subscription),
  crmDealId: r.crm_deal_id,
  contactPerson: r.contact_person === null ? null : (JSON.parse(r.contact_person) as ContactPerson),
  signedAt: r.signed_at,
  archivedAt: r.archived_at,
  recipients,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The columns of an offer row that insert and update both write. */
const offerColumns = (o: OfferRecord) => ({
  status: o.status,
  acceptance_mode: o.acceptanceMode,
  deal_type: o.dealType,
  name: o.name,
  description: o.description,
  locale: o.locale,
  sections: JSON.stringify(o.sections),
  custom_variables: JSON.stringify(o.customVariables),
  valid_until: o.validUntil,
  auto_activate_subscription: int(o.autoActivateSubscription),
  crm_deal_id: o.crmDealId,
  contact_person: o.contactPerson === null ? null : JSON.stringify(o.contactPerson),
  signed_at: o.signedAt,
  archived_at: o.archivedAt,
  updated_at: o.updatedAt,
});

export class SqliteOfferRepo implements OfferRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, o: OfferRecord): Promise<void> {
    this.sql.insert('offers', {
      id: o.id,
      organisation_id: org,
      number: o.number,
      customer_id: o.customerId,
      subscription_id: o.subscriptionId,
      ...offerColumns(o),
      created_at: o.createdAt,
    });
    o.recipients.forEach((r, position) => {
      this.sql.run(
        `INSERT INTO offer_recipients (id, organisation_id, offer_id, position, email, first_name, last_name, signing_status,
           signing_log, signed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        r.id,
        org,
        o.id,
        position,
        r.email,
        r.firstName,
        r.lastName,
        r.signingStatus,
        JSON.stringify(r.signingLog),
        r.signedAt,
        r.createdAt,
      );
    });
  }

  async update(org: string, o: OfferRecord): Promise<void> {
    this.sql.update('offers', org, o.id, offerColumns(o));
    for (const r of o.recipients) {
      this.sql.run(
        `UPDATE offer_recipients SET signing_status = ?, signing_log = ?, signed_at = ?
         WHERE organisation_id = ? AND offer_id = ? AND id = ?`,
        r.signingStatus,
        JSON.stringify(r.signingLog),
        r.signedAt,
        org,
        o.id,
        r.id,
      );
    }
  }

  private recipientsOf(org: string, offerIds: readonly string[]): Map<string, RecipientRecord[]> {
    const byOffer = new Map<string, RecipientRecord[]>(offerIds.map((id) => [id, []]));
    if (offerIds.length === 0) return byOffer;
    const rows = this.sql.all<RecipientRow>(
      `SELECT id, offer_id, email, first_name, last_name, signing_status, signing_log, signed_at, created_at
       FROM offer_recipients WHERE organisation_id = ? AND offer_id IN (SELECT value FROM json_each(?))
       ORDER BY offer_id, position`,
      org,
      JSON.stringify(offerIds),
    );
    for (const row of rows) byOffer.get(row.offer_id)?.push(toRecipient(row));
    return byOffer;
  }

  async get(org: string, id: string): Promise<OfferRecord | undefined> {
    const row = this.sql.get<OfferRow>('SELECT * FROM offers WHERE organisation_id = ? AND id = ?', org, id);
    return row && toOffer(row, this.recipientsOf(org, [row.id]).get(row.id) ?? []);
  }

  async list(org: string, filter: OfferFilter, page: PageRequest) {
    const { rows, total } = this.sql.page<OfferRow>(
      'FROM offers WHERE organisation_id = ? AND (? IS NULL OR customer_id = ?) AND (? IS NULL OR status = ?)',
      [org, filter.customer ?? null, filter.customer ?? null, filter.status ?? null, filter.status ?? null],
      page,
    );
    const recipients = this.recipientsOf(
      org,
      rows.map((r) => r.id),
    );
    return { rows: rows.map((r) => toOffer(r, recipients.get(r.id) ?? [])), total };
  }
}
