// Expected failures are GraphQLErrors with a stable extensions.code; the REST door maps the code to a
// status and {"error", "message"}. Anything else is masked by Yoga.
import { PothosValidationError } from '@pothos/core';
import { GraphQLError, Kind, visit, type ASTNode } from 'graphql';
import { maskError } from 'graphql-yoga';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './db/unavailable.ts';

export const statusByCode = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  DOCUMENT_NOT_TRUSTED: 403,
  NOT_FOUND: 404,
  PERSISTED_QUERY_NOT_FOUND: 404,
  CONFLICT: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  BAD_USER_INPUT: 422,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
} as const;

type ErrorCode = keyof typeof statusByCode;

// Every answered code is an expected outcome, so none logs at `error`: that is kept for what should page an operator.
const ANSWERED_CODES = new Set([...Object.keys(statusByCode), 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED']);

interface ApiErrorExtensions {
  code: ErrorCode;
  error: string;
  field?: string;
  [key: string]: unknown;
}

export function apiError(code: ErrorCode, error: string, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, error, ...extra } satisfies ApiErrorExtensions });
}

// One body for every reason a key is not accepted, so a caller cannot probe which keys exist.
export const unauthenticated = (): GraphQLError =>
  apiError('UNAUTHENTICATED', 'unauthorized', 'A valid API key is required: send "Authorization: Bearer <key>".');

export const forbidden = (message = 'This API key does not have the permission this operation needs.'): GraphQLError =>
  apiError('FORBIDDEN', 'forbidden', message);

/** Routes the spec answers "unauthorised" for get 401 with this message, so the caller can tell it from a missing key. */
export function permissionDenied(status: 401 | 403, permission?: string): GraphQLError {
  const message = `This API key does not have the ${permission ? `${permission} ` : ''}permission this operation needs.`;
  return status === 401 ? apiError('UNAUTHENTICATED', 'unauthorized', message) : forbidden(message);
}

/** The spec's "invalid dealership" outcome: distinct from a missing car, and says nothing of the car. */
export const invalidDealership = (): GraphQLError =>
  apiError('FORBIDDEN', 'invalid_dealership', 'The car belongs to a dealership this API key cannot use.');

export const notFound = (thing: string, message?: string): GraphQLError =>
  apiError('NOT_FOUND', `${thing}_not_found`, message ?? `No ${thing.replace(/_/g, ' ')} with that identifier.`);

export const invalidInput = (field: string, reason: string, error = 'invalid_input'): GraphQLError =>
  apiError('BAD_USER_INPUT', error, `${field}: ${reason}`, { field });

/** A key locked to its applications' trusted documents sent a document's text, or an id none of them published. */
export const documentNotTrusted = (): GraphQLError =>
  apiError(
    'DOCUMENT_NOT_TRUSTED',
    'document_not_trusted',
    'This API key runs only the published documents of its client applications: send a published document id (documentId or extensions.persistedQuery.sha256Hash), not a document text.',
  );

/** Apollo's clients read this message (and code) as "send the text with its hash", and do so. */
export const persistedQueryNotFound = (): GraphQLError =>
  apiError('PERSISTED_QUERY_NOT_FOUND', 'persisted_query_not_found', 'PersistedQueryNotFound');

export const conflict = (error: string, message: string): GraphQLError => apiError('CONFLICT', error, message);

export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** 429: which limit (the reason) and how many seconds to wait. */
export const rateLimited = (retryAfter: number, reason = 'Too many requests.', extra: Record<string, unknown> = {}): GraphQLError =>
  apiError('RATE_LIMITED', 'rate_limited', `${reason} Retry after ${retryAfter} s.`, {
    ...extra,
    retry_after: retryAfter,
    http: { status: 429 },
  });

/** Another message and extensions for the error at the same place of the document. */
export function rebuilt(
  at: GraphQLError | undefined,
  message: string,
  extensions: Record<string, unknown>,
  originalError?: Error,
): GraphQLError {
  return new GraphQLError(message, {
    nodes: at?.nodes,
    source: at?.source,
    positions: at?.positions,
    path: at?.path,
    originalError,
    extensions,
  });
}

/** A 503 with Retry-After on both doors. */
const retryAfter503 = (seconds: number) => ({ retry_after: seconds, http: { status: 503, headers: { 'retry-after': String(seconds) } } });

/** Retrying is safe because a write that met it was rolled back. */
export const databaseUnavailable = (at?: GraphQLError): GraphQLError =>
  rebuilt(at, 'The database is not answering: retry the request in a few seconds.', {
    code: 'UNAVAILABLE',
    error: 'unavailable',
    ...retryAfter503(DATABASE_RETRY_AFTER_SECONDS),
  } satisfies ApiErrorExtensions);

/** How long a client waits before sending again a request an instance was too busy to take. */
export const BUSY_RETRY_AFTER_SECONDS = 5;

/** Refused before the operation ran: sending it again is always safe. */
export const instanceBusy = (): GraphQLError =>
  apiError(
    'UNAVAILABLE',
    'unavailable',
    'This instance is executing as many operations as it takes at once: send the request again after Retry-After seconds.',
    retryAfter503(BUSY_RETRY_AFTER_SECONDS),
  );

export function maskUnexpectedError(error: unknown, message: string, isDev?: boolean): Error {
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error instanceof GraphQLError ? error : undefined);
  // A connection argument refused where useInputErrorCodes does not see it (a subscription's event) is still the client's.
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

/** GraphQL's coercion errors read as variable, field path and reason (`$car` at "car.year" is car.year). */
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
  // The prefix quotes the value as sent, which may contain anything, so it is split off by the reason's text.
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

export const withExtensions = (error: GraphQLError, extensions: Record<string, unknown>): GraphQLError =>
  rebuilt(error, error.message, extensions, error.originalError);

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

const CURSOR_REASON = 'is not a cursor this connection gave (pass pageInfo.endCursor or startCursor of an earlier page)';

/** The cursor argument the document gives (`after`, `before`), `after/before` for both, null for none. */
function cursorArgumentUnder(nodes: readonly ASTNode[] | undefined): string | null {
  const names = new Set<string>();
  for (const node of nodes ?? []) {
    visit(node, {
      Argument(argument) {
        if (argument.name.value === 'after' || argument.name.value === 'before') names.add(argument.name.value);
      },
    });
  }
  return names.size === 0 ? null : names.size === 1 ? [...names][0]! : 'after/before';
}

/** Pothos relay/Prisma PothosValidationErrors carry no code and may echo the cursor: coded BAD_USER_INPUT, cursor not echoed. */
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
    const own = refused.message.replace(/^Arguments? "[^"]+"\s*/, '') || 'is not valid';
    reason = named.length > 1 ? `cannot be given with ${named.slice(1).join(', ')}` : own;
  } else if (/cursor/i.test(refused.message)) {
    // The plugins do not say which cursor they could not read; the document does when it gives one.
    field = cursorArgumentUnder(error.nodes) ?? 'after/before';
    reason = CURSOR_REASON;
  } else {
    return null;
  }
  const input = invalidInput(field, reason);
  return rebuilt(error, input.message, { ...error.extensions, ...input.extensions }, refused);
}

/** A decodable cursor that the query cannot use is the client's fault, not the service's. */
function prismaCursorError(error: GraphQLError): GraphQLError | null {
  const cause = error.originalError;
  if (cause?.name !== 'PrismaClientValidationError' || !/\bcursor\b/.test(cause.message)) return null;
  const field = cursorArgumentUnder(error.nodes);
  if (!field) return null;
  const input = invalidInput(field, CURSOR_REASON);
  return rebuilt(error, input.message, input.extensions);
}

export function finishedError(error: GraphQLError, fallbackCode: string): GraphQLError {
  const coded = connectionArgumentError(error) ?? error;
  const message = coded.message.replace(CONTROL_CHARACTERS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const code = coded.extensions?.code;
  if (message === coded.message && typeof code === 'string') return coded;
  return rebuilt(coded, message, { ...coded.extensions, code: typeof code === 'string' ? code : fallbackCode }, coded.originalError);
}

function answeredCodeOf(error: unknown): string | undefined {
  if (!isApiError(error) && isDatabaseUnavailable(error)) return 'UNAVAILABLE';
  if (!(error instanceof GraphQLError)) return undefined;
  if (error.extensions?.code === undefined && (variableInputError(error) || connectionArgumentError(error))) return 'BAD_USER_INPUT';
  const code = error.extensions?.code;
  return typeof code === 'string' && ANSWERED_CODES.has(code) ? code : undefined;
}

/** Expected errors are logged without a stack (a fuzzer sends thousands); unexpected ones whole, at `error`. */
export function logError(logger: Logger, error: unknown, message: string): void {
  const code = answeredCodeOf(error);
  if (code === undefined) {
    logger.error({ err: error }, message);
    return;
  }
  // Not under `err`, whose serialiser would add a stack field.
  const text = error instanceof Error ? error.message : String(error);
  logger[code === 'UNAVAILABLE' ? 'warn' : 'info']({ error: { code, message: text } }, message);
}
