// The schema the REST door serves and documents: the routed root fields only, without what the graph
// has for its own clients (src/schema/builder.ts `graphOnly`, the Node interface). Sofa executes against it
// (src/rest/plugin.ts) and the OpenAPI document describes it (src/rest/openapi.ts), so the document
// and the bodies are the same shapes.
import { MapperKind, filterSchema, mapSchema, pruneSchema } from '@graphql-tools/utils';
import {
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  getNamedType,
  isObjectType,
  isEnumType,
  isListType,
  isNonNullType,
  lexicographicSortSchema,
  type GraphQLEnumType,
  type GraphQLFieldConfig,
  type GraphQLType,
} from 'graphql';
import { restRoutes } from './routes.ts';

const routedFields = new Set<string>(restRoutes.map((route) => route.field));

/** Whether a field was declared for graph clients only (`graphOnly` in src/schema/builder.ts). */
const isGraphOnly = (field: { extensions?: Readonly<Record<string, unknown>> | null }): boolean => field.extensions?.graphOnly === true;

const isRestText = (type: GraphQLType): boolean => {
  const named = getNamedType(type);
  return isEnumType(named) && named.extensions.restAsText === true;
};

/** The same wrapping (list, non-null) around String instead of the enum. */
function asText<Type extends GraphQLType>(type: Type): Type {
  if (isNonNullType(type)) return new GraphQLNonNull(asText(type.ofType)) as Type;
  if (isListType(type)) return new GraphQLList(asText(type.ofType)) as Type;
  return GraphQLString as Type;
}

/** The field's description with the values it takes, which the String type no longer says. */
function withValues(description: string | null | undefined, type: GraphQLType): string {
  const values = (getNamedType(type) as GraphQLEnumType).getValues().map((value) => String(value.value));
  return [description, `One of: ${values.join('; ')}.`].filter(Boolean).join(' ');
}

/**
 * Each field, argument and input field of a `restAsText` enum type becomes String: the REST door's
 * value texts, which webhook payloads are read with too (src/gateway/webhook-payloads.ts).
 */
export function enumsAsText(schema: GraphQLSchema): GraphQLSchema {
  const retype = <Config extends { type: GraphQLType; description?: string | null | undefined }>(config: Config): Config =>
    isRestText(config.type) ? { ...config, type: asText(config.type), description: withValues(config.description, config.type) } : config;
  return mapSchema(schema, {
    [MapperKind.COMPOSITE_FIELD]: retype,
    [MapperKind.INPUT_OBJECT_FIELD]: retype,
    [MapperKind.ARGUMENT]: retype,
  });
}

/** A field's `restShape` (src/schema/builder.ts): the REST type its body is, as a selection of the graph's type. */
interface RestShape {
  name: string;
  description: string;
  fields: readonly string[];
}

const restShapeOf = (field: { extensions?: Readonly<Record<string, unknown>> | null }): RestShape | undefined =>
  field.extensions?.restShape as RestShape | undefined;

/** The same wrapping (list, non-null) around another named type. */
function retarget<Type extends GraphQLType>(type: Type, target: GraphQLObjectType): Type {
  if (isNonNullType(type)) return new GraphQLNonNull(retarget(type.ofType, target)) as Type;
  if (isListType(type)) return new GraphQLList(retarget(type.ofType, target)) as Type;
  return target as Type;
}

/**
 * Each `restShape` field answers, on the REST door, a type of its own: the named fields of the
 * graph's type (their definitions, resolvers and Prisma selections unchanged) under the spec's
 * component name. Two fields may share a shape only when it is the same selection of the same type.
 */
function restShapes(schema: GraphQLSchema): GraphQLSchema {
  const shapes = new Map<string, { type: GraphQLObjectType; of: string; fields: string }>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const shape = restShapeOf(field);
      if (!shape) continue;
      const target = getNamedType(field.type);
      if (!isObjectType(target)) throw new Error(`${type.name}.${field.name}: a REST shape needs an object type, not ${target.name}`);
      const seen = shapes.get(shape.name);
      if (seen) {
        if (seen.of !== target.name || seen.fields !== shape.fields.join())
          throw new Error(`REST shape ${shape.name} is declared twice with different fields`);
        continue;
      }
      const config = target.toConfig();
      const picked: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
      for (const name of shape.fields) {
        const picking = config.fields[name];
        if (!picking) throw new Error(`REST shape ${shape.name}: ${target.name} has no field ${name}`);
        picked[name] = picking;
      }
      shapes.set(shape.name, {
        type: new GraphQLObjectType({ ...config, name: shape.name, description: shape.description, interfaces: [], fields: picked }),
        of: target.name,
        fields: shape.fields.join(),
      });
    }
  }
  if (shapes.size === 0) return schema;
  const config = schema.toConfig();
  const withShapes = new GraphQLSchema({ ...config, types: [...config.types, ...[...shapes.values()].map((shape) => shape.type)] });
  return mapSchema(withShapes, {
    [MapperKind.COMPOSITE_FIELD]: (field) => {
      const shape = restShapeOf(field);
      return shape ? { ...field, type: retarget(field.type, shapes.get(shape.name)!.type) } : field;
    },
  });
}

/**
 * The graph's names that the REST door answers under the spec's: a record's stored integer is
 * `databaseId` in the graph (where `id` is the global id of Relay and Apollo, left out here as
 * `graphOnly`) and `id` in the spec. The only place the two doors' names differ.
 */
export const restFieldNames: Readonly<Record<string, string>> = { databaseId: 'id' };

/**
 * Each field named differently on the REST door (restFieldNames) under its REST name, in the order of
 * the names (as the graph's are), so the REST bodies list their fields as they always did.
 */
function specNames(schema: GraphQLSchema): GraphQLSchema {
  return lexicographicSortSchema(
    mapSchema(schema, {
      [MapperKind.COMPOSITE_FIELD]: (config, fieldName) => {
        const restName = restFieldNames[fieldName];
        return restName ? [restName, config] : config;
      },
    }),
  );
}

/**
 * The schema the REST door serves: the routed root fields only, without what exists for graph clients
 * alone (the Node interface and its global ids, mutation payloads' records, …), so each REST body is
 * the spec's shape however the graph grows around it.
 */
export function restSchema(schema: GraphQLSchema): GraphQLSchema {
  return pruneSchema(
    specNames(
      enumsAsText(
        filterSchema({
          schema: restShapes(schema),
          rootFieldFilter: (operation, fieldName) => operation !== 'Subscription' && routedFields.has(`${operation}.${fieldName}`),
          typeFilter: (typeName) => typeName !== 'Node',
          objectFieldFilter: (_typeName, _fieldName, field) => !isGraphOnly(field),
          interfaceFieldFilter: (_typeName, _fieldName, field) => !isGraphOnly(field),
        }),
      ),
    ),
  );
}
