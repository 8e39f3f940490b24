import type { Family, Plan, PlanStatus } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';

/** A charge or addon as stored: product and price plan as ids; quantity in millionths (charges only). */
export interface PlanItemRecord {
  id: string;
  productId: string;
  pricePlanId: string;
}
export interface PlanChargeRecord extends PlanItemRecord {
  quantityE6: number;
}

/** A plan as stored: origin product and items by id (the domain resolves them). */
export interface PlanRecord extends Omit<Plan, 'originProduct' | 'charges' | 'addons'> {
  originProductId: string | null;
  charges: PlanChargeRecord[];
  addons: PlanItemRecord[];
}

export interface PlanRepo {
  insertFamily(org: string, f: Family): Promise<void>;
  getFamily(org: string, id: string): Promise<Family | undefined>;

  insert(org: string, p: PlanRecord): Promise<void>;
  /** Writes the plan's fields and its items: items whose id is gone are removed, the others written in order. */
  update(org: string, p: PlanRecord): Promise<void>;
  get(org: string, id: string): Promise<PlanRecord | undefined>;
  findByCode(org: string, code: string): Promise<PlanRecord | undefined>;
  list(org: string, filter: { status?: PlanStatus | undefined }, page: PageRequest): Promise<{ rows: PlanRecord[]; total: number }>;
  /**
   * The subscriptions that are not cancelled or terminated and are on the plan or have a pending
   * change to it: the first `limit` numbers in order, and how many there are.
   */
  openSubscriptions(org: string, planId: string, limit: number): Promise<{ numbers: string[]; total: number }>;
}
