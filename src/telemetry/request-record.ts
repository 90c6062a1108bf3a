// What is known of one request while it is answered: its id, when it started, the GraphQL operation
// it ran and the error it ended with. Kept under the request as the client sent it (the REST door
// rebuilds requests: src/context.ts maps them back), filled by src/gateway/request-telemetry.ts
// and read once, when the answer is ready, for both the log line and the metrics.
import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { requestIdFor } from './request-id.ts';
import { requestState } from '../web/request-state.ts';

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
  /**
   * With traces on, the request span's ids (src/gateway/tracing-plugin.ts), in every line logged for
   * the request, so a log line is found from its trace and a trace from its log line.
   */
  trace?: TraceIds;
}

/** OpenTelemetry's names for them in logs: hex, as W3C trace context writes them. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** The fields that tie a line to its request (and its trace): `request_id`, then `trace_id` and `span_id` when traced. */
export function requestBindings(record: RequestRecord): { request_id: string } & Partial<TraceIds> {
  return record.trace ? { request_id: record.id, ...record.trace } : { request_id: record.id };
}

declare module '../web/request-state.ts' {
  interface RequestState {
    /** On the request as the client sent it: its id, start, trace and logger. */
    record?: RequestRecord;
  }
}

/**
 * The logger of the request each error was met in. Yoga logs the unexpected error behind a masked
 * answer itself, later and with no request at hand; its line must still carry the request id. An
 * AsyncLocalStorage would know the request anywhere, but on Node 20 it turns on promise hooks for
 * every promise of every request: measured at 6% of an uncached read's CPU and 15% of a cached one.
 * So errors are noted where the request is known (useErrorLoggers below; the context factory in
 * src/gateway/yoga.ts) and Yoga's logger looks them up.
 */
const loggerOfError = new WeakMap<object, Logger>();

/** Notes the request logger an error belongs to (its original error too, which plugins may re-wrap). */
export function noteErrorLogger(error: unknown, logger: Logger): void {
  if (typeof error !== 'object' || error === null) return;
  loggerOfError.set(error, logger);
  const original = (error as Partial<GraphQLError>).originalError;
  if (original) loggerOfError.set(original, logger);
}

/** The logger of the request `error` was met in (by the error or its original), else `base`. */
export function errorLogger(base: Logger, error: unknown): Logger {
  if (typeof error !== 'object' || error === null) return base;
  const original = (error as Partial<GraphQLError>).originalError;
  return loggerOfError.get(error) ?? (original ? loggerOfError.get(original) : undefined) ?? base;
}

/**
 * Notes the request's logger for each error an operation ends with, on both doors. First in the plugin
 * list: its onExecuteDone runs before any other plugin's, and before Yoga masks (and logs) the errors.
 */
export function useErrorLoggers(): Plugin<{ logger?: Logger }> {
  return {
    onExecute({ args }) {
      const context = args.contextValue as { logger?: Logger };
      return {
        onExecuteDone({ result }) {
          // An operation here answers one result (no @defer or @stream in this graph).
          if (Symbol.asyncIterator in result || !result.errors?.length) return;
          // Read only now: the request's logger is made on first use, and most operations end without an error.
          const logger = context.logger;
          if (!logger) return;
          for (const error of result.errors) noteErrorLogger(error, logger);
        },
      };
    },
  };
}

/** Starts the record of a request as the client sent it. */
export function startRecord(request: Request): RequestRecord {
  const record: RequestRecord = { id: requestIdFor(request.headers), startedAt: performance.now() };
  requestState(request).record = record;
  return record;
}

/** The record of a request as the client sent it (src/context.ts sentRequest), if it was started. */
export function recordOf(sentRequest: Request): RequestRecord | undefined {
  return requestState(sentRequest).record;
}

/**
 * The logger for whatever runs on behalf of this request (resolvers, domain rules, through
 * `context.logger`): every line it writes carries the request id, and the trace's ids when traced.
 */
export function requestLogger(base: Logger, sentRequest: Request): Logger {
  const record = requestState(sentRequest).record;
  if (!record) return base.child({ request_id: requestIdFor(sentRequest.headers) });
  record.logger ??= base.child(requestBindings(record));
  return record.logger;
}
