// The REST face of the error model: one JSON body {"error", "message"[, "field"]} and a status per
// code. GraphQL clients get the same errors with 200 and `errors`; this is only for the REST door.
import type { GraphQLError } from 'graphql';
import { isApiError, statusByCode, variableInputError } from '../errors.ts';

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

function toStatusAndBody(error: unknown): { status: number; body: RestErrorBody } {
  // GraphQL's own input errors first: they carry the error model's code on /graphql too, but their
  // message quotes the whole value sent, so the REST body words them as field and reason.
  const input = variableInputError(error);
  if (input) {
    return { status: 422, body: { error: 'invalid_input', message: `${input.field}: ${input.reason}`, field: input.field } };
  }
  if (isApiError(error)) {
    const { code, error: name, field } = error.extensions;
    return { status: statusByCode[code], body: { error: name, message: error.message, ...(field ? { field } : {}) } };
  }
  const http = (error as Partial<GraphQLError> | null)?.extensions?.http as { status?: number } | undefined;
  if (http?.status === 400) {
    return { status: 400, body: { error: 'malformed_request', message: 'The request could not be read.' } };
  }
  return { status: 500, body: { error: 'internal_error', message: 'Unexpected error.' } };
}

/** Sofa's errorHandler: the first error decides the answer (the REST door never returns partial data). */
export function restErrorResponse(errors: readonly unknown[]): Response {
  const { status, body } = toStatusAndBody(errors[0]);
  return restError(status, body);
}
