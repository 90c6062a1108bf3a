// Every setting comes from the environment (or the .env file, src/env-file.ts) and is declared once
// below, in SETTINGS, with its check, default and meaning; docs/configuration.md's table and .env.example are
// generated from it. All of them are checked here, with zod, before anything starts: a bad start
// names every bad setting at once.
//
// Two modes. By default every secret and the public URL must be set (the service refuses to start
// without them). Development mode (APP_MODE=development, or `--dev` on the command line, which
// `npm start` uses for the demo) fills them with public development values and seeds demo data; the
// service logs a warning that it is not for production.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  DEFAULT_THIRD_PARTY_MARKETING_SOURCES,
  DEFAULT_THIRD_PARTY_SOURCES,
  leadSourceLists,
  type LeadSourceLists,
} from './domain/leads/values.ts';
import { DEVELOPMENT_KEY, keyringOf, parseEncryptionKeys, type Keyring } from './secrets.ts';

/** The nearest folder above `from` holding package.json: the same from src/ (tsx) and from dist/src/ (compiled). */
export function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const projectRoot = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

export type Engine = 'sqlite' | 'postgresql';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** json: one JSON object per line (machines); pretty: readable coloured lines (people, src/logger.ts). */
export type LogFormat = 'json' | 'pretty';
export type AppMode = 'production' | 'development';
/** Where lead attachments' bytes are kept (src/storage/file-storage.ts). */
export type FileStorageKind = 'local' | 'database' | 's3';
export const FILE_STORAGE_KINDS = ['local', 'database', 's3'] as const satisfies readonly FileStorageKind[];

/** The bucket of FILE_STORAGE=s3; credentials come from the AWS SDK's standard chain, not from here. */
export interface S3Settings {
  bucket: string;
  /** Put before every key (`gateway/` → `gateway/leads/2026/11/<uuid>`); empty for none. */
  keyPrefix: string;
  region: string;
  /** null: AWS's own endpoint for the region. */
  endpoint: string | null;
  /** Address the bucket in the path (`https://host/bucket/key`), as most self-hosted stores need. */
  forcePathStyle: boolean;
}

export type TraceSampler = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface TracingConfig {
  exporter: 'otlp' | 'console';
  /** Where OTLP spans are posted (the exporter also reads OTEL_EXPORTER_OTLP_HEADERS itself). */
  otlpUrl: string | null;
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
function tracingConfig(
  settings: Pick<Settings, 'OTEL_SDK_DISABLED' | 'OTEL_TRACES_EXPORTER' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME' | 'OTEL_RESOURCE_ATTRIBUTES' | 'OTEL_TRACES_SAMPLER' | 'OTEL_TRACES_SAMPLER_ARG' | 'OTEL_BSP_SCHEDULE_DELAY'>,
  deploymentEnvironment: string,
): TracingConfig | null {
  const otlpUrl = settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (settings.OTEL_EXPORTER_OTLP_ENDPOINT ? `${settings.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` : null);
  const exporter = settings.OTEL_TRACES_EXPORTER ?? (otlpUrl ? 'otlp' : 'none');
  if (settings.OTEL_SDK_DISABLED || exporter === 'none') return null;
  return {
    exporter,
    otlpUrl,
    serviceName: settings.OTEL_SERVICE_NAME,
    deploymentEnvironment,
    resourceAttributes: keyValueList(settings.OTEL_RESOURCE_ATTRIBUTES),
    sampler: settings.OTEL_TRACES_SAMPLER,
    samplerRatio: settings.OTEL_TRACES_SAMPLER_ARG,
    batchDelayMs: settings.OTEL_BSP_SCHEDULE_DELAY,
  };
}

export interface Config {
  /** development: public development values stand in for missing secrets (never for production). */
  mode: AppMode;
  /** The settings that fell back to a public development value (development mode only). */
  developmentDefaults: readonly string[];
  port: number;
  host: string;
  databaseUrl: string;
  engine: Engine;
  logLevel: LogLevel;
  /** LOG_FORMAT; unset: pretty in development mode on a terminal, else json. */
  logFormat: LogFormat;
  /** Bearer token that /metrics requires; null: /metrics answers 404, as if it did not exist. */
  metricsToken: string | null;
  /** OpenTelemetry traces (src/telemetry/tracing.ts); null: off, and the SDK is never loaded. */
  tracing: TracingConfig | null;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Largest body of a request that carries no key (no Authorization, no ?token=), in bytes. */
  anonymousBodyLimitBytes: number;
  /** Seed demo data when the database holds no dealership yet. */
  seedDemoData: boolean;
  /** This service's own public origin, used in URLs it hands out (the partner redirect_url). */
  publicUrl: string;
  /** Where the platform's pages live (the partner handoff lands there). */
  platformUrl: string;
  /** HMAC key for the short-lived session values handed to the platform; shared by all instances. */
  sessionSigningSecret: string;
  /** Encrypts secrets stored in the database (payment processors' authorization_key). */
  secretsKeyring: Keyring;
  /** smtp(s)://user:pass@host:port; null: notifications are written to the log instead of sent. */
  smtpUrl: string | null;
  mailFrom: string;
  /** API_CONTACT_EMAIL: the support address the OpenAPI document gives integrators; null leaves it out. */
  apiContactEmail: string | null;
  /** Which store keeps lead attachments: the database by default on PostgreSQL, the directory on SQLite. */
  fileStorage: FileStorageKind;
  /** The directory of FILE_STORAGE=local. */
  fileStorageDir: string;
  /** Pending lead files (stored, lead not committed) older than this have their bytes removed. */
  fileSweepGraceMs: number;
  /** The bucket of FILE_STORAGE=s3; null otherwise. */
  s3: S3Settings | null;
  /** PostgreSQL: the most connections one instance opens (its pg pool size). */
  databasePoolMax: number;
  /** The longest one statement may take (PostgreSQL) or wait for a lock (SQLite's busy timeout). */
  databaseStatementTimeoutMs: number;
  /** PostgreSQL: the longest a connection may take to open, or to be free in the pool. */
  databaseConnectTimeoutMs: number;
  /** Largest lead attachment, in bytes (decoded). */
  leadFileMaxBytes: number;
  /** The source and marketing_source values a lead may have (LEAD_EXTRA_SOURCES, LEAD_EXTRA_MARKETING_SOURCES). */
  leadSources: LeadSourceLists;
  /** After SIGTERM the process drains and exits within this long; open requests are cut just before. */
  shutdownGraceMs: number;
  /** redis://…; null: caches and key verdicts live in each instance's memory only. */
  redisUrl: string | null;
  /**
   * What every Redis key and channel of this deployment starts with (REDIS_KEY_PREFIX, or the deprecated
   * RATE_LIMIT_REDIS_PREFIX); null: the one recorded in the database (src/domain/shared-settings.ts).
   */
  redisKeyPrefix: string | null;
  /** How long one Redis command may take before it is given up on (and counts towards the breaker: src/redis/client.ts). */
  redisCommandTimeoutMs: number;
  /** How long a key's verdict is reused without asking the database (the bound on a revocation without Redis). */
  apiKeyCacheTtlMs: number;
  /** Serve repeated reads from the response cache (src/gateway/response-cache.ts). */
  responseCache: boolean;
  /** NODE_ENV=production: introspection needs `read:schema`, errors carry no field suggestions. */
  production: boolean;
  /** Serve GraphiQL (/graphql in a browser) and Swagger UI (/docs). */
  explorers: boolean;
  /** The highest estimated cost one GraphQL operation may have (src/schema/graphql-limits.ts). */
  graphqlMaxCost: number;
  /** Origins whose web pages may call the API (CORS): exact origins, or ['*'] for any; empty for none. */
  corsOrigins: readonly string[];
  /** A client must have sent a request's headers within this long, or its connection is cut (408). */
  httpHeadersTimeoutMs: number;
  /** ... and the whole request, body included, within this long. */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  httpKeepAliveTimeoutMs: number;
  /** Open connections beyond this many are closed as soon as they are accepted. */
  httpMaxConnections: number;
  /**
   * How long an outbox claim lasts without renewal: the sender renews it while it sends, so this is
   * how soon another instance retries a message whose sender died (src/notifications/worker.ts).
   */
  outboxLeaseMs: number;
  /** Pause between two outbox polling rounds. */
  outboxPollIntervalMs: number;
  /** How long an Idempotency-Key's answer is kept; after it, the key is free and old records are purged. */
  idempotencyTtlMs: number;
  /** How long the per-minute counts of each key's calls (`keys audit`) are kept before they are purged. */
  apiKeyCallsRetentionMs: number;
  /** Requests and GraphQL cost allowed per window (src/rate-limit/policy.ts); 0 turns a limit off. */
  rateLimits: RateLimitSettings;
  /**
   * How many reverse proxies stand in front of the service: the client address is the entry that
   * many hops back in X-Forwarded-For. 0: the socket's address, and X-Forwarded-For is ignored.
   */
  trustProxyHops: number;
}

export interface RateLimitSettings {
  /** The window of the per-key, per-dealership and cost limits. */
  windowMs: number;
  /** Requests one API key may make per window. */
  keyRequests: number;
  /** Requests all the keys of one dealership may make together per window. */
  dealershipRequests: number;
  /** Estimated GraphQL cost (src/schema/graphql-limits.ts) one key may spend per window, on both doors. */
  keyCost: number;
  /** The window of the per-client-address limits below. */
  addressWindowMs: number;
  /** Requests with a key that is not accepted, per client address per address window. */
  authFailures: number;
  /** Sign-on token redemptions per client address per address window. */
  signOnRedemptions: number;
  /** Requests without a key per client address per minute (ANONYMOUS_WINDOW_MS). */
  anonymousRequests: number;
}

/** The default of GRAPHQL_MAX_COST (src/schema/graphql-limits.ts explains the cost). */
export const DEFAULT_GRAPHQL_MAX_COST = 5_000;

/** Below this, a lease could end between two of its renewals on a busy machine. */
export const MIN_OUTBOX_LEASE_MS = 1_000;
const HOUR_MS = 3_600_000;
/** A year: records kept longer only grow the table, retries never come that late. */
const MAX_IDEMPOTENCY_TTL_HOURS = 8_760;
/** The longest API_KEY_CALLS_RETENTION_DAYS: ten years of per-minute counts is already far more than an audit needs. */
const MAX_API_KEY_CALLS_RETENTION_DAYS = 3_650;
const DAY_MS = 86_400_000;
const MIN_FILE_SWEEP_GRACE_MINUTES = 5;
const MAX_FILE_SWEEP_GRACE_MINUTES = 10_080;
/** The default of DATABASE_POOL_MAX: connections one instance may open to PostgreSQL. */
export const DEFAULT_DATABASE_POOL_MAX = 10;

// ─── reporting ───

export interface SettingProblem {
  /** The environment variable at fault. */
  setting: string;
  /** What is wrong and what to do, in words for the operator. */
  message: string;
}

/** One or more settings are wrong; the message lists every one of them. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(problems.map((problem) => `${problem.setting} ${problem.message}`).join('; '));
  }
}

function describeProblem(setting: SettingName, message: string, env: NodeJS.ProcessEnv): SettingProblem {
  const raw = env[setting];
  const confidential = (SETTINGS[setting] as SettingDeclaration).confidential === true;
  const got = raw !== undefined && raw !== '' && !confidential ? ` (got "${raw}")` : '';
  return { setting, message: `${message}${got}` };
}

// ─── the settings' environment text, as zod schemas ───

/** An empty variable counts as unset, as in most shells' `VAR= command`. */
const unsetIfEmpty = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(unsetIfEmpty, schema.optional());

const wholeNumber = (max = Number.MAX_SAFE_INTEGER) =>
  optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, `must be a whole number from 0 to ${max}`)
      .transform(Number)
      .refine((value) => value <= max, `must be a whole number from 0 to ${max}`),
  );

/** A whole number of `unit` from 1 to `max` (retention periods). */
const wholeNumberFrom1 = (max: number, unit: string) =>
  optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, `must be a whole number of ${unit} from 1 to ${max}`)
      .transform(Number)
      .refine((value) => value >= 1 && value <= max, `must be a whole number of ${unit} from 1 to ${max}`),
  );

const positiveWholeNumber = optional(
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number greater than 0')
    .transform(Number)
    .refine((value) => value > 0 && value <= Number.MAX_SAFE_INTEGER, 'must be a whole number greater than 0'),
);

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];
/** A Redis key prefix: printable ASCII without spaces, so it reads the same in every Redis tool. */
const redisKeyPrefix = z.string().trim().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable characters without spaces');

const trueOrFalse = optional(
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((value) => TRUE_WORDS.includes(value) || FALSE_WORDS.includes(value), 'must be true or false')
    .transform((value) => TRUE_WORDS.includes(value)),
);

const httpOrigin = optional(
  z
    .string()
    .trim()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an http:// or https:// URL, e.g. https://api.example.com')
    .transform((value) => value.replace(/\/+$/, '')),
);

/** A comma-separated list in which "" is a value (the empty list), not "unset". */
const commaList = z
  .string()
  .optional()
  .transform((value) => (value === undefined ? undefined : value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')));

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[];

/** The defaults of the rate limits (docs/rate-limits.md, "Rate limits"). */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  windowMs: 60_000,
  keyRequests: 600,
  dealershipRequests: 1_200,
  // Ten operations at the highest cost one may have (GRAPHQL_MAX_COST), or about 190 pages of 20 cars a minute.
  keyCost: 50_000,
  addressWindowMs: 300_000,
  authFailures: 20,
  signOnRedemptions: 20,
  // Two a second from one address: a person clicking car links, or a GraphiQL user, never comes close.
  anonymousRequests: 120,
};

/** The window of RATE_LIMIT_ANONYMOUS: per minute, as it is stated. */
export const ANONYMOUS_WINDOW_MS = 60_000;

/** The default of ANONYMOUS_BODY_LIMIT_BYTES: no keyless request (a GraphQL query, a redirect) needs more. */
export const DEFAULT_ANONYMOUS_BODY_LIMIT_BYTES = 16 * 1024;

// ─── the declaration: every setting, once ───
//
// Each setting is declared here with its check, its default and what it means; nothing else reads
// the environment (test/config.test.ts greps src/ for it). docs/configuration.md's Configuration table and
// .env.example are generated from this list (`npm run config:docs`; the test fails when they are
// stale). To add a setting: one entry below, its use in loadConfig, then `npm run config:docs`.

export interface SettingDeclaration {
  /** Checks the variable's text and converts it; accepts undefined (unset). */
  readonly schema: z.ZodType;
  /** One line for the operator: what the setting does (Markdown; docs/configuration.md and .env.example). */
  readonly meaning: string;
  /** The text used when the variable is unset or empty, checked by `schema` as if it had been set. */
  readonly default?: string;
  /** Development mode's default, where it differs from `default`. */
  readonly developmentDefault?: string;
  /** Outside development mode the service refuses to start without it; this says how to get a value. */
  readonly required?: string;
  /** The settings table's Default column where the default is not one value (it follows another setting). */
  readonly defaultInWords?: string;
  /** A value worth showing in .env.example where there is no default. */
  readonly example?: string;
  /** A secret, or a URL that can hold a password: never repeated in a message. */
  readonly confidential?: true;
  /** An empty value is a value (an empty list), not "unset". */
  readonly emptyIsAValue?: true;
}

/** Keeps each entry's own type (its schema's output, whether it has a default) for `Settings`. */
const setting = <const D extends SettingDeclaration>(declaration: D): D => declaration;

/** Development mode only: public, so the service refuses to use it outside development mode. */
const DEV_SIGNING_SECRET = 'dev-only-session-signing-secret-change-me';
export const SESSION_SIGNING_SECRET_MIN_LENGTH = 32;
const DEVELOPMENT_KEYS = `${DEVELOPMENT_KEY.id}:${DEVELOPMENT_KEY.key.toString('base64')}`;

export const SETTINGS = {
  APP_MODE: setting({
    schema: optional(z.enum(['production', 'development'], 'must be development or production (or unset)')),
    meaning: '`development` (or `--dev` on the command line) for the local demo; see "Production and development modes"',
    defaultInWords: 'production rules',
  }),
  NODE_ENV: setting({
    schema: optional(z.string()),
    meaning: '`production`: introspection needs `read:schema`, no name suggestions in errors, explorers off',
  }),
  ENV_FILE: setting({
    schema: optional(z.string().trim()),
    default: '.env',
    meaning: 'the file of settings read at start when it exists (relative to the project); `off` reads none; a variable already in the environment wins over the file',
  }),
  PORT: setting({ schema: wholeNumber(65_535), default: '4000', meaning: 'the TCP port the service listens on' }),
  HOST: setting({ schema: optional(z.string().trim()), default: '0.0.0.0', meaning: 'the address the service listens on (`0.0.0.0`: every interface)' }),
  DATABASE_URL: setting({
    schema: optional(
      z.string().trim().superRefine((value, context) => {
        const problem = databaseUrlProblem(value);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    ),
    default: 'file:./data/dealership.db',
    meaning: '`file:` for SQLite (relative to the project), `postgresql://…` for PostgreSQL',
    confidential: true,
  }),
  LOG_LEVEL: setting({
    schema: optional(z.enum(logLevels, `must be one of ${logLevels.join(', ')}`)),
    default: 'info',
    meaning: '`fatal` … `trace`, `silent`',
  }),
  LOG_FORMAT: setting({
    schema: optional(z.enum(['json', 'pretty'], 'must be json or pretty')),
    defaultInWords: '`pretty` in development mode on a terminal, else `json`',
    meaning: '`json`: one JSON object per line (pino), for log shippers; `pretty`: readable coloured lines (pino-pretty); see "Operating it"',
  }),
  METRICS_TOKEN: setting({
    schema: optional(z.string().trim().regex(/^[\x21-\x7e]{32,256}$/, 'must be 32 to 256 printable characters without spaces (e.g. openssl rand -hex 32)')),
    defaultInWords: 'none: `/metrics` answers 404',
    meaning: '32 to 256 printable characters (`openssl rand -hex 32`): `/metrics` answers Prometheus\' scrape with `Authorization: Bearer <token>`, 401 without it; see "Operating it"',
    confidential: true,
  }),
  OTEL_SDK_DISABLED: setting({
    schema: trueOrFalse,
    default: 'false',
    meaning: '`true` turns traces off whatever the other `OTEL_*` settings say (OpenTelemetry\'s standard switch)',
  }),
  OTEL_TRACES_EXPORTER: setting({
    schema: optional(z.enum(['otlp', 'console', 'none'], 'must be otlp, console or none')),
    defaultInWords: '`otlp` when an OTLP endpoint is set, else `none`',
    meaning: 'where spans go: `otlp` (OTLP over HTTP with JSON, to the endpoint below), `console` (one object per span on standard output, for trying it) or `none` (no traces, and the OpenTelemetry SDK is not even loaded); see "Traces"',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting({
    schema: httpOrigin,
    defaultInWords: 'none',
    meaning: 'the OTLP/HTTP collector\'s base URL (e.g. `http://otel-collector:4318`); spans are sent to `<it>/v1/traces`. Setting it turns traces on',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting({
    schema: optional(z.string().trim().url('must be the full URL spans are posted to, e.g. http://otel-collector:4318/v1/traces')),
    defaultInWords: '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    meaning: 'the full URL spans are posted to, when it is not the endpoint\'s `/v1/traces`. Setting it turns traces on',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: setting({
    schema: optional(z.string().trim().regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, 'must be name=value pairs separated by commas, e.g. authorization=Bearer%20abc')),
    defaultInWords: 'none',
    meaning: 'headers sent with each export to the collector, as `name=value,name2=value2` (values percent-encoded), e.g. a vendor\'s API key',
    confidential: true,
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: setting({
    schema: optional(z.enum(['http/json'], 'must be http/json: the service ships the OTLP/HTTP JSON exporter only (collectors accept it on port 4318)')),
    default: 'http/json',
    meaning: 'the OTLP protocol: `http/json` (the only one built in)',
  }),
  OTEL_SERVICE_NAME: setting({
    schema: optional(z.string().trim().regex(/^[\x21-\x7e]{1,100}$/, 'must be 1 to 100 printable characters without spaces')),
    default: 'dealership-gateway',
    meaning: 'the `service.name` of every span',
  }),
  OTEL_RESOURCE_ATTRIBUTES: setting({
    schema: optional(z.string().trim().regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, 'must be key=value pairs separated by commas, e.g. deployment.environment=production')),
    defaultInWords: 'none',
    meaning: 'more attributes of every span\'s resource, as `key=value,key2=value2` (e.g. `deployment.environment=production,service.instance.id=gw-1`)',
  }),
  DEPLOYMENT_ENVIRONMENT: setting({
    schema: optional(z.string().trim().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-", e.g. production or staging')),
    defaultInWords: '`production` with `NODE_ENV=production`, else `development`',
    meaning: 'the `deployment.environment.name` of every span (production, staging…), so one tracing system can hold several deployments; see "Traces"',
  }),
  OTEL_TRACES_SAMPLER: setting({
    schema: optional(
      z.enum(
        ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'],
        'must be always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio',
      ),
    ),
    default: 'parentbased_always_on',
    meaning: 'which requests are traced (OpenTelemetry\'s sampler names); `parentbased_*` follows the caller\'s `traceparent` decision',
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
  SEED_DEMO_DATA: setting({
    schema: trueOrFalse,
    default: 'false',
    developmentDefault: 'true',
    meaning: 'seed the demo data when the database has no dealership',
  }),
  BODY_LIMIT_BYTES: setting({
    schema: wholeNumber(),
    default: String(10 * 1024 * 1024),
    meaning: 'largest request body, in bytes (10 MiB: attachments travel base64 in JSON)',
  }),
  ANONYMOUS_BODY_LIMIT_BYTES: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_ANONYMOUS_BODY_LIMIT_BYTES),
    meaning:
      'largest body of a request without an API key (no `Authorization`, no `?token=`), in bytes: refused 413 before it is read or parsed; the smaller of this and `BODY_LIMIT_BYTES` applies',
  }),
  LEAD_FILE_MAX_BYTES: setting({ schema: wholeNumber(), default: String(5 * 1024 * 1024), meaning: 'largest lead attachment, in bytes (decoded)' }),
  FILE_STORAGE: setting({
    schema: optional(z.enum(FILE_STORAGE_KINDS, `must be one of ${FILE_STORAGE_KINDS.join(', ')}`)),
    defaultInWords: '`database` on PostgreSQL, `local` on SQLite',
    meaning:
      'where lead attachments\' bytes are kept: `database` (the `stored_files` table), `s3` (a bucket, see below) or `local` (`FILE_STORAGE_DIR`); see "Several instances"',
  }),
  FILE_STORAGE_DIR: setting({ schema: optional(z.string().trim()), default: 'data/files', meaning: 'the directory of `FILE_STORAGE=local` (relative to the project)' }),
  // At least a few minutes: a lead's files are stored a moment before its transaction (at most 45 s) commits them.
  FILE_SWEEP_GRACE_MINUTES: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^\d+$/, `must be a whole number of minutes from ${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}`)
        .transform(Number)
        .refine(
          (value) => value >= MIN_FILE_SWEEP_GRACE_MINUTES && value <= MAX_FILE_SWEEP_GRACE_MINUTES,
          `must be a whole number of minutes from ${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}`,
        ),
    ),
    default: '60',
    meaning: `attachment bytes a process killed between storing them and committing their lead left behind are removed once stored longer ago than this (${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}), by one instance at a time, hourly; see "Several instances"`,
  }),
  S3_BUCKET: setting({
    schema: optional(
      z.string().trim().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens'),
    ),
    defaultInWords: '**required** with `FILE_STORAGE=s3`',
    meaning: 'the bucket that keeps attachments',
  }),
  S3_REGION: setting({
    schema: optional(z.string().trim().regex(/^[a-z0-9-]{1,64}$/, 'must be a region name such as eu-west-1')),
    defaultInWords: '`AWS_REGION`, else `us-east-1`',
    meaning: 'the bucket\'s region',
  }),
  AWS_REGION: setting({ schema: optional(z.string().trim()), meaning: 'the AWS SDK\'s own region setting; `S3_REGION` falls back to it' }),
  S3_ENDPOINT: setting({
    schema: httpOrigin,
    defaultInWords: 'AWS\'s endpoint for the region',
    meaning: 'an S3-compatible store\'s URL, e.g. `https://minio.internal:9000`',
  }),
  S3_FORCE_PATH_STYLE: setting({
    schema: trueOrFalse,
    default: 'false',
    meaning: '`true`: the bucket in the path (`https://host/bucket/key`), as most self-hosted stores need',
  }),
  S3_KEY_PREFIX: setting({
    schema: optional(
      z.string().trim().max(200, 'must be at most 200 characters').regex(/^[A-Za-z0-9._\/-]+$/, 'may hold only letters, digits, ".", "_", "-" and "/"'),
    ),
    meaning: 'put before every object key (`gateway/` → `gateway/leads/2026/11/<uuid>`)',
  }),
  DATABASE_POOL_MAX: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^\d+$/, 'must be a whole number from 1 to 1000')
        .transform(Number)
        .refine((value) => value >= 1 && value <= 1_000, 'must be a whole number from 1 to 1000'),
    ),
    // pg's own default; see docs/operations.md ("PostgreSQL, Connections") for sizing it against max_connections.
    default: String(DEFAULT_DATABASE_POOL_MAX),
    meaning: 'PostgreSQL: the most connections one instance opens (1 to 1000); see "Several instances"',
  }),
  // A database that does not answer is answered 503 within these, never left to hang a request (docs/errors.md, "Errors").
  DATABASE_STATEMENT_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '5000',
    meaning:
      'the longest one SQL statement may take before the request is answered 503 `unavailable`: PostgreSQL cancels it (`statement_timeout`) and the service gives up on a server that does not answer; SQLite waits this long for a lock another process holds (busy timeout)',
  }),
  CLI_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '30000',
    meaning:
      'the CLIs (`keys`, `outbox`, `secrets`, `db:migrate`, `db:seed`) end with one line and exit code 1 when the database or Redis has not let them finish within this long; on SQLite they wait up to this long for a write lock another process holds',
  }),
  DATABASE_CONNECT_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '2000',
    meaning: 'PostgreSQL: the longest the service waits to open a connection, or for a free one of its pool, before answering 503 `unavailable`',
  }),
  PUBLIC_URL: setting({
    schema: httpOrigin,
    required: "set it to this service's public origin, e.g. https://api.example.com",
    defaultInWords: '**required**; development: `http://localhost:$PORT`',
    meaning: 'this service\'s public origin, `http(s)://…` (the partner `redirect_url`)',
    example: 'https://api.example.com',
  }),
  PLATFORM_URL: setting({ schema: httpOrigin, default: 'http://localhost:3000', meaning: 'where the platform\'s pages live: the sign-on handoff lands there' }),
  SESSION_SIGNING_SECRET: setting({
    schema: optional(
      z.string().min(SESSION_SIGNING_SECRET_MIN_LENGTH, `must be at least ${SESSION_SIGNING_SECRET_MIN_LENGTH} characters (e.g. openssl rand -base64 48)`),
    ),
    required: `set it to a random value of ${SESSION_SIGNING_SECRET_MIN_LENGTH}+ characters, shared by all instances (e.g. openssl rand -base64 48)`,
    developmentDefault: DEV_SIGNING_SECRET,
    defaultInWords: `**required** (${SESSION_SIGNING_SECRET_MIN_LENGTH}+ characters); development: a public value`,
    meaning: 'signs the handoff session (HS256); the same on every instance',
    confidential: true,
  }),
  SECRETS_ENCRYPTION_KEYS: setting({
    schema: optional(
      z.string().transform((value, context) => {
        const parsed = parseEncryptionKeys(value);
        if ('problems' in parsed) {
          for (const message of parsed.problems) context.addIssue({ code: 'custom', message });
          return z.NEVER;
        }
        return keyringOf(parsed.keys);
      }),
    ),
    required: 'set it to <key id>:<base64 32-byte key>; make one with: npm run --silent secrets -- new-key',
    developmentDefault: DEVELOPMENT_KEYS,
    defaultInWords: '**required**; development: a public key `dev`',
    meaning: '`id:base64key,…` (32-byte keys): encrypts secrets stored in the database; the first encrypts, all decrypt',
    confidential: true,
  }),
  SMTP_URL: setting({
    schema: optional(z.string().trim().refine((value) => /^smtps?:\/\/[^/\s]/.test(value), 'must be smtp://user:pass@host:port or smtps://…')),
    defaultInWords: 'none: notifications are logged',
    meaning: 'the mail server notifications are sent through, `smtp://user:pass@host:587` or `smtps://…`',
    confidential: true,
  }),
  MAIL_FROM: setting({ schema: optional(z.string().trim()), default: 'Dealership Platform <no-reply@dealership.local>', meaning: 'sender of notifications' }),
  LEAD_EXTRA_SOURCES: setting({
    schema: commaList,
    default: DEFAULT_THIRD_PARTY_SOURCES.join(','),
    defaultInWords: 'the Australian listing and social channels in "Decisions where the spec is silent", Leads',
    meaning: 'comma-separated third-party lead sources; they replace the default list (`""` for none)',
    emptyIsAValue: true,
  }),
  LEAD_EXTRA_MARKETING_SOURCES: setting({
    schema: commaList,
    default: DEFAULT_THIRD_PARTY_MARKETING_SOURCES.join(','),
    defaultInWords: 'the paid and social channels in "Decisions where the spec is silent", Leads',
    meaning: 'comma-separated third-party marketing sources; they replace the default list (`""` for none)',
    emptyIsAValue: true,
  }),
  API_CONTACT_EMAIL: setting({
    schema: optional(z.string().trim().email('must be an e-mail address (api-support@example.com)')),
    meaning: 'the support address the OpenAPI document gives integrators (its `info.contact`, beside the `/docs` page)',
  }),
  SHUTDOWN_GRACE_MS: setting({
    schema: positiveWholeNumber,
    default: '10000',
    meaning: 'after SIGTERM (or SIGINT) the process exits 0 within this long; see "Stopping" below',
  }),
  // Node's own defaults (60 s for headers, 300 s per request) let a slow client hold a connection for minutes.
  HTTP_HEADERS_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '10000',
    meaning: 'a client must send a request\'s headers within this long, else 408 and the connection is closed',
  }),
  HTTP_REQUEST_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '30000',
    meaning: '… and the whole request, body included, within this long (at least the headers timeout)',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: setting({ schema: positiveWholeNumber, default: '5000', meaning: 'an idle keep-alive connection is closed after this long' }),
  HTTP_MAX_CONNECTIONS: setting({
    schema: positiveWholeNumber,
    default: '1000',
    meaning: 'connections beyond this many open at once are closed as soon as they arrive (logged)',
  }),
  REDIS_URL: setting({
    schema: optional(z.string().trim().refine((value) => /^rediss?:\/\/[^/\s]/.test(value), 'must be redis://host:6379 or rediss://…')),
    meaning:
      '`redis://host:6379`: instances share key changes, caches (see "Caching") and rate-limit budgets (see "Rate limits") through it; while Redis is down the service serves from its own memory and logs it',
    confidential: true,
  }),
  REDIS_COMMAND_TIMEOUT_MS: setting({
    schema: wholeNumberFrom1(10_000, 'milliseconds'),
    default: '100',
    meaning:
      'how long one Redis command may take; a command that takes longer is given up on (the request is answered from memory: cache bypassed, rate limits counted in this instance), and after a few in a row Redis is not asked at all for a second (the breaker), then asked again',
  }),
  REDIS_KEY_PREFIX: setting({
    schema: optional(redisKeyPrefix),
    meaning:
      'what every Redis key and channel of this deployment starts with (cache entries and generations, rate limits, key changes); by default `dgw:<id>:`, where the id is made once and kept in the database, so instances of one database share their keys and deployments of different databases on one Redis never meet',
  }),
  RESPONSE_CACHE: setting({ schema: trueOrFalse, default: 'true', meaning: 'serve repeated reads from the response cache (see "Caching")' }),
  API_KEY_CACHE_TTL_MS: setting({
    schema: wholeNumber(),
    default: '5000',
    meaning: 'how long an instance reuses a key\'s verdict; the bound on a revocation being seen without Redis (`0` asks the database every time)',
  }),
  EXPLORERS: setting({
    schema: trueOrFalse,
    defaultInWords: '`on` unless `NODE_ENV=production`',
    meaning: 'serve GraphiQL (`/graphql` in a browser) and Swagger UI (`/docs`)',
  }),
  GRAPHQL_MAX_COST: setting({
    schema: positiveWholeNumber,
    default: String(DEFAULT_GRAPHQL_MAX_COST),
    meaning: 'the highest estimated cost one GraphQL operation may have (see GraphQL, Limits)',
  }),
  OUTBOX_LEASE_MS: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^\d+$/, `must be a whole number of milliseconds, at least ${MIN_OUTBOX_LEASE_MS}`)
        .transform(Number)
        .refine((value) => value >= MIN_OUTBOX_LEASE_MS && value <= Number.MAX_SAFE_INTEGER, `must be a whole number of milliseconds, at least ${MIN_OUTBOX_LEASE_MS}`),
    ),
    default: '120000',
    meaning: `how long a notification's claim lasts unless its sender renews it (it does while sending): how soon another instance retries a message whose sender died; at least ${MIN_OUTBOX_LEASE_MS}`,
  }),
  OUTBOX_POLL_INTERVAL_MS: setting({ schema: positiveWholeNumber, default: '5000', meaning: 'pause between two rounds of the outbox worker' }),
  IDEMPOTENCY_TTL_HOURS: setting({
    schema: wholeNumberFrom1(MAX_IDEMPOTENCY_TTL_HOURS, 'hours'),
    default: '24',
    meaning: `how long an \`Idempotency-Key\`'s answer is kept (1 to ${MAX_IDEMPOTENCY_TTL_HOURS}); later, the key is free and the record is purged`,
  }),
  API_KEY_CALLS_RETENTION_DAYS: setting({
    schema: wholeNumberFrom1(MAX_API_KEY_CALLS_RETENTION_DAYS, 'days'),
    default: '30',
    meaning: `how long the per-minute counts of each key's calls (\`npm run keys -- audit\`) are kept before they are purged (1 to ${MAX_API_KEY_CALLS_RETENTION_DAYS})`,
  }),
  CORS_ORIGINS: setting({
    schema: optional(
      z.string().transform((value, context) => {
        const parsed = parseCorsOrigins(value);
        if ('problem' in parsed) {
          context.addIssue({ code: 'custom', message: parsed.problem });
          return z.NEVER;
        }
        return parsed.origins;
      }),
    ),
    meaning: 'comma-separated origins (`https://shop.example.com`) whose web pages may call the API, or `*` for any',
  }),
  RATE_LIMIT_WINDOW_SECONDS: setting({
    schema: positiveWholeNumber,
    default: String(DEFAULT_RATE_LIMITS.windowMs / 1_000),
    meaning: 'the window of the per-key, per-dealership and cost limits (see "Rate limits")',
  }),
  RATE_LIMIT_KEY_REQUESTS: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.keyRequests),
    meaning: 'operations one API key may run per window; `0`: no limit',
  }),
  RATE_LIMIT_DEALERSHIP_REQUESTS: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.dealershipRequests),
    meaning: 'operations all the keys of one dealership may run together per window; `0`: no limit',
  }),
  RATE_LIMIT_KEY_COST: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.keyCost),
    meaning: 'estimated GraphQL cost one key may spend per window, on both doors; at least `GRAPHQL_MAX_COST`, or `0`: no budget',
  }),
  RATE_LIMIT_ADDRESS_WINDOW_SECONDS: setting({
    schema: positiveWholeNumber,
    default: String(DEFAULT_RATE_LIMITS.addressWindowMs / 1_000),
    meaning: 'the window of the two per-address limits below',
  }),
  RATE_LIMIT_AUTH_FAILURES: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.authFailures),
    meaning: 'requests with a key that is not accepted, per client address per window; beyond it, requests with a key from that address are 429; `0`: no limit',
  }),
  RATE_LIMIT_SIGN_ON: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.signOnRedemptions),
    meaning: 'partner sign-on token redemptions per client address per window; `0`: no limit',
  }),
  RATE_LIMIT_ANONYMOUS: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.anonymousRequests),
    meaning:
      'requests without an API key (the public redirect, the partner sign-on handoff, GraphQL without a key) per client address per minute; beyond it they are 429; `0`: no limit',
  }),
  RATE_LIMIT_REDIS_PREFIX: setting({
    schema: optional(redisKeyPrefix),
    meaning: '**deprecated** (removal after 2027-06-30): use `REDIS_KEY_PREFIX`, which this is taken as when that is not set',
  }),
  TRUST_PROXY: setting({
    schema: wholeNumber(10),
    default: '0',
    meaning:
      'how many reverse proxies stand in front: the client address is read that many entries from the right of `X-Forwarded-For`; `0` uses the connection\'s address and ignores the header',
  }),
} as const satisfies Record<string, SettingDeclaration>;

export type SettingName = keyof typeof SETTINGS;
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** A setting's value once checked: never undefined when it has a default in every mode. */
type ValueOf<D extends SettingDeclaration> = D extends { readonly default: string } | { readonly required: string; readonly developmentDefault: string }
  ? Exclude<z.output<D['schema']>, undefined>
  : z.output<D['schema']>;
type Settings = { [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };

const DEVELOPMENT_MODE_HINT = ' (or start in development mode, APP_MODE=development or --dev, for a local demo only)';

/** The mode a start runs in; a bad APP_MODE is reported with the other settings (and means production meanwhile). */
function modeOf(env: NodeJS.ProcessEnv): AppMode {
  return env.APP_MODE?.trim() === 'development' ? 'development' : 'production';
}

/** The text a setting is checked from: the variable, else the default of the mode. */
function textOf(name: SettingName, env: NodeJS.ProcessEnv, mode: AppMode): string | undefined {
  const declaration: SettingDeclaration = SETTINGS[name];
  const raw = env[name];
  const given = declaration.emptyIsAValue ? raw : (unsetIfEmpty(raw) as string | undefined);
  if (given !== undefined) return given;
  return (mode === 'development' ? declaration.developmentDefault : undefined) ?? declaration.default;
}

interface SettingsRead<K extends SettingName> {
  mode: AppMode;
  /** The settings that were checked without a problem. */
  settings: Partial<Pick<Settings, K>>;
  problems: SettingProblem[];
  /** The required settings development mode filled with a public value. */
  developmentDefaults: string[];
}

/** Checks the chosen settings one by one, so that every problem is found, and the mode rules. */
function readSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): SettingsRead<K> {
  const mode = modeOf(env);
  const settings: Partial<Record<SettingName, unknown>> = {};
  const problems: SettingProblem[] = [];
  const developmentDefaults: string[] = [];
  const chosen = SETTING_NAMES.filter((name) => name === 'APP_MODE' || name === 'NODE_ENV' || (names as readonly SettingName[]).includes(name));
  for (const name of chosen) {
    const declaration: SettingDeclaration = SETTINGS[name];
    if (declaration.required !== undefined && unsetIfEmpty(env[name]) === undefined) {
      if (mode === 'production') {
        problems.push({ setting: name, message: `is required: ${declaration.required}${DEVELOPMENT_MODE_HINT}` });
        continue;
      }
      developmentDefaults.push(name);
    }
    const result = declaration.schema.safeParse(textOf(name, env, mode));
    if (result.success) settings[name] = result.data;
    else for (const issue of result.error.issues) problems.push(describeProblem(name, issue.message, env));
  }
  if (mode === 'development' && env.NODE_ENV === 'production') {
    problems.push({ setting: 'APP_MODE', message: 'development cannot be combined with NODE_ENV=production: remove one of them' });
  }
  // Each value is its own declaration's schema output, which is what Settings says of it.
  return { mode, settings: settings as Partial<Pick<Settings, K>>, problems, developmentDefaults };
}

/** The chosen settings, checked; throws one ConfigError listing every problem. */
function parseSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): Pick<Settings, K> & { mode: AppMode } {
  const read = readSettings(env, names);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  // No problem: every chosen setting was checked and holds its value (or its default).
  return { ...(read.settings as Pick<Settings, K>), mode: read.mode };
}

/** The environment of this process, with `--dev` on the command line meaning APP_MODE=development. */
export function processEnvironment(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return argv.slice(2).includes('--dev') ? { ...env, APP_MODE: 'development' } : env;
}

// ─── database URLs ───

function databaseUrlProblem(value: string): string | null {
  if (value.startsWith('file:')) return value.length > 'file:'.length ? null : 'must name a file after file:, e.g. file:./data/dealership.db';
  if (!/^postgres(ql)?:\/\//.test(value)) {
    return 'must start with file: (SQLite, e.g. file:./data/dealership.db) or postgresql:// (PostgreSQL, e.g. postgresql://user@host:5432/dealership)';
  }
  try {
    const url = new URL(value);
    if (url.hostname === '') return 'must name a host, e.g. postgresql://user@host:5432/dealership';
    if (url.pathname.length <= 1) return 'must name a database, e.g. postgresql://user@host:5432/dealership';
    return null;
  } catch {
    return 'is not a valid URL: check for characters that need %-encoding in the password';
  }
}

export function engineOf(databaseUrl: string): Engine {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return 'postgresql';
  if (databaseUrl.startsWith('file:')) return 'sqlite';
  throw new Error('DATABASE_URL must start with file: (SQLite) or postgresql:// (PostgreSQL)');
}

/** Turns a file: URL into a path; relative paths are relative to the project, not the cwd. */
export function sqlitePath(databaseUrl: string): string {
  const file = databaseUrl.slice('file:'.length);
  if (file === ':memory:') return file;
  return path.isAbsolute(file) ? file : path.join(projectRoot, file);
}

/** Where a database URL points, without its password: safe for logs. */
export function describeDatabase(databaseUrl: string): string {
  if (engineOf(databaseUrl) === 'sqlite') return sqlitePath(databaseUrl);
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

/**
 * CORS_ORIGINS: comma-separated origins (`https://shop.example.com`), or `*`. Each must be a bare
 * http(s) origin, written as browsers send it in `Origin`, so the comparison is exact; `null` (sent by
 * sandboxed frames and files) is refused, since any page can make its requests carry it.
 */
function parseCorsOrigins(value: string): { origins: string[] } | { problem: string } {
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.includes('*')) return entries.length > 1 ? { problem: 'must be * alone or a list of origins, not both' } : { origins: ['*'] };
  const origins: string[] = [];
  for (const entry of entries) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
      return { problem: `must list origins such as https://shop.example.com (scheme, host and port only), not "${entry}"` };
    }
    origins.push(url.origin);
  }
  return { origins };
}

// ─── loaders ───

/** What the database tools (migrations, the keys CLI) need: DATABASE_URL, and REDIS_URL to announce key changes. */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine' | 'redisUrl' | 'redisKeyPrefix'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX', 'RATE_LIMIT_REDIS_PREFIX']);
  return {
    databaseUrl: settings.DATABASE_URL,
    engine: engineOf(settings.DATABASE_URL),
    redisUrl: settings.REDIS_URL ?? null,
    redisKeyPrefix: settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null,
  };
}

/** CLI_TIMEOUT_MS: how long a CLI may take before it ends with one line and exit code 1. */
export function loadCliTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return parseSettings(env, ['CLI_TIMEOUT_MS']).CLI_TIMEOUT_MS;
}

/** What the secrets CLI needs: the database and the encryption keys. */
export function loadSecretsConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine' | 'mode' | 'secretsKeyring'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'SECRETS_ENCRYPTION_KEYS']);
  return { databaseUrl: settings.DATABASE_URL, engine: engineOf(settings.DATABASE_URL), mode: settings.mode, secretsKeyring: settings.SECRETS_ENCRYPTION_KEYS };
}

/** What `secrets record-session-secret` needs: the database and the session signing secret. */
export function loadSessionSecretConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine' | 'sessionSigningSecret'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'SESSION_SIGNING_SECRET']);
  return { databaseUrl: settings.DATABASE_URL, engine: engineOf(settings.DATABASE_URL), sessionSigningSecret: settings.SESSION_SIGNING_SECRET };
}

/**
 * The rules between settings, checked on those that are themselves valid, so that they are reported
 * together with every other problem.
 */
function problemsBetweenSettings(settings: Partial<Settings>): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const { HTTP_HEADERS_TIMEOUT_MS: headers, HTTP_REQUEST_TIMEOUT_MS: request, GRAPHQL_MAX_COST: maxCost, RATE_LIMIT_KEY_COST: keyCost } = settings;
  if (headers !== undefined && request !== undefined && headers > request) {
    problems.push({ setting: 'HTTP_HEADERS_TIMEOUT_MS', message: 'must not be greater than HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)' });
  }
  if (settings.FILE_STORAGE === 's3' && settings.S3_BUCKET === undefined) {
    problems.push({ setting: 'S3_BUCKET', message: 'is required with FILE_STORAGE=s3: set it to the bucket that keeps lead attachments' });
  }
  // A budget below the cost of one allowed operation would refuse that operation forever.
  if (keyCost !== undefined && maxCost !== undefined && keyCost !== 0 && keyCost < maxCost) {
    problems.push({
      setting: 'RATE_LIMIT_KEY_COST',
      message: `must be 0 (no budget) or at least GRAPHQL_MAX_COST (${maxCost}), the cost one operation may have (got "${keyCost}")`,
    });
  }
  return problems;
}

/** Every setting, checked; throws a ConfigError naming each bad or missing one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = readSettings(env, SETTING_NAMES);
  const problems = [...read.problems, ...problemsBetweenSettings(read.settings)];
  if (problems.length > 0) throw new ConfigError(problems);
  // No problem: every setting was checked and holds its value (or its default).
  const settings = read.settings as Settings;
  const { mode, developmentDefaults } = read;
  const port = settings.PORT;
  const engine = engineOf(settings.DATABASE_URL);
  // Several instances share a PostgreSQL database, so there the files go where all of them read;
  // a SQLite file belongs to one process, and so may its files' directory.
  const fileStorage: FileStorageKind = settings.FILE_STORAGE ?? (engine === 'postgresql' ? 'database' : 'local');
  let s3: S3Settings | null = null;
  if (fileStorage === 's3' && settings.S3_BUCKET !== undefined) {
    const keyPrefix = settings.S3_KEY_PREFIX ?? '';
    s3 = {
      bucket: settings.S3_BUCKET,
      keyPrefix: keyPrefix === '' || keyPrefix.endsWith('/') ? keyPrefix : `${keyPrefix}/`,
      region: settings.S3_REGION ?? settings.AWS_REGION ?? 'us-east-1',
      endpoint: settings.S3_ENDPOINT ?? null,
      forcePathStyle: settings.S3_FORCE_PATH_STYLE,
    };
  }
  return {
    mode,
    developmentDefaults,
    port,
    host: settings.HOST,
    databaseUrl: settings.DATABASE_URL,
    engine,
    logLevel: settings.LOG_LEVEL,
    // Readable lines are for a person at a terminal running the demo; anything else gets JSON.
    logFormat: settings.LOG_FORMAT ?? (mode === 'development' && process.stdout.isTTY === true ? 'pretty' : 'json'),
    metricsToken: settings.METRICS_TOKEN ?? null,
    tracing: tracingConfig(settings, settings.DEPLOYMENT_ENVIRONMENT ?? (settings.NODE_ENV === 'production' ? 'production' : 'development')),
    bodyLimitBytes: settings.BODY_LIMIT_BYTES,
    anonymousBodyLimitBytes: settings.ANONYMOUS_BODY_LIMIT_BYTES,
    seedDemoData: settings.SEED_DEMO_DATA,
    // readSettings has refused a missing PUBLIC_URL outside development mode.
    publicUrl: settings.PUBLIC_URL ?? `http://localhost:${port}`,
    platformUrl: settings.PLATFORM_URL,
    sessionSigningSecret: settings.SESSION_SIGNING_SECRET,
    secretsKeyring: settings.SECRETS_ENCRYPTION_KEYS,
    smtpUrl: settings.SMTP_URL ?? null,
    mailFrom: settings.MAIL_FROM,
    fileStorage,
    apiContactEmail: settings.API_CONTACT_EMAIL ?? null,
    fileStorageDir: path.resolve(projectRoot, settings.FILE_STORAGE_DIR),
    fileSweepGraceMs: settings.FILE_SWEEP_GRACE_MINUTES * 60_000,
    s3,
    databasePoolMax: settings.DATABASE_POOL_MAX,
    databaseStatementTimeoutMs: settings.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseConnectTimeoutMs: settings.DATABASE_CONNECT_TIMEOUT_MS,
    leadFileMaxBytes: settings.LEAD_FILE_MAX_BYTES,
    leadSources: leadSourceLists(settings.LEAD_EXTRA_SOURCES, settings.LEAD_EXTRA_MARKETING_SOURCES),
    shutdownGraceMs: settings.SHUTDOWN_GRACE_MS,
    httpHeadersTimeoutMs: settings.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: settings.HTTP_REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: settings.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    httpMaxConnections: settings.HTTP_MAX_CONNECTIONS,
    outboxLeaseMs: settings.OUTBOX_LEASE_MS,
    outboxPollIntervalMs: settings.OUTBOX_POLL_INTERVAL_MS,
    idempotencyTtlMs: settings.IDEMPOTENCY_TTL_HOURS * HOUR_MS,
    apiKeyCallsRetentionMs: settings.API_KEY_CALLS_RETENTION_DAYS * DAY_MS,
    redisUrl: settings.REDIS_URL ?? null,
    redisKeyPrefix: settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null,
    redisCommandTimeoutMs: settings.REDIS_COMMAND_TIMEOUT_MS,
    apiKeyCacheTtlMs: settings.API_KEY_CACHE_TTL_MS,
    responseCache: settings.RESPONSE_CACHE,
    production: settings.NODE_ENV === 'production',
    // The explorers are a development aid; a production deployment opts in with EXPLORERS=on.
    explorers: settings.EXPLORERS ?? settings.NODE_ENV !== 'production',
    corsOrigins: settings.CORS_ORIGINS ?? [],
    graphqlMaxCost: settings.GRAPHQL_MAX_COST,
    rateLimits: {
      windowMs: settings.RATE_LIMIT_WINDOW_SECONDS * 1_000,
      keyRequests: settings.RATE_LIMIT_KEY_REQUESTS,
      dealershipRequests: settings.RATE_LIMIT_DEALERSHIP_REQUESTS,
      keyCost: settings.RATE_LIMIT_KEY_COST,
      addressWindowMs: settings.RATE_LIMIT_ADDRESS_WINDOW_SECONDS * 1_000,
      authFailures: settings.RATE_LIMIT_AUTH_FAILURES,
      signOnRedemptions: settings.RATE_LIMIT_SIGN_ON,
      anonymousRequests: settings.RATE_LIMIT_ANONYMOUS,
    },
    trustProxyHops: settings.TRUST_PROXY,
  };
}
