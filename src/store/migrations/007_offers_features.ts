import type { Migration } from './index.js';

/**
 * Offers with their recipients, and entitlement features with their entitlements. Feature ids are
 * slugs unique per organisation, so features are keyed by (organisation_id, id).
 * `subscription_features` records which features each subscription has gained: every active feature
 * when the subscription is created, and every subscription when a feature is activated with
 * applyToExistingSubscriptions; a subscription is entitled to the entitlements of its gained
 * features that match its items' products or price plans.
 */
export const offersFeatures: Migration = {
  version: 7,
  name: 'offers_features',
  sql: `
CREATE TABLE offers (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  number TEXT NOT NULL,
  customer_id TEXT NOT NULL REFERENCES customers(id),
  subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
  status TEXT NOT NULL CHECK (status IN ('open','signing','awaiting_invoice_details','signed','archived')),
  acceptance_mode TEXT NOT NULL CHECK (acceptance_mode IN ('click','esignature','print')),
  deal_type TEXT NOT NULL CHECK (deal_type IN ('new_business','expansion','renewal','one_off')),
  name TEXT NOT NULL,
  description TEXT,
  locale TEXT NOT NULL,
  sections TEXT NOT NULL,
  custom_variables TEXT NOT NULL,
  valid_until TEXT NOT NULL,
  auto_activate_subscription INTEGER NOT NULL CHECK (auto_activate_subscription IN (0, 1)),
  crm_deal_id TEXT,
  contact_person TEXT,
  signed_at TEXT,
  archived_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, number),
  CHECK ((status = 'signed') = (signed_at IS NOT NULL)),
  CHECK ((status = 'archived') = (archived_at IS NOT NULL))
) STRICT;
CREATE INDEX offers_list ON offers (organisation_id, created_at, id);
CREATE INDEX offers_customer ON offers (organisation_id, customer_id, created_at, id);

CREATE TABLE offer_recipients (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  offer_id TEXT NOT NULL REFERENCES offers(id),
  position INTEGER NOT NULL,
  email TEXT NOT NULL,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  signing_status TEXT NOT NULL CHECK (signing_status IN ('not_started','signed')),
  signing_log TEXT NOT NULL,
  signed_at TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (offer_id, position),
  CHECK ((signing_status = 'signed') = (signed_at IS NOT NULL))
) STRICT;

CREATE TABLE features (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  status TEXT NOT NULL CHECK (status IN ('draft','active','archived')),
  type TEXT NOT NULL CHECK (type IN ('switch','custom','quantity','range')),
  config TEXT,
  unit TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (organisation_id, id),
  CHECK ((type = 'switch') = (config IS NULL))
) STRICT;
CREATE INDEX features_list ON features (organisation_id, created_at, id);

CREATE TABLE entitlements (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  feature_id TEXT NOT NULL,
  product_id TEXT REFERENCES products(id),
  price_plan_id TEXT REFERENCES price_plans(id),
  value TEXT NOT NULL,
  created_at TEXT NOT NULL,
  FOREIGN KEY (organisation_id, feature_id) REFERENCES features(organisation_id, id),
  CHECK ((product_id IS NULL) <> (price_plan_id IS NULL))
) STRICT;
CREATE INDEX entitlements_feature ON entitlements (organisation_id, feature_id, created_at, id);

CREATE TABLE subscription_features (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
  feature_id TEXT NOT NULL,
  granted_at TEXT NOT NULL,
  PRIMARY KEY (subscription_id, feature_id),
  FOREIGN KEY (organisation_id, feature_id) REFERENCES features(organisation_id, id)
) STRICT;
`,
};
