// Sofa answers GraphQL errors: the REST door's are one body {"error", "message"[, "field"]} with a status per code.
import type { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { databaseUnavailable, isApiError, logError, statusByCode, variableInputError } from '../errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { SCALAR_REASONS, type ArgumentProblem } from './arguments.ts';
import { Response } from '../web/fetch-api.ts';

interface RestErrorBody {
  error: string;
  message: string;
  field?: string;
}

// The door's own refusals, worded once: the door answers them and the OpenAPI document shows them.
export const malformedJson = (): RestErrorBody => ({ error: 'malformed_json', message: 'The request body is not valid JSON.' });
export const malformedPathParameter = (name: string): RestErrorBody => ({
  error: 'malformed_request',
  message: `The path parameter ${name} is not valid percent-encoded UTF-8.`,
});
export const payloadTooLarge = (limitBytes: number, whichLimit = ''): RestErrorBody => ({
  error: 'payload_too_large',
  message: `The request body is over ${limitBytes} bytes${whichLimit}.`,
});
export const internalError = (): RestErrorBody => ({ error: 'internal_error', message: 'Unexpected error.' });
export const noSuchPath = (): RestErrorBody => ({ error: 'not_found', message: 'No such path.' });
export const invalidInputBody = ({ field, reason }: ArgumentProblem) => ({ error: 'invalid_input', message: `${field}: ${reason}`, field });

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

export function restError(status: number, body: RestErrorBody, headers?: Record<string, string>): Response {
  return jsonResponse(status, body, headers);
}

/** `allow` is every method the path answers; the message may name fewer (`use`). */
export const methodNotAllowed = (allow: string, use = allow): Response =>
  restError(405, { error: 'method_not_allowed', message: `Use ${use} for this path.` }, { allow });

/** GraphQL's words for "the value is not of this type", by the type's name, in the integrator's words. */
const TYPE_REASONS: Readonly<Record<string, string>> = {
  ...SCALAR_REASONS,
  Date: 'must be a date, yyyy-mm-dd',
  DateTime: 'must be a date and time, such as 2026-11-21T09:00:00Z',
  JSONObject: SCALAR_REASONS.object,
};

/** What marks a message as GraphQL's rather than ours: a REST body never carries it. */
const GRAPHQL_VOCABULARY =
  /cannot represent|is not defined by (input )?type|does not exist in "|\bEnum "|Variable "\$|of (required|non-null) type|Expected (type|value of type)|\b[A-Z][A-Za-z]*Input\b|\bGraphQL\b|\b(Int|String|Boolean|Float|ID)!/;

/** GraphQL's coercion reason in plain words naming no GraphQL type, for what the REST door's own type checks miss. */
export function plainReason(reason: string): string {
  if (/^Int cannot represent non 32-bit signed integer value/.test(reason)) return SCALAR_REASONS.IntRange;
  if (/^Enum "[^"]+" cannot represent non-string value/.test(reason)) return SCALAR_REASONS.String;
  const typeName = /^(\w+) cannot represent/.exec(reason)?.[1];
  if (typeName) return TYPE_REASONS[typeName] ?? 'is not valid';
  if (/^Value ".*" does not exist in "[^"]+" enum\./s.test(reason)) return 'is not one of the accepted values';
  if (/^Expected type "[^"]+" to be an object\./.test(reason)) return SCALAR_REASONS.object;
  if (/^Field "[^"]+" is not defined by type/.test(reason)) return 'is not a field this operation takes';
  return GRAPHQL_VOCABULARY.test(reason) ? 'is not valid' : reason;
}

function toStatusAndBody(error: unknown): { status: number; body: RestErrorBody; headers?: Record<string, string> } {
  // GraphQL's input errors quote the whole value sent: the REST body words them as field and reason.
  const input = variableInputError(error);
  if (input) return { status: 422, body: invalidInputBody({ field: input.field, reason: plainReason(input.reason) }) };
  if (!isApiError(error) && isDatabaseUnavailable(error)) return toStatusAndBody(databaseUnavailable());
  if (isApiError(error)) {
    const { code, error: name, field, retry_after: retryAfter } = error.extensions;
    return {
      status: statusByCode[code],
      body: { error: name, message: error.message, ...(field ? { field } : {}) },
      ...(typeof retryAfter === 'number' ? { headers: { 'retry-after': String(retryAfter) } } : {}),
    };
  }
  const http = (error as Partial<GraphQLError> | null)?.extensions?.http as { status?: number } | undefined;
  if (http?.status === 400) return { status: 400, body: { error: 'malformed_request', message: 'The request could not be read.' } };
  return { status: 500, body: internalError() };
}

/** The status the REST door answers an error with (the key call log counts GraphQL outcomes by it). */
export function restStatusOf(error: unknown): number {
  return toStatusAndBody(error).status;
}

/** Sofa's errorHandler: the first error decides the answer (the REST door never returns partial data). */
export function restErrorResponse(errors: readonly unknown[]): Response {
  const { status, body, headers } = toStatusAndBody(errors[0]);
  return restError(status, body, headers);
}

/** The 503 of a database that failed where no errorHandler sees it (the key check), logged; any other error is thrown again. */
export function unavailableAnswer(error: unknown, logger: Logger): Response {
  if (!isDatabaseUnavailable(error)) throw error;
  logError(logger, error, 'the database did not answer');
  return restErrorResponse([error]);
}
