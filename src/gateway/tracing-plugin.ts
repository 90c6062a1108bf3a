// The request and operation spans, for both doors; with traces off every hook returns at its first line.
// `first`'s instrumentation runs the whole request (every plugin's hooks) in its SERVER span's context,
// its onRequest names the span once the request is rewritten; each GraphQL execution is a child span,
// active while it executes; `last` ends the request span with the final status and answers its `traceparent`.
// Not @envelop/opentelemetry: it loads the SDK with itself (traces off would pay for it) and names its spans and attributes `graphql.execute.*`, not by OpenTelemetry's GraphQL conventions.
import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Span } from '@opentelemetry/api';
import { getOperationAST, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { openApiPath } from '../rest/openapi.ts';
import { matchPath } from '../rest/routes.ts';
import { recordOf } from '../telemetry/request-record.ts';
import { SERVICE_PATHS } from './request-telemetry.ts';
import { whenBodyEnds, withHeaders } from '../web/bodies.ts';
import { requestState } from '../web/request-state.ts';
import { sentRequest } from '../context.ts';
import { isStreamedAnswer } from './incremental.ts';
import { parsedUrl } from '../web/fetch-api.ts';
import { contextFromHeaders, currentTraceparent, isTracing, requestContext, requestSpan, tracer } from '../telemetry/tracing.ts';

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

/** `<type> <name>`, or the type alone for an unnamed operation (OpenTelemetry's GraphQL conventions). */
function startOperationSpan(document: DocumentNode, operationName: string | null | undefined): Span {
  const operation = getOperationAST(document, operationName);
  const type = operation?.operation ?? 'query';
  const name = operationName ?? operation?.name?.value;
  return tracer().startSpan(name ? `${type} ${name}` : type, {
    attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
  });
}

export function useTracing(graphqlEndpoint: string): TracingPlugins {
  const first: Plugin = {
    instrumentation: {
      request({ request }, wrapped) {
        if (!isTracing()) return wrapped();
        const parent = contextFromHeaders(request.headers);
        const attributes = httpAttributes(request, parsedUrl(request));
        const span = tracer().startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
        return context.with(requestContext(parent, span), wrapped);
      },
    },
    onRequest({ request, url }) {
      const span = requestSpan();
      if (!span) return;
      // As rewritten: a HEAD is answered as the GET, a trailing slash as the path without it.
      const route = routeOf(request.method, url.pathname, graphqlEndpoint);
      span.updateName(`${request.method} ${route ?? ''}`.trim());
      span.setAttributes({ ...httpAttributes(request, url), ...(route ? { 'http.route': route } : {}) });
      const record = recordOf(request);
      // Only a sampled span is in the tracing system for a log line to point at.
      if (record && span.spanContext().traceFlags & TraceFlags.SAMPLED) {
        const { traceId, spanId } = span.spanContext();
        record.trace = { trace_id: traceId, span_id: spanId };
      }
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!isTracing()) return undefined;
      const span = startOperationSpan(args.document, args.operationName);
      const active = trace.setSpan(context.active(), span);
      setExecuteFn((executeArgs) => context.with(active, () => executeFn(executeArgs)));
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
  };

  const last: Plugin = {
    onResponse({ request, response, setResponse }) {
      const span = requestSpan();
      if (!span) return;
      const { status } = response;
      span.setAttributes({ 'http.response.status_code': status, 'request.id': recordOf(request)?.id ?? '' });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
      const traceparent = currentTraceparent(trace.setSpan(context.active(), span));
      const answer = traceparent ? withHeaders(response, (headers) => headers.set('traceparent', traceparent)) : response;
      // @defer's payloads: the request lasts until its last payload is sent, as its log line says.
      if (requestState(sentRequest(request)).incremental && isStreamedAnswer(answer)) {
        setResponse(whenBodyEnds(answer, () => span.end()));
        return;
      }
      span.end();
      if (answer !== response) setResponse(answer);
    },
  };

  return { first, last };
}
