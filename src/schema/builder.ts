// The schema builder: plugins, scalars and auth scopes. No domain types here (see src/schema/).
import SchemaBuilder, { type ObjectRef } from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin, { encodeGlobalID } from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { DateResolver, DateTimeISOResolver, JSONObjectResolver, JSONResolver } from 'graphql-scalars';
import { GraphQLScalarType } from 'graphql';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type { Context } from '../context.ts';
import type { Permission } from '../auth/permissions.ts';
import { permissionDenied, unauthenticated } from '../errors.ts';
import { deniedStatusOfField } from '../auth/field-access.ts';
import './record-plugin.ts';

/** Relay connections' page size: `first`/`last` default and ceiling (the cost analysis counts the same). */
export const connectionPageSize = { default: 20, max: 100 } as const;

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  AuthScopes: {
    /** Anyone, with or without a key: a deliberate, visible choice. */
    public: boolean;
    /** Any valid key. */
    authenticated: boolean;
    /** A valid key holding this permission. */
    permission: Permission;
  };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    Date: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  // First, so that its guards wrap the others' resolvers (and Pothos' parsing of global ids).
  plugins: ['records', ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  scopeAuth: {
    // A subscription is refused when it opens, not when its first event comes (it would hold a
    // stream, and its key's count, with nothing it may receive).
    authorizeOnSubscribe: true,
    authScopes: (context) => ({
      public: true,
      authenticated: context.actor !== null,
      permission: (permission) => context.actor?.permissions.has(permission) ?? false,
    }),
    // A missing or invalid key is 401 whatever the field. A valid key without the permission gets
    // what the field declares beside it (src/auth/field-access.ts: 403, or 401 where the spec says
    // "unauthorised"), which the REST door reads too, so the two doors agree.
    unauthorizedError: (_parent, context, info) => {
      if (!context.actor) return unauthenticated();
      return permissionDenied(deniedStatusOfField(info.parentType.getFields()[info.fieldName]));
    },
  },
  prisma: {
    client: (context) => context.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
    defaultConnectionSize: connectionPageSize.default,
    maxConnectionSize: connectionPageSize.max,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Relay's and Apollo's defaults: a Node's `id` is its global id (opaque, unique across types), so
    // normalising caches need no configuration. The stored integer is `databaseId` in the graph; the
    // REST door answers it under the spec's name `id` (the one projection: src/rest/rest-schema.ts).
    idFieldOptions: {
      description:
        'The record’s global id in this graph: give it to `node(id:)` to fetch the record again. Opaque; the stored integer is `databaseId`.',
      extensions: { graphOnly: true },
    },
    nodeTypeOptions: { description: 'A record that can be fetched again by its global id (`id`) with `node(id:)`.' },
    nodeQueryOptions: {
      authScopes: { authenticated: true },
      description:
        'A record by its global id (`id`); null when there is none, or when the key cannot read it (another dealership’s record, or a missing permission).',
      args: { id: { description: 'A global `id` from an earlier answer.' } },
    },
    nodesQueryOptions: {
      authScopes: { authenticated: true },
      description:
        'Records by their global ids (`id`), in the order asked; each is null when there is none or the key cannot read it. At most 100 ids.',
      args: { ids: { description: 'Global `id`s from earlier answers.' } },
    },
  },
});

/**
 * A Node type's options (`builder.prismaNode(model, { ...nodeById, fields })`): fetched again by
 * node(id:) through its integer primary key, and null, never an error, for a global id that names no
 * record the key reaches.
 */
export const nodeById = { id: { field: 'id' }, nullable: true } as const;

/** The builder's types (context, Prisma types, scopes, scalars), for helpers that take its refs. */
type SchemaTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

/** When the fields kept under an old name are removed: every `@deprecated` reason ends with its day. */
const NODE_ID_REMOVAL = '2027-06-30';

/**
 * Keeps `node_id`, the global id's name before it became `id`, on a Node type that had it: the same
 * value as `id`, deprecated, so clients built on it go on working until the removal day.
 */
export function keepNodeIdField<Shape extends { id: number }>(ref: ObjectRef<SchemaTypes, Shape>, typename: string): void {
  builder.objectField(ref, 'node_id', (t) =>
    t.id({
      ...graphOnly,
      description: 'The record’s global id under its former name: the same value as `id`.',
      deprecationReason: `Use id. Removal after ${NODE_ID_REMOVAL}.`,
      resolve: (record) => encodeGlobalID(typename, record.id),
    }),
  );
}

/**
 * Field options for a field of the graph that the REST door leaves out (src/rest/plugin.ts): the REST
 * bodies are the spec's shapes, so a field added for graph clients (a mutation payload's record, a
 * connection) must not appear in them.
 */
export const graphOnly = { extensions: { graphOnly: true } } as const;

/**
 * Field options for a field whose REST body is a selection of the graph type it returns: the graph
 * answers the record's one type (a car's `dealership` is the `Dealership`), while the REST door
 * answers the spec's fields of it under the spec's component name (`CarDealership`), built from the
 * same field definitions in one place (src/rest/rest-schema.ts). The names are the graph's
 * (`databaseId`, which the REST door calls `id`).
 */
export function restShape(name: string, description: string, fields: readonly string[]) {
  return { extensions: { restShape: { name, description, fields } } } as const;
}

/**
 * Marks an enum whose values stand for the spec's text ("New Vehicle Enquiry" as NEW_VEHICLE_ENQUIRY,
 * src/schema/lead-values.ts): the REST door (src/rest/rest-schema.ts) reads and answers that text, as the spec documents it,
 * so it serves such an enum as String and lists the values in the field's description.
 */
export const restAsText = { extensions: { restAsText: true } } as const;

// DateTime answers ISO 8601 strings (2026-11-21T09:30:00.000Z), as the spec's date-time fields are.
builder.addScalarType('DateTime', new GraphQLScalarType({ ...DateTimeISOResolver.toConfig(), name: 'DateTime' }));
builder.addScalarType('Date', DateResolver);
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('JSONObject', JSONObjectResolver);

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
