// The error model (docs/errors.md, "Errors"): expected failures are GraphQLErrors with a stable
// extensions.code; GraphQL answers them with 200 + errors, the REST door maps the code to a status
// and a body {"error": "<snake_case>", "message": "..."}. Anything else is masked by Yoga.
import { PothosValidationError } from '@pothos/core';
import { GraphQLError, Kind, visit, type ASTNode } from 'graphql';
import { maskError } from 'graphql-yoga';
import type { Logger } from 'pino';
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

type ErrorCode = keyof typeof statusByCode;

/**
 * The level an answered error is logged at, by its code: the one table (docs/operations.md,
 * "Logs"). Every code the service answers is an expected outcome, the client's or the database's,
 * so none is `error`, which is kept for what should page an operator: an error no code names
 * (masked as `Unexpected error.`). GraphQL's own codes for a document it could not parse or
 * validate are the client's too.
 */
const logLevelByCode = {
  BAD_REQUEST: 'info',
  UNAUTHENTICATED: 'info',
  FORBIDDEN: 'info',
  NOT_FOUND: 'info',
  CONFLICT: 'info',
  GONE: 'info',
  PAYLOAD_TOO_LARGE: 'info',
  BAD_USER_INPUT: 'info',
  RATE_LIMITED: 'info',
  // The database did not answer: the request may be retried, and a lasting outage shows as many of these.
  UNAVAILABLE: 'warn',
  GRAPHQL_PARSE_FAILED: 'info',
  GRAPHQL_VALIDATION_FAILED: 'info',
  PERSISTED_QUERY_NOT_FOUND: 'info',
} as const satisfies Record<ErrorCode, 'info' | 'warn'> & Record<string, 'info' | 'warn'>;

type LoggedCode = keyof typeof logLevelByCode;

interface ApiErrorExtensions {
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
  // A connection argument refused where useInputErrorCodes does not see it (a subscription's event)
  // is still the client's, not masked (see connectionArgumentError).
  const argument = error instanceof GraphQLError ? connectionArgumentError(error) : null;
  if (argument) return argument;
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
  if (/^Variable "[^"]+" of required type "[^"]+" was not provided\.$/.test(message))
    return { variable, field: variable, reason: 'is required' };
  if (/^Variable "[^"]+" of non-null type "[^"]+" must not be null\.$/.test(message))
    return { variable, field: variable, reason: 'must not be null' };
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

// Control characters (C0, DEL, C1) in a message, which may echo what a client sent.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The text with each control character written as its `\uXXXX` escape, so a message never carries one raw. */
function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const CURSOR_REASON = 'is not a cursor this connection gave (pass pageInfo.endCursor or startCursor of an earlier page)';

/** The cursor arguments (`after`, `before`) given anywhere under the nodes an error points at. */
function cursorArgumentsUnder(nodes: readonly ASTNode[] | undefined): string[] {
  const names = new Set<string>();
  for (const node of nodes ?? []) {
    visit(node, {
      Argument(argument) {
        if (argument.name.value === 'after' || argument.name.value === 'before') names.add(argument.name.value);
      },
    });
  }
  return [...names].sort();
}

/**
 * A connection argument the Pothos relay and Prisma plugins refused (`first: -1`, an unreadable
 * cursor, `before` with `first`): they throw PothosValidationErrors, GraphQLErrors with no code whose
 * message may echo the cursor as sent. As the error model's BAD_USER_INPUT naming the argument
 * (`field`), in the model's `<field>: <reason>` words; the cursor itself is not echoed. Null for any
 * other error, and for one already coded. An operation's errors are coded so as soon as it ends
 * (src/gateway/http-plugins.ts, useInputErrorCodes), before the masking, which then lets them by.
 */
export function connectionArgumentError(error: GraphQLError): GraphQLError | null {
  if (isApiError(error)) return null;
  const refused =
    error instanceof PothosValidationError ? error : error.originalError instanceof PothosValidationError ? error.originalError : null;
  if (!refused) return prismaCursorError(error);
  const named = [...refused.message.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"/g)].map((match) => match[1]!);
  let field: string;
  let reason: string;
  if (named.length > 0) {
    field = named[0]!;
    reason = refused.message.replace(/^Arguments? "[^"]+"\s*/, '');
    if (named.length > 1) reason = `cannot be given with ${named.slice(1).join(', ')}`;
    else reason = reason || 'is not valid';
  } else if (/cursor/i.test(refused.message)) {
    // The plugins do not say which cursor they could not read; the document does when it gives one.
    const cursors = cursorArgumentsUnder(error.nodes);
    field = cursors.length === 1 ? cursors[0]! : 'after/before';
    reason = CURSOR_REASON;
  } else {
    return null;
  }
  return new GraphQLError(`${field}: ${reason}`, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: refused,
    extensions: { ...error.extensions, code: 'BAD_USER_INPUT', error: 'invalid_input', field } satisfies ApiErrorExtensions,
  });
}

/**
 * A cursor the plugins could decode but the database query could not use (`GPC:S:x` where the
 * connection pages by an integer id): Prisma refuses the query with a validation error that names
 * `cursor`. That is the client's cursor, not a fault of the service: BAD_USER_INPUT naming it.
 */
function prismaCursorError(error: GraphQLError): GraphQLError | null {
  const cause = error.originalError;
  if (cause?.name !== 'PrismaClientValidationError' || !/\bcursor\b/.test(cause.message)) return null;
  const cursors = cursorArgumentsUnder(error.nodes);
  if (cursors.length === 0) return null;
  const field = cursors.length === 1 ? cursors[0]! : 'after/before';
  return new GraphQLError(`${field}: ${CURSOR_REASON}`, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { code: 'BAD_USER_INPUT', error: 'invalid_input', field } satisfies ApiErrorExtensions,
  });
}

/**
 * Every error as it leaves the service (src/gateway/http-plugins.ts, useErrorCodes): a connection argument's
 * refusal gets the error model's code (connectionArgumentError), an error still without a code gets
 * `fallbackCode`, and control characters in the message are escaped.
 */
export function finishedError(error: GraphQLError, fallbackCode: string): GraphQLError {
  const coded = connectionArgumentError(error) ?? error;
  const message = escapeControlCharacters(coded.message);
  const code = coded.extensions?.code;
  if (message === coded.message && typeof code === 'string') return coded;
  return new GraphQLError(message, {
    nodes: coded.nodes,
    source: coded.source,
    positions: coded.positions,
    path: coded.path,
    originalError: coded.originalError,
    extensions: { ...coded.extensions, code: typeof code === 'string' ? code : fallbackCode },
  });
}

/**
 * The code an error is answered with, read from the error as met (before the masking): its own, the
 * one the error model gives GraphQL's input errors and the connection arguments' refusals, or
 * UNAVAILABLE for a database that did not answer. Undefined for an unexpected error.
 */
function answeredCodeOf(error: unknown): LoggedCode | undefined {
  if (!isApiError(error) && isDatabaseUnavailable(error)) return 'UNAVAILABLE';
  if (!(error instanceof GraphQLError)) return undefined;
  if (error.extensions?.code === undefined && (variableInputError(error) || connectionArgumentError(error))) return 'BAD_USER_INPUT';
  const code = error.extensions?.code;
  return typeof code === 'string' && Object.hasOwn(logLevelByCode, code) ? (code as LoggedCode) : undefined;
}

/**
 * Logs an error at the level its code says: an expected one as its code and message, with no stack
 * (a client's mistake is not the service's fault, and a fuzzer sends thousands); an unexpected one
 * whole, stack included, at `error`. Every place that logs an answered error goes through here.
 */
export function logError(logger: Logger, error: unknown, message: string): void {
  const code = answeredCodeOf(error);
  if (code === undefined) {
    logger.error({ err: error }, message);
    return;
  }
  // Not under `err`, whose serialiser would add a stack field.
  const text = error instanceof Error ? error.message : String(error);
  logger[logLevelByCode[code]]({ error: { code, message: text } }, message);
}
