import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { EventType, Webhook } from '../schemas/webhooks.js';
import type { Tx } from '../store/store.js';
import type { WebhookRecord } from '../store/repos/webhooks.js';

/** Private, loopback, link-local and shared address space; IPv4-mapped IPv6 forms match the IPv4 rules. */
const PRIVATE_RANGES: ReadonlyArray<[network: string, prefix: number, family: 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
];

const PRIVATE_ADDRESSES = new BlockList();
for (const [network, prefix, family] of PRIVATE_RANGES) PRIVATE_ADDRESSES.addSubnet(network, prefix, family);

const PRIVATE_NAME_SUFFIXES = ['.localhost', '.local', '.internal'];

/**
 * Whether a host (a URL's `hostname`: IPv6 in brackets, names possibly with a trailing dot) is a
 * private, loopback or link-local target. Only literal addresses and reserved names are recognised;
 * public names are not resolved.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  const family = isIP(host);
  if (family === 4) return PRIVATE_ADDRESSES.check(host, 'ipv4');
  if (family === 6) return PRIVATE_ADDRESSES.check(host, 'ipv6');
  return host === 'localhost' || PRIVATE_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

/** Longest accepted url; the input schemas enforce it. */
export const URL_MAX_LENGTH = 2048;

/** An absolute http(s) URL on a public host, unless private hosts are allowed. */
export function urlViolation(url: string, allowPrivate: boolean): Violation | undefined {
  const allowed = `an absolute http or https URL of at most ${URL_MAX_LENGTH} characters, e.g. https://example.com/webhooks`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { propertyPath: 'url', message: `url '${url}' is not a URL; it must be ${allowed}`, code: 'invalid_url' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return {
      propertyPath: 'url',
      message: `url must use http or https (got ${parsed.protocol.slice(0, -1)}); it must be ${allowed}`,
      code: 'unsupported_scheme',
    };
  }
  if (!allowPrivate && isPrivateHost(parsed.hostname)) {
    return {
      propertyPath: 'url',
      message: `url points to a private, loopback or link-local host (${parsed.hostname}); webhooks must target a public host. The server allows private targets only when started with BILLING_WEBHOOK_ALLOW_PRIVATE=true`,
      code: 'private_address',
    };
  }
  return undefined;
}

export function eventsViolation(events: readonly EventType[]): Violation | undefined {
  const duplicates = [...new Set(events.filter((e, i) => events.indexOf(e) !== i))];
  if (duplicates.length) {
    return {
      propertyPath: 'events',
      message: `events must not repeat an event type (repeated: ${duplicates.join(', ')}); list each type once`,
      code: 'duplicate',
    };
  }
  return undefined;
}

export interface WebhookInput {
  url: string;
  events: EventType[];
  version: Webhook['version'];
  enabled: boolean;
}

/** JSON merge patch (RFC 7396): absent keys stay, present keys replace, `null` would remove. */
export type WebhookPatch = { [K in keyof WebhookInput]?: WebhookInput[K] | null | undefined };

const PATCHABLE = ['url', 'events', 'version', 'enabled'] as const;

function fieldViolations(fields: Partial<Pick<WebhookInput, 'url' | 'events'>>, allowPrivate: boolean): Violation[] {
  return [
    fields.url === undefined ? undefined : urlViolation(fields.url, allowPrivate),
    fields.events === undefined ? undefined : eventsViolation(fields.events),
  ].filter((v): v is Violation => v !== undefined);
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function withoutSecret({ secret: _secret, ...webhook }: WebhookRecord): Webhook {
  return webhook;
}

export async function createWebhook(
  tx: Tx,
  org: string,
  input: WebhookInput,
  allowPrivate: boolean,
  now: Date,
): Promise<WebhookRecord> {
  const violations = fieldViolations(input, allowPrivate);
  if (violations.length) throw invalidMany(violations);
  const at = now.toISOString();
  const webhook: WebhookRecord = {
    id: newId(),
    url: input.url,
    events: input.events,
    version: input.version,
    enabled: input.enabled,
    secret: newSecret(),
    createdAt: at,
    updatedAt: at,
  };
  await tx.webhooks.insert(org, webhook);
  return webhook;
}

/** The webhook without its secret, which is shown only by create. */
export async function getWebhook(tx: Tx, org: string, id: string): Promise<Webhook> {
  const webhook = await tx.webhooks.get(org, id);
  if (!webhook) throw notFound('Webhook', id);
  return withoutSecret(webhook);
}

export async function listWebhooks(tx: Tx, org: string, page: PageRequest) {
  return tx.webhooks.list(org, page);
}

/** Every field is required, so `null` (remove) is refused; a present value replaces, `events` as a whole. */
export async function updateWebhook(
  tx: Tx,
  org: string,
  id: string,
  patch: WebhookPatch,
  allowPrivate: boolean,
  now: Date,
): Promise<Webhook> {
  const current = await getWebhook(tx, org, id);
  const removed: Violation[] = PATCHABLE.filter((field) => patch[field] === null).map((field) => ({
    propertyPath: field,
    message: `${field} is required and cannot be removed (null); send a new value, or leave ${field} out to keep it`,
    code: 'required',
  }));
  if (removed.length) throw invalidMany(removed);
  const violations = fieldViolations({ url: patch.url ?? undefined, events: patch.events ?? undefined }, allowPrivate);
  if (violations.length) throw invalidMany(violations);
  const next: Webhook = {
    ...current,
    url: patch.url ?? current.url,
    events: patch.events ?? current.events,
    version: patch.version ?? current.version,
    enabled: patch.enabled ?? current.enabled,
    updatedAt: now.toISOString(),
  };
  await tx.webhooks.update(org, next);
  return next;
}

export async function deleteWebhook(tx: Tx, org: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await tx.webhooks.delete(org, id))) throw notFound('Webhook', id);
  return { id, deleted: true };
}
