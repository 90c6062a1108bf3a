// OpenTelemetry traces: off unless an `OTEL_*` setting turns them on (src/config/settings.ts, docs/operations.md, "Traces").
// Off, nothing but @opentelemetry/api is loaded, and its tracer is a no-op: spans cost a function call.
// On, the SDK, the exporter and the W3C propagator are imported here, once, and registered globally,
// so that the request plugin (src/gateway/tracing-plugin.ts), the database adapters
// (src/db/traced-adapter.ts) and the outbox worker make their spans with the same `tracer`.
//
// Spans: one SERVER span per request (`GET /api/v1/cars/:id/performance.json`, `POST /graphql`), a
// child per GraphQL operation (the REST door runs one too), and a child of that per SQL statement.
// An incoming `traceparent` is the request span's parent; the answer carries the request span's
// `traceparent`; a notification queued by the request stores it and its e-mail carries it on.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  trace,
  type Context as TraceContext,
  type ContextManager,
  type Link,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
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

/**
 * OpenTelemetry's context on an AsyncLocalStorage, as its own async-hooks manager keeps it, plus
 * `enterWith`: Yoga's request hooks have no callback to run the rest of the request inside, so the
 * request span becomes the active one for the rest of the request's async chain (each request has its
 * own: an HTTP request event, a yoga.fetch call).
 */
class RequestContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<TraceContext>();

  active(): TraceContext {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: TraceContext,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(active, () => fn.apply(thisArg, args));
  }

  /** Functions only: nothing in this service binds event emitters to a context. */
  bind<T>(active: TraceContext, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    const bound = function (this: unknown, ...args: unknown[]) {
      return manager.with(active, () => (target as (...args: unknown[]) => unknown).apply(this, args));
    };
    return bound as T;
  }

  enterWith(active: TraceContext): void {
    this.#storage.enterWith(active);
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}

let contextManager: RequestContextManager | null = null;

/** Whether startTracing has registered the SDK: every tracing hook checks this first. */
export function isTracing(): boolean {
  return contextManager !== null;
}

/** Makes `active` the current trace context for the rest of the running request's work (see RequestContextManager). */
export function enterTraceContext(active: TraceContext): void {
  contextManager?.enterWith(active);
}

const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

/**
 * The trace context a request's headers carry (`traceparent`, `tracestate`). From the root, never
 * from the active context: the async chain a request arrives on may have carried an earlier request
 * (a keep-alive connection), and a request's only parent is the one its caller sends.
 */
export function contextFromHeaders(headers: Headers): TraceContext {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
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

/**
 * The W3C `traceparent` of the request being answered (its SERVER span, whichever span is active
 * below it), when it is traced: what a notification it queues is linked to.
 */
export function requestTraceparent(): string | null {
  const span = context.active().getValue(REQUEST_SPAN) as Span | undefined;
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

/** This process's `service.instance.id`: unique per process, as OpenTelemetry's resource conventions ask. */
const SERVICE_INSTANCE_ID = randomUUID();

/** The version in package.json (the image carries it beside dist/). */
function serviceVersion(): string {
  const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof version === 'string' ? version : 'unknown';
}

/**
 * The service's own resource attributes: OpenTelemetry's service attributes, then OTEL_RESOURCE_ATTRIBUTES
 * (which may set its own `service.instance.id`, a pod's name say), then OTEL_SERVICE_NAME, which wins
 * over a `service.name` there as the specification says.
 */
function resourceAttributes(config: TracingConfig | null, version: string): Record<string, string> {
  return {
    'service.version': version,
    'service.instance.id': SERVICE_INSTANCE_ID,
    'deployment.environment.name': config?.deploymentEnvironment ?? 'development',
    ...config?.resourceAttributes,
    'service.name': config?.serviceName ?? TRACER_NAME,
  };
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
    const { ConsoleSpanExporter } = commonJsExports(await import('@opentelemetry/sdk-trace'));
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
  const [sdk, { W3CTraceContextPropagator }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace').then(commonJsExports),
    import('@opentelemetry/core').then(commonJsExports),
    import('@opentelemetry/resources').then(commonJsExports),
  ]);
  // startTracing returned above unless there is a config or a test's exporter.
  const exporter = options.exporter ?? (await configuredExporter(config!));
  const version = serviceVersion();
  tracerVersion = version;
  // The SDK's own resource (`telemetry.sdk.*`) and its process detector (`process.runtime.*`, the pid),
  // under the service's attributes, which win where both name one (`service.name`). Not the host
  // detector: its `host.id` is read from a file after start, so every export would wait for it, and in
  // a container it names no machine (a pod is named through OTEL_RESOURCE_ATTRIBUTES).
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.processDetector] }))
    .merge(resources.resourceFromAttributes(resourceAttributes(config, version)));
  const ratio = config?.samplerRatio ?? 1;
  const samplers = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: () => new sdk.TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () => new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
  } as const;
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplers[config?.sampler ?? 'parentbased_always_on'](),
    // Batched for a real exporter (one POST per batch, off the requests' path); one by one for a test's.
    spanProcessors: [
      options.exporter
        ? new sdk.SimpleSpanProcessor({ exporter })
        : new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: config?.batchDelayMs }),
    ],
  });
  contextManager = new RequestContextManager();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    async shutdown() {
      try {
        await provider.forceFlush();
        await provider.shutdown();
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
        contextManager = null;
        tracerVersion = undefined;
      }
    },
  };
}
