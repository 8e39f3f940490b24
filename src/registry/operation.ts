import type { z } from 'zod';
import type { CustomerPermission, Principal } from '../auth/keys.js';
import type { Config, Toolset } from '../config.js';
import type { Logger } from '../logger.js';
import type { Links } from '../domain/links.js';
import type { Store, Tx } from '../store/store.js';
import { inPath } from './validation.js';
import type { McpView } from './view.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * read/list: no change. create: a new resource (201, Location). update/delete: change or remove one
 * (delete answers 204). action: a state transition or another effect (200).
 */
export type OperationKind = 'read' | 'list' | 'create' | 'update' | 'delete' | 'action';

export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface OperationContext {
  tx: Tx;
  principal: Principal;
  /** The organisation every read and write of this operation is confined to. */
  org: string;
  /** The instant the operation runs at; domain code never reads the clock itself. */
  now: Date;
  config: Config;
  logger: Logger;
  /** Runs after the unit of work has committed (never for a rolled-back one): e.g. kick a delivery. */
  afterCommit(fn: () => void): void;
  /** Webhook deliveries: `kick()` attempts the due ones soon; call it after a commit that wrote some. */
  deliveries: DeliveryKicker;
  /** The store itself: only for operations with `ownUnitsOfWork`, which open their units one by one. */
  store: Store;
  /**
   * Base of the URLs a result links to (an invoice PDF), without a trailing slash: BILLING_PUBLIC_URL,
   * else the HTTP server's own address, else `http://BILLING_HOST:BILLING_PORT` (stdio without a server).
   */
  baseUrl: string;
  /** Absolute URLs of the pages and documents results link to (under `baseUrl`). */
  links: Links;
}

/**
 * A REST answer that is a document (a PDF, a SEPA XML file) rather than JSON. `render` runs after the
 * unit of work has ended, so a slow rendering never holds a database turn; it gets the handler's
 * result, which therefore carries what the document needs (the MCP result is its `mcp` view, never
 * the document).
 */
export interface RestDocument<T = unknown> {
  mediaType: 'application/pdf' | 'application/xml';
  render(result: T): Promise<Uint8Array>;
  /** File name offered in Content-Disposition (inline). */
  filename(result: T): string;
}

/** An MCP `resource_link` content item: where the client fetches something instead of reading it in the result. */
export interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType: string;
}

export interface DeliveryKicker {
  kick(): void;
}

/**
 * `json`: further JSON media types (each with its OpenAPI schema) and other shapes (a CloudEvents
 * batch is an array), mapped onto the input with the query string, whose parameters `query` names
 * (input fields; any other parameter is a 400). `text`: the body is a document of one media type (a
 * SEPA status report) whose text becomes the input field `field`, which MCP callers pass as a string.
 */
export type RequestBody =
  | {
      kind: 'json';
      mediaTypes: Record<string, Record<string, unknown>>;
      query: readonly string[];
      toInput(body: unknown, mediaType: string, query: URLSearchParams): Record<string, unknown>;
    }
  | { kind: 'text'; mediaType: 'application/xml'; field: string };

/**
 * A REST body that differs from the MCP structured result: `of` maps the result onto it, `schema` is
 * what it is (OpenAPI documents the success response with it instead of `output`). One object, so an
 * operation cannot map its body without saying what the body is.
 */
export interface RestBody<T = unknown, B extends z.ZodType = z.ZodType> {
  schema: B;
  of(result: T): z.output<B>;
}

export interface Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** Written for a model: when to use it, what it changes, what gets rejected, allowed values. */
  description: string;
  toolset: Toolset;
  method: HttpMethod;
  /** Path with `{param}` placeholders; the params are fields of `input`. */
  path: string;
  /** null: any API key of the organisation may call it. */
  permission: string | null;
  kind: OperationKind;
  input: I;
  output: O;
  annotations?: Partial<Annotations>;
  /** Interface section 9: deprecated routes send Deprecation and Sunset headers. */
  deprecated?: boolean;
  /** Body media type; PATCH uses JSON merge patch. Default application/json. */
  contentType?: 'application/json' | 'application/merge-patch+json';
  /**
   * Whether a customer token may call it (CONTRACT section 3), with which of its permissions, and
   * how the call is confined to the token's own customer: `customerField` names the input field
   * carrying the customer id (the token's own is filled in when absent; another is a 404);
   * `resultCustomer` gives the customer a result belongs to (another's is a 404).
   */
  customerAccess?: {
    permission: CustomerPermission;
    customerField?: string;
    resultCustomer?: (result: z.output<O>) => string;
  };
  /** 'none': callable without a bearer token, its input authorizes it (token refresh). Default bearer. */
  authentication?: 'bearer' | 'none';
  /** REST request bodies other than a JSON object of the input (default: that object, as `contentType`). */
  requestBody?: RequestBody;
  /** Location header of a create; default `<path>/<id>`. */
  location?: (result: z.output<O>) => string;
  /** Body of the REST response and its schema when it differs from the MCP structured result; default the result (`output`). */
  restBody?: RestBody<z.output<O>, B>;
  /**
   * The REST response is this document instead of JSON (OpenAPI documents its media type). `output`
   * is then the handler's result that `render` reads, and `mcp` the tool's result.
   */
  restDocument?: RestDocument<z.output<O>>;
  /** Links the MCP result carries after its text, e.g. to the document `restDocument` serves. */
  resourceLinks?: (result: z.output<O>) => ResourceLink[];
  /** The MCP result when it is more compact than the REST body (required for lists: summary rows). */
  mcp?: McpView<z.output<O>>;
  /**
   * What every unit of this operation updates in the organisation, such as one counter row
   * ('usage-event-sequence'): units naming the same thing in one organisation run one after another,
   * in every instance (`UnitOptions.serializeOn`), instead of aborting one another on PostgreSQL.
   */
  serializeOn?: string;
  /**
   * true: a long-running operation (a billing run) that opens its own units of work through
   * `ctx.store`, one per item of work, instead of running in one; `ctx.tx` refuses every use. Such an
   * operation must be safe to repeat (it takes no idempotency key).
   */
  ownUnitsOfWork?: boolean;
  /**
   * true: a preview that runs the change it previews in a write unit of work that is always rolled
   * back (`UnitOptions.rollback`), so that preview and change are one code path. Read-only to callers.
   */
  dryRun?: boolean;
  /**
   * true: the result carries a secret shown once (a portal session's URL, a customer token pair). Nothing may keep it, so
   * the operation takes no idempotency key: a replay would need the result stored.
   */
  secretResult?: boolean;
  /**
   * Concurrent requests of this operation run together: those that arrive while one of theirs is in
   * its unit of work share the next unit (per organisation), through `run`, which answers each input
   * with its result or with the error `handler` would have thrown for it alone (having written
   * nothing for it: the unit commits the others). The results must not depend on who called beyond
   * the organisation (no `customerAccess`); a request with an idempotency key runs alone, and so does
   * one that `when` turns away (a call that fills a unit on its own gains nothing by waiting for
   * others). Where a unit costs round trips (PostgreSQL), this turns many small units into a few
   * larger ones.
   */
  coalesce?: {
    when?: (input: z.output<I>) => boolean;
    run: (ctx: OperationContext, inputs: Array<z.output<I>>) => Promise<Array<z.output<O> | Error>>;
  };
  /** Text content of the MCP result instead of its summary line and JSON. */
  text?: (result: z.output<O>) => string;
  handler(ctx: OperationContext, input: z.output<I>): Promise<z.output<O>>;
}

/**
 * Keeps the input and output types of one operation tied together, and marks the input fields its
 * REST route takes from the path (`inPath`: an unknown key is told them apart from the body's fields).
 */
export function defineOperation<I extends z.ZodObject, O extends z.ZodType, B extends z.ZodType = z.ZodType>(op: Operation<I, O, B>): Operation {
  const params = pathParams(op as unknown as Operation);
  if (params.length) inPath(op.input, params);
  return op as unknown as Operation;
}

const DEFAULT_ANNOTATIONS: Record<OperationKind, Annotations> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  list: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  update: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  action: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

export function annotationsOf(op: Operation): Annotations {
  return { ...DEFAULT_ANNOTATIONS[op.kind], ...op.annotations };
}

export function isReadOnly(op: Operation): boolean {
  return annotationsOf(op).readOnlyHint;
}

/** Creates and actions accept an idempotency key (header `Idempotency-Key`, MCP `idempotencyKey`). */
export function acceptsIdempotencyKey(op: Operation): boolean {
  return (
    op.authentication !== 'none' && !op.ownUnitsOfWork && !op.dryRun && !op.secretResult && (op.kind === 'create' || op.kind === 'action')
  );
}

export function successStatus(op: Operation): number {
  if (op.kind === 'create') return 201;
  if (op.kind === 'delete') return 204;
  return 200;
}

export function pathParams(op: Operation): string[] {
  return [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
}
