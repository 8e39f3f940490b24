import type { ApiKeyRecord, IdempotencyRecord, Organisation, SystemRepo } from '../ports/system.js';
import type { Sql } from '../sql.js';

interface ApiKeyRow {
  id: string;
  organisation_id: string;
  name: string;
  prefix: string;
  permissions: string;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

const toApiKey = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  organisationId: r.organisation_id,
  name: r.name,
  prefix: r.prefix,
  permissions: JSON.parse(r.permissions) as string[],
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  createdAt: r.created_at,
});

const KEY_COLUMNS = 'id, organisation_id, name, prefix, permissions, expires_at, revoked_at, created_at';

export class SqlSystemRepo implements SystemRepo {
  constructor(private readonly sql: Sql) {}

  async createOrganisation(org: Organisation): Promise<void> {
    await this.sql.run('INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)', org.id, org.name, org.createdAt);
  }

  async getOrganisation(id: string): Promise<Organisation | undefined> {
    return await this.sql.get<Organisation>('SELECT id, name, created_at AS createdAt FROM organisations WHERE id = ?', id);
  }

  async listOrganisations(): Promise<Organisation[]> {
    return await this.sql.all<Organisation>('SELECT id, name, created_at AS createdAt FROM organisations ORDER BY created_at, id');
  }

  async createApiKey(key: ApiKeyRecord, keyHash: string): Promise<void> {
    await this.sql.run(
      `INSERT INTO api_keys (${KEY_COLUMNS}, key_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      key.id,
      key.organisationId,
      key.name,
      key.prefix,
      JSON.stringify(key.permissions),
      key.expiresAt,
      key.revokedAt,
      key.createdAt,
      keyHash,
    );
  }

  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.sql.get<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`, keyHash);
    return row && toApiKey(row);
  }

  async findApiKeysByHash(keyHashes: readonly string[]): Promise<Map<string, ApiKeyRecord>> {
    const rows = await this.sql.all<ApiKeyRow & { keyHash: string }>(
      `SELECT ${KEY_COLUMNS}, key_hash AS keyHash FROM api_keys WHERE key_hash IN (SELECT value FROM json_each(?))`,
      JSON.stringify(keyHashes),
    );
    return new Map(rows.map((r) => [r.keyHash, toApiKey(r)]));
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.sql.get<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, id);
    return row && toApiKey(row);
  }

  async listApiKeys(organisationId: string): Promise<ApiKeyRecord[]> {
    return (await this.sql
      .all<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE organisation_id = ? ORDER BY created_at, id`, organisationId))
      .map(toApiKey);
  }

  async revokeApiKey(id: string, at: string): Promise<void> {
    await this.sql.run('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?', at, id);
  }

  async nextCounter(organisationId: string, name: string): Promise<number> {
    const row = await this.sql.get<{ value: number }>(
      `INSERT INTO counters (organisation_id, name, value) VALUES (?, ?, 1)
       ON CONFLICT (organisation_id, name) DO UPDATE SET value = counters.value + 1 RETURNING value`,
      organisationId,
      name,
    );
    return (row as { value: number }).value;
  }

  async setCounter(organisationId: string, name: string, value: number): Promise<void> {
    await this.sql.run('UPDATE counters SET value = ? WHERE organisation_id = ? AND name = ?', value, organisationId, name);
  }

  async getIdempotency(organisationId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return await this.sql.get<IdempotencyRecord>(
      `SELECT operation, request_hash AS requestHash, response_status AS responseStatus,
              response_body AS responseBody, created_at AS createdAt
       FROM idempotency_keys WHERE organisation_id = ? AND key = ?`,
      organisationId,
      key,
    );
  }

  async saveIdempotency(organisationId: string, key: string, rec: IdempotencyRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO idempotency_keys (organisation_id, key, operation, request_hash, response_status, response_body, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (organisation_id, key) DO UPDATE SET operation = excluded.operation,
         request_hash = excluded.request_hash, response_status = excluded.response_status,
         response_body = excluded.response_body, created_at = excluded.created_at`,
      organisationId,
      key,
      rec.operation,
      rec.requestHash,
      rec.responseStatus,
      rec.responseBody,
      rec.createdAt,
    );
  }

  async purgeIdempotency(before: string): Promise<number> {
    return (await this.sql.run('DELETE FROM idempotency_keys WHERE created_at < ?', before)).changes;
  }

  async getSecret(name: string): Promise<string | undefined> {
    return (await this.sql.get<{ value: string }>('SELECT value FROM secrets WHERE name = ?', name))?.value;
  }

  async ensureSecret(name: string, candidate: string, at: string): Promise<string> {
    await this.sql.run('INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', name, candidate, at);
    return (await this.getSecret(name))!;
  }
}
