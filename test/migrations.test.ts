/** Migrations 015 and 016 against rows written before them. */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { migrate, SqliteStore } from '../src/store/sqlite.js';

function databaseAt(version: number): Database.Database {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '2026-01-01T00:00:00Z');
  }
  return db;
}

const at = '2026-03-01T00:00:00.000Z';

describe('migration 016: coupons with frequency forever', () => {
  it('keeps every coupon as it was, widens the frequency CHECK to forever and keeps the others', async () => {
    const db = databaseAt(15);
    db.exec(`
      INSERT INTO organisations (id, name, created_at) VALUES ('o', 'Old', '${at}');
      INSERT INTO coupons (id, organisation_id, code, name, type, frequency, percentage_e2, fixed_amount_cents, fixed_amount_currency,
        frequency_interval, is_enabled, created_at, updated_at)
      VALUES ('c1', 'o', 'TEN', 'Ten', 'percentage', 'once', 1000, NULL, NULL, NULL, 1, '${at}', '${at}'),
             ('c2', 'o', 'FIVE', 'Five', 'fixed_amount', 'limited', NULL, 500, 'EUR', 3, 0, '${at}', '${at}');
    `);
    const before = db.prepare('SELECT * FROM coupons ORDER BY id').all();
    migrate(db);
    expect(db.prepare('SELECT * FROM coupons ORDER BY id').all()).toEqual(before);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    const insert = (id: string, frequency: string, interval: number | null) =>
      db
        .prepare(
          `INSERT INTO coupons (id, organisation_id, code, name, type, frequency, percentage_e2, frequency_interval, is_enabled, created_at, updated_at)
           VALUES (?, 'o', ?, 'X', 'percentage', ?, 100, ?, 1, '${at}', '${at}')`,
        )
        .run(id, id, frequency, interval);
    insert('c3', 'forever', null);
    expect(() => insert('c4', 'always', null)).toThrow(/CHECK/);
    expect(() => insert('c5', 'forever', 2)).toThrow(/CHECK/);
    expect(() => insert('c6', 'once', null)).not.toThrow();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'coupons_list'").get()).toBeDefined();
    const store = new SqliteStore(db);
    expect((await store.read((tx) => tx.billingSetup.getCoupon('o', 'c3')))?.frequency).toBe('forever');
    await store.close();
  });
});

describe('migration 015: the organisation as seller', () => {
  it('gives existing organisations empty seller details', async () => {
    const db = databaseAt(14);
    db.exec(`INSERT INTO organisations (id, name, created_at) VALUES ('o', 'Old', '${at}');`);
    migrate(db);
    const store = new SqliteStore(db);
    expect(await store.read((tx) => tx.organisations.get('o'))).toEqual({
      id: 'o',
      name: 'Old',
      legalName: null,
      address: null,
      vatId: null,
      taxNumber: null,
      email: null,
      paymentTermDays: null,
      invoiceFooter: null,
      brandColor: null,
      createdAt: at,
      updatedAt: at,
    });
    await store.close();
  });
});

describe('migration 021: customer custom fields, subscriptions of archived offers', () => {
  it('gives existing customers an empty custom-field map', async () => {
    const db = databaseAt(18);
    db.exec(`
      INSERT INTO organisations (id, name, created_at) VALUES ('o', 'Old', '${at}');
      INSERT INTO customers (id, organisation_id, customer_number, time_zone, currency_code, last_name, status, created_at, updated_at)
      VALUES ('c', 'o', 'CUS-000001', 'Europe/Berlin', 'EUR', 'Old', 'STATUS_ACTIVE', '${at}', '${at}');
    `);
    migrate(db);
    const store = new SqliteStore(db);
    expect(await store.read((tx) => tx.customers.get('o', 'c'))).toMatchObject({ lastName: 'Old', customFields: {} });
    await store.close();
  });

  it('terminates, at the archiving, the subscriptions an archived offer left in status offer; others stay', () => {
    const db = databaseAt(18);
    db.pragma('foreign_keys = OFF');
    const archivedAt = '2026-02-01T09:00:00.000Z';
    const subscription = (id: string) =>
      `INSERT INTO subscriptions (id, organisation_id, customer_id, plan_id, number, status, custom_fields, periods, created_at, updated_at)
       VALUES ('${id}', 'o', 'c', 'p', '${id}', 'offer', '{}', '[]', '${at}', '${at}');`;
    const offer = (id: string, sub: string, status: string, archived: string | null) =>
      `INSERT INTO offers (id, organisation_id, number, customer_id, subscription_id, status, acceptance_mode, deal_type, name, locale,
         sections, custom_variables, valid_until, auto_activate_subscription, archived_at, created_at, updated_at)
       VALUES ('${id}', 'o', '${id}', 'c', '${sub}', '${status}', 'click', 'new_business', 'N', 'en', '[]', '{}', '${at}', 1,
         ${archived ? `'${archived}'` : 'NULL'}, '${at}', '${at}');`;
    db.exec(subscription('s-archived') + subscription('s-open') + offer('f1', 's-archived', 'archived', archivedAt) + offer('f2', 's-open', 'open', null));
    migrate(db);
    expect(db.prepare('SELECT id, status, terminated_at AS terminatedAt, updated_at AS updatedAt FROM subscriptions ORDER BY id').all()).toEqual([
      { id: 's-archived', status: 'terminated', terminatedAt: archivedAt, updatedAt: archivedAt },
      { id: 's-open', status: 'offer', terminatedAt: null, updatedAt: at },
    ]);
  });
});

describe('migration 026: the signing audit of offers', () => {
  it('moves the signing logs of recipients into signing events and drops the column; the offer reads them as before', async () => {
    const db = databaseAt(25);
    db.pragma('foreign_keys = OFF');
    const signedAt = '2026-02-01T09:00:00.000Z';
    db.exec(`
      INSERT INTO offers (id, organisation_id, number, customer_id, subscription_id, status, acceptance_mode, deal_type, name, locale,
        sections, custom_variables, valid_until, auto_activate_subscription, signed_at, created_at, updated_at)
      VALUES ('f1', 'o', 'OFF-1', 'c', 's', 'signed', 'print', 'new_business', 'N', 'en', '[]', '{}', '${at}', 1, '${signedAt}', '${at}', '${at}'),
             ('f2', 'o', 'OFF-2', 'c', 's2', 'signing', 'esignature', 'new_business', 'N', 'en', '[]', '{}', '${at}', 1, NULL, '${at}', '${at}');
      INSERT INTO offer_recipients (id, organisation_id, offer_id, position, email, first_name, last_name, signing_status, signing_log, signed_at, created_at)
      VALUES ('r1', 'o', 'f1', 0, 'a@example.com', 'A', 'One', 'signed', '["${signedAt} signed on paper (recorded by the seller)"]', '${signedAt}', '${at}'),
             ('r2', 'o', 'f2', 0, 'b@example.com', 'B', 'Two', 'signed', '["${signedAt} signed (esignature)"]', '${signedAt}', '${at}'),
             ('r3', 'o', 'f2', 1, 'c@example.com', 'C', 'Three', 'not_started', '[]', NULL, '${at}');
    `);
    migrate(db);
    expect(db.prepare('SELECT offer_id, recipient_id, at, kind, via, signer_name, ip, user_agent FROM offer_signing_events ORDER BY recipient_id').all()).toEqual([
      { offer_id: 'f1', recipient_id: 'r1', at: signedAt, kind: 'signed', via: 'api', signer_name: null, ip: null, user_agent: null },
      { offer_id: 'f2', recipient_id: 'r2', at: signedAt, kind: 'signed', via: 'api', signer_name: null, ip: null, user_agent: null },
    ]);
    expect(db.prepare("SELECT name FROM pragma_table_info('offer_recipients') WHERE name = 'signing_log'").all()).toEqual([]);
    const store = new SqliteStore(db);
    const f1 = await store.read((tx) => tx.offers.get('o', 'f1'));
    expect(f1).toMatchObject({ documents: [], events: [{ recipientId: 'r1', kind: 'signed', at: signedAt }] });
    const f2 = await store.read((tx) => tx.offers.findByRecipient('o', 'r3'));
    expect(f2?.events.map((e) => e.recipientId)).toEqual(['r2']);
    expect(() =>
      db.prepare(`INSERT INTO offer_signing_events (id, organisation_id, offer_id, recipient_id, at, kind, via) VALUES ('e', 'o', 'f2', 'r3', '${at}', 'viewed', 'api')`).run(),
    ).toThrow(/CHECK/);
    await store.close();
  });
});

describe('migration 029: SEPA pre-notification e-mails', () => {
  it('rebuilds emails with every row and index kept, and widens the kind CHECK to sepa_pre_notification', () => {
    const db = databaseAt(28);
    // Only the e-mail table is under test: its references need not exist here.
    db.pragma('foreign_keys = OFF');
    const columns = `(id, organisation_id, kind, customer_id, invoice_id, recipients, subject, body_text, body_html, attachments, status,
      attempts, last_error, next_attempt_at, sent_at, created_at, updated_at)`;
    db.exec(`INSERT INTO emails ${columns} VALUES
      ('e1', 'o', 'invoice', 'c', 'i', '["a@example.com"]', 'Invoice', 'Text', NULL, '[]', 'sent', 1, NULL, NULL, '${at}', '${at}', '${at}'),
      ('e2', 'o', 'dunning', 'c', 'i', '[]', 'Reminder', 'Text', '<p>x</p>', '[]', 'queued', 0, NULL, '${at}', NULL, '${at}', '${at}')`);
    const before = db.prepare('SELECT * FROM emails ORDER BY id').all();
    migrate(db);
    expect(db.prepare('SELECT * FROM emails ORDER BY id').all()).toEqual(before);
    const insert = (id: string, kind: string) =>
      db
        .prepare(`INSERT INTO emails ${columns} VALUES (?, 'o', ?, 'c', 'i', '[]', 'S', 'T', NULL, '[]', 'not_sent', 0, 'x', NULL, NULL, '${at}', '${at}')`)
        .run(id, kind);
    expect(() => insert('e3', 'sepa_pre_notification')).not.toThrow();
    expect(() => insert('e4', 'letter')).toThrow(/CHECK/);
    const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'emails' ORDER BY name").all();
    expect(indexes.map((r: any) => r.name)).toEqual(['emails_due', 'emails_list', 'sqlite_autoindex_emails_1']);
    expect(db.prepare("SELECT count(*) AS n FROM pragma_table_info('sepa_xml_payments') WHERE name = 'notification_email_id'").get()).toEqual({ n: 1 });
  });
});

describe('migrations 033 and 034: deduplication claims in buckets', () => {
  it('puts the events stored before it in claim bucket 0, which the first ingestion after closes', async () => {
    const db = databaseAt(32);
    db.exec(`INSERT INTO organisations (id, name, created_at) VALUES ('o', 'Old', '${at}');
      INSERT INTO usage_event_sequence (organisation_id, last) VALUES ('o', 4);`);
    const event = db.prepare(
      `INSERT INTO usage_events (subscription_id, event_name, ts, seq, organisation_id, event_id, target, customer_id, properties, unmatched, late, received_at)
       VALUES (?, 'call', 1, ?, 'o', ?, ?, 'c', jsonb('{}'), 0, 0, 1)`,
    );
    event.run('s1', 1, 'e-1', 0);
    event.run('s2', 2, 'e-1', 1);
    event.run('s1', 3, 'e-2', 0);
    event.run('s1', 4, 'e-3', 0);
    migrate(db);
    expect(db.prepare('SELECT event_id, target, claim_bucket FROM usage_events ORDER BY seq').all()).toEqual([
      { event_id: 'e-1', target: 0, claim_bucket: 0 },
      { event_id: 'e-1', target: 1, claim_bucket: 0 },
      { event_id: 'e-2', target: 0, claim_bucket: 0 },
      { event_id: 'e-3', target: 0, claim_bucket: 0 },
    ]);
    expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'usage_events_claim'").get()).toEqual({
      sql: 'CREATE UNIQUE INDEX usage_events_claim ON usage_events (organisation_id, claim_bucket, event_id, target)',
    });
    const store = new SqliteStore(db, { claimSizes: { bucketSpan: 2, maxSegment: 8 } });
    const row = (id: string, seq: number) => ({ seq, id, target: 0, eventName: 'call', ts: 2, subscriptionId: 's1', customerId: 'c', properties: '{}', unmatched: false, late: false, receivedAt: 2 });
    const ingest = (ids: string[]) =>
      store.transaction(async (tx) => {
        const reserved = await tx.usageEvents.reserveSeq('o', ids.length);
        return [...(await tx.usageEvents.insert('o', ids.map((id, i) => row(id, reserved.first + i)), reserved))];
      });
    expect(await ingest(['e-1', 'e-4'])).toEqual(['e-4']);
    expect(db.prepare('SELECT bucket, segment, capacity, length(hashes) / 8 AS ids FROM usage_event_claim_hashes').all()).toEqual([{ bucket: 0, segment: 0, capacity: 8, ids: 4 }]);
    expect(await ingest(['e-2', 'e-4', 'e-5'])).toEqual(['e-5']);
    await store.close();
  });
});
