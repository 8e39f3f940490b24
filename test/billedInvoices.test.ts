import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCustomer } from '../src/domain/customers.js';
import { issueBilledInvoice, type BilledLineInput } from '../src/domain/invoices.js';
import { getOrganisation } from '../src/domain/organisation.js';
import { createOrganisation } from '../src/server.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { migrate, openDatabase, SqliteStore } from '../src/store/sqlite.js';

/**
 * issueBilledInvoice, the billing engine's one way to write an invoice, against a real migrated
 * SQLite store. Every amount below is computed by hand in the comments.
 */

let store: SqliteStore;
let org: string;
const NOW = new Date('2027-01-05T09:00:00Z');

beforeEach(async () => {
  store = new SqliteStore(openDatabase(':memory:'));
  org = (await createOrganisation(store, 'Billing engine test')).organisationId;
});
afterEach(() => store.close());

async function customer(fields: { paymentTermDays?: number | null; timeZone?: string; currencyCode?: string } = {}) {
  return store.transaction((tx) =>
    createCustomer(
      tx,
      org,
      { lastName: 'Lovelace', timeZone: fields.timeZone ?? 'UTC', currencyCode: fields.currencyCode ?? 'EUR', status: 'STATUS_ACTIVE', paymentTermDays: fields.paymentTermDays },
      NOW,
    ),
  );
}

const line = (over: Partial<BilledLineInput> = {}): BilledLineInput => ({
  description: 'Pro plan, 2026-12-01 to 2027-01-01',
  quantity: '1',
  unitAmountDecimal: '4900',
  netAmount: 4900,
  taxRateE4: 190000,
  periodStart: '2026-12-01T00:00:00.000Z',
  periodEnd: '2027-01-01T00:00:00.000Z',
  ...over,
});

function issue(customerId: string, lines: BilledLineInput[], over: { issuedAt?: string; paymentTermDays?: number; subscriptionId?: string | null } = {}) {
  return store.transaction(async (tx) =>
    issueBilledInvoice(
      tx,
      org,
      {
        customer: (await tx.customers.get(org, customerId))!,
        subscription: over.subscriptionId ? { id: over.subscriptionId, number: 'SUB-000001', name: null, poNumber: null } : null,
        parties: { address: null, seller: await getOrganisation(tx, org), reverseCharges: [] },
        issuedAt: over.issuedAt ?? '2027-01-01T00:00:00Z',
        lines,
        paymentTermDays: over.paymentTermDays ?? 14,
      },
      NOW,
    ),
  );
}

const events = () =>
  (store.db.prepare('SELECT type, subject_id AS subject, data FROM events WHERE organisation_id = ? ORDER BY rowid').all(org) as Array<{ type: string; subject: string; data: string }>).map(
    (e) => ({ type: e.type, subject: e.subject, data: JSON.parse(e.data) }),
  );
const balance = async (id: string) => (await store.read((tx) => tx.customers.get(org, id)))!.creditBalance;

describe('issueBilledInvoice', () => {
  it('issues an open invoice on the billing date: number of its year, payment terms, lines as given, totals per rate', async () => {
    const c = await customer();
    const sub = '0195c2a4-7f1e-7c3a-9b7e-2f1d3c4b5a69';
    const inv = await issue(
      c.id,
      [
        line(),
        // 1234.5 API calls at 0.25 cents: 308.625 -> 309 cents (the engine rounds; the line keeps its net).
        line({ description: 'API calls', quantity: '1234.500', unitAmountDecimal: '0.250', netAmount: 309 }),
        line({ description: 'Books', quantity: '2', unitAmountDecimal: '1999', netAmount: 3998, taxRateE4: 70000 }),
        // a discount line: -10 % of 4900
        line({ description: 'Discount 10 %', quantity: '1', unitAmountDecimal: '-490', netAmount: -490 }),
      ],
      { issuedAt: '2026-12-31T23:30:00+01:00', subscriptionId: sub },
    );
    // 19 %: 4900 + 309 - 490 = 4719 -> tax 896.61 -> 897; 7 %: 3998 -> 279.86 -> 280.
    expect(inv).toMatchObject({
      number: 'INV-2026-000001',
      customer: c.id,
      subscription: sub,
      status: 'open',
      currencyCode: 'EUR',
      taxes: [
        { rate: 19, netAmount: 4719, taxAmount: 897 },
        { rate: 7, netAmount: 3998, taxAmount: 280 },
      ],
      netAmount: 8717,
      taxAmount: 1177,
      grossAmount: 9894,
      amountPaid: 0,
      creditApplied: 0,
      amountDue: 9894,
      issuedAt: '2026-12-31T22:30:00.000Z',
      dueAt: '2027-01-14T22:30:00.000Z',
      paidAt: null,
      createdAt: NOW.toISOString(),
    });
    expect(inv.lines.map((l: any) => [l.position, l.quantity, l.unitAmountDecimal, l.unitAmount, l.netAmount, l.taxRate])).toEqual([
      [1, '1', '4900', 4900, 4900, 19],
      [2, '1234.5', '0.25', null, 309, 19],
      [3, '2', '1999', 1999, 3998, 7],
      [4, '1', '-490', -490, -490, 19],
    ]);
    expect(inv.lines[0]).toMatchObject({ periodStart: '2026-12-01T00:00:00.000Z', periodEnd: '2027-01-01T00:00:00.000Z' });
    expect(await store.read((tx) => tx.invoices.get(org, inv.id))).toEqual(inv);

    // The year of issuedAt numbers it, not the year of now.
    expect((await issue(c.id, [line()], { issuedAt: '2027-01-01T00:00:00Z' })).number).toBe('INV-2027-000001');
    expect((await issue(c.id, [line()], { issuedAt: '2026-12-01T00:00:00Z' })).number).toBe('INV-2026-000002');
  });

  it("numbers an invoice by the year of its issue date in the customer's time zone, the date it shows", async () => {
    // 2026-12-31T23:30Z is 2027-01-01 00:30 in Berlin and still 2026-12-31 18:30 in New York.
    const berlin = await customer({ timeZone: 'Europe/Berlin' });
    const newYork = await customer({ timeZone: 'America/New_York' });
    expect((await issue(berlin.id, [line()], { issuedAt: '2026-12-31T23:30:00Z' })).number).toBe('INV-2027-000001');
    expect((await issue(newYork.id, [line()], { issuedAt: '2026-12-31T23:30:00Z' })).number).toBe('INV-2026-000001');
    // 2027-01-01T03:00Z is still New Year's Eve in New York.
    expect((await issue(newYork.id, [line()], { issuedAt: '2027-01-01T03:00:00Z' })).number).toBe('INV-2026-000002');
  });

  it('takes the customer’s paymentTermDays over the organisation default, in the customer’s time zone', async () => {
    const own = await customer({ paymentTermDays: 30 });
    expect((await issue(own.id, [line()], { paymentTermDays: 14 })).dueAt).toBe('2027-01-31T00:00:00.000Z');
    const none = await customer();
    expect((await issue(none.id, [line()], { paymentTermDays: 7 })).dueAt).toBe('2027-01-08T00:00:00.000Z');
    const immediate = await customer({ paymentTermDays: 0 });
    expect((await issue(immediate.id, [line()])).dueAt).toBe('2027-01-01T00:00:00.000Z');
    // Berlin leaves summer time on 2026-10-25: 14 days after 12:00 CEST is 12:00 CET, an hour later in UTC.
    const berlin = await customer({ timeZone: 'Europe/Berlin' });
    expect((await issue(berlin.id, [line()], { issuedAt: '2026-10-20T10:00:00Z' })).dueAt).toBe('2026-11-03T11:00:00.000Z');
  });

  it('emits invoice.created with the invoice; a total of 0 is paid at once and emits invoice.paid too', async () => {
    const c = await customer();
    const open = await issue(c.id, [line()]);
    expect(events()).toEqual([{ type: 'invoice.created', subject: open.id, data: { invoice: open } }]);

    const free = await issue(c.id, [line({ description: 'Trial', unitAmountDecimal: '4900', netAmount: 0 })]);
    expect(free).toMatchObject({ status: 'paid', grossAmount: 0, amountDue: 0, paidAt: '2027-01-01T00:00:00.000Z' });
    expect(events().slice(1)).toEqual([
      { type: 'invoice.created', subject: free.id, data: { invoice: free } },
      { type: 'invoice.paid', subject: free.id, data: { invoice: free } },
    ]);

    // A discount that cancels the charge exactly: 0 total, paid.
    const cancelled = await issue(c.id, [line(), line({ description: 'Discount 100 %', unitAmountDecimal: '-4900', netAmount: -4900 })]);
    expect(cancelled).toMatchObject({ status: 'paid', netAmount: 0, taxAmount: 0, grossAmount: 0 });
  });

  it('takes the customer’s credit balance off the amount due, paying the invoice when it covers all', async () => {
    const c = await customer();
    await store.transaction((tx) => tx.customers.addCreditBalance(org, c.id, 2000, NOW.toISOString()));
    // 4900 + 19 % = 5831; 2000 of credit leaves 3831 due.
    const first = await issue(c.id, [line()]);
    expect(first).toMatchObject({ status: 'open', grossAmount: 5831, creditApplied: 2000, amountPaid: 0, amountDue: 3831 });
    expect(await balance(c.id)).toBe(0);

    await store.transaction((tx) => tx.customers.addCreditBalance(org, c.id, 7000, NOW.toISOString()));
    const covered = await issue(c.id, [line()]);
    expect(covered).toMatchObject({ status: 'paid', creditApplied: 5831, amountDue: 0, paidAt: '2027-01-01T00:00:00.000Z' });
    expect(await balance(c.id)).toBe(1169);
    expect(events().filter((e) => e.subject === covered.id).map((e) => e.type)).toEqual(['invoice.created', 'invoice.paid']);
  });

  it('refuses a negative total and writes nothing', async () => {
    const c = await customer();
    await expect(issue(c.id, [line({ unitAmountDecimal: '-4900', netAmount: -4900 })])).rejects.toThrow(/cannot total less than 0/);
    await expect(issue(c.id, [line({ unitAmountDecimal: '0.0000000000001' })])).rejects.toThrow(RangeError);
    await expect(issue(c.id, [line({ quantity: '1.1234567' })])).rejects.toThrow(RangeError);
    expect(store.db.prepare('SELECT count(*) AS n FROM invoices').get()).toEqual({ n: 0 });
    expect(events()).toEqual([]);
    // The counter was not consumed either.
    expect((await issue(c.id, [line()])).number).toBe('INV-2027-000001');
  });
});

describe('migration 012', () => {
  it('keeps the meaning of invoices, lines and payments written before it', async () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    for (const m of MIGRATIONS.filter((m) => m.version <= 10)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '2026-01-01T00:00:00Z');
    }
    const at = '2026-03-01T00:00:00.000Z';
    db.exec(`
      INSERT INTO organisations VALUES ('o', 'Old', '${at}');
      INSERT INTO customers (id, organisation_id, customer_number, time_zone, last_name, currency_code, status, created_at, updated_at)
        VALUES ('c', 'o', 'CUS-000001', 'UTC', 'Old', 'EUR', 'STATUS_ACTIVE', '${at}', '${at}');
      INSERT INTO invoices (id, organisation_id, number, customer_id, status, currency_code, net_amount, tax_amount, gross_amount,
        amount_paid, taxes, issued_at, due_at, created_at, updated_at)
        VALUES ('i', 'o', 'INV-2026-000001', 'c', 'open', 'EUR', 14700, 2793, 17493, 7493, '[{"rateE4":190000,"netAmount":14700,"taxAmount":2793}]',
          '${at}', '${at}', '${at}', '${at}');
      INSERT INTO invoice_lines (id, organisation_id, invoice_id, position, description, quantity, unit_amount, net_amount, tax_rate_e4)
        VALUES ('l', 'o', 'i', 1, 'Seats', '3', 4900, 14700, 190000);
      INSERT INTO invoice_payments (id, organisation_id, invoice_id, amount, paid_at, created_at) VALUES ('p', 'o', 'i', 7493, '${at}', '${at}');
    `);
    migrate(db);
    const old = new SqliteStore(db);
    const inv = await old.read((tx) => tx.invoices.get('o', 'i'));
    expect(inv).toMatchObject({ status: 'open', grossAmount: 17493, amountPaid: 7493, amountCredited: 0, creditApplied: 0, amountDue: 10000 });
    expect(inv!.lines).toEqual([
      { id: 'l', position: 1, description: 'Seats', quantity: '3', unitAmountDecimal: '4900', unitAmount: 4900, netAmount: 14700, taxRate: 19, periodStart: null, periodEnd: null },
    ]);
    expect(await old.read((tx) => tx.customers.get('o', 'c'))).toMatchObject({ paymentTermDays: null, creditBalance: 0 });
    // The CHECKs carried over by the rename: a paid invoice is fully settled, nothing settles beyond gross.
    expect(() => db.prepare("UPDATE invoices SET status = 'paid', paid_at = ? WHERE id = 'i'").run(at)).toThrow(/CHECK/);
    expect(() => db.prepare('UPDATE invoices SET amount_settled = 17494 WHERE id = ?').run('i')).toThrow(/CHECK/);
    expect(() => db.prepare('UPDATE invoices SET amount_credited = 8000 WHERE id = ?').run('i')).toThrow(/CHECK/);
    await old.close();
  });
});
