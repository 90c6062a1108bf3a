// Sofa serves its schema as given: the REST door's is the graph's routed root fields, in the spec's shapes and names.
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
  type GraphQLNamedOutputType,
  type GraphQLType,
} from 'graphql';
import { restRoutes } from './routes.ts';

const routedFields = new Set<string>(restRoutes.map((route) => route.field));

type Extended = { extensions?: Readonly<Record<string, unknown>> | null };
const isGraphOnly = (field: Extended): boolean => field.extensions?.graphOnly === true;

/** The same wrapping (list, non-null) around another named type. */
function rewrap<Type extends GraphQLType>(type: Type, named: GraphQLNamedOutputType): Type {
  if (isNonNullType(type)) return new GraphQLNonNull(rewrap(type.ofType, named)) as Type;
  if (isListType(type)) return new GraphQLList(rewrap(type.ofType, named)) as Type;
  return named as Type;
}

/** `restAsText` enums become String, their values in the description: webhook payloads are read with them too. */
export function enumsAsText(schema: GraphQLSchema): GraphQLSchema {
  const retype = <Config extends { type: GraphQLType; description?: string | null | undefined }>(config: Config): Config => {
    const named = getNamedType(config.type);
    if (!isEnumType(named) || named.extensions.restAsText !== true) return config;
    const values = named.getValues().map((value) => String(value.value));
    const description = [config.description, `One of: ${values.join('; ')}.`].filter(Boolean).join(' ');
    return { ...config, type: rewrap(config.type, GraphQLString), description };
  };
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

const restShapeOf = (field: Extended): RestShape | undefined => field.extensions?.restShape as RestShape | undefined;

// A `restShape` field answers a type of its own: the named fields of the graph's type, resolvers and Prisma
// selections unchanged, under the spec's component name. Fields share a shape only as one selection of one type.
function restShapes(schema: GraphQLSchema): GraphQLSchema {
  const shapes = new Map<string, { type: GraphQLObjectType; of: string }>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const shape = restShapeOf(field);
      if (!shape) continue;
      const target = getNamedType(field.type);
      if (!isObjectType(target)) throw new Error(`${type.name}.${field.name}: a REST shape needs an object type, not ${target.name}`);
      const of = `${target.name}:${shape.fields.join()}`;
      const seen = shapes.get(shape.name);
      if (seen && seen.of !== of) throw new Error(`REST shape ${shape.name} is declared twice with different fields`);
      if (seen) continue;
      const config = target.toConfig();
      const fields = Object.fromEntries(
        shape.fields.map((name) => {
          const picked = config.fields[name];
          if (!picked) throw new Error(`REST shape ${shape.name}: ${target.name} has no field ${name}`);
          return [name, picked];
        }),
      );
      const { description } = shape;
      shapes.set(shape.name, { of, type: new GraphQLObjectType({ ...config, name: shape.name, description, interfaces: [], fields }) });
    }
  }
  if (shapes.size === 0) return schema;
  const config = schema.toConfig();
  const withShapes = new GraphQLSchema({ ...config, types: [...config.types, ...[...shapes.values()].map((shape) => shape.type)] });
  return mapSchema(withShapes, {
    [MapperKind.COMPOSITE_FIELD]: (field) => {
      const shape = restShapeOf(field);
      return shape ? { ...field, type: rewrap(field.type, shapes.get(shape.name)!.type) } : field;
    },
  });
}

/** The graph's names the REST door answers under the spec's: the stored integer, `databaseId` beside Relay's global `id`. */
export const restFieldNames: Readonly<Record<string, string>> = { databaseId: 'id' };

/** Each field under its REST name, the fields in name order (as the graph's are), as the REST bodies always listed them. */
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

/** The routed root fields without what exists for graph clients alone (Node, global ids, …): the spec's shapes however the graph grows. */
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
