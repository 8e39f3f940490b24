import type { PricePlan, PricePlanStatus, PricePlanType, Product } from '../../schemas/catalogue.js';
import type { PageRequest } from '../../schemas/common.js';

/** A product as stored: its measurement and tax group as ids (the domain resolves them). */
export interface ProductRecord extends Omit<Product, 'measurement' | 'taxGroup'> {
  measurementId: string | null;
  taxGroupId: string | null;
}

/** A tier as stored: amounts as exact decimal texts of major units ("0.002"). */
export interface StoredTier {
  upTo: number | null;
  unitAmount: string;
  flatAmount: string | null;
}

/** A new price of a price plan from `effectiveFrom` on, with the one it replaced (exact decimal texts of major units). */
export interface PriceChange {
  id: string;
  pricePlanId: string;
  effectiveFrom: string;
  oldPrice: string;
  newPrice: string;
}

/** A price plan as stored: amounts as exact decimal texts of major units of its currency (null where its type has none). */
export interface PricePlanRecord extends Omit<PricePlan, 'price' | 'tiers' | 'inUse'> {
  price: string | null;
  tiers: StoredTier[] | null;
}

export interface ProductRepo {
  insert(org: string, p: ProductRecord): Promise<void>;
  update(org: string, p: ProductRecord): Promise<void>;
  get(org: string, id: string): Promise<ProductRecord | undefined>;
  list(org: string, page: PageRequest): Promise<{ rows: ProductRecord[]; total: number }>;

  insertPricePlan(org: string, p: PricePlanRecord): Promise<void>;
  /** Writes status, internal name and price (`price` the exact decimal text) of a price plan. */
  updatePricePlan(org: string, id: string, p: { status: PricePlanStatus; internalName: string | null; price: string | null; updatedAt: string }): Promise<void>;
  insertPriceChange(org: string, change: PriceChange): Promise<void>;
  /** The price changes of a price plan, oldest first. */
  priceChanges(org: string, pricePlanId: string): Promise<PriceChange[]>;
  /** The newest `limit` price changes of a price plan, newest first. */
  latestPriceChanges(org: string, pricePlanId: string, limit: number): Promise<PriceChange[]>;
  /**
   * A price plan by id, catalogue or custom; `inUse` counts the plans whose charges or addons use it;
   * `price.updatedAt` is its last price change (its creation when none).
   */
  getPricePlan(org: string, id: string): Promise<PricePlan | undefined>;
  /** The catalogue (non-custom) price plans of a product. */
  listPricePlans(
    org: string,
    productId: string,
    filter: { status?: PricePlanStatus | undefined },
    page: PageRequest,
  ): Promise<{ rows: PricePlan[]; total: number }>;
  hasPricePlanOfType(org: string, productId: string, type: PricePlanType): Promise<boolean>;
  /** Up to `limit` catalogue price plans of the product other than flat_fee with payInAdvance or proRata true, oldest first. */
  pricePlansInAdvanceOrProRata(org: string, productId: string, limit: number): Promise<Array<{ id: string; type: PricePlanType }>>;
  /**
   * The subscriptions with an item of the product on a price plan other than flat_fee that has not
   * ended: its subscription is not cancelled or terminated and its billing end (if any) lies after
   * `now`, or it still has a period to bill. The first `limit` numbers in order, and how many there are.
   */
  subscriptionsBillingUsage(org: string, productId: string, now: string, limit: number): Promise<{ numbers: string[]; total: number }>;
}
