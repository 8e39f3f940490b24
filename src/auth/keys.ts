import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { ApiKeyRecord } from '../store/ports/system.js';
import type { Store, Tx } from '../store/store.js';
import { authenticateCustomer, isCustomerAccessToken } from './customerTokens.js';

const KEY_PREFIX = 'bmk_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Every permission a key may hold: `<resource>:<read|write>`; `write` implies `read`. */
export type Permission = string;

export interface ApiKeyPrincipal {
  kind: 'api_key';
  organisationId: string;
  keyId: string;
  permissions: readonly string[];
}

/** The permissions every customer token carries (interface section 5). */
export const CUSTOMER_PERMISSIONS = [
  'ROLE_CUSTOMER',
  'customer:self:read',
  'customer:payment-method:add',
  'customer:payment-method:read',
] as const;
export type CustomerPermission = (typeof CUSTOMER_PERMISSIONS)[number];

/** A customer token: reaches only that customer's own data (CONTRACT section 3). */
export interface CustomerPrincipal {
  kind: 'customer';
  organisationId: string;
  customerId: string;
  /** The customer's number as it is now (read with the token on every call): inputs may name the customer by it. */
  customerNumber: string;
  /** The API key that minted the token; revoking it ends the token. */
  keyId: string;
  permissions: readonly string[];
}

/** A caller without a bearer token, for the one operation its input authorizes (token refresh). */
export interface AnonymousPrincipal {
  kind: 'anonymous';
  organisationId: '';
  keyId: '';
  permissions: readonly string[];
}

export type Principal = ApiKeyPrincipal | CustomerPrincipal | AnonymousPrincipal;

export const ANONYMOUS: AnonymousPrincipal = { kind: 'anonymous', organisationId: '', keyId: '', permissions: [] };

export function can(principal: Principal, permission: Permission): boolean {
  if (principal.kind !== 'api_key') return false;
  const perms = principal.permissions;
  if (perms.includes('*') || perms.includes(permission)) return true;
  return permission.endsWith(':read') && perms.includes(`${permission.slice(0, -':read'.length)}:write`);
}

export interface CreatedKey {
  id: string;
  apiKey: string;
  record: ApiKeyRecord;
}

/** The organisation `organisationId` names; a 404 when there is none. */
async function organisationOf(tx: Tx, organisationId: string) {
  const org = await tx.system.getOrganisation(organisationId);
  if (!org) throw new AppError('not_found', `Organisation ${organisationId} was not found`);
  return org;
}

/**
 * Creates a key; the clear text is returned once and only its hash is stored. Without `permissions`
 * the key holds `*` (every permission); an empty list is refused, and a permission named twice is
 * stored once.
 */
export async function createApiKey(
  tx: Tx,
  input: { organisationId: string; name: string; permissions?: string[] | undefined; expiresAt?: string | null | undefined },
  now: Date,
): Promise<CreatedKey> {
  if (input.permissions?.length === 0) throw new AppError('bad_request', 'A key needs at least one permission; leave permissions out for every permission');
  const org = await organisationOf(tx, input.organisationId);
  const apiKey = KEY_PREFIX + randomBytes(32).toString('base64url');
  const record: ApiKeyRecord = {
    id: newId(),
    organisationId: org.id,
    name: input.name,
    prefix: apiKey.slice(0, 12),
    permissions: input.permissions ? [...new Set(input.permissions)] : ['*'],
    expiresAt: input.expiresAt ?? null,
    revokedAt: null,
    createdAt: now.toISOString(),
  };
  await tx.system.createApiKey(record, hashToken(apiKey));
  return { id: record.id, apiKey, record };
}

/** The keys of an organisation (no secrets: only hashes are stored); an unknown organisation is a 404. */
export async function listApiKeys(tx: Tx, organisationId: string): Promise<ApiKeyRecord[]> {
  await organisationOf(tx, organisationId);
  return tx.system.listApiKeys(organisationId);
}

/**
 * Resolves a bearer token to its principal, checked against the store on every call so that a
 * revoked or expired key stops working at once (also in a long-running stdio process).
 */
export async function authenticate(store: Store, token: string | undefined, now: Date): Promise<Principal> {
  if (!token) {
    throw new AppError('unauthorized', 'Missing API key: send the header Authorization: Bearer <API key>');
  }
  if (isCustomerAccessToken(token)) return authenticateCustomer(store, token, now);
  const key = await store.findApiKey(hashToken(token));
  if (!key) throw new AppError('unauthorized', 'Unknown API key');
  if (key.revokedAt) throw new AppError('unauthorized', 'This API key has been revoked');
  if (key.expiresAt && Date.parse(key.expiresAt) <= now.getTime()) {
    throw new AppError('unauthorized', `This API key expired at ${key.expiresAt}`);
  }
  return { kind: 'api_key', organisationId: key.organisationId, keyId: key.id, permissions: key.permissions };
}
