import type { Migration } from './index.js';

/**
 * A SEPA mandate ends (SEPA Core rulebook): the debtor revokes it (`revoked_at`), or it expires when no
 * collection was presented under it for 36 months. Its status follows from those two facts and the
 * day it is read, so the stored status column (only ever 'active') goes.
 */
export const sepaMandateLifecycle: Migration = {
  version: 28,
  name: 'sepa_mandate_lifecycle',
  sql: `
ALTER TABLE sepa_mandates ADD COLUMN revoked_at TEXT;
ALTER TABLE sepa_mandates DROP COLUMN status;
CREATE INDEX sepa_xml_payments_mandate_use ON sepa_xml_payments (mandate_id, execution_date);
`,
};
