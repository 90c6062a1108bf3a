// A request's id (`Request-Id`, its log lines, its error body): the caller's X-Request-Id or Request-Id when safe in
// a header and a log line (a longer one is replaced, never cut: a cut id names nothing), else its `traceparent`'s trace
// id, else a new UUID. Parsed here, not by @opentelemetry/core: loading it would slow every start-up with tracing off.
import { randomUUID } from 'node:crypto';

export const MAX_REQUEST_ID_LENGTH = 128;

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:\-/+=@]+$/;

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}(?:-.*)?$/;

export function acceptableRequestId(value: string | null): string | null {
  if (value === null) return null;
  const id = value.trim();
  return id.length > 0 && id.length <= MAX_REQUEST_ID_LENGTH && SAFE_REQUEST_ID.test(id) ? id : null;
}

function traceIdOf(traceparent: string | null): string | null {
  const trimmed = traceparent?.trim() ?? '';
  const traceId = TRACEPARENT.exec(trimmed)?.[1];
  return traceId && !/^0+$/.test(traceId) && !trimmed.startsWith('ff') ? traceId : null;
}

export function requestIdFor(headers: Headers): string {
  return (
    acceptableRequestId(headers.get('x-request-id')) ??
    acceptableRequestId(headers.get('request-id')) ??
    traceIdOf(headers.get('traceparent')) ??
    randomUUID()
  );
}
