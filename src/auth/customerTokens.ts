import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Store, Tx } from '../store/store.js';
import { CUSTOMER_PERMISSIONS, hashToken, type CustomerPrincipal } from './keys.js';

const ACCESS_PREFIX = 'bmca_';
const REFRESH_PREFIX = 'bmcr_';

export interface TokenLifetimes {
  accessSeconds: number;
  refreshSeconds: number;
}

export interface CustomerTokenPair {
  accessToken: string;
  refreshToken: string;
}

export function isCustomerAccessToken(token: string): boolean {
  return token.startsWith(ACCESS_PREFIX);
}

const plus = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

/** A new access/refresh pair in a token family (a new family when none is given). */
export async function issueCustomerTokens(
  tx: Tx,
  subject: { organisationId: string; customerId: string; apiKeyId: string; familyId?: string },
  lifetimes: TokenLifetimes,
  now: Date,
): Promise<CustomerTokenPair> {
  const familyId = subject.familyId ?? newId();
  const at = now.toISOString();
  const pair = {
    accessToken: ACCESS_PREFIX + randomBytes(32).toString('base64url'),
    refreshToken: REFRESH_PREFIX + randomBytes(32).toString('base64url'),
  };
  const base = { organisationId: subject.organisationId, customerId: subject.customerId, apiKeyId: subject.apiKeyId, familyId };
  const common = { usedAt: null, revokedAt: null, createdAt: at };
  await tx.customerTokens.insert(
    { id: newId(), ...base, kind: 'access', expiresAt: plus(now, lifetimes.accessSeconds), ...common },
    hashToken(pair.accessToken),
  );
  await tx.customerTokens.insert(
    { id: newId(), ...base, kind: 'refresh', expiresAt: plus(now, lifetimes.refreshSeconds), ...common },
    hashToken(pair.refreshToken),
  );
  return pair;
}

/** Why something an API key issued (a customer token, a portal session) no longer works because of that key; undefined while the key is valid. */
export function mintingKeyProblem(t: { apiKeyRevokedAt: string | null; apiKeyExpiresAt: string | null }, now: Date): string | undefined {
  if (t.apiKeyRevokedAt) return 'the API key that issued it has been revoked';
  if (t.apiKeyExpiresAt && Date.parse(t.apiKeyExpiresAt) <= now.getTime()) return 'the API key that issued it has expired';
  return undefined;
}

/**
 * Rotation with reuse detection: a refresh token works once and yields a new pair in its family;
 * presenting a used one again revokes the whole family (it may have been stolen).
 */
export async function refreshCustomerTokens(tx: Tx, refreshToken: string, lifetimes: TokenLifetimes, now: Date): Promise<CustomerTokenPair> {
  const invalid = (why: string) => new AppError('unauthorized', `Invalid refresh token: ${why}; authenticate the customer again`);
  if (!refreshToken.startsWith(REFRESH_PREFIX)) throw invalid('it is not a refresh token');
  const token = await tx.customerTokens.findByHash(hashToken(refreshToken));
  if (!token || token.kind !== 'refresh') throw invalid('unknown token');
  const keyProblem = mintingKeyProblem(token, now);
  if (keyProblem) throw invalid(keyProblem);
  if (token.revokedAt) throw invalid('its token family has been revoked');
  if (Date.parse(token.expiresAt) <= now.getTime()) throw invalid(`it expired at ${token.expiresAt}`);
  if (!(await tx.customerTokens.markUsed(token.id, now.toISOString()))) {
    await tx.customerTokens.revokeFamily(token.familyId, now.toISOString());
    const reused = invalid('it was already used, so every token of its family has been revoked');
    reused.keepChanges = true;
    throw reused;
  }
  return issueCustomerTokens(
    tx,
    { organisationId: token.organisationId, customerId: token.customerId, apiKeyId: token.apiKeyId, familyId: token.familyId },
    lifetimes,
    now,
  );
}

/** A customer access token to its principal; checked against the store on every request. */
export async function authenticateCustomer(store: Store, token: string, now: Date): Promise<CustomerPrincipal> {
  const found = await store.findCustomerToken(hashToken(token));
  if (!found || found.kind !== 'access') throw new AppError('unauthorized', 'Unknown customer token');
  const keyProblem = mintingKeyProblem(found, now);
  if (keyProblem) throw new AppError('unauthorized', `This customer token no longer works: ${keyProblem}`);
  if (found.revokedAt) throw new AppError('unauthorized', 'This customer token has been revoked');
  if (Date.parse(found.expiresAt) <= now.getTime()) {
    throw new AppError('unauthorized', `This customer token expired at ${found.expiresAt}; refresh it with POST /customers/token/refresh`);
  }
  return {
    kind: 'customer',
    organisationId: found.organisationId,
    customerId: found.customerId,
    customerNumber: found.customerNumber,
    keyId: found.apiKeyId,
    permissions: CUSTOMER_PERMISSIONS,
  };
}
