import { randomBytes } from 'node:crypto';
import { newId } from '../ids.js';
import type { Tx } from '../store/store.js';
import { mintingKeyProblem } from './customerTokens.js';
import { hashToken } from './keys.js';

/** How long a portal session works after it was opened (Stripe's billing-portal sessions: the same). */
export const PORTAL_SESSION_SECONDS = 60 * 60;

/** 32 random bytes in base64url: 43 characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface PortalSessionToken {
  /** Shown once, in the portal URL; only its SHA-256 hash is stored. */
  token: string;
  expiresAt: string;
}

/** What a working session opens: one customer of one organisation. */
export interface PortalSubject {
  org: string;
  customerId: string;
  /** When the session ends. */
  expiresAt: string;
}

/** Opens a portal session for the customer, on behalf of the API key that asked for it. */
export async function openPortalSession(
  tx: Tx,
  subject: { organisationId: string; customerId: string; apiKeyId: string },
  now: Date,
): Promise<PortalSessionToken> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + PORTAL_SESSION_SECONDS * 1000).toISOString();
  await tx.portalSessions.insert({ id: newId(), ...subject, expiresAt, createdAt: now.toISOString() }, hashToken(token));
  return { token, expiresAt };
}

/**
 * The customer a portal token opens, or undefined for anything else: a token of the wrong shape, an
 * unknown one, one past its hour, or one whose API key was revoked or has expired. The token is looked
 * up by its SHA-256 hash, so how long the lookup takes depends on the hash, never on how much of a
 * stored token a guess matches.
 */
export async function findPortalSession(tx: Tx, token: string, now: Date): Promise<PortalSubject | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const session = await tx.portalSessions.findByHash(hashToken(token));
  if (!session) return undefined;
  if (Date.parse(session.expiresAt) <= now.getTime() || mintingKeyProblem(session, now)) return undefined;
  return { org: session.organisationId, customerId: session.customerId, expiresAt: session.expiresAt };
}
