import type { PageRequest } from '../../schemas/common.js';
import type { Webhook } from '../../schemas/webhooks.js';

export interface WebhookRecord extends Webhook {
  secret: string;
}

export interface WebhookRepo {
  insert(org: string, w: WebhookRecord): Promise<void>;
  update(org: string, w: Webhook): Promise<void>;
  get(org: string, id: string): Promise<WebhookRecord | undefined>;
  list(org: string, page: PageRequest): Promise<{ rows: Webhook[]; total: number }>;
  delete(org: string, id: string): Promise<boolean>;
}
