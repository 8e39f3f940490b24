export interface Organisation {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  organisationId: string;
  name: string;
  prefix: string;
  /** `['*']` means every permission, present and future. */
  permissions: string[];
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export interface IdempotencyRecord {
  operation: string;
  requestHash: string;
  responseStatus: number;
  responseBody: string;
  createdAt: string;
}

export interface SystemRepo {
  createOrganisation(org: Organisation): Promise<void>;
  getOrganisation(id: string): Promise<Organisation | undefined>;
  listOrganisations(): Promise<Organisation[]>;
  createApiKey(key: ApiKeyRecord, keyHash: string): Promise<void>;
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** The API keys with these hashes, by hash (unknown hashes are absent): one read for many concurrent lookups. */
  findApiKeysByHash(keyHashes: readonly string[]): Promise<Map<string, ApiKeyRecord>>;
  getApiKey(id: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(organisationId: string): Promise<ApiKeyRecord[]>;
  revokeApiKey(id: string, at: string): Promise<void>;
  /** Next value of a per-organisation sequence (customer numbers, subscription numbers, …). */
  nextCounter(organisationId: string, name: string): Promise<number>;
  /** Sets a counter that `nextCounter` created to `value` (a batch of units that numbered several documents writes its last number once). */
  setCounter(organisationId: string, name: string, value: number): Promise<void>;
  getIdempotency(organisationId: string, key: string): Promise<IdempotencyRecord | undefined>;
  saveIdempotency(organisationId: string, key: string, rec: IdempotencyRecord): Promise<void>;
  purgeIdempotency(before: string): Promise<number>;
  getSecret(name: string): Promise<string | undefined>;
  /** The installation's secret of this name: `candidate` is stored when there is none yet. */
  ensureSecret(name: string, candidate: string, at: string): Promise<string>;
}
