import type { Organisation, SellerAddress } from '../../schemas/organisation.js';
import type { OrganisationRepo } from '../ports/organisations.js';
import type { Sql } from '../sql.js';

interface Row {
  id: string;
  name: string;
  legal_name: string | null;
  address: string | null;
  vat_id: string | null;
  tax_number: string | null;
  email: string | null;
  payment_term_days: number | null;
  invoice_footer: string | null;
  brand_color: string | null;
  created_at: string;
  updated_at: string | null;
}

const toOrganisation = (r: Row): Organisation => ({
  id: r.id,
  name: r.name,
  legalName: r.legal_name,
  address: r.address ? (JSON.parse(r.address) as SellerAddress) : null,
  vatId: r.vat_id,
  taxNumber: r.tax_number,
  email: r.email,
  paymentTermDays: r.payment_term_days,
  invoiceFooter: r.invoice_footer,
  brandColor: r.brand_color,
  createdAt: r.created_at,
  updatedAt: r.updated_at ?? r.created_at,
});

export class SqlOrganisationRepo implements OrganisationRepo {
  constructor(private readonly sql: Sql) {}

  async get(org: string): Promise<Organisation | undefined> {
    const row = await this.sql.get<Row>('SELECT * FROM organisations WHERE id = ?', org);
    return row && toOrganisation(row);
  }

  async update(o: Organisation): Promise<void> {
    await this.sql.run(
      `UPDATE organisations SET name = ?, legal_name = ?, address = ?, vat_id = ?, tax_number = ?, email = ?, payment_term_days = ?,
         invoice_footer = ?, brand_color = ?, updated_at = ? WHERE id = ?`,
      o.name,
      o.legalName,
      o.address ? JSON.stringify(o.address) : null,
      o.vatId,
      o.taxNumber,
      o.email,
      o.paymentTermDays,
      o.invoiceFooter,
      o.brandColor,
      o.updatedAt,
      o.id,
    );
  }
}
