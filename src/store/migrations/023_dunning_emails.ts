import type { Migration } from './index.js';

/**
 * Dunning and the e-mail outbox. Overdue rules, one per level and organisation. An invoice keeps its
 * first due date (`original_due_at`, existing invoices: their due date) while dunning and broken
 * payment plans move `due_at`; a fee invoice names the invoice it dunned (`dunning_of`). A dunning
 * step is unique per (invoice, level): the key that applies a level once. E-mails wait in `emails`
 * until sent; `next_attempt_at` is set while one is queued (a claim moves it past its lease).
 */
export const dunningEmails: Migration = {
  version: 23,
  name: 'dunning_emails',
  sql: `
ALTER TABLE invoices ADD COLUMN original_due_at TEXT;
UPDATE invoices SET original_due_at = due_at;
ALTER TABLE invoices ADD COLUMN dunning_of TEXT REFERENCES invoices(id);
CREATE INDEX invoices_overdue ON invoices (original_due_at) WHERE status = 'open' AND dunning_of IS NULL;

CREATE TABLE overdue_rules (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  level INTEGER NOT NULL CHECK (level >= 1),
  days_overdue INTEGER NOT NULL CHECK (days_overdue >= 1),
  due_in_days INTEGER NOT NULL CHECK (due_in_days >= 0),
  type TEXT NOT NULL CHECK (type IN ('reminder')),
  amount_in_cents INTEGER NOT NULL CHECK (amount_in_cents >= 0),
  attach_original_invoice INTEGER NOT NULL CHECK (attach_original_invoice IN (0, 1)),
  send_letter INTEGER NOT NULL CHECK (send_letter IN (0, 1)),
  is_enabled INTEGER NOT NULL CHECK (is_enabled IN (0, 1)),
  email_template TEXT,
  document_template TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organisation_id, level)
) STRICT;
CREATE INDEX overdue_rules_list ON overdue_rules (organisation_id, created_at, id);

CREATE TABLE dunning_steps (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  level INTEGER NOT NULL CHECK (level >= 1),
  applied_at TEXT NOT NULL,
  fee_invoice_id TEXT REFERENCES invoices(id),
  fee_amount INTEGER NOT NULL CHECK (fee_amount >= 0),
  email_id TEXT NOT NULL,
  new_due_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (invoice_id, level)
) STRICT;
CREATE INDEX dunning_steps_list ON dunning_steps (organisation_id, invoice_id, created_at, id);

CREATE TABLE emails (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  kind TEXT NOT NULL CHECK (kind IN ('invoice','dunning')),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  invoice_id TEXT NOT NULL REFERENCES invoices(id),
  recipients TEXT NOT NULL,
  subject TEXT NOT NULL,
  body_text TEXT NOT NULL,
  body_html TEXT,
  attachments TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued','sent','failed','not_sent')),
  attempts INTEGER NOT NULL CHECK (attempts >= 0),
  last_error TEXT,
  next_attempt_at TEXT,
  sent_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((status = 'queued') = (next_attempt_at IS NOT NULL)),
  CHECK ((status = 'sent') = (sent_at IS NOT NULL))
) STRICT;
CREATE INDEX emails_due ON emails (next_attempt_at) WHERE status = 'queued';
CREATE INDEX emails_list ON emails (organisation_id, created_at, id);
`,
};
