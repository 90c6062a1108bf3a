// Which methods a path answers, from the same tables that route requests: the REST route table
// (src/rest/routes.ts), the GraphQL endpoint and the service's own paths. OPTIONS answers with them
// (`Allow`, and a preflight's Access-Control-Allow-Methods), and 404 for a path that does not exist,
// so a client or a browser is never told a method works where it does not.
import { matchPath } from '../rest/routes.ts';
import { isDocsPath, OPENAPI_PATH } from '../rest/docs.ts';
import { METRICS_PATH } from './metrics-endpoint.ts';

/** The order methods are listed in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface PathMethodOptions {
  graphqlEndpoint: string;
  /** GraphiQL and Swagger UI are served (EXPLORERS). */
  explorers: boolean;
  /** /metrics is served (METRICS_TOKEN is set). */
  metrics: boolean;
}

/** The methods `pathname` answers (HEAD wherever GET is; OPTIONS not listed), or null when it does not exist. */
export function pathMethods({ graphqlEndpoint, explorers, metrics }: PathMethodOptions): (pathname: string) => readonly string[] | null {
  const readOnly = ['GET', 'HEAD'] as const;
  return (pathname) => {
    // A trailing slash answers like the path without it (useHttpConventions).
    const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') || '/' : pathname;
    if (path === graphqlEndpoint) return ['GET', 'HEAD', 'POST'];
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
