// OpenTelemetry traces: off unless an `OTEL_*` setting turns them on (src/config/settings.ts, docs/operations.md, "Traces").
// Off, nothing but @opentelemetry/api is loaded, and its tracer is a no-op: spans cost a function call.
// On, the SDK's NodeTracerProvider is imported here, once, and registered globally with its
// AsyncLocalStorage context manager and W3C propagators, so that the request plugin, the database
// adapters and the outbox worker make their spans with the same `tracer`. The SDK reads its own
// `OTEL_TRACES_SAMPLER(_ARG)` and `OTEL_BSP_*` variables, which src/config only checks.
//
// Spans: one SERVER span per request (`GET /api/v1/cars/:id/performance.json`, `POST /graphql`), a
// child per GraphQL operation (the REST door runs one too), and a child of that per SQL statement.
// An incoming `traceparent` is the request span's parent; the answer carries the request span's
// `traceparent`; a notification queued by the request stores it and its e-mail carries it on.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  trace,
  type Context as TraceContext,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { projectRoot, type TracingConfig } from '../config/index.ts';

const TRACER_NAME = 'dealership-gateway';

/**
 * The instrumentation scope's version (package.json's, as the service's own code is the
 * instrumentation): read by startTracing, so that with traces off no file is read.
 */
let tracerVersion: string | undefined;

/** The tracer every span of the service is made with: a no-op until startTracing registers the SDK. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME, tracerVersion);
}

/** Whether startTracing has registered the SDK: every tracing hook checks this first. */
export function isTracing(): boolean {
  return tracerVersion !== undefined;
}

/**
 * The trace context a request's headers carry (`traceparent`, `tracestate`). From the root, never
 * from the active context: a request's only parent is the one its caller sends.
 */
export function contextFromHeaders(headers: Headers): TraceContext {
  return propagation.extract(ROOT_CONTEXT, Object.fromEntries(headers));
}

/** The W3C `traceparent` of the active span (or of `from`), when it is being traced. */
export function currentTraceparent(from: TraceContext = context.active()): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier.traceparent ?? null;
}

/** Where a request's own SERVER span is kept in its context, under the operation and statement spans. */
const REQUEST_SPAN = createContextKey('dealership-gateway request span');

/** The context of a request: `span` is the active span, and the request's span for whatever runs below it. */
export function requestContext(parent: TraceContext, span: Span): TraceContext {
  return trace.setSpan(parent, span).setValue(REQUEST_SPAN, span);
}

/** The SERVER span of the request being answered, whichever span is active below it. */
export function requestSpan(): Span | undefined {
  return context.active().getValue(REQUEST_SPAN) as Span | undefined;
}

/** The W3C `traceparent` of the request being answered, when it is traced: what a notification it queues is linked to. */
export function requestTraceparent(): string | null {
  const span = requestSpan();
  return span ? currentTraceparent(trace.setSpan(ROOT_CONTEXT, span)) : null;
}

/** A link to the span a stored `traceparent` (an outbox message's) names; none without one. */
export function linksTo(traceparent: string | null): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext ? [{ context: spanContext }] : [];
}

/**
 * A CommonJS package's exports however it was imported: Node gives its named exports (and the whole
 * `module.exports` as `default`), the production bundle only `default`.
 */
function commonJsExports<T extends object>(loaded: T): T {
  return (loaded as { default?: T }).default ?? loaded;
}

/** The version in package.json (the image carries it beside dist/). */
function serviceVersion(): string {
  const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof version === 'string' ? version : 'unknown';
}

export interface Tracing {
  /** Sends what is still buffered and stops the SDK (at shutdown, after the last request). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Spans go here instead of the configured exporter, each as it ends (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter;
}

/**
 * The exporter the settings choose: the console, or OTLP over HTTP in the chosen protocol. Each
 * protocol's exporter is a package of its own, and only the chosen one is loaded.
 */
export async function configuredExporter(config: TracingConfig): Promise<SpanExporter> {
  if (config.exporter === 'console') {
    const { ConsoleSpanExporter } = commonJsExports(await import('@opentelemetry/sdk-trace-node'));
    return new ConsoleSpanExporter();
  }
  const { OTLPTraceExporter } =
    config.otlpProtocol === 'http/json'
      ? commonJsExports(await import('@opentelemetry/exporter-trace-otlp-http'))
      : commonJsExports(await import('@opentelemetry/exporter-trace-otlp-proto'));
  return new OTLPTraceExporter(config.otlpUrl ? { url: config.otlpUrl } : {});
}

/**
 * Registers the OpenTelemetry SDK when the settings turn traces on (or a test gives an exporter);
 * null otherwise, and then no SDK module has been loaded.
 */
export async function startTracing(config: TracingConfig | null, options: TracingOptions = {}): Promise<Tracing | null> {
  if (!config && !options.exporter) return null;
  const [sdk, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node').then(commonJsExports),
    import('@opentelemetry/resources').then(commonJsExports),
  ]);
  // startTracing returned above unless there is a config or a test's exporter.
  const exporter = options.exporter ?? (await configuredExporter(config!));
  const version = serviceVersion();
  // The SDK's own resource (`telemetry.sdk.*`), its process (`process.runtime.*`, the pid) and
  // `service.instance.id` detectors, under the service's attributes; OTEL_RESOURCE_ATTRIBUTES may
  // name its own instance (a pod), and OTEL_SERVICE_NAME wins over a `service.name` there, as the
  // specification says. Not the host detector: in a container its `host.id` names no machine.
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.processDetector, resources.serviceInstanceIdDetector] }))
    .merge(
      resources.resourceFromAttributes({
        'service.version': version,
        'deployment.environment.name': config?.deploymentEnvironment ?? 'development',
        ...config?.resourceAttributes,
        'service.name': config?.serviceName ?? TRACER_NAME,
      }),
    );
  const provider = new sdk.NodeTracerProvider({
    resource,
    // Batched for a real exporter (one POST per batch, off the requests' path); one by one for a test's.
    spanProcessors: [options.exporter ? new sdk.SimpleSpanProcessor(exporter) : new sdk.BatchSpanProcessor(exporter)],
  });
  provider.register();
  tracerVersion = version;
  return {
    async shutdown() {
      try {
        await provider.forceFlush();
        await provider.shutdown();
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
        tracerVersion = undefined;
      }
    },
  };
}
