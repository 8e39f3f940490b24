import type { PageRequest } from '../../schemas/common.js';
import type { Entitlement, Feature, FeatureStatus, FeatureType } from '../../schemas/features.js';

export interface FeatureFilter {
  status?: FeatureStatus | undefined;
  type?: FeatureType | undefined;
}

/** An entitlement that a subscription has now, with its feature. */
export interface GrantedEntitlement {
  entitlement: Entitlement;
  feature: Feature;
}

export interface FeatureRepo {
  insert(org: string, f: Feature): Promise<void>;
  /** Writes status and updatedAt (nothing else of a feature changes). */
  updateStatus(org: string, f: Feature): Promise<void>;
  get(org: string, id: string): Promise<Feature | undefined>;
  list(org: string, filter: FeatureFilter, page: PageRequest): Promise<{ rows: Feature[]; total: number }>;

  insertEntitlement(org: string, e: Entitlement): Promise<void>;
  /** The feature's entitlement on that product or price plan, if it has one. */
  findEntitlement(org: string, featureId: string, target: { product: string | null; pricePlan: string | null }): Promise<Entitlement | undefined>;
  /** The entitlements given on a price plan, one per feature. */
  pricePlanEntitlements(org: string, pricePlanId: string): Promise<Entitlement[]>;
  /** The subscription gains every feature that is active now. */
  grantActiveFeatures(org: string, subscriptionId: string, at: string): Promise<void>;
  /** Every subscription of the organisation gains the feature (those that have it keep their grant). */
  grantToAllSubscriptions(org: string, featureId: string, at: string): Promise<number>;
  /**
   * Entitlements of the features the subscription has gained on the product or price plan of one
   * of its items that has not ended by `now`. Only active features are ever gained, and a feature
   * never returns to draft, so draft features never appear; archived ones stay where gained.
   */
  subscriptionEntitlements(
    org: string,
    subscriptionId: string,
    now: string,
    page: PageRequest,
  ): Promise<{ rows: GrantedEntitlement[]; total: number }>;
}
