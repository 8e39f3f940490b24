export interface PortalSessionRecord {
  id: string;
  organisationId: string;
  customerId: string;
  /** The API key that opened the session: revoking or expiring it ends the session. */
  apiKeyId: string;
  expiresAt: string;
  createdAt: string;
}

/** A session with what decides whether it still works: the key that opened it. */
export interface PortalSessionLookup extends PortalSessionRecord {
  apiKeyRevokedAt: string | null;
  apiKeyExpiresAt: string | null;
}

export interface PortalSessionRepo {
  /** Stores the session under the hash of its token (the token itself is never stored). */
  insert(session: PortalSessionRecord, tokenHash: string): Promise<void>;
  findByHash(tokenHash: string): Promise<PortalSessionLookup | undefined>;
  /** Deletes the sessions that expired before `before`; how many. */
  purgeExpired(before: string): Promise<number>;
}
