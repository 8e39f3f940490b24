import type { PageRequest } from '../../schemas/common.js';
import type { Measurement, Unit } from '../../schemas/measurements.js';
import type { TaxGroup } from '../../schemas/taxGroups.js';

export interface CatalogueRepo {
  insertUnit(org: string, unit: Unit): Promise<void>;
  /** A unit by its id or its name. */
  findUnit(org: string, ref: string): Promise<Unit | undefined>;
  /** A unit whose name, stripped of surrounding spaces, is `name` (which has none) with A-Z and a-z alike. */
  findUnitNamedAlike(org: string, name: string): Promise<Unit | undefined>;
  listUnits(org: string, page: PageRequest): Promise<{ rows: Unit[]; total: number }>;

  insertMeasurement(org: string, m: Measurement): Promise<void>;
  updateMeasurement(org: string, m: Measurement): Promise<void>;
  getMeasurement(org: string, id: string): Promise<Measurement | undefined>;
  findMeasurementByCode(org: string, code: string): Promise<Measurement | undefined>;
  listMeasurements(org: string, page: PageRequest): Promise<{ rows: Measurement[]; total: number }>;

  insertTaxGroup(org: string, g: TaxGroup): Promise<void>;
  updateTaxGroup(org: string, g: TaxGroup): Promise<void>;
  getTaxGroup(org: string, id: string): Promise<TaxGroup | undefined>;
  listTaxGroups(org: string, page: PageRequest): Promise<{ rows: TaxGroup[]; total: number }>;
}
