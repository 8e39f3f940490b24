import type { CustomerTokenLookup, CustomerTokenRecord, CustomerTokenRepo } from '../ports/customerTokens.js';
import type { Sql } from '../sql.js';

interface Row {
  id: string;
  organisation_id: string;
  customer_id: string;
  api_key_id: string;
  family_id: string;
  kind: 'access' | 'refresh';
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
  created_at: string;
  key_revoked_at: string | null;
  key_expires_at: string | null;
  customer_number: string;
}

export class SqlCustomerTokenRepo implements CustomerTokenRepo {
  constructor(private readonly sql: Sql) {}

  async insert(t: CustomerTokenRecord, tokenHash: string): Promise<void> {
    await this.sql.run(
      `INSERT INTO customer_tokens (id, organisation_id, customer_id, api_key_id, family_id, kind, token_hash, expires_at,
         used_at, revoked_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      t.id,
      t.organisationId,
      t.customerId,
      t.apiKeyId,
      t.familyId,
      t.kind,
      tokenHash,
      t.expiresAt,
      t.usedAt,
      t.revokedAt,
      t.createdAt,
    );
  }

  async findByHash(tokenHash: string): Promise<CustomerTokenLookup | undefined> {
    const r = await this.sql.get<Row>(
      `SELECT t.*, k.revoked_at AS key_revoked_at, k.expires_at AS key_expires_at, c.customer_number
       FROM customer_tokens t JOIN api_keys k ON k.id = t.api_key_id JOIN customers c ON c.id = t.customer_id
       WHERE t.token_hash = ?`,
      tokenHash,
    );
    return (
      r && {
        id: r.id,
        organisationId: r.organisation_id,
        customerId: r.customer_id,
        apiKeyId: r.api_key_id,
        familyId: r.family_id,
        kind: r.kind,
        expiresAt: r.expires_at,
        usedAt: r.used_at,
        revokedAt: r.revoked_at,
        createdAt: r.created_at,
        apiKeyRevokedAt: r.key_revoked_at,
        apiKeyExpiresAt: r.key_expires_at,
        customerNumber: r.customer_number,
      }
    );
  }

  async markUsed(id: string, at: string): Promise<boolean> {
    return (await this.sql.run('UPDATE customer_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL', at, id)).changes === 1;
  }

  async revokeFamily(familyId: string, at: string): Promise<void> {
    await this.sql.run('UPDATE customer_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE family_id = ?', at, familyId);
  }
}
