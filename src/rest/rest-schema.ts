// The schema the REST door serves and documents: the routed root fields only, without what the graph
// has for its own clients (src/builder.ts `graphOnly`, the Node interface). Sofa executes against it
// (src/rest/plugin.ts) and the OpenAPI document describes it (src/rest/openapi.ts), so the document
// and the bodies are the same shapes.
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import { restRoutes } from './routes.ts';

const routedFields = new Set<string>(restRoutes.map((route) => route.field));

/** Whether a field was declared for graph clients only (`graphOnly` in src/builder.ts). */
const isGraphOnly = (field: { extensions?: Readonly<Record<string, unknown>> | null }): boolean => field.extensions?.graphOnly === true;

/**
 * The schema the REST door serves: the routed root fields only, without what exists for graph clients
 * alone (the Node interface and its global ids, mutation payloads' records, …), so each REST body is
 * the spec's shape however the graph grows around it.
 */
export function restSchema(schema: GraphQLSchema): GraphQLSchema {
  return pruneSchema(
    filterSchema({
      schema,
      rootFieldFilter: (operation, fieldName) => operation !== 'Subscription' && routedFields.has(`${operation}.${fieldName}`),
      typeFilter: (typeName) => typeName !== 'Node',
      objectFieldFilter: (_typeName, _fieldName, field) => !isGraphOnly(field),
      interfaceFieldFilter: (_typeName, _fieldName, field) => !isGraphOnly(field),
    }),
  );
}

