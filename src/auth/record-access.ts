// Who reads a record: each record type declares its read permission once, as a type option
// (`readPermission`, src/schema/record-plugin.ts), and everything that hands the record out takes it
// from there: relations to it, `node(id:)` / `nodes(ids:)`, its live subscription and its webhook
// deliveries. A relation without the permission resolves to null (a non-null list: empty) without
// failing the rest of the answer: a REST body fails wholly on any GraphQL error, so a guard never throws.
import type { GraphQLField, GraphQLFieldResolver, GraphQLNamedType, GraphQLSchema } from 'graphql';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { invalidInput, unauthenticated } from '../errors.ts';
import type { Actor } from './api-keys.ts';
import type { Permission } from './permissions.ts';

/**
 * Type options for a variant of a guarded record that only a root field answers, which already needs
 * its own permission (an operation's answer, the key's own details): the variant is not guarded again,
 * so it can be non-null. The reason is part of the declaration.
 */
export function answeredByItsRoot(reason: string) {
  return { extensions: { answeredByItsRoot: reason } } as const;
}

/**
 * Type options of a record whose relations are not guarded: it is part of the record holding it (a
 * car's location, a lead's events), which its holder's permission already covers. `node(id:)`, its
 * subscription and its webhooks still need `permission`.
 */
export function readAlongItsHolder(permission: Permission, reason: string) {
  return { readPermission: permission, readAlongItsHolder: reason } as const;
}

const declared = new Map<string, Permission>();

/** Records a type's declared read permission as the schema is built. */
export function declareReadPermission(typeName: string, permission: Permission): void {
  declared.set(typeName, permission);
}

/** The permission reading a record of this type needs (the schema must be built). */
export function readPermissionOf(typeName: string): Permission {
  const permission = declared.get(typeName);
  if (!permission) throw new Error(`${typeName} declares no readPermission, or the schema is not built yet`);
  return permission;
}

/** The permission relations to a type need, if any: every type of a record but its root-answered variants. */
export function permissionOfType(type: GraphQLNamedType): Permission | undefined {
  return (type.extensions as Partial<RelationGuard> | undefined)?.guardedBy;
}

/** What a guarded relation and its type carry in their built extensions. */
export interface RelationGuard {
  guardedBy: Permission;
}

interface GuardContext {
  actor: Actor | null;
}

/** Every non-root field of the schema that a record's permission guards, with that permission. */
export function guardedFields(
  schema: GraphQLSchema,
): { type: string; field: GraphQLField<unknown, GuardContext>; permission: Permission }[] {
  return Object.values(schema.getTypeMap()).flatMap((type) => {
    if (!('getFields' in type) || type.name.startsWith('__')) return [];
    return Object.values(type.getFields()).flatMap((field) => {
      const permission = (field.extensions as Partial<RelationGuard> | undefined)?.guardedBy;
      return permission ? [{ type: type.name, field: field as GraphQLField<unknown, GuardContext>, permission }] : [];
    });
  });
}

type Resolver = GraphQLFieldResolver<unknown, GuardContext, Record<string, unknown>>;

/** A relation's resolver that answers `denied` without running to a key without `permission`. */
export function guardRelation(resolve: Resolver, permission: Permission, denied: null | []): Resolver {
  return (source, args, context, info) => (context.actor?.permissions.has(permission) ? resolve(source, args, context, info) : denied);
}

/** `nodes(ids:)` takes at most this many ids: each may cost a statement. */
const NODES_PER_LOOKUP = 100;

/** Every Node type's integer primary key, as the global id carries it. */
const NODE_KEY = /^[1-9]\d{0,9}$/;
const MAX_KEY = 2_147_483_647;

/**
 * The Node type a global id names, or the input error that names the argument: an id this graph did
 * not make is the caller's mistake (422 / invalid_input), never a failure of the service.
 */
function nodeTypeOf(globalId: unknown, argument: string, nodeTypes: ReadonlyMap<string, Permission>): string {
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
 * Wraps `Query.node` or `Query.nodes` (outside Pothos' parsing of the ids): a malformed id is an input
 * error; an id of a type the key cannot read resolves to null without a statement, like a missing
 * record. Without a key the call is refused before any id is read, as the field's own scope would.
 */
export function guardNodeLookup(resolve: Resolver, field: 'node' | 'nodes', nodeTypes: ReadonlyMap<string, Permission>): Resolver {
  const readable = (context: GuardContext, id: unknown, argument: string): boolean =>
    context.actor?.permissions.has(nodeTypes.get(nodeTypeOf(id, argument, nodeTypes))!) ?? false;
  if (field === 'node') {
    return (source, args, context, info) => {
      if (!context.actor) throw unauthenticated();
      return readable(context, args.id, 'id') ? resolve(source, args, context, info) : null;
    };
  }
  return async (source, args, context, info) => {
    if (!context.actor) throw unauthenticated();
    const ids = Array.isArray(args.ids) ? (args.ids as unknown[]) : [];
    if (ids.length > NODES_PER_LOOKUP) throw invalidInput('ids', `at most ${NODES_PER_LOOKUP} ids at once`);
    const allowed = ids.map((id, index) => readable(context, id, `ids[${index}]`));
    const asked = ids.filter((_id, index) => allowed[index]);
    const found = asked.length === 0 ? [] : ((await resolve(source, { ...args, ids: asked }, context, info)) as unknown[]);
    let next = 0;
    return allowed.map((isAllowed) => (isAllowed ? (found[next++] ?? null) : null));
  };
}
