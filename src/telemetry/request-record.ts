// What is known of one request while it is answered: its id, when it started, the GraphQL operation
// it ran and the error it ended with. Kept under the request as the client sent it (the REST door
// rebuilds requests: src/context.ts maps them back), filled by src/telemetry/request-telemetry.ts
// and read once, when the answer is ready, for both the log line and the metrics.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DocumentNode } from 'graphql';
import type { Logger } from 'pino';
import { requestIdFor } from './request-id.ts';

export interface RequestRecord {
  readonly id: string;
  /** performance.now() when the app received the request. */
  readonly startedAt: number;
  /** The GraphQL operation executed for it (the REST door runs one too), when one ran. */
  operation?: { document: DocumentNode; operationName: string | null | undefined };
  /** The first error's code: the REST body's `error`, or the GraphQL error's extensions.error (else .code). */
  errorCode?: string;
  /** The request's child logger, made when something first logs for it. */
  logger?: Logger;
}

const records = new WeakMap<Request, RequestRecord>();

/**
 * The record of the request whose work is running, for code that is not handed the request: Yoga's
 * own log lines (an unexpected error it masks) carry the request id through it.
 */
const currentRecord = new AsyncLocalStorage<RequestRecord>();

/** Starts the record of a request as the client sent it; what runs for the request from here on sees it. */
export function startRecord(request: Request): RequestRecord {
  const record: RequestRecord = { id: requestIdFor(request.headers), startedAt: performance.now() };
  records.set(request, record);
  // enterWith, not run: Yoga calls this hook and then goes on with the request in the same async
  // chain, which has no callback to run inside. Each request is answered in an async chain of its
  // own (an HTTP request event, a yoga.fetch call), so a record never outlives its request's work.
  currentRecord.enterWith(record);
  return record;
}

/** The logger of the request whose work is running (see currentRecord), else `base`. */
export function currentRequestLogger(base: Logger): Logger {
  const record = currentRecord.getStore();
  if (!record) return base;
  record.logger ??= base.child({ request_id: record.id });
  return record.logger;
}

/** The record of a request as the client sent it (src/context.ts sentRequest), if it was started. */
export function recordOf(sentRequest: Request): RequestRecord | undefined {
  return records.get(sentRequest);
}

/**
 * The logger for whatever runs on behalf of this request (resolvers, domain rules, through
 * `context.logger`): every line it writes carries the request id.
 */
export function requestLogger(base: Logger, sentRequest: Request): Logger {
  const record = records.get(sentRequest);
  if (!record) return base.child({ request_id: requestIdFor(sentRequest.headers) });
  record.logger ??= base.child({ request_id: record.id });
  return record.logger;
}
