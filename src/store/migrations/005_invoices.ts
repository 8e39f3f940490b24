import type { Migration } from './index.js';

/**
 * Invoices with their lines and payments, payment plans with their installments, and the outbox of
 * events and webhook deliveries. A delivery row keeps the exact body that is signed and sent, so a
 * retry or a resumed delivery sends the same id and bytes. References to subscriptions and payment
 * methods are plain ids (no foreign key): those tables come from other migrations.
 */
export const invoices: Migration = {
  version: 5,
  name: 'invoices',
  sql: `
CREATE TABLE invoices (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  number TEXT,
  customer_id TEXT NOT NULL REFERENCES customers(id),
  subscription_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('draft','open','paid','void')),
  currency_code TEXT NOT NULL,
  net_amount INTEGER NOT NULL,
  tax_amount INTEGER NOT NULL,
  gross_amount INTEGER NOT NULL CHECK (gross_amount >= 0),
  amount_paid INTEGER NOT NULL CHECK (amount_paid BETWEEN 0 AND gross_amount),
  taxes TEXT NOT NULL,
  issued_at TEXT,
  due_at TEXT,
  paid_at TEXT,
  voided_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, number),
  CHECK (status <> 'draft' OR number IS NULL),
  CHECK (status IN ('draft','void') OR (number IS NOT NULL AND issued_at IS NOT NULL)),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
  CHECK (status <> 'paid' OR amount_paid = gross_amount),
  CHECK ((status = 'void') = (voided_at IS NOT NULL))
) STRICT;
CREATE INDEX invoices_list ON invoices (organisation_id, created_at, id);
CREATE INDEX invoices_customer ON invoices (organisation_id, customer_id, created_at, id);

CREATE TABLE invoice_lines (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  position INTEGER NOT NULL CHECK (position >= 1),
  description TEXT NOT NULL,
  quantity TEXT NOT NULL,
  unit_amount INTEGER NOT NULL,
  net_amount INTEGER NOT NULL,
  tax_rate_e4 INTEGER NOT NULL CHECK (tax_rate_e4 BETWEEN 0 AND 1000000),
  period_start TEXT,
  period_end TEXT,
  UNIQUE (invoice_id, position)
) STRICT;

CREATE TABLE payment_plans (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  status TEXT NOT NULL CHECK (status IN ('active','completed','broken','canceled')),
  currency_code TEXT NOT NULL,
  payment_method_id TEXT,
  completed_at TEXT,
  broken_at TEXT,
  broken_reason TEXT,
  canceled_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
  CHECK ((status = 'broken') = (broken_at IS NOT NULL)),
  CHECK ((broken_at IS NULL) = (broken_reason IS NULL)),
  CHECK ((status = 'canceled') = (canceled_at IS NOT NULL))
) STRICT;
CREATE INDEX payment_plans_list ON payment_plans (organisation_id, created_at, id);
CREATE INDEX payment_plans_invoice ON payment_plans (organisation_id, invoice_id, created_at, id);
CREATE UNIQUE INDEX payment_plans_one_open_per_invoice ON payment_plans (invoice_id) WHERE status IN ('active','broken');

CREATE TABLE payment_plan_installments (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  payment_plan_id TEXT NOT NULL REFERENCES payment_plans(id),
  position INTEGER NOT NULL CHECK (position >= 1),
  due_at TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount > 0),
  amount_paid INTEGER NOT NULL CHECK (amount_paid BETWEEN 0 AND amount),
  status TEXT NOT NULL CHECK (status IN ('open','paid','failed')),
  paid_at TEXT,
  UNIQUE (payment_plan_id, position),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
  CHECK (status <> 'paid' OR amount_paid = amount)
) STRICT;
CREATE INDEX payment_plan_installments_due ON payment_plan_installments (due_at) WHERE status = 'open';

CREATE TABLE invoice_payments (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  payment_plan_id TEXT REFERENCES payment_plans(id),
  amount INTEGER NOT NULL CHECK (amount > 0),
  paid_at TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX invoice_payments_invoice ON invoice_payments (invoice_id, created_at, id);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  type TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_list ON events (organisation_id, created_at, id);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES events(id),
  event_type TEXT NOT NULL,
  event_version TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','delivered','failed','skipped')),
  attempts INTEGER NOT NULL CHECK (attempts >= 0),
  round_attempts INTEGER NOT NULL CHECK (round_attempts >= 0),
  next_attempt_at TEXT,
  last_attempt_at TEXT,
  last_status_code INTEGER,
  last_error TEXT,
  delivered_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (organisation_id, webhook_id, created_at, id);

CREATE TABLE webhook_delivery_attempts (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempted_at TEXT NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, attempted_at, id);
`,
};
