// The request and operation spans (src/telemetry/tracing.ts), for both doors. With traces off every
// hook returns at its first line.
//
// - `first` (early in the plugin list, before anything may answer): starts the request's SERVER span
//   as a child of the incoming `traceparent`, named for its route template (`GET
//   /api/v1/cars/{id}/performance.json`, `POST /graphql`), and makes it the active span for the
//   rest of the request. Each GraphQL execution (the REST door runs one) gets a child span, active
//   while it executes, so the SQL statements' spans (src/db/traced-adapter.ts) hang below it.
// - `last` (after every hook that changes the answer): the final status goes on the request span,
//   which ends, and the answer carries the span's `traceparent`.
import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span } from '@opentelemetry/api';
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { openApiPath } from '../rest/openapi.ts';
import { matchPath } from '../rest/routes.ts';
import { recordOf } from '../telemetry/request-record.ts';
import { SERVICE_PATHS } from './request-telemetry.ts';
import { contextFromHeaders, currentTraceparent, enterTraceContext, isTracing, requestContext, tracer } from '../telemetry/tracing.ts';
import { Response } from '../web/fetch-api.ts';
import { requestState } from '../web/request-state.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** The request's server span, from onRequest until onResponse ends it. */
    span?: Span;
  }
}

/** The route template a request matched (`/api/v1/cars/{id}/performance.json`), or null: never the raw path. */
function routeOf(method: string, pathname: string, graphqlEndpoint: string): string | null {
  if (pathname === graphqlEndpoint || SERVICE_PATHS.has(pathname)) return pathname;
  const wanted = method === 'HEAD' ? 'GET' : method;
  const match = matchPath(pathname).find((candidate) => candidate.route.method === wanted);
  return match ? openApiPath(match.route.path) : null;
}

interface TracingPlugins {
  first: Plugin;
  last: Plugin;
}

/** The request's SERVER span, a child of the incoming `traceparent`, named for its route template. */
function startRequestSpan(request: Request, url: URL, graphqlEndpoint: string): { span: Span; parent: Context } {
  const route = routeOf(request.method, url.pathname, graphqlEndpoint);
  const parent = contextFromHeaders(request.headers);
  const userAgent = request.headers.get('user-agent');
  const span = tracer().startSpan(
    `${request.method} ${route ?? ''}`.trim(),
    {
      kind: SpanKind.SERVER,
      // OpenTelemetry's HTTP server conventions; the server is the one the client addressed (Host).
      attributes: {
        'http.request.method': request.method,
        'url.scheme': url.protocol.slice(0, -1),
        'url.path': url.pathname,
        ...(route ? { 'http.route': route } : {}),
        'server.address': url.hostname,
        'server.port': url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
        ...(userAgent ? { 'user_agent.original': userAgent } : {}),
        'request.id': recordOf(request)?.id ?? '',
      },
    },
    parent,
  );
  return { span, parent };
}

/** An operation's span: `<type> <name>`, or the type alone for an unnamed operation (OpenTelemetry's GraphQL conventions). */
function startOperationSpan(document: DocumentNode, operationName: string | null | undefined): Span {
  const operation = getOperationAST(document, operationName);
  const type = operation?.operation ?? 'query';
  const name = operationName ?? operation?.name?.value;
  return tracer().startSpan(name ? `${type} ${name}` : type, {
    attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
  });
}

/** Ends the request's span with the answer's status; the `traceparent` the answer carries, or null. */
function endRequestSpan(span: Span, status: number): string | null {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
  span.end();
  return currentTraceparent(trace.setSpan(context.active(), span));
}

export function useTracing(graphqlEndpoint: string): TracingPlugins {
  const first: Plugin = {
    onRequest({ request, url }) {
      if (!isTracing()) return;
      const { span, parent } = startRequestSpan(request, url, graphqlEndpoint);
      requestState(request).span = span;
      const record = recordOf(request);
      // Only a sampled span is in the tracing system for a log line to point at.
      if (record && span.spanContext().traceFlags & TraceFlags.SAMPLED) {
        const { traceId, spanId } = span.spanContext();
        record.trace = { trace_id: traceId, span_id: spanId };
      }
      enterTraceContext(requestContext(parent, span));
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!isTracing()) return undefined;
      const span = startOperationSpan(args.document, args.operationName);
      const active = trace.setSpan(context.active(), span);
      setExecuteFn((executeArgs) => context.with(active, () => executeFn(executeArgs)));
      return {
        onExecuteDone({ result }) {
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
  };

  const last: Plugin = {
    onResponse({ request, response, setResponse }) {
      const state = requestState(request);
      const span = state.span;
      if (!span) return;
      state.span = undefined;
      const traceparent = endRequestSpan(span, response.status);
      if (!traceparent) return;
      try {
        response.headers.set('traceparent', traceparent);
      } catch {
        // A response with immutable headers (a redirect): answer a copy.
        const headers = new Headers(response.headers);
        headers.set('traceparent', traceparent);
        setResponse(new Response(response.body, { status: response.status, statusText: response.statusText, headers }));
      }
    },
  };

  return { first, last };
}
