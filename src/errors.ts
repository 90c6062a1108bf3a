// The error model (docs/errors.md, "Errors"): expected failures are GraphQLErrors with a stable
// extensions.code; GraphQL answers them with 200 + errors, the REST door maps the code to a status
// and a body {"error": "<snake_case>", "message": "..."}. Anything else is masked by Yoga.
import { GraphQLError, Kind } from 'graphql';
import { maskError } from 'graphql-yoga';
import { isDatabaseUnavailable } from './db/unavailable.ts';

export const statusByCode = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  BAD_USER_INPUT: 422,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof statusByCode;

export interface ApiErrorExtensions {
  code: ErrorCode;
  /** The REST body's `error`: a snake_case name integrators can switch on. */
  error: string;
  /** For invalid input: the field (dotted path) at fault. */
  field?: string;
  [key: string]: unknown;
}

export function apiError(code: ErrorCode, error: string, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  const extensions: ApiErrorExtensions = { code, error, ...extra };
  return new GraphQLError(message, { extensions });
}

// One body for every reason a key is not accepted (missing, malformed, unknown, expired, revoked),
// so a caller cannot probe which keys exist.
export const unauthenticated = (): GraphQLError =>
  apiError('UNAUTHENTICATED', 'unauthorized', 'A valid API key is required: send "Authorization: Bearer <key>".');

export const forbidden = (message = 'This API key does not have the permission this operation needs.'): GraphQLError =>
  apiError('FORBIDDEN', 'forbidden', message);

/**
 * A valid key without a permission the operation needs. Most operations answer 403 `forbidden`; the
 * few the spec answers "unauthorised" for (see RestRoute.deniedStatus) answer 401 `unauthorized`,
 * with this message rather than the missing-key one, so the caller can tell the two apart.
 */
export function permissionDenied(status: 401 | 403, permission?: string): GraphQLError {
  const message = permission
    ? `This API key does not have the ${permission} permission this operation needs.`
    : 'This API key does not have the permission this operation needs.';
  return status === 401 ? apiError('UNAUTHENTICATED', 'unauthorized', message) : forbidden(message);
}

/**
 * A car that exists but belongs to a dealership the key cannot use (4.2, 4.19): the spec's own
 * "invalid dealership" outcome, distinct from a car that does not exist. It says nothing of the car.
 */
export const invalidDealership = (): GraphQLError =>
  apiError('FORBIDDEN', 'invalid_dealership', 'The car belongs to a dealership this API key cannot use.');

/** `thing` names what was looked for, e.g. "car", so the body says "car_not_found". */
export const notFound = (thing: string, message?: string): GraphQLError =>
  apiError('NOT_FOUND', `${thing}_not_found`, message ?? `No ${thing.replace(/_/g, ' ')} with that identifier.`);

export const invalidInput = (field: string, reason: string, error = 'invalid_input'): GraphQLError =>
  apiError('BAD_USER_INPUT', error, `${field}: ${reason}`, { field });

export const conflict = (error: string, message: string): GraphQLError => apiError('CONFLICT', error, message);

/** Seconds a client is told to wait before retrying when the database did not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database did not answer (src/db/unavailable.ts): 503 `unavailable` with Retry-After on both
 * doors (on /graphql through `extensions.http`, which Yoga turns into the status and header). The
 * request may be retried: a write that met it was rolled back.
 */
export const databaseUnavailable = (at?: GraphQLError): GraphQLError =>
  new GraphQLError('The database is not answering: retry the request in a few seconds.', {
    nodes: at?.nodes,
    source: at?.source,
    positions: at?.positions,
    path: at?.path,
    extensions: {
      code: 'UNAVAILABLE',
      error: 'unavailable',
      retry_after: DATABASE_RETRY_AFTER_SECONDS,
      http: { status: 503, headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } },
    } satisfies ApiErrorExtensions,
  });

/**
 * Yoga's error masking with the database's outages told apart: an error the error model does not
 * know becomes `Unexpected error.` (500), except one that says the database did not answer, which
 * becomes `databaseUnavailable` (503).
 */
export function maskUnexpectedError(error: unknown, message: string, isDev?: boolean): Error {
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error instanceof GraphQLError ? error : undefined);
  return maskError(error, message, isDev);
}

export function isApiError(error: unknown): error is GraphQLError & { extensions: ApiErrorExtensions } {
  return (
    error instanceof GraphQLError &&
    typeof error.extensions?.code === 'string' &&
    (error.extensions.code as string) in statusByCode &&
    typeof error.extensions.error === 'string'
  );
}

/**
 * GraphQL's own input errors, raised while it coerces the variables (a missing required argument,
 * a value of the wrong type, an unknown or missing input field), read as the variable, the field at
 * fault (a path that starts with the variable's name) and the reason: `Variable "$car" got invalid
 * value {…} at "car.year"; Int cannot represent…` is car.year. Null for any other error.
 */
export function variableInputError(error: unknown): { variable: string; field: string; reason: string } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { message, nodes, originalError } = error as Partial<GraphQLError>;
  if (typeof message !== 'string' || nodes?.[0]?.kind !== Kind.VARIABLE_DEFINITION) return null;
  const variable = /^Variable "\$([A-Za-z_][A-Za-z0-9_]*)" /.exec(message)?.[1];
  if (!variable) return null;
  if (/^Variable "[^"]+" of required type "[^"]+" was not provided\.$/.test(message)) return { variable, field: variable, reason: 'is required' };
  if (/^Variable "[^"]+" of non-null type "[^"]+" must not be null\.$/.test(message)) return { variable, field: variable, reason: 'must not be null' };
  // `<prefix>; <reason>`: the prefix quotes the value as sent, so it is split off by the reason's own
  // text rather than searched (a value may contain anything, `; ` and ` at "…"` included).
  const reason = originalError?.message;
  if (!reason || !message.endsWith(`; ${reason}`)) return null;
  const prefix = message.slice(0, message.length - reason.length - 2);
  const path = / at "([^"]+)"$/.exec(prefix)?.[1] ?? variable;
  const missing = /^Field "([^"]+)" of required type "[^"]+" was not provided\.$/.exec(reason);
  if (missing) return { variable, field: `${path}.${missing[1]}`, reason: 'is required' };
  const unknown = /^Field "([^"]+)" is not defined by type "[^"]+"\./.exec(reason);
  if (unknown) return { variable, field: `${path}.${unknown[1]}`, reason };
  return { variable, field: path, reason };
}

/** The same GraphQL error with other extensions (a GraphQLError's own cannot change). */
export function withExtensions(error: GraphQLError, extensions: Record<string, unknown>): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions,
  });
}
