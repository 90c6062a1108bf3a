// The REST face of the error model: one JSON body {"error", "message"[, "field"]} and a status per
// code. GraphQL clients get the same errors with 200 and `errors`; this is only for the REST door.
import { GraphQLError } from 'graphql';
import { isApiError, statusByCode } from '../errors.ts';

export interface RestErrorBody {
  error: string;
  message: string;
  field?: string;
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

export function restError(status: number, body: RestErrorBody, headers?: Record<string, string>): Response {
  return jsonResponse(status, body, headers);
}

/** GraphQL's own message for a variable that failed coercion names the variable: keep that name. */
const VARIABLE_MESSAGE = /^Variable "\$([A-Za-z_][A-Za-z0-9_]*)"/;

function toStatusAndBody(error: unknown): { status: number; body: RestErrorBody } {
  if (isApiError(error)) {
    const { code, error: name, field } = error.extensions;
    return { status: statusByCode[code], body: { error: name, message: error.message, ...(field ? { field } : {}) } };
  }
  if (error instanceof GraphQLError || (typeof error === 'object' && error !== null && 'message' in error)) {
    const graphQLError = error as GraphQLError;
    // Variable errors carry http.status 400 from Yoga too: they are input errors and name the input.
    const variable = VARIABLE_MESSAGE.exec(graphQLError.message ?? '');
    if (variable?.[1]) {
      // `Variable "$car" got invalid value "x" at "car.year"; Int cannot represent…` names car.year.
      const field = / at "([^"]+)";/.exec(graphQLError.message)?.[1] ?? variable[1];
      const reason = graphQLError.message.replace(/^Variable "\$[^"]+" (got invalid value .*?; )?/, '');
      return { status: 422, body: { error: 'invalid_input', message: `${field}: ${reason}`, field } };
    }
    const http = graphQLError.extensions?.http as { status?: number } | undefined;
    if (http?.status === 400) {
      return { status: 400, body: { error: 'malformed_request', message: 'The request could not be read.' } };
    }
  }
  return { status: 500, body: { error: 'internal_error', message: 'Unexpected error.' } };
}

/** Sofa's errorHandler: the first error decides the answer (the REST door never returns partial data). */
export function restErrorResponse(errors: readonly unknown[]): Response {
  const { status, body } = toStatusAndBody(errors[0]);
  return restError(status, body);
}
