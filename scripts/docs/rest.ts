// docs/rest.md's path table and docs/rate-limits.md's cost table, rendered from the route table and the
// schema, so that adding a route never means editing a document by hand.
import { DEFAULT_RATE_LIMITS } from '../../src/config/index.ts';
import { errorStatusesOf, openApiPath } from '../../src/rest/openapi.ts';
import { routeCosts } from '../../src/rest/route-costs.ts';
import { accessOfRoute, restRoutes } from '../../src/rest/routes.ts';
import { getSchema } from '../../src/schema/index.ts';

const code = (text: string): string => `\`${text}\``;

export function restPathsTable(): string {
  const rows = restRoutes.map((route) => {
    const access = accessOfRoute(route, getSchema());
    const permission =
      access.access === 'public'
        ? 'none (public)'
        : access.access === 'authenticated'
          ? 'any valid key'
          : access.permissions.map(code).join(' and ');
    // A denial the spec answers 401 rather than 403 is bold: it is the exception.
    const without = access.permissions.length === 0 ? '' : access.deniedStatus === 401 ? '**401**' : String(access.deniedStatus);
    const spec = route.deprecated ? `${route.spec} (deprecated)` : route.spec;
    return [
      route.method,
      code(openApiPath(route.path)),
      (route.query ?? []).map(code).join(' '),
      spec,
      permission,
      without,
      String(route.successStatus ?? 200),
      errorStatusesOf(route, access).join(' '),
      code(route.field.split('.')[1] ?? route.field),
    ];
  });
  return markdownTable(['Method', 'Path', 'Query', 'Spec', 'Permission', 'Without it', 'Success', 'Errors', 'Field'], rows);
}

export function restCostsTable(): string {
  const rows = routeCosts(getSchema(), DEFAULT_RATE_LIMITS).map(({ route, largestPage, cost, callsPerMinute }) => [
    code(`${route.method} ${openApiPath(route.path)}`),
    Object.entries(largestPage)
      .map(([name, value]) => code(`${name}=${value}`))
      .join(' ') || '—',
    String(cost),
    callsPerMinute === null ? 'public: no key' : String(callsPerMinute),
  ]);
  return markdownTable(['REST path', 'Largest page', 'Cost', 'Calls a minute'], rows);
}

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`.replace(/ {2,}/g, ' ');
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}
