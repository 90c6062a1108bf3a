// The id that names one request in the answer (`Request-Id`), in every log line written for it and
// in its error body, so an integrator can quote it and an operator can find the request's lines.
//
// A caller (or a proxy in front) may name the request itself: its X-Request-Id (or Request-Id, the
// header browsers may send, src/gateway/security-headers.ts) is kept when it is short and made only of
// printable characters that cannot break a log line or a header; else, with a W3C `traceparent`,
// the trace id is used, so the request is found under the same id in the tracing system; else a
// random UUID is made here.
import { randomUUID } from 'node:crypto';

/** Longest incoming id kept; anything longer is replaced, never cut (a cut id would name nothing). */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Letters, digits and the punctuation ids are made of: no spaces, quotes, backslashes or control characters. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:\-/+=@]+$/;

/** version-traceid-parentid-flags, lowercase hex; an all-zero trace id is invalid (W3C Trace Context). */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}(?:-.*)?$/;

/** The incoming id when it is safe to repeat in headers and logs, else null. */
export function acceptableRequestId(value: string | null): string | null {
  if (value === null) return null;
  const id = value.trim();
  return id.length > 0 && id.length <= MAX_REQUEST_ID_LENGTH && SAFE_REQUEST_ID.test(id) ? id : null;
}

/** The trace id of a valid `traceparent` header, else null. */
function traceIdOf(traceparent: string | null): string | null {
  if (traceparent === null) return null;
  const match = TRACEPARENT.exec(traceparent.trim());
  const traceId = match?.[1];
  if (!traceId || /^0+$/.test(traceId) || traceparent.trim().startsWith('ff')) return null;
  return traceId;
}

/** The request's id: the caller's, when acceptable; the trace id of its traceparent; else a new UUID. */
export function requestIdFor(headers: Headers): string {
  return (
    acceptableRequestId(headers.get('x-request-id')) ??
    acceptableRequestId(headers.get('request-id')) ??
    traceIdOf(headers.get('traceparent')) ??
    randomUUID()
  );
}
