// The guards the record plugin put on the built schema (`guardedBy` in a type's or field's extensions).
import type { GraphQLField, GraphQLNamedType, GraphQLSchema } from 'graphql';
import type { Actor } from '../../src/auth/api-keys.ts';
import type { Permission } from '../../src/auth/permissions.ts';

const guardOf = (extensions: unknown): Permission | undefined => (extensions as { guardedBy?: Permission } | undefined)?.guardedBy;

export const permissionOfType = (type: GraphQLNamedType): Permission | undefined => guardOf(type.extensions);

export function guardedFields(
  schema: GraphQLSchema,
): { type: string; field: GraphQLField<unknown, { actor: Actor | null }>; permission: Permission }[] {
  return Object.values(schema.getTypeMap()).flatMap((type) => {
    if (!('getFields' in type) || type.name.startsWith('__')) return [];
    return Object.values(type.getFields()).flatMap((field) => {
      const permission = guardOf(field.extensions);
      return permission ? [{ type: type.name, field: field as GraphQLField<unknown, { actor: Actor | null }>, permission }] : [];
    });
  });
}
