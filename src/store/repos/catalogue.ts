import type { PageRequest } from '../../schemas/common.js';
import type { AggregationType, Measurement, MeasurementType, Unit } from '../../schemas/measurements.js';
import type { Tax, TaxGroup } from '../../schemas/taxGroups.js';
import { rateOfE4, rateToE4 } from '../../values/money.js';
import type { CatalogueRepo } from '../ports/catalogue.js';
import { bool, int, type Sql } from '../sql.js';

const UNIT_COLUMNS = 'id, name, created_at AS createdAt, updated_at AS updatedAt';

interface MeasurementRow {
  id: string;
  unit_id: string;
  unit_name: string;
  code: string;
  description: string | null;
  aggregation_type: string;
  fair_billing: number;
  type: string;
  created_at: string;
  updated_at: string;
}

const MEASUREMENT_SELECT = `SELECT m.id, m.unit_id, u.name AS unit_name, m.code, m.description, m.aggregation_type,
  m.fair_billing, m.type, m.created_at, m.updated_at
  FROM measurements m JOIN units u ON u.id = m.unit_id`;

const toMeasurement = (r: MeasurementRow): Measurement => ({
  id: r.id,
  unit: { id: r.unit_id, name: r.unit_name },
  code: r.code,
  description: r.description,
  aggregationType: r.aggregation_type as AggregationType,
  fairBilling: bool(r.fair_billing),
  type: r.type as MeasurementType,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface TaxGroupRow {
  id: string;
  internal_description: string;
  reverse_charge_type: TaxGroup['reverseChargeType'];
  type: TaxGroup['type'];
  created_at: string;
  updated_at: string;
}

interface TaxRow {
  id: string;
  tax_group_id: string;
  code: string;
  rate_e4: number;
  country_code: string;
  description: string | null;
  valid_from: string;
}

/** Tax rates are kept as integers of 1/10,000 percent: exact for every rate with up to 4 decimals (`rateToE4`). */
function storedRate(rate: number): number {
  const e4 = rateToE4(rate);
  if (e4 === undefined) throw new RangeError(`not a tax rate with at most 4 fractional digits: ${rate}`);
  return e4;
}

export class SqlCatalogueRepo implements CatalogueRepo {
  constructor(private readonly sql: Sql) {}

  async insertUnit(org: string, u: Unit): Promise<void> {
    await this.sql.run(
      'INSERT INTO units (id, organisation_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      u.id,
      org,
      u.name,
      u.createdAt,
      u.updatedAt,
    );
  }

  async findUnit(org: string, ref: string): Promise<Unit | undefined> {
    return (
      await this.sql.get<Unit>(`SELECT ${UNIT_COLUMNS} FROM units WHERE organisation_id = ? AND id = ?`, org, ref) ??
      await this.sql.get<Unit>(`SELECT ${UNIT_COLUMNS} FROM units WHERE organisation_id = ? AND name = ?`, org, ref)
    );
  }

  /** `lower` and `trim` fold A-Z and strip spaces alike on both engines (PostgreSQL's on the "C" collated column). */
  async findUnitNamedAlike(org: string, name: string): Promise<Unit | undefined> {
    return await this.sql.get<Unit>(
      `SELECT ${UNIT_COLUMNS} FROM units WHERE organisation_id = ? AND lower(trim(name)) = ?`,
      org,
      name.replace(/[A-Z]/g, (c) => c.toLowerCase()),
    );
  }

  async listUnits(org: string, page: PageRequest) {
    return await this.sql.page<Unit>('FROM units WHERE organisation_id = ?', [org], page, UNIT_COLUMNS);
  }

  async insertMeasurement(org: string, m: Measurement): Promise<void> {
    await this.sql.run(
      `INSERT INTO measurements (id, organisation_id, unit_id, code, description, aggregation_type, fair_billing, type, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      m.id,
      org,
      m.unit.id,
      m.code,
      m.description,
      m.aggregationType,
      int(m.fairBilling),
      m.type,
      m.createdAt,
      m.updatedAt,
    );
  }

  async updateMeasurement(org: string, m: Measurement): Promise<void> {
    await this.sql.run(
      `UPDATE measurements SET unit_id = ?, code = ?, description = ?, fair_billing = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      m.unit.id,
      m.code,
      m.description,
      int(m.fairBilling),
      m.updatedAt,
      org,
      m.id,
    );
  }

  async getMeasurement(org: string, id: string): Promise<Measurement | undefined> {
    const row = await this.sql.get<MeasurementRow>(`${MEASUREMENT_SELECT} WHERE m.organisation_id = ? AND m.id = ?`, org, id);
    return row && toMeasurement(row);
  }

  async findMeasurementByCode(org: string, code: string): Promise<Measurement | undefined> {
    const row = await this.sql.get<MeasurementRow>(`${MEASUREMENT_SELECT} WHERE m.organisation_id = ? AND m.code = ?`, org, code);
    return row && toMeasurement(row);
  }

  async listMeasurements(org: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<MeasurementRow>(
      'FROM measurements m JOIN units u ON u.id = m.unit_id WHERE m.organisation_id = ?',
      [org],
      page,
      'm.id, m.unit_id, u.name AS unit_name, m.code, m.description, m.aggregation_type, m.fair_billing, m.type, m.created_at, m.updated_at',
      'm',
    );
    return { rows: rows.map(toMeasurement), total };
  }

  async insertTaxGroup(org: string, g: TaxGroup): Promise<void> {
    await this.sql.run(
      `INSERT INTO tax_groups (id, organisation_id, internal_description, reverse_charge_type, type, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      g.id,
      org,
      g.internalDescription,
      g.reverseChargeType,
      g.type,
      g.createdAt,
      g.updatedAt,
    );
    await this.insertTaxes(org, g.id, g.taxes);
  }

  async updateTaxGroup(org: string, g: TaxGroup): Promise<void> {
    await this.sql.run(
      `UPDATE tax_groups SET internal_description = ?, reverse_charge_type = ?, type = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      g.internalDescription,
      g.reverseChargeType,
      g.type,
      g.updatedAt,
      org,
      g.id,
    );
    await this.sql.run('DELETE FROM taxes WHERE organisation_id = ? AND tax_group_id = ?', org, g.id);
    await this.insertTaxes(org, g.id, g.taxes);
  }

  private async insertTaxes(org: string, groupId: string, taxes: Tax[]): Promise<void> {
    for (const [i, t] of taxes.entries()) {
      await this.sql.run(
        `INSERT INTO taxes (id, organisation_id, tax_group_id, position, code, rate_e4, country_code, description, valid_from)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        t.id,
        org,
        groupId,
        i,
        t.code,
        storedRate(t.rate),
        t.countryCode,
        t.description,
        t.validFrom,
      );
    }
  }

  async getTaxGroup(org: string, id: string): Promise<TaxGroup | undefined> {
    const row = await this.sql.get<TaxGroupRow>('SELECT * FROM tax_groups WHERE organisation_id = ? AND id = ?', org, id);
    return row && (await this.withTaxes([row]))[0];
  }

  async listTaxGroups(org: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<TaxGroupRow>('FROM tax_groups WHERE organisation_id = ?', [org], page);
    return { rows: await this.withTaxes(rows), total };
  }

  private async withTaxes(rows: TaxGroupRow[]): Promise<TaxGroup[]> {
    if (rows.length === 0) return [];
    const taxes = await this.sql.all<TaxRow>(
      `SELECT id, tax_group_id, code, rate_e4, country_code, description, valid_from FROM taxes
       WHERE tax_group_id IN (SELECT value FROM json_each(?)) ORDER BY position`,
      JSON.stringify(rows.map((r) => r.id)),
    );
    return rows.map((r) => ({
      id: r.id,
      internalDescription: r.internal_description,
      reverseChargeType: r.reverse_charge_type,
      type: r.type,
      taxes: taxes
        .filter((t) => t.tax_group_id === r.id)
        .map((t) => ({
          id: t.id,
          code: t.code,
          rate: rateOfE4(t.rate_e4),
          countryCode: t.country_code,
          description: t.description,
          validFrom: t.valid_from,
        })),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }
}
