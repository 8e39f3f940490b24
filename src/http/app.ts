import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { ANONYMOUS, authenticate, type Principal } from '../auth/keys.js';
import { AppError, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createMcpServer } from '../mcp/server.js';
import { principalFromExtra, StatelessMcpEndpoint } from '../mcp/stateless.js';
import type { Catalog } from '../registry/catalog.js';
import type { Executor } from '../registry/executor.js';
import { isReadOnly, pathParams, successStatus, type HttpMethod, type Operation } from '../registry/operation.js';
import type { Store } from '../store/store.js';
import { readBody, readJsonObject } from './body.js';
import { buildOpenApi } from './openapi.js';
import { queryToInput } from './query.js';
import { PROBLEM_TYPE, sendText, StaticBody } from './send.js';
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

/** Every JSON answer goes out here (gzipped from 1 KiB on when the client accepts it). */
function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  sendText(req, res, status, JSON.stringify(body), headers);
}

function sendProblem(req: IncomingMessage, res: ServerResponse, err: AppError, headers: Record<string, string> = {}): void {
  const extra: Record<string, string> = { ...headers };
  if (err.kind === 'unauthorized') extra['WWW-Authenticate'] = 'Bearer';
  sendText(req, res, err.status, JSON.stringify(err.toProblem()), extra, PROBLEM_TYPE);
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
  const openApi = new StaticBody(JSON.stringify(buildOpenApi(deps.catalog)));

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
      send(req, res, successStatus(op) === 204 ? 204 : outcome.status, body, headers);
    } catch (err) {
      const e = toAppError(err);
      if (e.kind === 'internal' && !(err instanceof AppError)) deps.logger.error({ err, operation: op.name }, 'operation failed');
      sendProblem(req, res, e, headers);
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
  });
  const mcpEndpoint = StatelessMcpEndpoint.attach(mcpServer);

  async function handleMcp(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'POST') {
      return sendProblem(req, res, new AppError('method_not_allowed', 'The MCP endpoint is stateless: only POST is supported'), { Allow: 'POST' });
    }
    let principal: Principal;
    let body: unknown;
    try {
      principal = await principalOf(req);
      const raw = await readBody(req);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return send(req, res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } });
      }
    } catch (err) {
      return sendProblem(req, res, toAppError(err));
    }
    const response = await (await mcpEndpoint).handle(body, principal);
    if (response === undefined) {
      res.writeHead(202);
      res.end();
      return;
    }
    send(req, res, 200, response);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path === '/mcp') return handleMcp(req, res);
    if (path === '/healthz' && method === 'GET') return send(req, res, 200, { status: 'ok' });
    if (path === '/readyz' && method === 'GET') {
      try {
        await deps.store.ping();
        return send(req, res, 200, { status: 'ready' });
      } catch {
        return sendProblem(req, res, new AppError('internal', 'The database is not reachable'));
      }
    }
    if (path === '/openapi.json' && method === 'GET') return sendText(req, res, 200, openApi);
    const found = router.find(method as HttpMethod, path);
    if (found) {
      return handleOperation(req, res, found.store as Route, found.params, url.searchParams);
    }
    const allowed = METHODS.filter((m) => router.find(m, path));
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
