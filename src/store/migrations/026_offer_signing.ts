import type { Migration } from './index.js';

/**
 * The signing audit of offers (issue 18). `offer_signing_events`: what each recipient did and when,
 * on the offer page (with the client's address and user agent, and the name typed) or recorded through
 * the API; a recipient's `signingLog` is read from it. The logs kept so far in
 * `offer_recipients.signing_log` (accept and signature lines written through the API) move into it,
 * and the column goes. `offer_documents`: the signed offer and its audit log as PDFs, written in the
 * unit of work that signs the offer, with the SHA-256 of each.
 */
export const offerSigning: Migration = {
  version: 26,
  name: 'offer_signing',
  sql: `
CREATE TABLE offer_signing_events (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  offer_id TEXT NOT NULL REFERENCES offers(id),
  recipient_id TEXT NOT NULL REFERENCES offer_recipients(id),
  at TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('viewed','accepted','signed','invoice_details')),
  via TEXT NOT NULL CHECK (via IN ('page','api')),
  signer_name TEXT,
  ip TEXT,
  user_agent TEXT,
  CHECK ((via = 'page') = (ip IS NOT NULL AND user_agent IS NOT NULL)),
  CHECK (kind <> 'viewed' OR via = 'page')
) STRICT;
CREATE INDEX offer_signing_events_offer ON offer_signing_events (organisation_id, offer_id, at, id);

INSERT INTO offer_signing_events (id, organisation_id, offer_id, recipient_id, at, kind, via)
SELECT lower(hex(randomblob(16))), r.organisation_id, r.offer_id, r.id, substr(line.value, 1, instr(line.value, ' ') - 1),
       CASE WHEN line.value LIKE '% accepted%' THEN 'accepted' ELSE 'signed' END, 'api'
FROM offer_recipients r, json_each(r.signing_log) line;

ALTER TABLE offer_recipients DROP COLUMN signing_log;

CREATE TABLE offer_documents (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  offer_id TEXT NOT NULL REFERENCES offers(id),
  kind TEXT NOT NULL CHECK (kind IN ('signed','audit_log')),
  pdf BLOB NOT NULL,
  sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (offer_id, kind)
) STRICT;
`,
};
