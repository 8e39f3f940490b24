import type { PageRequest } from '../../schemas/common.js';
import type {
  AcceptanceMode,
  ContactPerson,
  CustomVariables,
  DealType,
  OfferSectionTemplate,
  OfferStatus,
} from '../../schemas/offers.js';
import type {
  OfferDocumentInfo,
  OfferDocumentKind,
  OfferDocumentRecord,
  OfferFilter,
  OfferRecord,
  OfferRepo,
  RecipientRecord,
  SigningEventRecord,
} from '../ports/offers.js';
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
  terms_frozen_at: string | null;
  frozen_trial_period: string | null;
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
  signed_at: string | null;
  created_at: string;
}

interface EventRow {
  id: string;
  offer_id: string;
  recipient_id: string;
  at: string;
  kind: SigningEventRecord['kind'];
  via: SigningEventRecord['via'];
  signer_name: string | null;
  ip: string | null;
  user_agent: string | null;
}

interface DocumentRow {
  offer_id: string;
  kind: OfferDocumentKind;
  sha256: string;
  created_at: string;
}

const toRecipient = (r: RecipientRow): RecipientRecord => ({
  id: r.id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  signingStatus: r.signing_status,
  signedAt: r.signed_at,
  createdAt: r.created_at,
});

const toEvent = (r: EventRow): SigningEventRecord => ({
  id: r.id,
  recipientId: r.recipient_id,
  at: r.at,
  kind: r.kind,
  via: r.via,
  signerName: r.signer_name,
  ip: r.ip,
  userAgent: r.user_agent,
});

const toDocumentInfo = (r: DocumentRow): OfferDocumentInfo => ({ kind: r.kind, sha256: r.sha256, createdAt: r.created_at });

/** What an offer row is read with: its recipients, signing events and documents. */
interface Parts {
  recipients: RecipientRecord[];
  events: SigningEventRecord[];
  documents: OfferDocumentInfo[];
}

const toOffer = (r: OfferRow, parts: Parts): OfferRecord => ({
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
  termsFrozenAt: r.terms_frozen_at,
  frozenTrialPeriod: r.frozen_trial_period,
  ...parts,
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
  terms_frozen_at: o.termsFrozenAt,
  frozen_trial_period: o.frozenTrialPeriod,
  updated_at: o.updatedAt,
});

export class SqlOfferRepo implements OfferRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, o: OfferRecord): Promise<void> {
    await this.sql.insert('offers', {
      id: o.id,
      organisation_id: org,
      number: o.number,
      customer_id: o.customerId,
      subscription_id: o.subscriptionId,
      ...offerColumns(o),
      created_at: o.createdAt,
    });
    for (const [position, r] of o.recipients.entries()) {
      await this.sql.run(
        `INSERT INTO offer_recipients (id, organisation_id, offer_id, position, email, first_name, last_name, signing_status,
           signed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        r.id,
        org,
        o.id,
        position,
        r.email,
        r.firstName,
        r.lastName,
        r.signingStatus,
        r.signedAt,
        r.createdAt,
      );
    }
  }

  async update(org: string, o: OfferRecord): Promise<void> {
    await this.sql.update('offers', org, o.id, offerColumns(o));
    for (const r of o.recipients) {
      await this.sql.run(
        `UPDATE offer_recipients SET signing_status = ?, signed_at = ?
         WHERE organisation_id = ? AND offer_id = ? AND id = ?`,
        r.signingStatus,
        r.signedAt,
        org,
        o.id,
        r.id,
      );
    }
  }

  /** Recipients, signing events and documents of the offers, by offer id. */
  private async partsOf(org: string, offerIds: readonly string[]): Promise<Map<string, Parts>> {
    const byOffer = new Map<string, Parts>(offerIds.map((id) => [id, { recipients: [], events: [], documents: [] }]));
    if (offerIds.length === 0) return byOffer;
    const ids = JSON.stringify(offerIds);
    const recipients = await this.sql.all<RecipientRow>(
      `SELECT id, offer_id, email, first_name, last_name, signing_status, signed_at, created_at
       FROM offer_recipients WHERE organisation_id = ? AND offer_id IN (SELECT value FROM json_each(?))
       ORDER BY offer_id, position`,
      org,
      ids,
    );
    for (const row of recipients) byOffer.get(row.offer_id)?.recipients.push(toRecipient(row));
    const events = await this.sql.all<EventRow>(
      `SELECT id, offer_id, recipient_id, at, kind, via, signer_name, ip, user_agent
       FROM offer_signing_events WHERE organisation_id = ? AND offer_id IN (SELECT value FROM json_each(?))
       ORDER BY offer_id, at, id`,
      org,
      ids,
    );
    for (const row of events) byOffer.get(row.offer_id)?.events.push(toEvent(row));
    const documents = await this.sql.all<DocumentRow>(
      `SELECT offer_id, kind, sha256, created_at FROM offer_documents
       WHERE organisation_id = ? AND offer_id IN (SELECT value FROM json_each(?)) ORDER BY offer_id, kind`,
      org,
      ids,
    );
    for (const row of documents) byOffer.get(row.offer_id)?.documents.push(toDocumentInfo(row));
    return byOffer;
  }

  private async withParts(org: string, row: OfferRow | undefined): Promise<OfferRecord | undefined> {
    return row && toOffer(row, (await this.partsOf(org, [row.id])).get(row.id)!);
  }

  async get(org: string, id: string): Promise<OfferRecord | undefined> {
    return this.withParts(org, await this.sql.get<OfferRow>('SELECT * FROM offers WHERE organisation_id = ? AND id = ?', org, id));
  }

  async getByNumber(org: string, number: string): Promise<OfferRecord | undefined> {
    return this.withParts(org, await this.sql.get<OfferRow>('SELECT * FROM offers WHERE organisation_id = ? AND number = ?', org, number));
  }

  async findBySubscription(org: string, subscriptionId: string): Promise<OfferRecord | undefined> {
    return this.withParts(org, await this.sql.get<OfferRow>('SELECT * FROM offers WHERE subscription_id = ? AND +organisation_id = ?', subscriptionId, org));
  }

  async findByPricePlan(org: string, pricePlanId: string): Promise<OfferRecord | undefined> {
    // The items by their (organisation, price plan) index, the offer by its subscription's.
    const row = await this.sql.get<OfferRow>(
      `SELECT o.* FROM subscription_items i JOIN offers o ON o.subscription_id = i.subscription_id
       WHERE i.organisation_id = ? AND i.price_plan_id = ? AND o.organisation_id = ? ORDER BY o.created_at, o.id LIMIT 1`,
      org,
      pricePlanId,
      org,
    );
    return this.withParts(org, row);
  }

  async findByRecipient(org: string, recipientId: string): Promise<OfferRecord | undefined> {
    const row = await this.sql.get<OfferRow>(
      'SELECT o.* FROM offer_recipients r JOIN offers o ON o.id = r.offer_id WHERE r.id = ? AND r.organisation_id = ? AND o.organisation_id = ?',
      recipientId,
      org,
      org,
    );
    return this.withParts(org, row);
  }

  async list(org: string, filter: OfferFilter, page: PageRequest) {
    const { rows, total } = await this.sql.page<OfferRow>(
      'FROM offers WHERE organisation_id = ? AND (CAST(? AS TEXT) IS NULL OR customer_id = ?) AND (CAST(? AS TEXT) IS NULL OR status = ?)',
      [org, filter.customer ?? null, filter.customer ?? null, filter.status ?? null, filter.status ?? null],
      page,
    );
    const parts = await this.partsOf(
      org,
      rows.map((r) => r.id),
    );
    return { rows: rows.map((r) => toOffer(r, parts.get(r.id)!)), total };
  }

  async insertEvent(org: string, offerId: string, e: SigningEventRecord): Promise<void> {
    await this.sql.insert('offer_signing_events', {
      id: e.id,
      organisation_id: org,
      offer_id: offerId,
      recipient_id: e.recipientId,
      at: e.at,
      kind: e.kind,
      via: e.via,
      signer_name: e.signerName,
      ip: e.ip,
      user_agent: e.userAgent,
    });
  }

  async viewedSince(org: string, offerId: string, recipientId: string, client: { ip: string; userAgent: string }, since: string): Promise<boolean> {
    const row = await this.sql.get<{ found: number }>(
      `SELECT 1 AS found FROM offer_signing_events
       WHERE organisation_id = ? AND offer_id = ? AND at > ? AND recipient_id = ? AND kind = 'viewed' AND ip = ? AND user_agent = ?
       LIMIT 1`,
      org,
      offerId,
      since,
      recipientId,
      client.ip,
      client.userAgent,
    );
    return row !== undefined;
  }

  async insertDocument(org: string, offerId: string, d: OfferDocumentRecord): Promise<void> {
    await this.sql.insert('offer_documents', {
      organisation_id: org,
      offer_id: offerId,
      kind: d.kind,
      pdf: Buffer.from(d.pdf.buffer, d.pdf.byteOffset, d.pdf.byteLength),
      sha256: d.sha256,
      created_at: d.createdAt,
    });
  }

  async document(org: string, offerId: string, kind: OfferDocumentKind): Promise<OfferDocumentRecord | undefined> {
    const row = await this.sql.get<DocumentRow & { pdf: Buffer }>(
      'SELECT offer_id, kind, pdf, sha256, created_at FROM offer_documents WHERE organisation_id = ? AND offer_id = ? AND kind = ?',
      org,
      offerId,
      kind,
    );
    return row && { ...toDocumentInfo(row), pdf: new Uint8Array(row.pdf) };
  }
}
