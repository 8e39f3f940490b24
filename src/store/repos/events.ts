import type { PageRequest } from '../../schemas/common.js';
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery, WebhookDeliveryRow } from '../../schemas/webhookDeliveries.js';
import type { EventType } from '../../schemas/webhooks.js';
import type {
  AttemptOutcome,
  AttemptResult,
  DueDelivery,
  DueTarget,
  EventRecord,
  EventRepo,
  NewDelivery,
  Subscriber,
} from '../ports/events.js';
import type { Sql } from '../sql.js';

/** The columns of a delivery's list row (`ListedRow`): all but its body. */
const LISTED_COLUMNS =
  'id, webhook_id, event_type, event_version, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error, delivered_at, created_at, updated_at';

type ListedRow = Omit<DeliveryRow, 'body'>;

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_type: EventType;
  event_version: 'v1';
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
}

interface AttemptRow {
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

interface DueRow {
  id: string;
  organisation_id: string;
  webhook_id: string;
  url: string;
  secret: string;
  event_type: EventType;
  event_version: 'v1';
  body: string;
  round_attempts: number;
  next_attempt_at: string;
}

export class SqlEventRepo implements EventRepo {
  constructor(private readonly sql: Sql) {}

  async insertEvent(org: string, e: EventRecord): Promise<void> {
    await this.insertEvents(org, [e]);
  }

  async insertEvents(org: string, events: readonly EventRecord[]): Promise<void> {
    await this.sql.insertMany(
      'events',
      events.map((e) => ({ id: e.id, organisation_id: org, type: e.type, subject_id: e.subjectId, data: JSON.stringify(e.data), created_at: e.createdAt })),
    );
  }

  async subscribers(org: string, type: EventType): Promise<Subscriber[]> {
    const rows = await this.sql.all<{ id: string; events: string; version: 'v1' }>(
      'SELECT id, events, version FROM webhooks WHERE organisation_id = ? AND enabled = 1 ORDER BY created_at, id',
      org,
    );
    return rows.filter((w) => (JSON.parse(w.events) as string[]).includes(type)).map((w) => ({ id: w.id, version: w.version }));
  }

  async insertDelivery(org: string, d: NewDelivery): Promise<void> {
    await this.insertDeliveries(org, [d]);
  }

  async insertDeliveries(org: string, deliveries: readonly NewDelivery[]): Promise<void> {
    await this.sql.insertMany(
      'webhook_deliveries',
      deliveries.map((d) => ({
        id: d.id,
        organisation_id: org,
        webhook_id: d.webhookId,
        event_id: d.eventId,
        event_type: d.eventType,
        event_version: d.eventVersion,
        body: d.body,
        status: 'pending',
        attempts: 0,
        round_attempts: 0,
        next_attempt_at: d.nextAttemptAt,
        created_at: d.createdAt,
        updated_at: d.createdAt,
      })),
    );
  }

  async getDelivery(org: string, id: string): Promise<WebhookDelivery | undefined> {
    const row = await this.sql.get<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE organisation_id = ? AND id = ?', org, id);
    return row && (await this.assemble(org, [row]))[0];
  }

  async listDeliveries(org: string, webhookId: string, filter: { status?: DeliveryStatus | undefined }, page: PageRequest) {
    const { rows, total } =
      filter.status === undefined
        ? await this.sql.page<ListedRow>('FROM webhook_deliveries WHERE organisation_id = ? AND webhook_id = ?', [org, webhookId], page, LISTED_COLUMNS)
        : await this.sql.page<ListedRow>(
            'FROM webhook_deliveries WHERE organisation_id = ? AND webhook_id = ? AND status = ?',
            [org, webhookId, filter.status],
            page,
            LISTED_COLUMNS,
          );
    return { rows: rows.map(listed), total };
  }

  async reschedule(org: string, id: string, dueAt: string, at: string): Promise<void> {
    await this.sql.run(
      `UPDATE webhook_deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = ?, delivered_at = NULL,
         updated_at = ? WHERE organisation_id = ? AND id = ?`,
      dueAt,
      at,
      org,
      id,
    );
  }

  async dueTargets(now: string): Promise<DueTarget[]> {
    // One index seek per webhook (webhook_deliveries_pending_by_webhook), however many deliveries wait.
    return (await this.sql
      .all<{ id: string; organisation_id: string; url: string; enabled: number; due: string }>(
        `SELECT id, organisation_id, url, enabled, due FROM (
           SELECT w.id, w.organisation_id, w.url, w.enabled,
             (SELECT min(d.next_attempt_at) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS due
           FROM webhooks w)
         WHERE due <= ? ORDER BY due, id`,
        now,
      ))
      .map((r) => ({ webhookId: r.id, organisationId: r.organisation_id, url: r.url, enabled: r.enabled === 1, due: r.due }));
  }

  async dueOf(org: string, webhookId: string, now: string, except: readonly string[], limit: number): Promise<DueDelivery[]> {
    // On PostgreSQL (in a claim unit, READ COMMITTED) the rows are locked as they are taken, and rows
    // another instance's claim has locked are skipped: two instances claiming at once take disjoint
    // deliveries, each row re-checked on its latest committed version (still pending, still due).
    // Only the deliveries are locked, not their webhook, which other instances' claims read too.
    const lock = this.sql.dialect === 'postgres' ? ' FOR UPDATE OF d SKIP LOCKED' : '';
    return (await this.sql
      .all<DueRow>(
        `SELECT d.id, d.organisation_id, d.webhook_id, w.url, w.secret, d.event_type, d.event_version, d.body, d.round_attempts,
           d.next_attempt_at
         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.organisation_id = d.organisation_id
         WHERE d.organisation_id = ? AND d.webhook_id = ? AND d.status = 'pending' AND d.next_attempt_at <= ?
           AND d.id NOT IN (SELECT value FROM json_each(?))
         ORDER BY d.next_attempt_at, d.id LIMIT ?${lock}`,
        org,
        webhookId,
        now,
        JSON.stringify(except),
        limit,
      ))
      .map((r) => ({
        id: r.id,
        organisationId: r.organisation_id,
        webhookId: r.webhook_id,
        url: r.url,
        secret: r.secret,
        eventType: r.event_type,
        eventVersion: r.event_version,
        body: r.body,
        roundAttempts: r.round_attempts,
        nextAttemptAt: r.next_attempt_at,
      }));
  }

  async skipDue(org: string, webhookId: string, now: string, except: readonly string[], reason: string, at: string): Promise<number> {
    // On PostgreSQL the rows another instance is skipping (or claiming) at this moment are left to it, not waited for.
    const rows =
      this.sql.dialect === 'postgres'
        ? `id IN (SELECT id FROM webhook_deliveries WHERE organisation_id = ? AND webhook_id = ? AND status = 'pending' AND next_attempt_at <= ?
             AND id NOT IN (SELECT value FROM json_each(?)) FOR UPDATE SKIP LOCKED)`
        : `organisation_id = ? AND webhook_id = ? AND status = 'pending' AND next_attempt_at <= ?
             AND id NOT IN (SELECT value FROM json_each(?))`;
    return (await this.sql.run(
      `UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, last_error = ?, updated_at = ?
       WHERE ${rows}`,
      reason,
      at,
      org,
      webhookId,
      now,
      JSON.stringify(except),
    )).changes;
  }

  async lease(ids: string[], until: string): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.run(
      "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND status = 'pending'",
      until,
      JSON.stringify(ids),
    );
  }

  async recordAttempt(org: string, id: string, a: AttemptResult, o: AttemptOutcome): Promise<boolean> {
    const changed = (await this.sql.run(
      `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, round_attempts = ?, next_attempt_at = ?,
         last_attempt_at = ?, last_status_code = ?, last_error = ?, delivered_at = ?, updated_at = ?
       WHERE organisation_id = ? AND id = ?`,
      o.status,
      o.roundAttempts,
      o.nextAttemptAt,
      a.attemptedAt,
      a.statusCode,
      a.error,
      o.deliveredAt,
      a.attemptedAt,
      org,
      id,
    )).changes;
    if (changed === 0) return false;
    await this.sql.run(
      `INSERT INTO webhook_delivery_attempts (id, organisation_id, delivery_id, attempted_at, status_code, error, duration_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      a.id,
      org,
      id,
      a.attemptedAt,
      a.statusCode,
      a.error,
      a.durationMs,
    );
    return true;
  }

  async nextAttemptAt(after = ''): Promise<string | undefined> {
    return (
      (await this.sql.get<{ at: string | null }>(
        "SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?",
        after,
      ))?.at ?? undefined
    );
  }

  private async assemble(org: string, rows: DeliveryRow[]): Promise<WebhookDelivery[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const attempts = await this.sql.all<AttemptRow>(
      `SELECT delivery_id, attempted_at, status_code, error, duration_ms FROM webhook_delivery_attempts
       WHERE organisation_id = ? AND delivery_id IN (${ids.map(() => '?').join(', ')}) ORDER BY delivery_id, attempted_at, id`,
      org,
      ...ids,
    );
    return rows.map((r) => {
      const { createdAt, updatedAt, ...row } = listed(r);
      return {
        ...row,
        payload: JSON.parse(r.body) as WebhookDelivery['payload'],
        attemptLog: attempts
          .filter((a) => a.delivery_id === r.id)
          .map(
            (a): DeliveryAttempt => ({ attemptedAt: a.attempted_at, statusCode: a.status_code, error: a.error, durationMs: a.duration_ms }),
          ),
        createdAt,
        updatedAt,
      };
    });
  }
}

/** A delivery's list row: what a stored delivery shows without its body and attempt log. */
function listed(r: ListedRow): WebhookDeliveryRow {
  return {
    id: r.id,
    webhook: r.webhook_id,
    eventType: r.event_type,
    eventVersion: r.event_version,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastAttemptAt: r.last_attempt_at,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    deliveredAt: r.delivered_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
