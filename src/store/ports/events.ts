import type { PageRequest } from '../../schemas/common.js';
import type { DeliveryStatus, WebhookDelivery, WebhookDeliveryRow } from '../../schemas/webhookDeliveries.js';
import type { EventType } from '../../schemas/webhooks.js';

export interface EventRecord {
  id: string;
  type: EventType;
  /** Id of the resource the event is about (the payment plan). */
  subjectId: string;
  /** The `data` object of the envelope. */
  data: unknown;
  createdAt: string;
}

export interface Subscriber {
  id: string;
  version: 'v1';
}

export interface NewDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  eventVersion: 'v1';
  /** The exact body that is signed and sent on every attempt. */
  body: string;
  nextAttemptAt: string;
  createdAt: string;
}

/** What a delivery's state becomes after an attempt. */
export interface AttemptOutcome {
  status: 'pending' | 'delivered' | 'failed';
  /** Attempts of the current round (the first attempt and its automatic retries). */
  roundAttempts: number;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

/** A webhook with pending deliveries, for the delivery worker: its URL's origin is the target it is scheduled by. */
export interface DueTarget {
  webhookId: string;
  organisationId: string;
  url: string;
  enabled: boolean;
  /** Its earliest pending delivery's next attempt. */
  due: string;
}

/** A delivery that is due, with what sending it needs. */
export interface DueDelivery {
  id: string;
  organisationId: string;
  webhookId: string;
  url: string;
  secret: string;
  eventType: EventType;
  eventVersion: 'v1';
  body: string;
  roundAttempts: number;
  nextAttemptAt: string;
}

export interface AttemptResult {
  id: string;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface EventRepo {
  insertEvent(org: string, event: EventRecord): Promise<void>;
  /** `insertEvent` of many, in multi-row statements. */
  insertEvents(org: string, events: readonly EventRecord[]): Promise<void>;
  /** Enabled webhooks of the organisation subscribed to the event type. */
  subscribers(org: string, type: EventType): Promise<Subscriber[]>;
  insertDelivery(org: string, delivery: NewDelivery): Promise<void>;
  /** `insertDelivery` of many, in multi-row statements. */
  insertDeliveries(org: string, deliveries: readonly NewDelivery[]): Promise<void>;
  getDelivery(org: string, id: string): Promise<WebhookDelivery | undefined>;
  /** A page of the webhook's deliveries as list rows: neither body nor attempt log is read. */
  listDeliveries(
    org: string,
    webhookId: string,
    filter: { status?: DeliveryStatus | undefined },
    page: PageRequest,
  ): Promise<{ rows: WebhookDeliveryRow[]; total: number }>;
  /** A new round: pending, due at `dueAt`, its retries counted afresh. */
  reschedule(org: string, id: string, dueAt: string, at: string): Promise<void>;
  /** Across organisations, for the delivery worker: webhooks whose earliest pending delivery is due at `now`, earliest first. */
  dueTargets(now: string): Promise<DueTarget[]>;
  /** A webhook's pending deliveries due at `now`, earliest first, leaving out the ids in `except`. */
  dueOf(org: string, webhookId: string, now: string, except: readonly string[], limit: number): Promise<DueDelivery[]>;
  /** Not sent: every pending delivery of the webhook due at `now` (but those in `except`) becomes skipped; how many. */
  skipDue(org: string, webhookId: string, now: string, except: readonly string[], reason: string, at: string): Promise<number>;
  /** Moves the next attempt of pending deliveries to `until`, so no other pass picks them meanwhile. */
  lease(ids: string[], until: string): Promise<void>;
  /** Records an attempt and the state it leads to; false when the delivery is gone (webhook deleted). */
  recordAttempt(org: string, id: string, attempt: AttemptResult, outcome: AttemptOutcome): Promise<boolean>;
  /** The earliest next attempt of any pending delivery after `after` (any, without it), across organisations. */
  nextAttemptAt(after?: string): Promise<string | undefined>;
}
