// Who may call a root field, read from its own `authScopes` so both doors and the docs share one
// declaration per field.
import { getNamedType, isObjectType, type GraphQLField, type GraphQLOutputType } from 'graphql';
import type { Permission } from './permissions.ts';

export type Access = Permission | 'authenticated' | 'public';

export type PermissionDeniedStatus = 401 | 403;

/** For the fields the specification's error table answers 401 rather than 403 (4.4, 4.8, 4.9, 4.11). */
export const deniedAsUnauthorized = { deniedStatus: 401 } as const satisfies { deniedStatus: PermissionDeniedStatus };

export interface FieldAccess {
  access: Access;
  deniedStatus: PermissionDeniedStatus;
  /** Hard guards below it: REST refuses a key without them up front, as one would fail the whole body. */
  alsoNeeds: Permission[];
  permissions: Permission[];
}

interface FieldExtensions {
  pothosOptions?: { authScopes?: unknown; unauthorizedResolver?: unknown };
  deniedStatus?: PermissionDeniedStatus;
  graphOnly?: boolean;
}

const extensionsOf = (field: GraphQLField<unknown, unknown>): FieldExtensions => (field.extensions ?? {}) as FieldExtensions;

function permissionIn(scopes: unknown): Permission | undefined {
  if (typeof scopes !== 'object' || scopes === null || !('permission' in scopes)) return undefined;
  return typeof scopes.permission === 'string' ? (scopes.permission as Permission) : undefined;
}

function accessIn(field: GraphQLField<unknown, unknown>): Access {
  const scopes = extensionsOf(field).pothosOptions?.authScopes;
  const permission = permissionIn(scopes);
  if (permission) return permission;
  if (typeof scopes === 'object' && scopes !== null && 'authenticated' in scopes) return 'authenticated';
  if (typeof scopes === 'object' && scopes !== null && 'public' in scopes) return 'public';
  throw new Error(`root field ${field.name} declares no authScopes: a permission, { authenticated: true } or { public: true }`);
}

/** A field guarded with a null fallback (`guardedBy`) answers null instead, so it is not a hard guard. */
export function hardGuardOf(field: { extensions?: Readonly<Record<string, unknown>> | null }): Permission | undefined {
  const options = (field.extensions as FieldExtensions | null | undefined)?.pothosOptions;
  const permission = permissionIn(options?.authScopes);
  return permission && !options?.unauthorizedResolver ? permission : undefined;
}

function hardGuardsBelow(type: GraphQLOutputType, seen = new Set<string>()): Set<Permission> {
  const found = new Set<Permission>();
  const named = getNamedType(type);
  if (!isObjectType(named) || seen.has(named.name)) return found;
  seen.add(named.name);
  for (const field of Object.values(named.getFields())) {
    const extensions = extensionsOf(field);
    if (extensions.graphOnly) continue;
    const permission = hardGuardOf(field);
    if (permission) found.add(permission);
    for (const below of hardGuardsBelow(field.type, seen)) found.add(below);
  }
  return found;
}

const accessByField = new WeakMap<GraphQLField<unknown, unknown>, FieldAccess>();

export function accessOfField(field: GraphQLField<unknown, unknown>): FieldAccess {
  // REST asks on every call; walk below each field once.
  let known = accessByField.get(field);
  if (!known) {
    const access = accessIn(field);
    const guarded = access !== 'public' && access !== 'authenticated';
    const alsoNeeds = guarded ? [...hardGuardsBelow(field.type)].filter((permission) => permission !== access).sort() : [];
    known = { access, deniedStatus: deniedStatusOfField(field), alsoNeeds, permissions: guarded ? [access, ...alsoNeeds] : [] };
    accessByField.set(field, known);
  }
  return known;
}

/** The operation's own permission decides first; a missing further one is always 403 and named. */
export function refusalOf(
  fieldAccess: FieldAccess,
  granted: ReadonlySet<Permission>,
): { status: PermissionDeniedStatus; further?: Permission } | null {
  const [first] = fieldAccess.permissions.filter((permission) => !granted.has(permission));
  if (first === undefined) return null;
  return first === fieldAccess.access ? { status: fieldAccess.deniedStatus } : { status: 403, further: first };
}

export function deniedStatusOfField(field: GraphQLField<unknown, unknown> | undefined): PermissionDeniedStatus {
  return field ? (extensionsOf(field).deniedStatus ?? 403) : 403;
}
