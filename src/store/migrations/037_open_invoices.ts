import type { Migration } from './index.js';

/**
 * The open invoices of an organisation in list order: `list_invoices` with `overdue` or `dueBefore`
 * counts and pages only these, not every invoice the organisation ever issued (paid ones are most
 * of them, and an invoice leaves the index when it is paid or voided).
 */
export const openInvoices: Migration = {
  version: 37,
  name: 'open_invoices',
  sql: `
CREATE INDEX invoices_open ON invoices (organisation_id, created_at, id) WHERE status = 'open';
`,
};
