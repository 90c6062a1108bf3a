// Which methods a path answers, from the same tables that route requests, so OPTIONS and a preflight
// never tell a client a method works where it does not.
import { matchPath } from '../rest/routes.ts';
import { isDocsPath, OPENAPI_PATH } from '../rest/docs.ts';
import { METRICS_PATH } from './metrics-endpoint.ts';
import { MCP_PATH } from './mcp.ts';

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface PathMethodOptions {
  graphqlEndpoint: string;
  explorers: boolean;
  metrics: boolean;
}

export function pathMethods({ graphqlEndpoint, explorers, metrics }: PathMethodOptions): (pathname: string) => readonly string[] | null {
  const readOnly = ['GET', 'HEAD'] as const;
  return (pathname) => {
    // A trailing slash answers like the path without it (useHttpConventions).
    const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') || '/' : pathname;
    if (path === graphqlEndpoint) return ['GET', 'HEAD', 'POST'];
    if (path === MCP_PATH) return ['POST'];
    if (path === '/health' || path === '/ready' || path === OPENAPI_PATH) return readOnly;
    if (metrics && path === METRICS_PATH) return readOnly;
    if (explorers && isDocsPath(path)) return readOnly;
    const matches = matchPath(path);
    if (matches.length === 0) return null;
    const methods = new Set<string>(matches.map(({ route }) => route.method));
    if (methods.has('GET')) methods.add('HEAD');
    return METHOD_ORDER.filter((method) => methods.has(method));
  };
}
