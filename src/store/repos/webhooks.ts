import type { PageRequest } from '../../schemas/common.js';
import type { EventType, Webhook } from '../../schemas/webhooks.js';
import type { WebhookRecord, WebhookRepo } from '../ports/webhooks.js';
import { bool, int, type Sql } from '../sql.js';

interface Row {
  id: string;
  url: string;
  events: string;
  version: string;
  enabled: number;
  secret: string;
  created_at: string;
  updated_at: string;
}

const toWebhook = (r: Row): WebhookRecord => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as EventType[],
  version: r.version as 'v1',
  enabled: bool(r.enabled),
  secret: r.secret,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const withoutSecret = ({ secret: _secret, ...w }: WebhookRecord): Webhook => w;

export class SqlWebhookRepo implements WebhookRepo {
  constructor(private readonly sql: Sql) {}

  async insert(org: string, w: WebhookRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO webhooks (id, organisation_id, url, events, version, enabled, secret, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      w.id,
      org,
      w.url,
      JSON.stringify(w.events),
      w.version,
      int(w.enabled),
      w.secret,
      w.createdAt,
      w.updatedAt,
    );
  }

  async update(org: string, w: Webhook): Promise<void> {
    await this.sql.run(
      'UPDATE webhooks SET url = ?, events = ?, version = ?, enabled = ?, updated_at = ? WHERE organisation_id = ? AND id = ?',
      w.url,
      JSON.stringify(w.events),
      w.version,
      int(w.enabled),
      w.updatedAt,
      org,
      w.id,
    );
  }

  async get(org: string, id: string): Promise<WebhookRecord | undefined> {
    const row = await this.sql.get<Row>('SELECT * FROM webhooks WHERE organisation_id = ? AND id = ?', org, id);
    return row && toWebhook(row);
  }

  async list(org: string, page: PageRequest) {
    const { rows, total } = await this.sql.page<Row>('FROM webhooks WHERE organisation_id = ?', [org], page);
    return { rows: rows.map((r) => withoutSecret(toWebhook(r))), total };
  }

  async delete(org: string, id: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM webhooks WHERE organisation_id = ? AND id = ?', org, id)).changes > 0;
  }
}
