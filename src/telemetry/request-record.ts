// What is known of one request while it is answered, kept under the request as the client sent it
// (the REST door rebuilds requests), read once when the answer is ready, for the log line and the metrics.
import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { requestIdFor } from './request-id.ts';
import { requestState } from '../web/request-state.ts';

export interface RequestRecord {
  readonly id: string;
  readonly startedAt: number;
  operation?: { document: DocumentNode; operationName: string | null | undefined };
  /** The first error's: the REST body's `error`, or the GraphQL error's extensions.error (else .code). */
  errorCode?: string;
  logger?: Logger;
  trace?: TraceIds;
}

export interface TraceIds {
  trace_id: string;
  span_id: string;
}

export function requestBindings(record: RequestRecord): { request_id: string } & Partial<TraceIds> {
  return record.trace ? { request_id: record.id, ...record.trace } : { request_id: record.id };
}

declare module '../web/request-state.ts' {
  interface RequestState {
    record?: RequestRecord;
  }
}

// Yoga logs the error behind a masked answer later, with no request at hand: errors are noted where the
// request is known, not found through an AsyncLocalStorage, which on Node 20 hooks every promise of every request.
const loggerOfError = new WeakMap<object, Logger>();

export function noteErrorLogger(error: unknown, logger: Logger): void {
  if (typeof error !== 'object' || error === null) return;
  loggerOfError.set(error, logger);
  const original = (error as Partial<GraphQLError>).originalError;
  if (original) loggerOfError.set(original, logger);
}

export function errorLogger(base: Logger, error: unknown): Logger {
  if (typeof error !== 'object' || error === null) return base;
  const original = (error as Partial<GraphQLError>).originalError;
  return loggerOfError.get(error) ?? (original ? loggerOfError.get(original) : undefined) ?? base;
}

/** First in the plugin list: its onExecuteDone runs before any other plugin's, and before Yoga masks (and logs) the errors. */
export function useErrorLoggers(): Plugin<{ logger?: Logger }> {
  return {
    onExecute({ args }) {
      const context = args.contextValue as { logger?: Logger };
      return {
        onExecuteDone({ result }) {
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

export function startRecord(request: Request): RequestRecord {
  const record: RequestRecord = { id: requestIdFor(request.headers), startedAt: performance.now() };
  requestState(request).record = record;
  return record;
}

export function recordOf(sentRequest: Request): RequestRecord | undefined {
  return requestState(sentRequest).record;
}

export function requestLogger(base: Logger, sentRequest: Request): Logger {
  const record = requestState(sentRequest).record;
  if (!record) return base.child({ request_id: requestIdFor(sentRequest.headers) });
  record.logger ??= base.child(requestBindings(record));
  return record.logger;
}
