// A record's read permission, declared once on its type (`readPermission`), guards everything that
// hands the record out. A guard answers null, never throws: a REST body fails wholly on any error.
import type { GraphQLFieldResolver } from 'graphql';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { invalidInput, unauthenticated } from '../errors.ts';
import type { Actor } from './api-keys.ts';
import type { Permission } from './permissions.ts';

/** A variant only a root field answers, under that field's own permission: not guarded again. */
export function answeredByItsRoot(reason: string) {
  return { extensions: { answeredByItsRoot: reason } } as const;
}

/** A record whose holder's permission covers relations to it; `node(id:)` and events still need `permission`. */
export function readAlongItsHolder(permission: Permission, reason: string) {
  return { readPermission: permission, readAlongItsHolder: reason } as const;
}

const declared = new Map<string, Permission>();

export function declareReadPermission(typeName: string, permission: Permission): void {
  declared.set(typeName, permission);
}

export function readPermissionOf(typeName: string): Permission {
  const permission = declared.get(typeName);
  if (!permission) throw new Error(`${typeName} declares no readPermission, or the schema is not built yet`);
  return permission;
}

interface GuardContext {
  actor: Actor | null;
}

type Resolver = GraphQLFieldResolver<unknown, GuardContext, Record<string, unknown>>;

export function guardRelation(resolve: Resolver, permission: Permission, denied: null | []): Resolver {
  return (source, args, context, info) => (context.actor?.permissions.has(permission) ? resolve(source, args, context, info) : denied);
}

/** Each id may cost a statement. */
const NODES_PER_LOOKUP = 100;

const NODE_KEY = /^[1-9]\d{0,9}$/;
const MAX_KEY = 2_147_483_647;

/** An id this graph did not make is the caller's mistake (422 invalid_input), naming the argument. */
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

/** An unreadable type's id is null without a statement, like a missing record; no key is 401 before any id is read. */
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
