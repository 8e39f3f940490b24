import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { invalidMany, notFound, type Violation } from '../errors.js';
import { newId } from '../ids.js';
import type { PageRequest } from '../schemas/common.js';
import type { EventType, Webhook } from '../schemas/webhooks.js';
import type { Tx } from '../store/store.js';
import type { WebhookRecord } from '../store/ports/webhooks.js';

const NAT64 = ipaddr.IPv6.parse('64:ff9b::');
const SIX_TO_FOUR = ipaddr.IPv6.parse('2002::');

function dottedToHex(_: string, a: string, b: string, c: string, d: string): string {
  return `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`;
}

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 address an IPv6 address carries, and how: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d` (but `::` and `::1`, which are IPv6's own), NAT64 `64:ff9b::/96`, 6to4 `2002::/16`.
 */
function embeddedIPv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; form: string } | undefined {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  if (address.isIPv4MappedAddress()) return { ipv4: address.toIPv4Address(), form: 'an IPv4-mapped' };
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1)) return { ipv4: ipv4Of(p[6], p[7]), form: 'an IPv4-compatible' };
  if (address.match(NAT64, 96)) return { ipv4: ipv4Of(p[6], p[7]), form: 'a NAT64' };
  if (address.match(SIX_TO_FOUR, 16)) return { ipv4: ipv4Of(p[1], p[2]), form: 'a 6to4' };
  return undefined;
}

/**
 * Why an IP address is not a target for webhooks, or undefined for a public one. Decided by the
 * address's range in ipaddr.js: only `unicast` passes (not private, loopback, link-local, carrier-grade
 * NAT, multicast, broadcast, reserved, benchmarking, site-local, unique-local, Teredo, …). An IPv6
 * address that carries an IPv4 one is judged by that IPv4 address.
 */
export function addressRefusal(address: string): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`; written in hex groups it keeps what it is.
    parsed = ipaddr.parse(isIP(address) === 6 ? address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, dottedToHex) : address);
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === 'ipv6') {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded) {
      const range = embedded.ipv4.range();
      return range === 'unicast' ? undefined : `${range}: ${embedded.ipv4.toString()} in ${embedded.form} address`;
    }
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

const PRIVATE_NAME_SUFFIXES = ['.localhost', '.local', '.internal'];

/**
 * Why a host (a URL's `hostname`: IPv6 in brackets, names possibly with a trailing dot) is not a
 * webhook target, or undefined. Literal addresses are judged by `addressRefusal`, names only when
 * reserved for local use (`localhost`, `*.localhost`, `*.local`, `*.internal`); other names are
 * judged by what they resolve to, when a delivery connects.
 */
export function hostRefusal(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (isIP(host)) return addressRefusal(host);
  if (host === 'localhost' || PRIVATE_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix))) return 'a name for local use';
  return undefined;
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
  const refusal = allowPrivate ? undefined : hostRefusal(parsed.hostname);
  if (refusal) {
    return {
      propertyPath: 'url',
      message: `url points to ${parsed.hostname}, which is not a public host (${refusal}); webhooks must target a public unicast address or a public name. The server allows private targets only when started with BILLING_WEBHOOK_ALLOW_PRIVATE=true`,
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
