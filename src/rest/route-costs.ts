// Sofa prices no route: what each REST path costs at its largest page (its `listSize`), and the calls a minute the key limits allow.
import type { GraphQLSchema } from 'graphql';
import type { RateLimitSettings } from '../config/index.ts';
import { restCallCost, type ListSize } from '../schema/graphql-limits.ts';
import { restSchema } from './rest-schema.ts';
import { accessOfRoute, restRoutes, rootFieldIn, type RestRoute } from './routes.ts';

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
    const field = rootFieldIn(route, served);
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
