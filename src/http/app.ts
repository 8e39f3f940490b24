import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ANONYMOUS, authenticate, type Principal } from '../auth/keys.js';
import { AppError, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createMcpServer } from '../mcp/server.js';
import { principalFromExtra, StatelessMcpEndpoint, toolsetsFromExtra } from '../mcp/stateless.js';
import { parseToolsets, TOOLSETS } from '../config.js';
import type { ToolsetSelection } from '../registry/catalog.js';
import type { Catalog } from '../registry/catalog.js';
import type { Executor } from '../registry/executor.js';
import { acceptsIdempotencyKey, pathParams, successStatus, type HttpMethod, type Operation, type RequestBody } from '../registry/operation.js';
import { checkIdempotencyKey } from '../registry/validation.js';
import type { Store } from '../store/store.js';
import { closesConnection, mediaType, NO_BODY_RATE, readBody, readJsonBody, readJsonObject, readText, type BodyRate } from './body.js';
import { KeyConcurrency, RETRY_AFTER_SECONDS } from './limits.js';
import { corsHeaders, OriginPolicy, preflightHeaders, protocolVersionError } from './mcpTransport.js';
import { buildOpenApi, LIVE, READY } from './openapi.js';
import { queryToInput } from './query.js';
import { jsonPieces, PROBLEM_TYPE, sendBytes, sendText, StaticBody } from './send.js';
import type { JsonSchemaProperties } from './types.js';

export interface HttpDeps {
  catalog: Catalog;
  executor: Executor;
  store: Store;
  logger: Logger;
  clock: () => Date;
  /** Browser origins besides the server's own that may call `/mcp` (`BILLING_MCP_ALLOWED_ORIGINS`). */
  mcpAllowedOrigins?: readonly string[];
  /** The slowest a request body may arrive (`BILLING_HTTP_MIN_BODY_BYTES_PER_SECOND` over `BILLING_HTTP_BODY_RATE_WINDOW_MS`); none when absent. */
  bodyRate?: BodyRate;
  /** Requests of one API key or customer in flight at once (`BILLING_MAX_CONCURRENT_PER_KEY`); unlimited when absent. */
  maxConcurrentPerKey?: number;
  /** The link pages under /pages/ (src/pages); none when absent. */
  pages?: (req: IncomingMessage, res: ServerResponse, method: string, url: URL) => Promise<boolean>;
}

/** Interface section 9: the measurement API was announced deprecated and is past its sunset date. */
const DEPRECATION_HEADERS = {
  Deprecation: '@1751328000',
  Sunset: 'Wed, 30 Sep 2026 23:59:59 GMT',
};

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The longest path parameter a route matches: ids, numbers and codes take up to 255 characters
 * (CONTRACT section 2), beyond find-my-way's default of 100.
 */
const MAX_PATH_PARAM_LENGTH = 255;

/** The fixed routes beside the operations, all GET (and so HEAD). */
const FIXED_PATHS = new Set(['/healthz', '/readyz', '/openapi.json']);

/** JSON-RPC messages one `/mcp` batch may hold (as the SDK's own transport). */
const MCP_MAX_BATCH = 100;

interface Route {
  op: Operation;
  queryProperties: JsonSchemaProperties;
  params: string[];
  /**
   * The query parameters of a POST, PUT, PATCH or DELETE; any other is a 400. A GET takes its input
   * fields, and an unknown one fails the input's validation (400, with the field it most likely meant).
   */
  queryNames: readonly string[];
}

/** The query parameters of a route that a GET does not take as input fields (see `Route.queryNames`). */
function queryNamesOf(op: Operation, properties: JsonSchemaProperties, params: readonly string[]): readonly string[] {
  if (op.method === 'DELETE') return Object.keys(properties).filter((name) => !params.includes(name));
  return op.requestBody?.kind === 'json' ? op.requestBody.query : [];
}

/** A 400 naming each query parameter `op` does not take, and those it does. */
function unknownQueryParameters(op: Operation, names: readonly string[], allowed: readonly string[]): AppError {
  const takes = allowed.length ? `allowed: ${allowed.join(', ')}` : `it takes none${op.method === 'DELETE' ? '' : ' (its input goes in the body)'}`;
  const violations = names.map((name) => ({
    propertyPath: name,
    message: `'${name}' is not a query parameter of ${op.method} ${op.path}; ${takes}`,
    code: 'unrecognized_keys',
  }));
  return new AppError('bad_request', violations.map((v) => v.message).join('; '), violations);
}

/** Every JSON answer goes out here (gzipped from 1 KiB on when the client accepts it). */
function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  sendText(req, res, status, jsonPieces(body), headers);
}

function sendProblem(req: IncomingMessage, res: ServerResponse, err: AppError, headers: Record<string, string> = {}): void {
  const extra: Record<string, string> = { ...headers };
  if (err.kind === 'unauthorized') extra['WWW-Authenticate'] = 'Bearer';
  if (err.kind === 'rate_limited') extra['Retry-After'] = String(RETRY_AFTER_SECONDS);
  if (closesConnection(err)) extra.Connection = 'close';
  if (err.kind === 'unavailable') extra['Retry-After'] = String(err.retryAfterSeconds ?? 1);
  sendText(req, res, err.status, JSON.stringify(err.toProblem()), extra, PROBLEM_TYPE);
}

function jsonRpcError(code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage;
}

function isInitialize(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'initialize';
}

/** The endpoint's answer to a body that is not a JSON-RPC message (the input is refused: HTTP 400). */
function isRefusedMessage(body: unknown, response: JSONRPCMessage): boolean {
  return 'error' in response && response.error.code === ErrorCode.InvalidRequest && !JSONRPCMessageSchema.safeParse(body).success;
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/** The REST facade, `/mcp`, `/openapi.json` and the health checks, as one request listener. */
export function createHttpApp(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: MAX_PATH_PARAM_LENGTH });
  const noop = () => undefined;
  for (const op of deps.catalog.operations) {
    const schema = (deps.catalog.restInputSchema(op.name).properties ?? {}) as JsonSchemaProperties;
    const params = pathParams(op);
    const route: Route = { op, queryProperties: schema, params, queryNames: queryNamesOf(op, schema, params) };
    router.on(op.method, op.path.replace(/\{(\w+)\}/g, ':$1'), noop, route);
  }
  const openApi = new StaticBody(JSON.stringify(buildOpenApi(deps.catalog)));
  const origins = new OriginPolicy(deps.mcpAllowedOrigins ?? []);
  const bodyRate = deps.bodyRate ?? NO_BODY_RATE;
  const concurrency = new KeyConcurrency(deps.maxConcurrentPerKey ?? Number.POSITIVE_INFINITY);

  async function requestBodyInput(req: IncomingMessage, body: RequestBody, search: URLSearchParams): Promise<Record<string, unknown>> {
    if (body.kind === 'text') return { [body.field]: await readText(req, body.mediaType, bodyRate) };
    const { value, type } = await readJsonBody(req, ['application/json', ...Object.keys(body.mediaTypes)], bodyRate);
    return body.toInput(value, type, search);
  }

  async function principalOf(req: IncomingMessage): Promise<Principal> {
    return authenticate(deps.store, bearer(req), deps.clock());
  }

  async function handleOperation(req: IncomingMessage, res: ServerResponse, route: Route, params: Record<string, string | undefined>, search: URLSearchParams) {
    const { op } = route;
    const headers: Record<string, string> = op.deprecated ? { ...DEPRECATION_HEADERS } : {};
    let release = () => {};
    try {
      const principal = op.authentication === 'none' && !req.headers.authorization ? ANONYMOUS : await principalOf(req);
      release = concurrency.acquire(KeyConcurrency.keyOf(principal));
      const refusal = deps.catalog.readOnlyRefusal(op);
      if (refusal) throw refusal;
      if (op.method !== 'GET') {
        const unknown = [...new Set(search.keys())].filter((name) => !route.queryNames.includes(name));
        if (unknown.length) throw unknownQueryParameters(op, unknown, route.queryNames);
      }
      const input =
        op.method === 'GET' || op.method === 'DELETE'
          ? queryToInput(search, route.queryProperties)
          : op.requestBody
            ? await requestBodyInput(req, op.requestBody, search)
            : await readJsonObject(req, op.contentType ?? 'application/json', bodyRate);
      for (const name of route.params) input[name] = params[name];
      const key = acceptsIdempotencyKey(op) ? checkIdempotencyKey(req.headers['idempotency-key']) : undefined;
      const outcome = await deps.executor.execute(op, principal, input, key);
      if (outcome.replayed) headers['Idempotent-Replayed'] = 'true';
      if (outcome.status === 201) {
        const body = outcome.body as { id?: string };
        headers.Location = op.location ? op.location(outcome.body as never) : `${req.url?.split('?')[0]}/${body.id}`;
      }
      if (op.restDocument) {
        // Rendered after the unit of work: no database turn waits for it.
        const bytes = await op.restDocument.render(outcome.body as never);
        headers['Content-Disposition'] = `inline; filename="${op.restDocument.filename(outcome.body as never).replace(/[^\w.-]/g, '_')}"`;
        return sendBytes(res, outcome.status, bytes, op.restDocument.mediaType, headers);
      }
      const body = op.restBody ? op.restBody.of(outcome.body as never) : outcome.body;
      send(req, res, successStatus(op) === 204 ? 204 : outcome.status, body, headers);
    } catch (err) {
      const e = toAppError(err);
      if (e.kind === 'internal' && !(err instanceof AppError)) deps.logger.error({ err, operation: op.name }, 'operation failed');
      sendProblem(req, res, e, headers);
    } finally {
      release();
    }
  }

  const mcpServer = createMcpServer({
    catalog: deps.catalog,
    executor: deps.executor,
    logger: deps.logger,
    principal: async (extra) => {
      const principal = principalFromExtra(extra);
      if (!principal) throw new AppError('unauthorized', 'Missing API key');
      return principal;
    },
    toolsets: toolsetsFromExtra,
  });
  const mcpEndpoint = StatelessMcpEndpoint.attach(mcpServer);

  /** The toolsets an /mcp request lists: `?toolsets=a,b` or the `MCP-Toolsets` header; default all. */
  function toolsetsOf(req: IncomingMessage): ToolsetSelection {
    const header = req.headers['mcp-toolsets'];
    const raw = new URL(req.url ?? '/', 'http://localhost').searchParams.get('toolsets') ?? (typeof header === 'string' ? header : undefined);
    if (raw === undefined) return 'all';
    const parsed = parseToolsets(raw);
    if (parsed === undefined) {
      throw new AppError('bad_request', `toolsets must be all or a comma-separated list of ${TOOLSETS.join(', ')} (got '${raw}')`, [
        { propertyPath: 'toolsets', message: `must be all or a comma-separated list of ${TOOLSETS.join(', ')}`, code: 'invalid_value' },
      ]);
    }
    return parsed === 'all' ? 'all' : new Set(parsed);
  }

  /**
   * Stateless Streamable HTTP: one POST carries one JSON-RPC message (or a batch) and gets its JSON
   * answer, or 202 for notifications and responses. Transport rules first: a browser Origin that is
   * not allowed is a 403, an unknown MCP-Protocol-Version a 400, a body that is not JSON a 415.
   */
  async function handleMcp(req: IncomingMessage, res: ServerResponse) {
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.allows(origin, req)) {
      return sendProblem(
        req,
        res,
        new AppError('forbidden', `Origin ${origin} may not call /mcp (DNS-rebinding protection); only the server's own origin and BILLING_MCP_ALLOWED_ORIGINS may`),
      );
    }
    const cors = origin === undefined ? {} : corsHeaders(origin);
    if (req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined) {
      res.writeHead(204, preflightHeaders(origin));
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      return sendProblem(req, res, new AppError('method_not_allowed', 'The MCP endpoint is stateless: only POST is supported'), { ...cors, Allow: 'POST' });
    }
    let principal: Principal;
    let toolsets: ToolsetSelection;
    let release: () => void;
    try {
      toolsets = toolsetsOf(req);
      principal = await principalOf(req);
      // Over /mcp too a refusal for concurrency is the HTTP status (429), before the body is read.
      release = concurrency.acquire(KeyConcurrency.keyOf(principal));
    } catch (err) {
      return sendProblem(req, res, toAppError(err), cors);
    }
    const key = KeyConcurrency.keyOf(principal);
    let releaseBatch = () => {};
    try {
      return await answerMcp(req, res, principal, toolsets, cors, (count) => {
        // A batch of n messages runs n calls at once: it takes n slots (all of them, at most).
        releaseBatch = concurrency.acquire(key, Math.min(count, concurrency.limit) - 1);
      });
    } finally {
      releaseBatch();
      release();
    }
  }

  async function answerMcp(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    toolsets: ToolsetSelection,
    cors: Record<string, string>,
    acquireBatch: (count: number) => void,
  ) {
    let body: unknown;
    try {
      const type = mediaType(req);
      if (type !== 'application/json') {
        throw new AppError('unsupported_media_type', `Content-Type must be application/json${type ? ` (got ${type})` : ''}`);
      }
      const raw = await readBody(req, bodyRate);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return send(req, res, 400, jsonRpcError(ErrorCode.ParseError, 'Parse error: the body is not valid JSON'), cors);
      }
      const batch = Array.isArray(body) ? body : [body];
      if (batch.length > 1 && batch.length <= MCP_MAX_BATCH) acquireBatch(batch.length);
      if (!batch.some(isInitialize)) {
        const versionError = protocolVersionError(req.headers['mcp-protocol-version']);
        if (versionError) throw versionError;
      }
    } catch (err) {
      return sendProblem(req, res, toAppError(err), cors);
    }
    const endpoint = await mcpEndpoint;
    if (Array.isArray(body)) {
      if (body.length === 0 || body.length > MCP_MAX_BATCH) {
        const message = `Invalid Request: a batch holds 1 to ${MCP_MAX_BATCH} JSON-RPC messages`;
        return send(req, res, 400, jsonRpcError(ErrorCode.InvalidRequest, message), cors);
      }
      const answers = (await Promise.all(body.map((message) => endpoint.handle(message, principal, toolsets)))).filter((a) => a !== undefined);
      if (answers.length === 0) {
        res.writeHead(202, cors);
        res.end();
        return;
      }
      return send(req, res, 200, answers, cors);
    }
    const response = await endpoint.handle(body, principal, toolsets);
    if (response === undefined) {
      res.writeHead(202, cors);
      res.end();
      return;
    }
    send(req, res, isRefusedMessage(body, response) ? 400 : 200, response, cors);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path === '/mcp') return handleMcp(req, res);
    if (deps.pages && (await deps.pages(req, res, method, url))) return;
    // HEAD is GET without the body (RFC 9110, section 9.3.2): Node leaves the body of a HEAD answer out.
    const read = method === 'HEAD' ? 'GET' : method;
    if (FIXED_PATHS.has(path) && read !== 'GET') {
      return sendProblem(req, res, new AppError('method_not_allowed', `${method} is not allowed on ${path}; allowed: GET, HEAD`), { Allow: 'GET, HEAD' });
    }
    if (path === '/healthz') return send(req, res, 200, LIVE);
    if (path === '/readyz') {
      try {
        await deps.store.ping();
        return send(req, res, 200, READY);
      } catch (err) {
        // 503: a load balancer takes the instance out of rotation until the database answers again.
        // The store's own reason when it gives one (a failed sync of the WAL), else the generic one.
        const down = new AppError('unavailable', err instanceof AppError ? err.message : 'The database is not reachable');
        down.retryAfterSeconds = 5;
        return sendProblem(req, res, down);
      }
    }
    if (path === '/openapi.json') return sendText(req, res, 200, openApi);
    const found = router.find(read as HttpMethod, path);
    if (found) {
      return handleOperation(req, res, found.store as Route, found.params, url.searchParams);
    }
    const allowed = METHODS.filter((m) => router.find(m, path)).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
    if (allowed.length) {
      return sendProblem(req, res, new AppError('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`), {
        Allow: allowed.join(', '),
      });
    }
    sendProblem(req, res, new AppError('not_found', `No route ${method} ${path}; GET /openapi.json lists every route`));
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      deps.logger.error({ err }, 'request failed');
      if (!res.headersSent) sendProblem(req, res, toAppError(err));
      else res.destroy();
    });
  };
}
