// OpenTelemetry traces, off unless an `OTEL_*` setting turns them on (docs/operations.md, "Traces"): off, only @opentelemetry/api
// is loaded and its tracer is a no-op; on, the SDK's NodeTracerProvider is imported once and registered with its AsyncLocalStorage
// context manager and W3C propagators. The SDK reads its own `OTEL_TRACES_SAMPLER(_ARG)` and `OTEL_BSP_*`, which src/config only checks.
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

/** The instrumentation scope's version, package.json's: set by startTracing, so that off no file is read. */
let tracerVersion: string | undefined;

export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME, tracerVersion);
}

export function isTracing(): boolean {
  return tracerVersion !== undefined;
}

/** From the root, never the active context: a request's only parent is the one its caller sends. */
export function contextFromHeaders(headers: Headers): TraceContext {
  return propagation.extract(ROOT_CONTEXT, Object.fromEntries(headers));
}

export function currentTraceparent(from: TraceContext = context.active()): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier.traceparent ?? null;
}

/** The request's own SERVER span, kept in its context under the operation and statement spans. */
const REQUEST_SPAN = createContextKey('dealership-gateway request span');

export function requestContext(parent: TraceContext, span: Span): TraceContext {
  return trace.setSpan(parent, span).setValue(REQUEST_SPAN, span);
}

export function requestSpan(): Span | undefined {
  return context.active().getValue(REQUEST_SPAN) as Span | undefined;
}

/** What a notification the request queues is linked to: its SERVER span's, whichever span is active. */
export function requestTraceparent(): string | null {
  const span = requestSpan();
  return span ? currentTraceparent(trace.setSpan(ROOT_CONTEXT, span)) : null;
}

export function linksTo(traceparent: string | null): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext ? [{ context: spanContext }] : [];
}

/** A CommonJS package's exports: Node gives them named (and as `default`), the production bundle only as `default`. */
function commonJsExports<T extends object>(loaded: T): T {
  return (loaded as { default?: T }).default ?? loaded;
}

export type Tracing = NonNullable<Awaited<ReturnType<typeof startTracing>>>;

export interface TracingOptions {
  /** Instead of the configured exporter, each span as it ends (a test's InMemorySpanExporter). */
  exporter?: SpanExporter;
}

/** Each OTLP protocol's exporter is a package of its own: only the chosen one is loaded. */
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

/** Null, with no SDK module loaded, unless the settings turn traces on or a test gives an exporter. */
export async function startTracing(config: TracingConfig | null, options: TracingOptions = {}) {
  if (!config && !options.exporter) return null;
  const [sdk, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node').then(commonJsExports),
    import('@opentelemetry/resources').then(commonJsExports),
  ]);
  const exporter = options.exporter ?? (await configuredExporter(config!));
  const { version: read } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version?: unknown };
  const version = typeof read === 'string' ? read : 'unknown';
  // OTEL_SERVICE_NAME wins, as the specification says; no host detector: in a container its `host.id` names no machine.
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
    async shutdown(): Promise<void> {
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
