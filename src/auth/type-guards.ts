// Nested access, decided in one place: the object types whose data a permission guards, applied to
// every non-root field that returns one of them (directly, in a list, or as a connection's nodes).
// A root field declares its own permission (and fails without it); a relation reached from another
// object resolves to null (or, for a non-null list, an empty list) for a key without the type's
// permission, on both doors, without failing the rest of the answer: a REST body fails wholly on any
// GraphQL error, so a guard never throws.
import {
  defaultFieldResolver,
  getNamedType,
  getNullableType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import type { Actor } from './api-keys.ts';
import type { Permission } from './permissions.ts';

/**
 * GraphQL object type → the permission its data needs when reached through a relation. Types only
 * reachable below one of these (a car's photos, a lead's events) are covered by it.
 */
export const permissionByType: Readonly<Record<string, Permission>> = {
  Car: 'read:car',
  Lead: 'read:lead',
  Contact: 'read:contact',
  ContactListEntry: 'read:contact',
  Dealership: 'index:dealership',
  CarDealership: 'index:dealership',
  LocationContactDetail: 'search:location',
  // DealershipSearchContactDetail is not listed: only the postcode search answers it, and that root
  // field already needs search:location; its results always carry their contact details (never null).
  ModelVariantSpecification: 'show:model_variant',
  ModelVariantAvailability: 'show:model_variant',
  Offer: 'index:offer',
  ManufacturerOffer: 'index:offer',
  WebsiteOffer: 'index:offer',
  CarPaymentProcessor: 'show:payment_processor',
};

/** The guarded type a field returns (a connection counts as its nodes' type), if any. */
export function guardedTypeOf(type: GraphQLOutputType): string | null {
  const named = getNamedType(type);
  if (named.name in permissionByType) return named.name;
  // A Relay connection: { edges: [{ node: T }] }.
  if (isObjectType(named) && named.name.endsWith('Connection')) {
    const edge = named.getFields().edges ? getNamedType(named.getFields().edges!.type) : null;
    const node = edge && isObjectType(edge) ? edge.getFields().node : undefined;
    if (node && getNamedType(node.type).name in permissionByType) return getNamedType(node.type).name;
  }
  return null;
}

/**
 * A connection's or an edge's own type: its fields are the structure of a guarded connection field,
 * which carries the guard itself.
 */
function isRelayStructure(type: GraphQLObjectType): boolean {
  const fields = type.getFields();
  return (type.name.endsWith('Connection') && 'edges' in fields && 'pageInfo' in fields) || (type.name.endsWith('Edge') && 'node' in fields && 'cursor' in fields);
}

/** Every non-root field of the schema that returns a guarded type, with the permission it needs. */
export function guardedFields(schema: GraphQLSchema): { type: string; field: GraphQLField<unknown, GuardContext>; permission: Permission }[] {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((root) => root));
  const found: { type: string; field: GraphQLField<unknown, GuardContext>; permission: Permission }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || roots.has(type) || type.name.startsWith('__') || isRelayStructure(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const guarded = guardedTypeOf(field.type);
      const permission = guarded ? permissionByType[guarded] : undefined;
      // Every resolver of this schema receives the request context (src/context.ts).
      if (permission) found.push({ type: type.name, field: field as GraphQLField<unknown, GuardContext>, permission });
    }
  }
  return found;
}

export interface GuardContext {
  actor: Actor | null;
}

/**
 * Wraps the resolver of every guarded field: without the permission the field is null (a non-null
 * list: empty) and its resolver never runs. A single object must be nullable to be guarded; the
 * schema does not build otherwise, so a new relation cannot silently skip its guard.
 */
export function guardFieldsByType(schema: GraphQLSchema): GraphQLSchema {
  for (const { type, field, permission } of guardedFields(schema)) {
    const isList = isListType(getNullableType(field.type));
    if (!isList && isNonNullType(field.type)) {
      throw new Error(`${type}.${field.name} returns ${getNamedType(field.type).name}, guarded by ${permission}: it must be nullable`);
    }
    const denied = isList && isNonNullType(field.type) ? [] : null;
    const resolve = field.resolve ?? defaultFieldResolver;
    field.resolve = (source, args, context, info) =>
      context.actor?.permissions.has(permission) ? resolve(source, args, context, info) : denied;
  }
  return schema;
}
