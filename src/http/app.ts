import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { ANONYMOUS, authenticate, type Principal } from '../auth/keys.js';
import { AppError, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createMcpServer } from '../mcp/server.js';
import { principalFromExtra, StatelessMcpEndpoint, toolsetsFromExtra } from '../mcp/stateless.js';
import { parseToolsets, TOOLSETS } from '../config.js';
import type { ToolsetSelection } from '../registry/catalog.js';
import type { Catalog } from '../registry/catalog.js';
import type { Executor } from '../registry/executor.js';
import { isReadOnly, pathParams, successStatus, type HttpMethod, type Operation } from '../registry/operation.js';
import type { Store } from '../store/store.js';
import { readBody, readJsonObject } from './body.js';
import { buildOpenApi } from './openapi.js';
import { queryToInput } from './query.js';
import type { JsonSchemaProperties } from './types.js';

export interface HttpDeps {
  catalog: Catalog;
  executor: Executor;
  store: Store;
  logger: Logger;
  clock: () => Date;
  readOnly: boolean;
}

/** Interface section 9: the measurement API was announced deprecated and is past its sunset date. */
const DEPRECATION_HEADERS = {
  Deprecation: '@1751328000',
  Sunset: 'Wed, 30 Sep 2026 23:59:59 GMT',
};

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface Route {
  op: Operation;
  queryProperties: JsonSchemaProperties;
  params: string[];
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendProblem(res: ServerResponse, err: AppError, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(err.toProblem());
  const extra: Record<string, string> = { ...headers };
  if (err.kind === 'unauthorized') extra['WWW-Authenticate'] = 'Bearer';
  res.writeHead(err.status, {
    'Content-Type': 'application/problem+json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/** The REST facade, `/mcp`, `/openapi.json` and the health checks, as one request listener. */
export function createHttpApp(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });
  const noop = () => undefined;
  for (const op of deps.catalog.operations) {
    const schema = (deps.catalog.descriptor(op.name)?.inputSchema.properties ?? {}) as JsonSchemaProperties;
    const route: Route = { op, queryProperties: schema, params: pathParams(op) };
    router.on(op.method, op.path.replace(/\{(\w+)\}/g, ':$1'), noop, route);
  }
  const openApi = JSON.stringify(buildOpenApi(deps.catalog));

  async function principalOf(req: IncomingMessage): Promise<Principal> {
    return authenticate(deps.store, bearer(req), deps.clock());
  }

  async function handleOperation(req: IncomingMessage, res: ServerResponse, route: Route, params: Record<string, string | undefined>, search: URLSearchParams) {
    const { op } = route;
    const headers: Record<string, string> = op.deprecated ? { ...DEPRECATION_HEADERS } : {};
    try {
      const principal = op.authentication === 'none' && !req.headers.authorization ? ANONYMOUS : await principalOf(req);
      if (deps.readOnly && !isReadOnly(op)) {
        throw new AppError('forbidden', `The server runs in read-only mode; ${op.name} changes data and is disabled`);
      }
      const input =
        op.method === 'GET' || op.method === 'DELETE'
          ? queryToInput(search, route.queryProperties)
          : await readJsonObject(req, op.contentType ?? 'application/json');
      for (const name of route.params) input[name] = params[name];
      const key = req.headers['idempotency-key'];
      const outcome = await deps.executor.execute(op, principal, input, typeof key === 'string' ? key : undefined);
      if (outcome.replayed) headers['Idempotent-Replayed'] = 'true';
      if (outcome.status === 201) {
        const body = outcome.body as { id?: string };
        headers.Location = op.location ? op.location(outcome.body as never) : `${req.url?.split('?')[0]}/${body.id}`;
      }
      const body = op.restBody ? op.restBody(outcome.body as never) : outcome.body;
      send(res, successStatus(op) === 204 ? 204 : outcome.status, body, headers);
    } catch (err) {
      const e = toAppError(err);
      if (e.kind === 'internal' && !(err instanceof AppError)) deps.logger.error({ err, operation: op.name }, 'operation failed');
      sendProblem(res, e, headers);
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

  async function handleMcp(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'POST') {
      return sendProblem(res, new AppError('method_not_allowed', 'The MCP endpoint is stateless: only POST is supported'), { Allow: 'POST' });
    }
    let principal: Principal;
    let body: unknown;
    let toolsets: ToolsetSelection;
    try {
      toolsets = toolsetsOf(req);
      principal = await principalOf(req);
      const raw = await readBody(req);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } });
      }
    } catch (err) {
      return sendProblem(res, toAppError(err));
    }
    const response = await (await mcpEndpoint).handle(body, principal, toolsets);
    if (response === undefined) {
      res.writeHead(202);
      res.end();
      return;
    }
    send(res, 200, response);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path === '/mcp') return handleMcp(req, res);
    if (path === '/healthz' && method === 'GET') return send(res, 200, { status: 'ok' });
    if (path === '/readyz' && method === 'GET') {
      try {
        await deps.store.ping();
        return send(res, 200, { status: 'ready' });
      } catch {
        return sendProblem(res, new AppError('internal', 'The database is not reachable'));
      }
    }
    if (path === '/openapi.json' && method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(openApi);
      return;
    }
    const found = router.find(method as HttpMethod, path);
    if (found) {
      return handleOperation(req, res, found.store as Route, found.params, url.searchParams);
    }
    const allowed = METHODS.filter((m) => router.find(m, path));
    if (allowed.length) {
      return sendProblem(res, new AppError('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`), {
        Allow: allowed.join(', '),
      });
    }
    sendProblem(res, new AppError('not_found', `No route ${method} ${path}; GET /openapi.json lists every route`));
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      deps.logger.error({ err }, 'request failed');
      if (!res.headersSent) sendProblem(res, toAppError(err));
      else res.destroy();
    });
  };
}
