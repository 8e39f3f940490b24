export interface CustomerTokenRecord {
  id: string;
  organisationId: string;
  customerId: string;
  apiKeyId: string;
  familyId: string;
  kind: 'access' | 'refresh';
  expiresAt: string;
  usedAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

/** A token with what decides whether it still works (the key that minted it) and its customer's number. */
export interface CustomerTokenLookup extends CustomerTokenRecord {
  apiKeyRevokedAt: string | null;
  apiKeyExpiresAt: string | null;
  customerNumber: string;
}

export interface CustomerTokenRepo {
  insert(token: CustomerTokenRecord, tokenHash: string): Promise<void>;
  findByHash(tokenHash: string): Promise<CustomerTokenLookup | undefined>;
  /** Marks a refresh token used; false when it already was (a reuse). */
  markUsed(id: string, at: string): Promise<boolean>;
  revokeFamily(familyId: string, at: string): Promise<void>;
}
