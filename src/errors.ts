// The error model (shared/design.md): expected failures are GraphQLErrors with a stable
// extensions.code; GraphQL answers them with 200 + errors, the REST door maps the code to a status
// and a body {"error": "<snake_case>", "message": "..."}. Anything else is masked by Yoga.
import { GraphQLError } from 'graphql';

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

/** `thing` names what was looked for, e.g. "car", so the body says "car_not_found". */
export const notFound = (thing: string, message?: string): GraphQLError =>
  apiError('NOT_FOUND', `${thing}_not_found`, message ?? `No ${thing.replace(/_/g, ' ')} with that identifier.`);

export const invalidInput = (field: string, reason: string, error = 'invalid_input'): GraphQLError =>
  apiError('BAD_USER_INPUT', error, `${field}: ${reason}`, { field });

export const conflict = (error: string, message: string): GraphQLError => apiError('CONFLICT', error, message);

export function isApiError(error: unknown): error is GraphQLError & { extensions: ApiErrorExtensions } {
  return (
    error instanceof GraphQLError &&
    typeof error.extensions?.code === 'string' &&
    (error.extensions.code as string) in statusByCode &&
    typeof error.extensions.error === 'string'
  );
}
