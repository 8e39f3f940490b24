import type { InvoiceAddress, PaymentMethod } from '../../schemas/billingDetails.js';
import type { PageRequest } from '../../schemas/common.js';
import type { BillingDetailsRepo, PaymentMethodRecord } from '../ports/billingDetails.js';
import { bool, int, type Sql } from '../sql.js';

interface AddressRow {
  id: string;
  customer_id: string;
  type: InvoiceAddress['type'];
  is_default: number;
  status: InvoiceAddress['status'];
  vat_id: string | null;
  company_name: string | null;
  salutation: string | null;
  first_name: string | null;
  last_name: string | null;
  street: string;
  house_number: string | null;
  addition: string | null;
  zip: string;
  city: string;
  country_code: string;
  cost_centre: string | null;
  created_at: string;
  updated_at: string;
}

const toAddress = (r: AddressRow): InvoiceAddress => ({
  id: r.id,
  customer: r.customer_id,
  vatId: r.vat_id,
  type: r.type,
  default: bool(r.is_default),
  status: r.status,
  city: r.city,
  zip: r.zip,
  street: r.street,
  houseNumber: r.house_number,
  countryCode: r.country_code,
  companyName: r.company_name,
  salutation: r.salutation,
  addition: r.addition,
  costCentre: r.cost_centre,
  firstName: r.first_name,
  lastName: r.last_name,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Every column but `sepa_iban`: the full IBAN is read by `sepaIban` only. */
const METHOD_COLUMNS = `id, customer_id, gateway_name, type, is_default, enabled, name, expiration_date,
  card_brand, card_last4, card_exp_month, card_exp_year, card_holder,
  sepa_iban_masked, sepa_bic, sepa_mandate_reference, sepa_signing_date, sepa_account_holder,
  paypal_email, paypal_billing_agreement_id, created_at, updated_at`;

interface MethodRow {
  id: string;
  customer_id: string;
  gateway_name: string;
  type: PaymentMethod['type'];
  is_default: number;
  enabled: number;
  name: string | null;
  expiration_date: string | null;
  card_brand: string | null;
  card_last4: string | null;
  card_exp_month: number | null;
  card_exp_year: number | null;
  card_holder: string | null;
  sepa_iban_masked: string | null;
  sepa_bic: string | null;
  sepa_mandate_reference: string | null;
  sepa_signing_date: string | null;
  sepa_account_holder: string | null;
  paypal_email: string | null;
  paypal_billing_agreement_id: string | null;
  created_at: string;
  updated_at: string;
}

const toMethod = (r: MethodRow): PaymentMethodRecord => ({
  id: r.id,
  customer: r.customer_id,
  gatewayName: r.gateway_name,
  type: r.type,
  default: bool(r.is_default),
  enabled: bool(r.enabled),
  name: r.name,
  creationDate: r.created_at,
  expirationDate: r.expiration_date,
  card:
    r.type === 'card'
      ? {
          brand: r.card_brand as string,
          last4: r.card_last4 as string,
          expMonth: r.card_exp_month as number,
          expYear: r.card_exp_year as number,
          cardHolder: r.card_holder,
        }
      : null,
  sepaDebit:
    r.type === 'sepa_debit'
      ? {
          iban: r.sepa_iban_masked as string,
          bic: r.sepa_bic,
          mandateReference: r.sepa_mandate_reference,
          signingDate: r.sepa_signing_date,
          accountHolder: r.sepa_account_holder as string,
        }
      : null,
  paypal:
    r.type === 'paypal' ? { email: r.paypal_email as string, billingAgreementId: r.paypal_billing_agreement_id } : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class SqlBillingDetailsRepo implements BillingDetailsRepo {
  constructor(private readonly sql: Sql) {}

  async insertInvoiceAddress(org: string, a: InvoiceAddress): Promise<void> {
    await this.sql.run(
      `INSERT INTO invoice_addresses (id, organisation_id, customer_id, type, is_default, status, vat_id, company_name,
         salutation, first_name, last_name, street, house_number, addition, zip, city, country_code, cost_centre,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      a.id,
      org,
      a.customer,
      a.type,
      int(a.default),
      a.status,
      a.vatId,
      a.companyName,
      a.salutation,
      a.firstName,
      a.lastName,
      a.street,
      a.houseNumber,
      a.addition,
      a.zip,
      a.city,
      a.countryCode,
      a.costCentre,
      a.createdAt,
      a.updatedAt,
    );
  }

  async getInvoiceAddress(org: string, customerId: string, id: string): Promise<InvoiceAddress | undefined> {
    const row = await this.sql.get<AddressRow>(
      'SELECT * FROM invoice_addresses WHERE organisation_id = ? AND customer_id = ? AND id = ?',
      org,
      customerId,
      id,
    );
    return row && toAddress(row);
  }

  async defaultInvoiceAddress(org: string, customerId: string): Promise<InvoiceAddress | undefined> {
    const row = await this.sql.get<AddressRow>(
      'SELECT * FROM invoice_addresses WHERE organisation_id = ? AND customer_id = ? AND is_default = 1',
      org,
      customerId,
    );
    return row && toAddress(row);
  }

  async defaultInvoiceAddresses(org: string, customerIds: readonly string[]): Promise<InvoiceAddress[]> {
    if (customerIds.length === 0) return [];
    const rows = await this.sql.all<AddressRow>(
      'SELECT * FROM invoice_addresses WHERE organisation_id = ? AND customer_id IN (SELECT value FROM json_each(?)) AND is_default = 1',
      org,
      JSON.stringify(customerIds),
    );
    return rows.map(toAddress);
  }

  async listInvoiceAddresses(org: string, customerId: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<AddressRow>(
      'FROM invoice_addresses WHERE organisation_id = ? AND customer_id = ?',
      [org, customerId],
      page,
    );
    return { rows: rows.map(toAddress), total };
  }

  async clearDefaultInvoiceAddress(org: string, customerId: string, at: string): Promise<void> {
    await this.sql.run(
      'UPDATE invoice_addresses SET is_default = 0, updated_at = ? WHERE organisation_id = ? AND customer_id = ? AND is_default = 1',
      at,
      org,
      customerId,
    );
  }

  async insertPaymentMethod(org: string, m: PaymentMethodRecord, iban: string | null): Promise<void> {
    await this.sql.run(
      `INSERT INTO payment_methods (id, organisation_id, customer_id, gateway_name, type, is_default, enabled, name,
         expiration_date, card_brand, card_last4, card_exp_month, card_exp_year, card_holder, sepa_iban, sepa_iban_masked,
         sepa_bic, sepa_mandate_reference, sepa_signing_date, sepa_account_holder, paypal_email,
         paypal_billing_agreement_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      m.id,
      org,
      m.customer,
      m.gatewayName,
      m.type,
      int(m.default),
      int(m.enabled),
      m.name,
      m.expirationDate,
      m.card?.brand ?? null,
      m.card?.last4 ?? null,
      m.card?.expMonth ?? null,
      m.card?.expYear ?? null,
      m.card?.cardHolder ?? null,
      iban,
      m.sepaDebit?.iban ?? null,
      m.sepaDebit?.bic ?? null,
      m.sepaDebit?.mandateReference ?? null,
      m.sepaDebit?.signingDate ?? null,
      m.sepaDebit?.accountHolder ?? null,
      m.paypal?.email ?? null,
      m.paypal?.billingAgreementId ?? null,
      m.createdAt,
      m.updatedAt,
    );
  }

  async getPaymentMethod(org: string, customerId: string, id: string): Promise<PaymentMethodRecord | undefined> {
    const row = await this.sql.get<MethodRow>(
      `SELECT ${METHOD_COLUMNS} FROM payment_methods WHERE organisation_id = ? AND customer_id = ? AND id = ?`,
      org,
      customerId,
      id,
    );
    return row && toMethod(row);
  }

  async defaultPaymentMethod(org: string, customerId: string): Promise<PaymentMethodRecord | undefined> {
    const row = await this.sql.get<MethodRow>(
      `SELECT ${METHOD_COLUMNS} FROM payment_methods WHERE organisation_id = ? AND customer_id = ? AND is_default = 1`,
      org,
      customerId,
    );
    return row && toMethod(row);
  }

  async listPaymentMethods(org: string, customerId: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<MethodRow>(
      'FROM payment_methods WHERE organisation_id = ? AND customer_id = ?',
      [org, customerId],
      page,
      METHOD_COLUMNS,
    );
    return { rows: rows.map(toMethod), total };
  }

  async clearDefaultPaymentMethod(org: string, customerId: string, at: string): Promise<void> {
    await this.sql.run(
      'UPDATE payment_methods SET is_default = 0, updated_at = ? WHERE organisation_id = ? AND customer_id = ? AND is_default = 1',
      at,
      org,
      customerId,
    );
  }

  async updatePaymentMethod(org: string, m: Pick<PaymentMethodRecord, 'id' | 'name' | 'enabled' | 'default' | 'updatedAt'>): Promise<void> {
    await this.sql.update('payment_methods', org, m.id, { name: m.name, enabled: int(m.enabled), is_default: int(m.default), updated_at: m.updatedAt });
  }

  async oldestUsablePaymentMethod(org: string, customerId: string, at: string, exceptId: string): Promise<PaymentMethodRecord | undefined> {
    const row = await this.sql.get<MethodRow>(
      `SELECT ${METHOD_COLUMNS} FROM payment_methods WHERE organisation_id = ? AND customer_id = ? AND enabled = 1 AND id <> ?
         AND (expiration_date IS NULL OR expiration_date > ?) ORDER BY created_at, id LIMIT 1`,
      org,
      customerId,
      exceptId,
      at,
    );
    return row && toMethod(row);
  }

  async sepaIban(org: string, paymentMethodId: string): Promise<string | undefined> {
    return (await this.sql.get<{ sepa_iban: string }>(
      "SELECT sepa_iban FROM payment_methods WHERE organisation_id = ? AND id = ? AND type = 'sepa_debit'",
      org,
      paymentMethodId,
    ))?.sepa_iban;
  }
}
