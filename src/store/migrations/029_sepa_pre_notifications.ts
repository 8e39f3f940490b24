import type { Migration } from './index.js';

/**
 * SEPA pre-notifications: a collection tells the debtor by e-mail what will be debited, when, and
 * under which mandate (SEPA Core rulebook). E-mails get the kind `sepa_pre_notification` (SQLite
 * cannot widen a CHECK in place, so the table is rebuilt with the same columns and indexes), and a
 * collection remembers its e-mail, which it shows as its `notifications`.
 */
export const sepaPreNotifications: Migration = {
  version: 29,
  name: 'sepa_pre_notifications',
  sql: `
CREATE TABLE emails_rebuilt (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  kind TEXT NOT NULL CHECK (kind IN ('invoice','dunning','sepa_pre_notification')),
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
INSERT INTO emails_rebuilt SELECT * FROM emails;
DROP TABLE emails;
ALTER TABLE emails_rebuilt RENAME TO emails;
CREATE INDEX emails_due ON emails (next_attempt_at) WHERE status = 'queued';
CREATE INDEX emails_list ON emails (organisation_id, created_at, id);
ALTER TABLE sepa_xml_payments ADD COLUMN notification_email_id TEXT;
`,
};
