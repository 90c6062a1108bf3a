// One record per request, finished when the answer is ready, feeds the request's log line, the metrics
// and its trace; every answer gets its `Request-Id`, every error body the id (`request_id`, GraphQL's
// `extensions.request_id`). The door, the metric label, comes from closed sets only, never from a
// caller's text: the REST route template, the GraphQL operation's type and root field (`query
// car_performance`, `query (several root fields)`, `query (introspection)`), a service path, or `unmatched`.
// `first`'s instrumentation runs the whole request (every plugin's hooks) in its SERVER span's context, its
// onRequest names the span once the request is rewritten; each GraphQL execution is a child span, active while
// it executes; `last` ends the request span with the final status and answers its `traceparent`.
// Not @envelop/opentelemetry: it loads the SDK with itself (traces off would pay for it) and names its spans and attributes `graphql.execute.*`, not by OpenTelemetry's GraphQL conventions.
import { context as traceContext, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes } from '@opentelemetry/api';
import { GraphQLError, getOperationAST, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { presentedKeyVerdict, sentRequest, type Context } from '../context.ts';
import type { AppDeps } from './app.ts';
import { withExtensions } from '../errors.ts';
import { isPlainObject, parsedJson } from '../lib/json.ts';
import { OPENAPI_PATH, DOCS_PATH } from '../rest/docs.ts';
import { noSuchPath } from '../rest/errors.ts';
import { matchPath, routeFor } from '../rest/routes.ts';
import { rootFieldNames } from './root-fields.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import { METRICS_PATH } from './metrics-endpoint.ts';
import { recordOf, requestBindings, startRecord, type RequestRecord } from '../telemetry/request-record.ts';
import { parsedUrl, Response } from '../web/fetch-api.ts';
import { whenBodyEnds, withHeaders } from '../web/bodies.ts';
import { requestState } from '../web/request-state.ts';
import { isStreamedAnswer } from './incremental.ts';
import { mapErrors, onEachResult } from './http-plugins.ts';
import { contextFromHeaders, currentTraceparent, isTracing, requestContext, requestSpan, tracer } from '../telemetry/tracing.ts';

export const REQUEST_ID_HEADER = 'request-id';

/** The service's own paths (health, metrics, docs): a closed set, used as labels and span routes as they are. */
const SERVICE_PATHS: ReadonlySet<string> = new Set(['/health', '/ready', METRICS_PATH, OPENAPI_PATH, DOCS_PATH]);
const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

type GraphQLErrorLike = GraphQLError | { message: string; extensions?: Record<string, unknown> };

function codeOf(error: GraphQLErrorLike): string {
  const code = error.extensions?.code;
  return typeof code === 'string' && code.length <= 64 ? code : 'INTERNAL_SERVER_ERROR';
}

/** The root field as the schema names it (an alias is the caller's text), validated; combinations of fields are not a small set. */
function operationDoor(ran: RequestRecord['operation']): string | null {
  const operation = ran && getOperationAST(ran.document, ran.operationName);
  if (!ran || !operation) return null;
  const fields = rootFieldNames(ran.document, ran.operationName);
  if (fields.length === 0) return `${operation.operation} (introspection)`;
  return `${operation.operation} ${fields.length === 1 ? fields[0] : '(several root fields)'}`;
}

/** The route template a request matched (`/api/v1/cars/{id}/performance.json`), or null: never the raw path. */
function routeOf(method: string, pathname: string, graphqlEndpoint: string): string | null {
  if (pathname === graphqlEndpoint || SERVICE_PATHS.has(pathname)) return pathname;
  return routeFor(method, pathname)?.template ?? null;
}

/** OpenTelemetry's HTTP server attributes of a request; the server is the one the client addressed (Host). */
function httpAttributes(request: Request, url: URL): Attributes {
  const userAgent = request.headers.get('user-agent');
  return {
    'http.request.method': request.method,
    'url.scheme': url.protocol.slice(0, -1),
    'url.path': url.pathname,
    'server.address': url.hostname,
    'server.port': url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
    ...(userAgent ? { 'user_agent.original': userAgent } : {}),
  };
}

function doorOf(request: Request, pathname: string, record: RequestRecord, status: number, graphqlEndpoint: string): string {
  const method = KNOWN_METHODS.has(request.method) ? request.method : 'OTHER';
  if (pathname === graphqlEndpoint) return operationDoor(record.operation) ?? `${method} ${graphqlEndpoint}`;
  const match = routeFor(request.method, pathname) ?? matchPath(pathname)[0];
  if (match) return `${method} ${match.template}`;
  if (status !== 404 && SERVICE_PATHS.has(pathname)) return `${method} ${pathname}`;
  if (status !== 404 && pathname.startsWith(`${DOCS_PATH}/`)) return `${method} ${DOCS_PATH}/{asset}`;
  return 'unmatched';
}

/** Counts each error once. */
function stampResult<T extends ExecutionResult>(result: T, record: RequestRecord, metrics: GatewayMetrics): T {
  return mapErrors(result, (error) => {
    if ((error as GraphQLErrorLike).extensions?.request_id !== undefined) return error;
    metrics.graphqlError(codeOf(error));
    const name = error.extensions?.error;
    record.errorCode ??= typeof name === 'string' ? name : codeOf(error);
    const extensions = { ...error.extensions, request_id: record.id };
    return (
      error instanceof GraphQLError ? withExtensions(error, extensions) : { ...(error as GraphQLErrorLike), extensions }
    ) as GraphQLError;
  });
}

/** Yoga's own 404, of a path nothing answers, is not JSON: it gets the JSON body of every other 404. */
function jsonNotFound(response: Response): Response {
  if (response.status !== 404 || (response.headers.get('content-type') ?? '').includes('json')) return response;
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json; charset=utf-8');
  headers.delete('content-length');
  return new Response(JSON.stringify(noSuchPath()), { status: 404, headers });
}

/** An error answer the app built as JSON itself (the REST door's, a 429 before GraphQL ran), uncompressed. */
async function stampErrorBody(response: Response, record: RequestRecord, metrics: GatewayMetrics): Promise<Response> {
  if (response.status < 400 || !response.body || response.headers.has('content-encoding')) return response;
  if (!(response.headers.get('content-type') ?? '').includes('json')) return response;
  const text = await response.text();
  const fields = parsedJson(text);
  let stamped: unknown = null;
  if (isPlainObject(fields)) {
    if (typeof fields.error === 'string') {
      record.errorCode ??= fields.error;
      stamped = fields.request_id === undefined ? { ...fields, request_id: record.id } : null;
    } else if (Array.isArray(fields.errors)) {
      const result = stampResult(fields as ExecutionResult, record, metrics);
      stamped = result === fields ? null : result;
    }
  }
  const headers = new Headers(response.headers);
  const out = stamped === null ? text : JSON.stringify(stamped);
  if (stamped !== null) headers.delete('content-length');
  return new Response(out, { status: response.status, statusText: response.statusText, headers });
}

export function useRequestTelemetry(deps: AppDeps, metrics: GatewayMetrics, graphqlEndpoint: string) {
  /** Right after useHttpConventions().first and the security headers, before anything else may answer. */
  const first: Plugin = {
    instrumentation: {
      request({ request }, wrapped) {
        if (!isTracing()) return wrapped();
        const parent = contextFromHeaders(request.headers);
        const attributes = httpAttributes(request, parsedUrl(request));
        const span = tracer().startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
        return traceContext.with(requestContext(parent, span), wrapped);
      },
    },
    onRequest({ request, url }) {
      const record = startRecord(request);
      const span = requestSpan();
      if (!span) return;
      const route = routeOf(request.method, url.pathname, graphqlEndpoint);
      span.updateName(`${request.method} ${route ?? ''}`.trim());
      span.setAttributes({ ...httpAttributes(request, url), ...(route ? { 'http.route': route } : {}) });
      // Only a sampled span is in the tracing system for a log line to point at.
      const { traceId, spanId, traceFlags } = span.spanContext();
      if (traceFlags & TraceFlags.SAMPLED) record.trace = { trace_id: traceId, span_id: spanId };
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const { request } = args.contextValue as Partial<Context>;
      const record = request && recordOf(sentRequest(request));
      // The first operation is the request's (a REST path runs exactly one).
      if (record && !record.operation) record.operation = { document: args.document, operationName: args.operationName };
      if (!isTracing()) return undefined;
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = args.operationName ?? operation?.name?.value;
      const span = tracer().startSpan(name ? `${type} ${name}` : type, {
        attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
      });
      const active = trace.setSpan(traceContext.active(), span);
      setExecuteFn((executeArgs) => traceContext.with(active, () => executeFn(executeArgs)));
      return {
        onExecuteDone({ result }) {
          // Payloads (@defer, @stream): the operation ends with its last one.
          if (isAsyncIterable(result)) return { onEnd: () => span.end() };
          const errors = 'errors' in result ? result.errors : undefined;
          if (errors && errors.length > 0) {
            const code = errors[0]?.extensions?.code;
            span.setAttribute('graphql.error.count', errors.length);
            span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : 'GraphQL error' });
          }
          span.end();
        },
      };
    },
    onResultProcess: onEachResult((result, request) => {
      const record = recordOf(sentRequest(request));
      return record ? stampResult(result, record, metrics) : result;
    }),
  };

  /** Right before useHttpConventions().last, which works out a HEAD answer's Content-Length from the body; Yoga's 404 made JSON too. */
  const errorBodies: Plugin = {
    async onResponse({ request, response, setResponse }) {
      const answer = jsonNotFound(response);
      const record = recordOf(request);
      const stamped = record ? await stampErrorBody(answer, record, metrics) : answer;
      if (stamped !== response) setResponse(stamped);
    },
  };

  /** Last of all: the record is finished, and the request span ended, from the final answer. */
  const last: Plugin = {
    async onResponse({ request, response, setResponse }) {
      const record = recordOf(request) ?? startRecord(request);
      const span = requestSpan();
      span?.setAttributes({ 'http.response.status_code': response.status, 'request.id': record.id });
      if (span && response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${response.status}` });
      const traceparent = span ? currentTraceparent(trace.setSpan(traceContext.active(), span)) : null;
      const answer = withHeaders(response, (headers) => {
        headers.set(REQUEST_ID_HEADER, record.id);
        if (traceparent) headers.set('traceparent', traceparent);
      });
      const finish = async (): Promise<void> => {
        const seconds = (performance.now() - record.startedAt) / 1000;
        const pathname = parsedUrl(request).pathname;
        const door = doorOf(request, pathname, record, answer.status, graphqlEndpoint);
        metrics.requestFinished(door, answer.status, seconds);
        if (answer.status === 429) metrics.rateLimited(door);
        // Nothing more is worked out for a line that would not be written (LOG_LEVEL above info).
        if (!deps.logger.isLevelEnabled('info')) return;
        const actor = await (presentedKeyVerdict(request) ?? Promise.resolve(null)).catch(() => null);
        (record.logger ?? deps.logger).info(
          {
            ...(record.logger ? {} : requestBindings(record)),
            method: request.method,
            path: pathname,
            door,
            status: answer.status,
            ms: Math.round(seconds * 10_000) / 10,
            key_id: actor?.apiKeyId ?? null,
            scope: actor ? (actor.dealershipIds?.length ?? 'all') : null,
            error_code: record.errorCode ?? null,
          },
          'request',
        );
      };
      // @defer's payloads: the request is over when its last payload is sent (or its client leaves), not at the first.
      if (requestState(sentRequest(request)).incremental && isStreamedAnswer(answer)) {
        setResponse(
          whenBodyEnds(answer, () => {
            void finish();
            span?.end();
          }),
        );
        return;
      }
      if (answer !== response) setResponse(answer);
      await finish();
      span?.end();
    },
  };
  return { first, errorBodies, last };
}
