import type { Migration } from './index.js';

/**
 * Quantity changes of items that are billing: a flat fee billed in arrears is billed at each quantity
 * for the days it held, and one billed in advance gets the difference for the rest of its period on
 * its next invoice (pro rata, CONTRACT section 8).
 */
export const quantityChanges: Migration = {
  version: 17,
  name: 'quantity_changes',
  sql: `
CREATE TABLE item_quantity_changes (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  item_id TEXT NOT NULL REFERENCES subscription_items(id),
  changed_at TEXT NOT NULL,
  old_quantity TEXT NOT NULL,
  new_quantity TEXT NOT NULL
) STRICT;
CREATE INDEX item_quantity_changes_item ON item_quantity_changes (item_id, changed_at, id);
`,
};
