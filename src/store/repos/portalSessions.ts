import type { PortalSessionLookup, PortalSessionRecord, PortalSessionRepo } from '../ports/portalSessions.js';
import type { Sql } from '../sql.js';

interface Row {
  id: string;
  organisation_id: string;
  customer_id: string;
  api_key_id: string;
  expires_at: string;
  created_at: string;
  key_revoked_at: string | null;
  key_expires_at: string | null;
}

export class SqlPortalSessionRepo implements PortalSessionRepo {
  constructor(private readonly sql: Sql) {}

  async insert(s: PortalSessionRecord, tokenHash: string): Promise<void> {
    await this.sql.insert('portal_sessions', {
      id: s.id,
      organisation_id: s.organisationId,
      customer_id: s.customerId,
      api_key_id: s.apiKeyId,
      token_hash: tokenHash,
      expires_at: s.expiresAt,
      created_at: s.createdAt,
    });
  }

  async findByHash(tokenHash: string): Promise<PortalSessionLookup | undefined> {
    const r = await this.sql.get<Row>(
      `SELECT s.id, s.organisation_id, s.customer_id, s.api_key_id, s.expires_at, s.created_at,
         k.revoked_at AS key_revoked_at, k.expires_at AS key_expires_at
       FROM portal_sessions s JOIN api_keys k ON k.id = s.api_key_id
       WHERE s.token_hash = ?`,
      tokenHash,
    );
    return (
      r && {
        id: r.id,
        organisationId: r.organisation_id,
        customerId: r.customer_id,
        apiKeyId: r.api_key_id,
        expiresAt: r.expires_at,
        createdAt: r.created_at,
        apiKeyRevokedAt: r.key_revoked_at,
        apiKeyExpiresAt: r.key_expires_at,
      }
    );
  }

  async purgeExpired(before: string): Promise<number> {
    return (await this.sql.run('DELETE FROM portal_sessions WHERE expires_at < ?', before)).changes;
  }
}
