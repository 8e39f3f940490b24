import type { BillingGroup, Coupon, CustomField, CustomFieldEntity } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';

/** A coupon as stored: the percentage in hundredths of a percent, the fixed amount in minor units of its currency. */
export interface CouponRecord extends Omit<Coupon, 'percentage' | 'fixedAmount'> {
  percentageE2: number | null;
  fixedAmount: { cents: number; currency: string } | null;
}

/** Billing groups, coupons and the custom-field configuration. */
export interface BillingSetupRepo {
  insertBillingGroup(org: string, g: BillingGroup): Promise<void>;
  /** By its ULID (upper case). */
  getBillingGroup(org: string, id: string): Promise<BillingGroup | undefined>;
  listBillingGroups(org: string, page: PageRequest): Promise<{ rows: BillingGroup[]; total: number }>;

  insertCoupon(org: string, c: CouponRecord): Promise<void>;
  getCoupon(org: string, id: string): Promise<Coupon | undefined>;
  findCouponByCode(org: string, code: string): Promise<Coupon | undefined>;
  listCoupons(org: string, page: PageRequest): Promise<{ rows: Coupon[]; total: number }>;
  updateCoupon(org: string, id: string, c: Pick<Coupon, 'name' | 'isEnabled' | 'updatedAt'>): Promise<void>;

  insertCustomField(org: string, f: CustomField): Promise<void>;
  findCustomField(org: string, entity: CustomFieldEntity, key: string): Promise<CustomField | undefined>;
  getCustomField(org: string, id: string): Promise<CustomField | undefined>;
  /** Every custom field configured for the entity, oldest first. */
  customFieldsOf(org: string, entity: CustomFieldEntity): Promise<CustomField[]>;
  listCustomFields(
    org: string,
    filter: { entity?: CustomFieldEntity | undefined },
    page: PageRequest,
  ): Promise<{ rows: CustomField[]; total: number }>;
  deleteCustomField(org: string, id: string): Promise<boolean>;
}
