// Logs, metrics and OpenTelemetry traces.
import { z } from 'zod';
import { httpOrigin, optional, setting, trueOrFalse, wholeNumber, type SettingDeclaration, type ValuesOf } from './declare.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** json: one JSON object per line (machines); pretty: readable coloured lines (people, src/logger.ts). */
export type LogFormat = 'json' | 'pretty';

export type TraceSampler =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

/** How OTLP spans are encoded over HTTP: protobuf (OpenTelemetry's default) or JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingConfig {
  exporter: 'otlp' | 'console';
  /** Where OTLP spans are posted (the exporter also reads OTEL_EXPORTER_OTLP_HEADERS itself). */
  otlpUrl: string | null;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL. */
  otlpProtocol: OtlpProtocol;
  serviceName: string;
  /** `deployment.environment.name` of every span (DEPLOYMENT_ENVIRONMENT). */
  deploymentEnvironment: string;
  resourceAttributes: Readonly<Record<string, string>>;
  sampler: TraceSampler;
  samplerRatio: number;
  /** Longest wait before finished spans are sent as a batch (a stop sends them at once). */
  batchDelayMs: number;
}

/** `key=value,key2=value2` (values percent-encoded), as OpenTelemetry's variables write them. */
function keyValueList(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        // Not percent-encoded after all: the text as written.
      }
      return [pair.slice(0, at).trim(), decoded];
    }),
  );
}

/** Traces are on when an exporter is chosen, or an OTLP endpoint is given, and the SDK is not disabled. */
export function tracingConfig(
  settings: Pick<
    ValuesOf<typeof TELEMETRY_SETTINGS>,
    | 'OTEL_SDK_DISABLED'
    | 'OTEL_TRACES_EXPORTER'
    | 'OTEL_EXPORTER_OTLP_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_PROTOCOL'
    | 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    | 'OTEL_SERVICE_NAME'
    | 'OTEL_RESOURCE_ATTRIBUTES'
    | 'OTEL_TRACES_SAMPLER'
    | 'OTEL_TRACES_SAMPLER_ARG'
    | 'OTEL_BSP_SCHEDULE_DELAY'
  >,
  deploymentEnvironment: string,
): TracingConfig | null {
  const otlpUrl =
    settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (settings.OTEL_EXPORTER_OTLP_ENDPOINT ? `${settings.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` : null);
  const exporter = settings.OTEL_TRACES_EXPORTER ?? (otlpUrl ? 'otlp' : 'none');
  if (settings.OTEL_SDK_DISABLED || exporter === 'none') return null;
  return {
    exporter,
    otlpUrl,
    otlpProtocol: settings.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? settings.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: settings.OTEL_SERVICE_NAME,
    deploymentEnvironment,
    resourceAttributes: keyValueList(settings.OTEL_RESOURCE_ATTRIBUTES),
    sampler: settings.OTEL_TRACES_SAMPLER,
    samplerRatio: settings.OTEL_TRACES_SAMPLER_ARG,
    batchDelayMs: settings.OTEL_BSP_SCHEDULE_DELAY,
  };
}

/** The OTLP protocols the service ships an exporter for: OTLP over HTTP, both encodings. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const satisfies readonly OtlpProtocol[];
const otlpProtocol = optional(
  z.enum(OTLP_PROTOCOLS, 'must be http/protobuf or http/json: OTLP over HTTP (grpc is not built in; collectors accept both on port 4318)'),
);

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[];

export const TELEMETRY_SETTINGS = {
  LOG_LEVEL: setting({
    schema: optional(z.enum(logLevels, `must be one of ${logLevels.join(', ')}`)),
    default: 'info',
    meaning: '`fatal` … `trace`, `silent`',
  }),
  LOG_FORMAT: setting({
    schema: optional(z.enum(['json', 'pretty'], 'must be json or pretty')),
    defaultInWords: '`pretty` in development mode on a terminal, else `json`',
    meaning:
      '`json`: one JSON object per line (pino), for log shippers; `pretty`: readable coloured lines (pino-pretty); see "Operating it"',
  }),
  METRICS_TOKEN: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[\x21-\x7e]{32,256}$/, 'must be 32 to 256 printable characters without spaces (e.g. openssl rand -hex 32)'),
    ),
    defaultInWords: 'none: `/metrics` answers 404',
    meaning:
      '32 to 256 printable characters (`openssl rand -hex 32`): `/metrics` answers Prometheus\' scrape with `Authorization: Bearer <token>`, 401 without it; see "Operating it"',
    confidential: true,
  }),
  OTEL_SDK_DISABLED: setting({
    schema: trueOrFalse,
    default: 'false',
    meaning: "`true` turns traces off whatever the other `OTEL_*` settings say (OpenTelemetry's standard switch)",
  }),
  OTEL_TRACES_EXPORTER: setting({
    schema: optional(z.enum(['otlp', 'console', 'none'], 'must be otlp, console or none')),
    defaultInWords: '`otlp` when an OTLP endpoint is set, else `none`',
    meaning:
      'where spans go: `otlp` (OTLP over HTTP, to the endpoint below, encoded as `OTEL_EXPORTER_OTLP_PROTOCOL` says), `console` (one object per span on standard output, for trying it) or `none` (no traces, and the OpenTelemetry SDK is not even loaded); see "Traces"',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting({
    schema: httpOrigin,
    defaultInWords: 'none',
    meaning:
      "the OTLP/HTTP collector's base URL (e.g. `http://otel-collector:4318`); spans are sent to `<it>/v1/traces`. Setting it turns traces on",
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting({
    schema: optional(z.string().trim().url('must be the full URL spans are posted to, e.g. http://otel-collector:4318/v1/traces')),
    defaultInWords: '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    meaning: "the full URL spans are posted to, when it is not the endpoint's `/v1/traces`. Setting it turns traces on",
  }),
  OTEL_EXPORTER_OTLP_HEADERS: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, 'must be name=value pairs separated by commas, e.g. authorization=Bearer%20abc'),
    ),
    defaultInWords: 'none',
    meaning:
      "headers sent with each export to the collector, as `name=value,name2=value2` (values percent-encoded), e.g. a vendor's API key",
    confidential: true,
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: setting({
    schema: otlpProtocol,
    default: 'http/protobuf',
    meaning:
      "how spans are encoded for the collector: `http/protobuf` (OpenTelemetry's default) or `http/json`, both OTLP over HTTP (collectors accept both on port 4318); `grpc` is not built in",
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: setting({
    schema: otlpProtocol,
    defaultInWords: '`OTEL_EXPORTER_OTLP_PROTOCOL`',
    meaning: "the same for traces alone (OpenTelemetry's per-signal variable), over `OTEL_EXPORTER_OTLP_PROTOCOL`",
  }),
  OTEL_SERVICE_NAME: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[\x21-\x7e]{1,100}$/, 'must be 1 to 100 printable characters without spaces'),
    ),
    default: 'dealership-gateway',
    meaning: 'the `service.name` of every span',
  }),
  OTEL_RESOURCE_ATTRIBUTES: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, 'must be key=value pairs separated by commas, e.g. deployment.environment=production'),
    ),
    defaultInWords: 'none',
    meaning:
      "more attributes of every span's resource, as `key=value,key2=value2` (e.g. `deployment.environment=production,service.instance.id=gw-1`)",
  }),
  DEPLOYMENT_ENVIRONMENT: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-", e.g. production or staging'),
    ),
    defaultInWords: '`production` with `NODE_ENV=production`, else `development`',
    meaning:
      'the `deployment.environment.name` of every span (production, staging…), so one tracing system can hold several deployments; see "Traces"',
  }),
  OTEL_TRACES_SAMPLER: setting({
    schema: optional(
      z.enum(
        ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'],
        'must be always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio',
      ),
    ),
    default: 'parentbased_always_on',
    meaning: "which requests are traced (OpenTelemetry's sampler names); `parentbased_*` follows the caller's `traceparent` decision",
  }),
  OTEL_TRACES_SAMPLER_ARG: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'must be a ratio from 0 to 1, e.g. 0.1')
        .transform(Number),
    ),
    default: '1',
    meaning: 'the ratio of traces kept by the `*traceidratio` samplers, from 0 to 1',
  }),
  OTEL_BSP_SCHEDULE_DELAY: setting({
    schema: wholeNumber(3_600_000),
    default: '5000',
    meaning: 'milliseconds finished spans wait to be sent together (one POST per batch); a stop sends the rest at once',
  }),
} as const satisfies Record<string, SettingDeclaration>;
