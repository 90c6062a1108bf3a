// Which parts of the graph lack a description: the check of test/schema-descriptions.test.ts and of
// `npm run schema:undescribed` (which lists them, optionally filtered by a pattern).
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLSchema,
} from 'graphql';

/** Coordinates (`Type`, `Type.field`, `Type.field(arg:)`, `Enum.VALUE`) without a description. */
export function undescribed(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  const check = (coordinate: string, description: string | null | undefined) => {
    if (!description || description.trim() === '') missing.push(coordinate);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || (isScalarType(type) && isSpecifiedScalarType(type))) continue;
    const isRoot = type === schema.getQueryType() || type === schema.getMutationType() || type === schema.getSubscriptionType();
    if (!isRoot) check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name}:)`, arg.description);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) check(`${type.name}.${field.name}`, field.description);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
    }
  }
  return missing.sort();
}
