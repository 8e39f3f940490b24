import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import type { PageTokens } from '../auth/pageTokens.js';
import type { Config } from '../config.js';
import type { Links } from '../domain/links.js';
import { AppError, toAppError } from '../errors.js';
import type { BodyRate } from '../http/body.js';
import { sendBytes, sendText, StaticBody } from '../http/send.js';
import type { Logger } from '../logger.js';
import type { DeliveryKicker } from '../registry/operation.js';
import type { Store, Tx } from '../store/store.js';
import { messagePage } from './html.js';
import { checkCsrf, csrfToken, PAGE_HEADERS, PageRateLimit, readForm } from './security.js';
import { STYLESHEET } from './style.js';

export interface PageDeps {
  store: Store;
  config: Config;
  logger: Logger;
  clock: () => Date;
  pageTokens: () => Promise<PageTokens>;
  links: () => Promise<Links>;
  deliveries: DeliveryKicker;
  bodyRate: BodyRate;
}

/** What a page handler gets: the request, its token tools and units of work on the store. */
export interface PageContext {
  req: IncomingMessage;
  /** The request path (links and forms of the page are relative to it). */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  now: Date;
  tokens: PageTokens;
  links: Links;
  config: Config;
  /** Who is asking, for audit logs: the connection's address (a proxy's, behind one) and user agent. */
  client: { ip: string; userAgent: string };
  read<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** A write unit of work; webhook deliveries it queued are kicked after its commit. */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** The posted form, once its CSRF field is checked against the page token (a 403 page when it does not match). */
  form(token: string): Promise<URLSearchParams>;
  /** The value of the hidden `csrf` field of the page opened by `token`. */
  csrf(token: string): string;
}

export type PageResult =
  | { html: string; status?: number }
  /** 303 See Other to a path relative to the request's (Post/Redirect/Get). */
  | { redirect: string }
  | { pdf: Uint8Array; filename: string };

export interface PageRoute {
  method: 'GET' | 'POST';
  /** A find-my-way pattern under /pages/, e.g. `/pages/offers/:token`. */
  path: string;
  handle(ctx: PageContext): Promise<PageResult>;
}

const HTML_TYPE = 'text/html; charset=utf-8';

/** Unknown, forged, expired or revoked: the same answer, which says nothing about which. */
const NOT_FOUND_TITLE = 'Page not found';
const NOT_FOUND_TEXT = 'This link is not valid. It may have expired or been mistyped; ask the sender for a new one.';

/**
 * The pages that people open from a link (issue 18): server-rendered HTML under /pages/, the access
 * token in the path, one stylesheet. Answers undefined when the path is not a page's.
 */
export function createPages(routes: readonly PageRoute[], deps: PageDeps) {
  // A page token is longer than find-my-way's default of 100 characters per parameter (PageTokens.verify takes up to 512).
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 512 });
  for (const route of routes) router.on(route.method, route.path, () => undefined, route);
  const stylesheet = new StaticBody(STYLESHEET);
  const limit = new PageRateLimit(deps.config.pagesRateLimitPerMinute);

  function sendPage(req: IncomingMessage, res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}) {
    sendText(req, res, status, body, { ...PAGE_HEADERS, ...extra }, HTML_TYPE);
  }

  /**
   * A write unit of a page. A HEAD runs the GET's very code, its write units as dry runs: the answer
   * is the GET's (Node leaves its body out) and nothing the GET records is kept (an offer's view).
   */
  async function write<T>(head: boolean, fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (head) return deps.store.transaction(fn, { rollback: true });
    const result = await deps.store.transaction(fn);
    deps.deliveries.kick();
    return result;
  }

  async function run(route: PageRoute, req: IncomingMessage, res: ServerResponse, path: string, params: Record<string, string>, query: URLSearchParams) {
    const tokens = await deps.pageTokens();
    const head = req.method === 'HEAD';
    const ctx: PageContext = {
      req,
      path,
      params,
      query,
      now: deps.clock(),
      tokens,
      links: await deps.links(),
      config: deps.config,
      client: { ip: req.socket.remoteAddress ?? 'unknown', userAgent: String(req.headers['user-agent'] ?? '').slice(0, 512) },
      read: (fn) => deps.store.read(fn),
      write: (fn) => write(head, fn),
      form: async (token) => {
        const form = await readForm(req, deps.bodyRate);
        if (!checkCsrf(req, form, tokens, token)) {
          throw new AppError('forbidden', 'This form has expired or was not sent from this page. Go back, reload the page and try again.');
        }
        return form;
      },
      csrf: (token) => csrfToken(tokens, token),
    };
    const result = await route.handle(ctx);
    if ('redirect' in result) {
      res.writeHead(303, { ...PAGE_HEADERS, Location: result.redirect });
      res.end();
    } else if ('pdf' in result) {
      sendBytes(res, 200, result.pdf, 'application/pdf', {
        ...PAGE_HEADERS,
        'Content-Disposition': `attachment; filename="${result.filename.replace(/[^\w.-]/g, '_')}"`,
      });
    } else {
      sendPage(req, res, result.status ?? 200, result.html);
    }
  }

  return async function handlePage(req: IncomingMessage, res: ServerResponse, method: string, url: URL): Promise<boolean> {
    const path = url.pathname;
    if (!path.startsWith('/pages/')) return false;
    // HEAD is GET without the body (RFC 9110, section 9.3.2), on every page and the stylesheet.
    const read = method === 'HEAD' ? 'GET' : method;
    if (path === '/pages/style.css' && read === 'GET') {
      sendText(req, res, 200, stylesheet, { ...PAGE_HEADERS, 'Cache-Control': 'public, max-age=3600' }, 'text/css; charset=utf-8');
      return true;
    }
    const retryAfter = await limit.take(req.socket.remoteAddress ?? 'unknown');
    if (retryAfter > 0) {
      sendPage(req, res, 429, messagePage(path, 'Too many requests', `Please wait ${retryAfter} seconds and try again.`), { 'Retry-After': String(retryAfter) });
      return true;
    }
    const found = router.find(read as 'GET' | 'POST', path);
    if (!found) {
      // A page that exists for another method (a form's action opened by GET, a POST to a page): 405 with Allow.
      const allowed = (['GET', 'POST'] as const).filter((m) => router.find(m, path));
      if (allowed.length) {
        const allow = allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', ');
        sendPage(req, res, 405, messagePage(path, 'Method not allowed', `This address answers ${allow} only.`), { Allow: allow });
      } else {
        sendPage(req, res, 404, messagePage(path, NOT_FOUND_TITLE, NOT_FOUND_TEXT));
      }
      return true;
    }
    try {
      await run(found.store as PageRoute, req, res, path, found.params as Record<string, string>, url.searchParams);
    } catch (err) {
      const e = toAppError(err);
      if (e.kind === 'internal' && !(err instanceof AppError)) deps.logger.error({ err, path: path.replace(/\/pages\/(\w+)\/[^/]+/, '/pages/$1/…') }, 'page failed');
      if (res.headersSent) {
        res.destroy();
      } else if (e.kind === 'not_found') {
        sendPage(req, res, 404, messagePage(path, NOT_FOUND_TITLE, NOT_FOUND_TEXT));
      } else if (e.kind === 'internal') {
        sendPage(req, res, 500, messagePage(path, 'Something went wrong', 'The page could not be shown. Please try again in a moment.'));
      } else {
        sendPage(req, res, e.status, messagePage(path, e.toProblem().title, e.message));
      }
    }
    return true;
  };
}
