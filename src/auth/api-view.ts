// A key's view of the API, read from the same declarations that guard execution so the two cannot
// drift; execution itself is not filtered (docs/api-view.md says why).
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import { boundedCache, type BoundedCache } from '../lib/bounded-cache.ts';
import { accessOfField, hardGuardOf, type FieldAccess } from './field-access.ts';
import type { Permission } from './permissions.ts';

/** A view depends on permissions alone, not dealerships: one cache name per distinct set. */
export function permissionSetName(permissions: Iterable<Permission>): string {
  return [...new Set(permissions)].sort().join(' ');
}

function graphMayCall(access: FieldAccess, permissions: ReadonlySet<Permission>): boolean {
  return access.access === 'public' || access.access === 'authenticated' || permissions.has(access.access);
}

/** REST needs the further permissions too: one guarded field fails its whole body. */
export function restMayCall(access: FieldAccess, permissions: ReadonlySet<Permission>): boolean {
  return access.access === 'public' || access.permissions.every((permission) => permissions.has(permission));
}

// Fields that answer this key null stay: they are part of the answer's shape.
function buildGraphView(schema: GraphQLSchema, permissions: ReadonlySet<Permission>): GraphQLSchema {
  const rootTypes = {
    Query: schema.getQueryType(),
    Mutation: schema.getMutationType(),
    Subscription: schema.getSubscriptionType(),
  };
  let removed = false;
  const kept = (keep: boolean): boolean => {
    if (!keep) removed = true;
    return keep;
  };
  const usable = (_typeName: string, _fieldName: string, config: { extensions?: Readonly<Record<string, unknown>> | null }): boolean => {
    const permission = hardGuardOf(config);
    return kept(permission === undefined || permissions.has(permission));
  };
  const filtered = filterSchema({
    schema,
    rootFieldFilter: (operation, fieldName) => {
      const field = rootTypes[operation]?.getFields()[fieldName];
      return kept(field !== undefined && graphMayCall(accessOfField(field), permissions));
    },
    objectFieldFilter: usable,
    interfaceFieldFilter: usable,
  });
  return removed ? pruneSchema(filtered) : schema;
}

// A view shares its fields with the schema; each entry is counted as its own type objects' size.
const VIEW_BYTES = 256 * 1024;
const VIEW_BOUNDS = { maxEntries: 32, maxBytes: 32 * VIEW_BYTES };
const viewsBySchema = new WeakMap<GraphQLSchema, BoundedCache<GraphQLSchema>>();

export function graphViewOf(schema: GraphQLSchema, permissions: ReadonlySet<Permission>): GraphQLSchema {
  let views = viewsBySchema.get(schema);
  if (!views) {
    views = boundedCache<GraphQLSchema>(VIEW_BOUNDS, () => VIEW_BYTES);
    viewsBySchema.set(schema, views);
  }
  const name = permissionSetName(permissions);
  let view = views.get(name);
  if (!view) {
    view = buildGraphView(schema, permissions);
    views.set(name, view);
  }
  return view;
}
