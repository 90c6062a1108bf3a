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

export const connectionPageSize = { default: 20, max: 100 } as const;

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  AuthScopes: { public: boolean; authenticated: boolean; permission: Permission };
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
    // Refused when it opens: it would hold a stream, and its key's count, with nothing to receive.
    authorizeOnSubscribe: true,
    authScopes: (context) => ({
      public: true,
      authenticated: context.actor !== null,
      permission: (permission) => context.actor?.permissions.has(permission) ?? false,
    }),
    // No valid key is 401; a key without the permission gets the field's declared status, as on REST.
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
    // Relay's and Apollo's default, so normalising caches need no configuration.
    idFieldOptions: {
      description:
        'The record’s global id in this graph: give it to `node(id:)` to fetch the record again. Opaque; the stored integer is `databaseId`.',
      extensions: { graphOnly: true },
    },
    pageInfoTypeOptions: { description: 'Where a page of a connection stands in the whole list.' },
    pageInfoFieldOptions: { description: 'Whether there are more pages, and the cursors to ask for them.' },
    hasNextPageFieldOptions: { description: 'Whether there are records after this page (ask again with `after: endCursor`).' },
    hasPreviousPageFieldOptions: { description: 'Whether there are records before this page (ask again with `before: startCursor`).' },
    startCursorFieldOptions: { description: 'The cursor of the first record of this page; null when the page is empty.' },
    endCursorFieldOptions: { description: 'The cursor of the last record of this page; null when the page is empty.' },
    cursorFieldOptions: { description: 'Where this record stands in the list: give it as `after` or `before` to page from here.' },
    firstArgOptions: {
      description: `How many records from the start (after \`after\`): 1 to ${connectionPageSize.max}, ${connectionPageSize.default} when neither first nor last is given.`,
    },
    lastArgOptions: { description: `How many records from the end (before \`before\`): 1 to ${connectionPageSize.max}.` },
    afterArgOptions: { description: 'A cursor from an earlier page (`pageInfo.endCursor`): the records after it.' },
    beforeArgOptions: { description: 'A cursor from an earlier page (`pageInfo.startCursor`): the records before it.' },
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

/** The builder's schema types, which shared field definitions are written against. */
export type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** A Node fetched again through its integer key; null, never an error, for a record the key cannot reach. */
export const nodeById = { id: { field: 'id' }, nullable: true } as const;

/** `node_id`, the global id's former name, kept deprecated until the removal day. */
export function keepNodeIdField<Shape extends { id: number }>(ref: ObjectRef<Types, Shape>): void {
  builder.objectField(ref, 'node_id', (t) =>
    t.id({
      ...graphOnly,
      description: 'The record’s global id under its former name: the same value as `id`.',
      deprecationReason: 'Use id. Removal after 2027-06-30.',
      resolve: (record) => encodeGlobalID(ref.name, record.id),
    }),
  );
}

/** A field for graph clients that the REST bodies, the spec's shapes, leave out. */
export const graphOnly = { extensions: { graphOnly: true } } as const;

/** A field whose REST body is the spec's selection of the graph type it returns, under the spec's name. */
export function restShape(name: string, description: string, fields: readonly string[]) {
  return { extensions: { restShape: { name, description, fields } } } as const;
}

/** An enum standing for the spec's text, which the REST door reads and answers as String. */
export const restAsText = { extensions: { restAsText: true } } as const;

// DateTime answers ISO 8601 strings (2026-11-21T09:30:00.000Z), as the spec's date-time fields are.
builder.addScalarType('DateTime', new GraphQLScalarType({ ...DateTimeISOResolver.toConfig(), name: 'DateTime' }));
builder.addScalarType('Date', DateResolver);
builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('JSONObject', JSONObjectResolver);

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
