// Who may call a root field, read from the field itself. Its `authScopes` (Pothos scope-auth) is the
// one declaration of its permission, written next to the field in src/schema/; `deniedStatus` beside
// it says what a valid key without that permission gets. Both doors read them here: the graph's
// unauthorizedError (src/schema/builder.ts), the REST door's check before it reads any input
// (src/rest/plugin.ts), and the OpenAPI document and docs (src/rest/openapi.ts).
import { getNamedType, isObjectType, type GraphQLField, type GraphQLOutputType } from 'graphql';
import type { Permission } from './permissions.ts';

/** A root field's own requirement: a permission, any valid key, or nothing at all. */
export type Access = Permission | 'authenticated' | 'public';

export type PermissionDeniedStatus = 401 | 403;

/**
 * A root field's `extensions` where the specification's error table calls a valid key without the
 * field's permission "unauthorised" (4.4, 4.8, 4.9, 4.11): 401 `unauthorized` on both doors. Every
 * other field answers 403 `forbidden`.
 */
export const deniedAsUnauthorized = { deniedStatus: 401 } as const satisfies { deniedStatus: PermissionDeniedStatus };

export interface FieldAccess {
  access: Access;
  /** What a valid key without `access` gets. */
  deniedStatus: PermissionDeniedStatus;
  /**
   * Permissions the field's answer needs besides `access`: fields below it guarded without a null
   * fallback (CarPaymentProcessor.authorization_key). A REST body fails wholly on such a field's
   * error, so the REST door refuses a key without one (403) before it runs.
   */
  alsoNeeds: Permission[];
  /** Every permission a key needs to call it: none for a public or any-key field. */
  permissions: Permission[];
}

/** What Pothos keeps of a field's options (its scope-auth settings) and this service's own marks. */
interface FieldExtensions {
  pothosOptions?: { authScopes?: unknown; unauthorizedResolver?: unknown };
  deniedStatus?: PermissionDeniedStatus;
  graphOnly?: boolean;
}

const extensionsOf = (field: GraphQLField<unknown, unknown>): FieldExtensions => (field.extensions ?? {}) as FieldExtensions;

/** The permission a field's object `authScopes` names, if it names one. */
function permissionIn(scopes: unknown): Permission | undefined {
  if (typeof scopes !== 'object' || scopes === null || !('permission' in scopes)) return undefined;
  return typeof scopes.permission === 'string' ? (scopes.permission as Permission) : undefined;
}

/** The root field's own requirement, from its `authScopes`; a root field without one is a mistake. */
function accessIn(field: GraphQLField<unknown, unknown>): Access {
  const scopes = extensionsOf(field).pothosOptions?.authScopes;
  const permission = permissionIn(scopes);
  if (permission) return permission;
  if (typeof scopes === 'object' && scopes !== null && 'authenticated' in scopes) return 'authenticated';
  if (typeof scopes === 'object' && scopes !== null && 'public' in scopes) return 'public';
  throw new Error(`root field ${field.name} declares no authScopes: a permission, { authenticated: true } or { public: true }`);
}

/**
 * The permission a field below a root field fails without (its `authScopes` names one and gives no
 * null fallback: CarPaymentProcessor.authorization_key), if any. A field guarded with a fallback
 * (`guardedBy`, personal data) answers null instead and is not counted.
 */
export function hardGuardOf(field: { extensions?: Readonly<Record<string, unknown>> | null }): Permission | undefined {
  const options = (field.extensions as FieldExtensions | null | undefined)?.pothosOptions;
  const permission = permissionIn(options?.authScopes);
  return permission && !options?.unauthorizedResolver ? permission : undefined;
}

/** Permissions of the fields below `type` that fail (rather than answer null) without them. */
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

/** Who may call a root field, and what a key without a permission it needs gets. */
export function accessOfField(field: GraphQLField<unknown, unknown>): FieldAccess {
  // The REST door asks on every call; the walk below the field is done once per schema's field.
  let known = accessByField.get(field);
  if (!known) {
    known = workOutAccess(field);
    accessByField.set(field, known);
  }
  return known;
}

const accessByField = new WeakMap<GraphQLField<unknown, unknown>, FieldAccess>();

/**
 * What a key holding `granted` is refused by a field of this access: null when it may call it; else
 * the status, and a further permission its record needs (always 403, and named in the refusal), if that
 * is what it lacks. The operation's own permission decides first.
 */
export function refusalOf(
  fieldAccess: FieldAccess,
  granted: ReadonlySet<Permission>,
): { status: PermissionDeniedStatus; further?: Permission } | null {
  const [first] = fieldAccess.permissions.filter((permission) => !granted.has(permission));
  if (first === undefined) return null;
  return first === fieldAccess.access ? { status: fieldAccess.deniedStatus } : { status: 403, further: first };
}

function workOutAccess(field: GraphQLField<unknown, unknown>): FieldAccess {
  const access = accessIn(field);
  const deniedStatus = extensionsOf(field).deniedStatus ?? 403;
  if (access === 'public' || access === 'authenticated') return { access, deniedStatus, alsoNeeds: [], permissions: [] };
  const alsoNeeds = [...hardGuardsBelow(field.type)].filter((permission) => permission !== access).sort();
  return { access, deniedStatus, alsoNeeds, permissions: [access, ...alsoNeeds] };
}

/** The status a valid key without a field's own permission gets (403 unless the field says 401). */
export function deniedStatusOfField(field: GraphQLField<unknown, unknown> | undefined): PermissionDeniedStatus {
  return field ? (extensionsOf(field).deniedStatus ?? 403) : 403;
}
