import { conflict, notFound } from '../errors.js';
import { newUlid } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { DeliveryStatus, WebhookDelivery } from '../schemas/webhookDeliveries.js';
import type { EventType } from '../schemas/webhooks.js';
import type { Tx } from '../store/store.js';

/**
 * The outbox. Called inside the unit of work that changes the state, so the event and its deliveries
 * commit with the change or not at all. One delivery per enabled webhook subscribed to the type,
 * each with its own envelope (interface section 6.1: `event.id` is unique per delivery and equals
 * `X-Webhook-Id`); the body stored is the exact text that is signed and sent on every attempt.
 * The caller kicks the delivery worker after the commit. Returns the number of deliveries.
 */
export async function emitEvent(
  tx: Tx,
  org: string,
  event: { type: EventType; subjectId: string; data: Record<string, unknown> },
  now: Date,
): Promise<number> {
  const at = now.toISOString();
  const eventId = newUlid();
  await tx.events.insertEvent(org, { id: eventId, type: event.type, subjectId: event.subjectId, data: event.data, createdAt: at });
  const subscribers = await tx.events.subscribers(org, event.type);
  for (const webhook of subscribers) {
    const id = newUlid();
    const body = JSON.stringify({ event: { id, type: event.type, version: webhook.version, createdAt: at }, data: event.data });
    await tx.events.insertDelivery(org, {
      id,
      webhookId: webhook.id,
      eventId,
      eventType: event.type,
      eventVersion: webhook.version,
      body,
      nextAttemptAt: at,
      createdAt: at,
    });
  }
  return subscribers.length;
}

export async function listWebhookDeliveries(
  tx: Tx,
  org: string,
  webhookId: string,
  filter: { status?: DeliveryStatus | undefined },
  page: PageRequest,
) {
  if (!(await tx.webhooks.get(org, webhookId))) throw notFound('Webhook', webhookId);
  return tx.events.listDeliveries(org, webhookId, filter, page);
}

export async function getWebhookDelivery(tx: Tx, org: string, id: string): Promise<WebhookDelivery> {
  const delivery = await tx.events.getDelivery(org, id);
  if (!delivery) throw notFound('Webhook delivery', id);
  return delivery;
}

/**
 * Sends a delivery again, whatever its status, as a new round (the first attempt now, then up to 3
 * automatic retries), with the same id and body. The webhook must be enabled.
 */
export async function retryWebhookDelivery(tx: Tx, org: string, id: string, now: Date): Promise<WebhookDelivery> {
  const delivery = await getWebhookDelivery(tx, org, id);
  const webhook = await tx.webhooks.get(org, delivery.webhook);
  if (!webhook?.enabled) {
    throw conflict(
      `Webhook ${delivery.webhook} is disabled, so it receives nothing; enable it (update_webhook with enabled true) before retrying delivery ${id}`,
    );
  }
  const at = now.toISOString();
  await tx.events.reschedule(org, id, at, at);
  return getWebhookDelivery(tx, org, id);
}
