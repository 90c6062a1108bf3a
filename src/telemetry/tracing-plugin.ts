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
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { rootFieldsOf } from '../key-call-log.ts';
import { openApiPath } from '../rest/openapi.ts';
import { matchPath } from '../rest/routes.ts';
import { recordOf } from './request-record.ts';
import { contextFromHeaders, currentTraceparent, enterTraceContext, isTracing, tracer } from './tracing.ts';
import { Response } from '../fetch-api.ts';

/** The route template a request matched (`/api/v1/cars/{id}/performance.json`), or null. */
function routeOf(method: string, pathname: string, graphqlEndpoint: string): string | null {
  if (pathname === graphqlEndpoint) return graphqlEndpoint;
  const wanted = method === 'HEAD' ? 'GET' : method;
  const match = matchPath(pathname).find((candidate) => candidate.route.method === wanted);
  return match ? openApiPath(match.route.path) : null;
}

export interface TracingPlugins {
  first: Plugin;
  last: Plugin;
}

export function useTracing(graphqlEndpoint: string): TracingPlugins {
  const requestSpans = new WeakMap<Request, Span>();

  const first: Plugin = {
    onRequest({ request, url }) {
      if (!isTracing()) return;
      const route = routeOf(request.method, url.pathname, graphqlEndpoint);
      const parent = contextFromHeaders(request.headers);
      const span = tracer().startSpan(
        `${request.method} ${route ?? ''}`.trim(),
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': request.method,
            'url.path': url.pathname,
            ...(route ? { 'http.route': route } : {}),
            'request.id': recordOf(request)?.id ?? '',
          },
        },
        parent,
      );
      requestSpans.set(request, span);
      enterTraceContext(trace.setSpan(parent, span));
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!isTracing()) return undefined;
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = args.operationName ?? operation?.name?.value ?? rootFieldsOf(args.document, args.operationName).join(',');
      const span = tracer().startSpan(`${type} ${name}`.trim(), {
        attributes: { 'graphql.operation.type': type, 'graphql.operation.name': name },
      });
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
      const span = requestSpans.get(request);
      if (!span) return;
      requestSpans.delete(request);
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${response.status}` });
      span.end();
      const traceparent = currentTraceparent(trace.setSpan(context.active(), span));
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
