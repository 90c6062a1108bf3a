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
  isInterfaceType,
  isObjectType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { invalidInput, unauthenticated } from '../errors.ts';
import type { Actor } from './api-keys.ts';
import type { Permission } from './permissions.ts';

/**
 * What reads a recorded phone call: its caller is a lead's kind of data, and no read of its own
 * exists, so read:lead it is. The graph's lookups, any relation to a call, and the webhook and live
 * deliveries of phone_call.created (READ_PERMISSION_OF_EVENT, src/domain/webhooks.ts, reads
 * nodeLookupPermission) all take it from here.
 */
const PHONE_CALL_READ_PERMISSION: Permission = 'read:lead';

/**
 * A record → the permission its data needs when reached through a relation, keyed by the record: its
 * Prisma model (every type of the model, variants included, inherits it) or, for a record the graph
 * builds itself, its type. Types only reachable below one of these (a car's photos, a lead's events)
 * are covered by it.
 */
export const permissionByRecord: Readonly<Record<string, Permission>> = {
  Car: 'read:car',
  Lead: 'read:lead',
  PhoneCall: PHONE_CALL_READ_PERMISSION,
  Contact: 'read:contact',
  Dealership: 'index:dealership',
  LocationContactDetail: 'search:location',
  Offer: 'index:offer',
  ModelVariantSpecification: 'show:model_variant',
  ModelVariantAvailability: 'show:model_variant',
  CarPaymentProcessor: 'show:payment_processor',
};

/**
 * Type options for a variant of a guarded record that only a root field answers, which already needs
 * its own permission (an operation's answer, the key's own details): the variant is not guarded again,
 * so it can be non-null. The reason is part of the declaration.
 */
export function answeredByItsRoot(reason: string) {
  return { extensions: { answeredByItsRoot: reason } } as const;
}

/** The permission a type's data needs when reached through a relation, if any. */
export function permissionOfType(type: GraphQLNamedType): Permission | undefined {
  const extensions = (type.extensions ?? {}) as { pothosPrismaModel?: string; answeredByItsRoot?: string };
  if (extensions.answeredByItsRoot) return undefined;
  return permissionByRecord[extensions.pothosPrismaModel ?? type.name];
}

/** The guarded type a field returns (a connection counts as its nodes' type), if any. */
function guardedTypeOf(type: GraphQLOutputType): GraphQLNamedType | null {
  const named = getNamedType(type);
  if (permissionOfType(named)) return named;
  // A Relay connection: { edges: [{ node: T }] }.
  if (isObjectType(named) && named.name.endsWith('Connection')) {
    const edge = named.getFields().edges ? getNamedType(named.getFields().edges!.type) : null;
    const node = edge && isObjectType(edge) ? edge.getFields().node : undefined;
    if (node && permissionOfType(getNamedType(node.type))) return getNamedType(node.type);
  }
  return null;
}

/**
 * A connection's or an edge's own type: its fields are the structure of a guarded connection field,
 * which carries the guard itself.
 */
function isRelayStructure(type: GraphQLObjectType): boolean {
  const fields = type.getFields();
  return (
    (type.name.endsWith('Connection') && 'edges' in fields && 'pageInfo' in fields) ||
    (type.name.endsWith('Edge') && 'node' in fields && 'cursor' in fields)
  );
}

/** Every non-root field of the schema that returns a guarded type, with the permission it needs. */
export function guardedFields(
  schema: GraphQLSchema,
): { type: string; field: GraphQLField<unknown, GuardContext>; permission: Permission }[] {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((root) => root));
  const found: { type: string; field: GraphQLField<unknown, GuardContext>; permission: Permission }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || roots.has(type) || type.name.startsWith('__') || isRelayStructure(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const guarded = guardedTypeOf(field.type);
      const permission = guarded ? permissionOfType(guarded) : undefined;
      // Every resolver of this schema receives the request context (src/context.ts).
      if (permission) found.push({ type: type.name, field: field as GraphQLField<unknown, GuardContext>, permission });
    }
  }
  return found;
}

interface GuardContext {
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

/**
 * The permission a key needs to fetch a record by its global id (`node(id:)`, `nodes(ids:)`), for
 * every type of the graph that implements Node: the schema does not build when a Node type is missing
 * here, so a new one cannot be fetched unguarded. Which rows a key reaches is still the scoped
 * client's rule (src/db/scoped.ts): another dealership's record loads as none.
 */
export const nodeLookupPermission: Readonly<Record<string, Permission>> = {
  Car: 'read:car',
  Lead: 'read:lead',
  LeadEvent: 'read:lead',
  PhoneCall: PHONE_CALL_READ_PERMISSION,
  Contact: 'read:contact',
  Dealership: 'index:dealership',
  Location: 'index:dealership',
  Website: 'index:dealership',
  Manufacturer: 'index:offer',
  Model: 'index:offer',
  ModelVariant: 'show:model_variant',
};

/** `nodes(ids:)` takes at most this many ids: each may cost a statement. */
const NODES_PER_LOOKUP = 100;

/** Every Node type's integer primary key, as the global id carries it. */
const NODE_KEY = /^[1-9]\d{0,9}$/;
const MAX_KEY = 2_147_483_647;

/**
 * The Node type a global id names, or the input error that names the argument: an id this graph did
 * not make is the caller's mistake (422 / invalid_input), never a failure of the service.
 */
function nodeTypeOf(globalId: unknown, argument: string, nodeTypes: ReadonlySet<string>): string {
  const notOurs = () => invalidInput(argument, 'is not a global id of this graph');
  if (typeof globalId !== 'string') throw notOurs();
  let decoded: { typename: string; id: string };
  try {
    decoded = decodeGlobalID(globalId);
  } catch {
    throw notOurs();
  }
  if (!nodeTypes.has(decoded.typename) || !NODE_KEY.test(decoded.id) || Number(decoded.id) > MAX_KEY) throw notOurs();
  return decoded.typename;
}

/**
 * Wraps `Query.node` and `Query.nodes`: a malformed id is an input error; an id of a type the key has
 * no permission for resolves to null without a statement, exactly like a record that does not exist.
 */
export function guardNodeLookups(schema: GraphQLSchema): GraphQLSchema {
  const nodeInterface = schema.getType('Node');
  const query = schema.getQueryType();
  if (!nodeInterface || !isInterfaceType(nodeInterface) || !query) return schema;
  const nodeTypes = new Set(schema.getPossibleTypes(nodeInterface).map((type) => type.name));
  for (const name of nodeTypes) {
    if (!(name in nodeLookupPermission)) throw new Error(`${name} implements Node without a permission in nodeLookupPermission`);
  }
  const readable = (context: GuardContext, typename: string): boolean =>
    context.actor?.permissions.has(nodeLookupPermission[typename]!) ?? false;
  // Without a key the call is refused before any id is read, as the fields' own auth scope would
  // (Pothos parses a global id argument before it checks the scope).
  const refuseWithoutKey = (context: GuardContext): void => {
    if (!context.actor) throw unauthenticated();
  };
  const { node, nodes } = query.getFields();
  if (node) {
    const resolve = node.resolve ?? defaultFieldResolver;
    node.resolve = (source, args: { id?: unknown }, context: GuardContext, info) => {
      refuseWithoutKey(context);
      return readable(context, nodeTypeOf(args.id, 'id', nodeTypes)) ? resolve(source, args, context, info) : null;
    };
  }
  if (nodes) {
    const resolve = nodes.resolve ?? defaultFieldResolver;
    nodes.resolve = async (source, args: { ids?: unknown }, context: GuardContext, info) => {
      refuseWithoutKey(context);
      const ids = Array.isArray(args.ids) ? (args.ids as unknown[]) : [];
      if (ids.length > NODES_PER_LOOKUP) throw invalidInput('ids', `at most ${NODES_PER_LOOKUP} ids at once`);
      const allowed = ids.map((id, index) => readable(context, nodeTypeOf(id, `ids[${index}]`, nodeTypes)));
      const asked = ids.filter((_id, index) => allowed[index]);
      const found = asked.length === 0 ? [] : ((await resolve(source, { ...args, ids: asked }, context, info)) as unknown[]);
      let next = 0;
      return allowed.map((isAllowed) => (isAllowed ? (found[next++] ?? null) : null));
    };
  }
  return schema;
}
