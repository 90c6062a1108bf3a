// Headers that make every answer of both doors safe to receive in a browser: CORS for the listed origins
// (never with credentials), no sniffing, framing or referrer, a CSP, and no caching of keyed answers.
import type { Plugin } from 'graphql-yoga';
import { withHeaders } from '../web/bodies.ts';
import { graphiqlPolicy } from '../rest/explorers.ts';
import { jsonResponse } from '../rest/errors.ts';
import { DOCS_PAGE_POLICY, DOCS_PATH, isDocsPath, OPENAPI_PATH } from '../rest/docs.ts';
import { matchPath, methodsOf } from '../rest/routes.ts';
import { parsedUrl, Response } from '../web/fetch-api.ts';
import { METRICS_PATH } from './metrics-endpoint.ts';
import { MCP_PATH } from './mcp.ts';

/** Response headers a page on an allowed origin may read (rate limits, deprecation, tracing). */
export const EXPOSED_HEADERS = [
  'Deprecation',
  'Sunset',
  'Link',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'Request-Id',
  'X-Ignored-Parameters',
] as const;

/** Last-Event-ID: a subscription's client resumes with it; an MCP client names its protocol version. */
const ALLOWED_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Idempotency-Key',
  'Request-Id',
  'X-Request-Id',
  'Last-Event-ID',
  'Mcp-Protocol-Version',
] as const;

/** For answers that are not pages: load nothing, be framed by nothing. */
export const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** Also sent by the HTTP server on the few answers it makes itself. */
export const PROTECTIVE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': API_POLICY,
} as const;

const PREFLIGHT_MAX_AGE = 600;

function explorerPolicy(pathname: string): string | null {
  // Null (so the API's policy, which allows nothing) only if some other HTML answer came from /graphql.
  if (pathname === '/graphql' || pathname === '/graphql/') return graphiqlPolicy();
  if (pathname === DOCS_PATH || pathname === `${DOCS_PATH}/`) return DOCS_PAGE_POLICY;
  return null;
}

/** A key was presented: in the Authorization header, or as ?token= (webhooks, partner sign-on). */
export function carriesCredential(request: Request, url: URL): boolean {
  return request.headers.has('authorization') || url.searchParams.has('token');
}

interface SecurityHeaderOptions {
  /** Exact origins, or ['*'] for any; empty: no browser page on another origin may read answers. */
  origins: readonly string[];
  graphqlEndpoint: string;
  explorers: boolean;
  metrics: boolean;
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const READ_ONLY = ['GET', 'HEAD'] as const;

/** From the tables that route requests, so OPTIONS and a preflight never offer a method that does not work. */
function pathMethods(path: string, { graphqlEndpoint, explorers, metrics }: SecurityHeaderOptions): readonly string[] | null {
  if (path === graphqlEndpoint) return ['GET', 'HEAD', 'POST'];
  if (path === MCP_PATH) return ['POST'];
  if (path === '/health' || path === '/ready' || path === OPENAPI_PATH) return READ_ONLY;
  if ((metrics && path === METRICS_PATH) || (explorers && isDocsPath(path))) return READ_ONLY;
  const methods = methodsOf(matchPath(path));
  return methods.size > 0 ? METHOD_ORDER.filter((method) => methods.has(method)) : null;
}

/** After useHttpConventions().first: a trailing slash is gone from the path, which answers like the path without it. */
export function useSecurityHeaders(options: SecurityHeaderOptions): Plugin {
  const { origins } = options;
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  // `null` is what sandboxed frames and file: pages send: any page can produce it, so it is never allowed.
  const allowedOrigin = (origin: string | null): string | null => {
    if (!origin || origin === 'null') return null;
    if (anyOrigin) return '*';
    return allowed.has(origin) ? origin : null;
  };

  return {
    onRequest({ request, endResponse }) {
      if (request.method !== 'OPTIONS') return;
      const methods = pathMethods(parsedUrl(request).pathname, options);
      // An unknown path offers no methods, to a preflight either: it gets the 404 of every unknown path.
      if (!methods) return;
      const allow = [...methods, 'OPTIONS'].join(', ');
      const origin = request.headers.get('origin');
      if (origin === null) return endResponse(new Response(null, { status: 204, headers: { allow } }));
      const allowOrigin = allowedOrigin(origin);
      if (!allowOrigin) {
        const message =
          'Pages on this origin may not call the API from a browser (the operator lists the allowed origins in CORS_ORIGINS).';
        return endResponse(jsonResponse(403, { error: 'origin_not_allowed', message }));
      }
      const headers = {
        allow,
        'access-control-allow-origin': allowOrigin,
        'access-control-allow-methods': methods.join(', '),
        'access-control-allow-headers': ALLOWED_REQUEST_HEADERS.join(', '),
        'access-control-max-age': String(PREFLIGHT_MAX_AGE),
      };
      endResponse(new Response(null, { status: 204, headers }));
    },
    onResponse({ request, response, setResponse }) {
      const url = parsedUrl(request);
      const headers: Record<string, string> = { ...PROTECTIVE_HEADERS };
      const isPage = response.headers.get('content-type')?.startsWith('text/html') ?? false;
      headers['content-security-policy'] = (isPage ? explorerPolicy(url.pathname) : null) ?? API_POLICY;
      if (carriesCredential(request, url)) headers['cache-control'] = 'no-store';
      const allowOrigin = allowedOrigin(request.headers.get('origin'));
      if (allowOrigin) {
        headers['access-control-allow-origin'] = allowOrigin;
        headers['access-control-expose-headers'] = EXPOSED_HEADERS.join(', ');
      }
      // Answers differ by Origin when specific origins are listed: caches must keep them apart.
      const vary = !anyOrigin && allowed.size > 0 ? 'Origin' : null;
      const answer = withHeaders(response, (target) => {
        for (const [name, value] of Object.entries(headers)) target.set(name, value);
        if (vary) target.append('vary', vary);
      });
      if (answer !== response) setResponse(answer);
    },
  };
}
