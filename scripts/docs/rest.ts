// docs/rest.md's path table and docs/rate-limits.md's cost table, rendered from the route table and the
// schema, so that adding a route never means editing a document by hand.
import type { GraphQLSchema } from 'graphql';
import { DEFAULT_RATE_LIMITS, type RateLimitSettings } from '../../src/config/index.ts';
import { errorStatusesOf } from '../../src/rest/openapi.ts';
import { accessOfRoute, openApiPath, restRoutes, rootFieldIn } from '../../src/rest/routes.ts';
import { restSchema } from '../../src/rest/rest-schema.ts';
import { restCallCost, type ListSize } from '../../src/schema/graphql-limits.ts';
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

/** What each REST path costs at its largest page (its `listSize`), and the calls a minute the key limits allow (null: public). */
export function routeCosts(schema: GraphQLSchema, limits: RateLimitSettings) {
  const served = restSchema(schema);
  return restRoutes.flatMap((route) => {
    const field = rootFieldIn(route, served);
    if (!field) return [];
    const size = field.extensions?.listSize as ListSize | undefined;
    const largestPage: Record<string, number> =
      size?.slicingArgument && size.maxSize !== undefined ? { [size.slicingArgument]: size.maxSize } : {};
    const cost = restCallCost(field, largestPage);
    const perWindow = Math.min(
      limits.keyRequests > 0 ? limits.keyRequests : Infinity,
      limits.keyCost > 0 ? Math.floor(limits.keyCost / cost) : Infinity,
    );
    const callsPerMinute = accessOfRoute(route, served).access === 'public' ? null : Math.floor(perWindow * (60_000 / limits.windowMs));
    return [{ route, largestPage, cost, callsPerMinute }];
  });
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
