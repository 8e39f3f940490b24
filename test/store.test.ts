import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase, SCHEMA_VERSION } from '../src/store/sqlite.js';

describe('SQLite store', () => {
  const file = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'billing-store-')), 'db.sqlite');

  it('opens in WAL mode with foreign keys on, every migration applied, and full sync by default', () => {
    const db = openDatabase(file());
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect((db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('syncs at checkpoints only with BILLING_DB_SYNCHRONOUS=normal', () => {
    expect(loadConfig({ BILLING_DB_SYNCHRONOUS: 'normal' }).dbSynchronous).toBe('normal');
    expect(() => loadConfig({ BILLING_DB_SYNCHRONOUS: 'sometimes' })).toThrow(/BILLING_DB_SYNCHRONOUS must be full or normal/);
    const db = openDatabase(file(), 'normal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    db.close();
  });

  it('every table is STRICT and every table but organisations carries its organisation', () => {
    const db = openDatabase(':memory:');
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string; sql: string }>;
    for (const t of tables) {
      expect(t.sql, t.name).toMatch(/\)\s*STRICT(, WITHOUT ROWID)?$/);
      if (t.name !== 'organisations' && t.name !== 'schema_migrations') expect(t.sql, t.name).toContain('organisation_id TEXT NOT NULL');
    }
    db.close();
  });
});
