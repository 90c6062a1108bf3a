// What each REST path costs at its largest page, and how many calls a minute the per-key limits
// allow of it: docs/rate-limits.md's table (test/readme.test.ts checks it) and the floor of 60 calls a minute
// for an integrator (test/rate-limits.test.ts). The cost is the one the REST door spends
// (restCallCost in src/schema/graphql-limits.ts); the largest page is the root field's `listSize`.
import type { GraphQLSchema } from 'graphql';
import type { RateLimitSettings } from '../config/index.ts';
import { restCallCost, type ListSize } from '../schema/graphql-limits.ts';
import { restSchema } from './rest-schema.ts';
import { accessOfRoute, restRoutes, type RestRoute } from './routes.ts';

interface RouteCost {
  route: RestRoute;
  /** The paging argument at its largest value, when the route pages its answer. */
  largestPage: Record<string, number>;
  cost: number;
  /** Calls a minute the key and cost limits allow together; null for a public route (no key, no key budget). */
  callsPerMinute: number | null;
}

export function routeCosts(schema: GraphQLSchema, limits: RateLimitSettings): RouteCost[] {
  const served = restSchema(schema);
  return restRoutes.flatMap((route) => {
    const [operation, name] = route.field.split('.') as ['Query' | 'Mutation', string];
    const field = (operation === 'Query' ? served.getQueryType() : served.getMutationType())?.getFields()[name];
    if (!field) return [];
    const size = field.extensions?.listSize as ListSize | undefined;
    const largestPage = size?.slicingArgument && size.maxSize !== undefined ? { [size.slicingArgument]: size.maxSize } : {};
    const cost = restCallCost(field, largestPage);
    const windows = 60_000 / limits.windowMs;
    const perWindow = Math.min(
      limits.keyRequests > 0 ? limits.keyRequests : Infinity,
      limits.keyCost > 0 ? Math.floor(limits.keyCost / cost) : Infinity,
    );
    return [
      {
        route,
        largestPage,
        cost,
        callsPerMinute: accessOfRoute(route, served).access === 'public' ? null : Math.floor(perWindow * windows),
      },
    ];
  });
}
