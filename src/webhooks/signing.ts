import { createHmac } from 'node:crypto';

/**
 * Signatures of a delivery (CONTRACT "Webhooks and events"). Two schemes are sent side by side:
 * - `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret string
 *   exactly as shown (`whsec_…`, its UTF-8 bytes);
 * - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with
 *   the base64-decoded part of the secret after `whsec_`.
 */

const SECRET_PREFIX = 'whsec_';

export function bodySignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('hex');
}

export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

export interface SignedDelivery {
  /** Delivery id: `event.id` of the body. */
  id: string;
  eventType: string;
  eventVersion: string;
  organisationId: string;
  secret: string;
  body: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
}

/** Every header of one attempt (interface section 6.2, CONTRACT "Webhooks and events"). */
export function deliveryHeaders(d: SignedDelivery): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'billing-mcp-webhooks/1',
    'x-webhook-event': d.eventType,
    'x-webhook-event-version': d.eventVersion,
    'x-webhook-id': d.id,
    'x-webhook-timestamp': String(d.timestamp),
    'x-webhook-signature': bodySignature(d.secret, d.body),
    'x-tenant-id': d.organisationId,
    'webhook-id': d.id,
    'webhook-timestamp': String(d.timestamp),
    'webhook-signature': standardSignature(d.secret, d.id, d.timestamp, d.body),
  };
}
