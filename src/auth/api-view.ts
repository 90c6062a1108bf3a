// A key's view of the API: the part of the graph and of the REST door its permissions let it use,
// worked out from the same declarations that guard execution (a root field's `authScopes`, read by
// accessOfField; a field's own guard, hardGuardOf), never from a list of its own. Introspection with a
// key (src/gateway/api-view.ts) and /openapi.json with a key (src/rest/docs.ts) answer it; a request
// without a key sees the whole public API as before. Execution is not filtered: a key that asks for a
// field outside its view gets the same refusal as always (docs/api-view.md says why).
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import { BoundedCache } from '../lib/bounded-cache.ts';
import { accessOfField, hardGuardOf, type FieldAccess } from './field-access.ts';
import type { Permission } from './permissions.ts';

/**
 * A key's view depends on its permissions alone (not its dealerships): one name per distinct set,
 * under which the view is built once and kept.
 */
export function permissionSetName(permissions: Iterable<Permission>): string {
  return [...new Set(permissions)].sort().join(' ');
}

/**
 * Whether a key holding `permissions` may call a root field on /graphql: the field's own
 * requirement is met (further permissions of fields below it only remove those fields from the view).
 */
function graphMayCall(access: FieldAccess, permissions: ReadonlySet<Permission>): boolean {
  return access.access === 'public' || access.access === 'authenticated' || permissions.has(access.access);
}

/**
 * Whether a key holding `permissions` may call a REST path: every permission its root field needs,
 * the further ones included, since a REST body fails wholly on one guarded field (src/rest/plugin.ts
 * refuses it before it runs).
 */
export function restMayCall(access: FieldAccess, permissions: ReadonlySet<Permission>): boolean {
  return access.access === 'public' || access.permissions.every((permission) => permissions.has(permission));
}

/**
 * The graph as a key holding `permissions` may use it: the root fields it may call, without the fields
 * below that fail without a permission it lacks, and without the types left unreachable. A field that
 * answers this key null (personal data, a relation to a record it may not read) stays: it is part of
 * the answer's shape, and its description says which permission fills it.
 */
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
  // A key that may use everything sees the schema itself, in its own order.
  return removed ? pruneSchema(filtered) : schema;
}

/**
 * Views kept per schema and permission set. A view shares its field definitions (resolvers,
 * descriptions) with the schema; what it adds is its types' objects, about a quarter of a megabyte
 * for the whole graph, which is what each entry is counted as.
 */
const VIEW_BYTES = 256 * 1024;
const VIEW_BOUNDS = { maxEntries: 32, maxBytes: 32 * VIEW_BYTES };
const viewsBySchema = new WeakMap<GraphQLSchema, BoundedCache<GraphQLSchema>>();

/** The graph as seen by a key holding `permissions` (built once per distinct set, then kept). */
export function graphViewOf(schema: GraphQLSchema, permissions: ReadonlySet<Permission>): GraphQLSchema {
  let views = viewsBySchema.get(schema);
  if (!views) {
    views = new BoundedCache<GraphQLSchema>(VIEW_BOUNDS, () => VIEW_BYTES);
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
