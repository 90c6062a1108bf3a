// Every setting declared once; the Config type, the loader, the settings table and .env.example follow from it.
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { parseUrl } from '../lib/parse-url.ts';
import { DEFAULT_THIRD_PARTY_MARKETING_SOURCES, DEFAULT_THIRD_PARTY_SOURCES } from '../domain/leads/values.ts';
import {
  commaList,
  HOUR_MS,
  httpOrigin,
  inMs,
  listEntries,
  parsedWith,
  positiveWholeNumber,
  setting,
  text,
  trueOrFalse,
  wholeNumber,
  wholeNumberIn,
  wholeNumberOf,
  type SettingDeclaration,
  type ValuesOf,
} from './declare.ts';
import { projectRoot } from './root.ts';
import { DEVELOPMENT_KEY, keyringOf, parseEncryptionKeys } from './secrets.ts';

// The one module of the settings that reads the spec's lead values (the rooms' rule names it).
export { leadSourceLists } from '../domain/leads/values.ts';

export const DEFAULT_GRAPHQL_MAX_COST = 5_000;
export const ANONYMOUS_WINDOW_MS = 60_000;
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

const otlpProtocol = z.enum(
  OTLP_PROTOCOLS,
  'must be http/protobuf or http/json: OTLP over HTTP (grpc is not built in; collectors accept both on port 4318)',
);
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const FILE_STORAGE_KINDS = ['local', 'database', 's3'] as const;
const MIN_FILE_SWEEP_GRACE_MINUTES = 5;
const MAX_FILE_SWEEP_GRACE_MINUTES = 10_080;
/** Below this, a lease could end between two of its renewals on a busy machine. */
const MIN_LEASE_MS = 1_000;
/** A year: records kept longer only grow the table, retries never come that late. */
const MAX_IDEMPOTENCY_TTL_HOURS = 8_760;
/** Ten years of per-minute counts is already far more than an audit needs. */
const MAX_API_KEY_CALLS_RETENTION_DAYS = 3_650;
/** A week: a receiver down longer than that is better told by the disabled subscription. */
const MAX_WEBHOOK_RETRY_HOURS = 168;
const MAX_SECRET_GRACE_HOURS = 720;
const MIN_SECRET_LENGTH = 32;
/** A Redis key prefix: printable ASCII without spaces, so it reads the same in every Redis tool. */
const redisKeyPrefix = text.regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable characters without spaces');

/** `name=value,…`, the values percent-encoded, as OpenTelemetry's variables write them. */
const nameValuePairs = (message: string) => text.regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, message);

function decodedPairs(pairs: string): Record<string, string> {
  return Object.fromEntries(
    pairs.split(',').map((pair) => {
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {}
      return [pair.slice(0, at), decoded];
    }),
  );
}

function databaseUrlProblem(value: string): string | null {
  if (value.startsWith('file:'))
    return value.length > 'file:'.length ? null : 'must name a file after file:, e.g. file:./data/dealership.db';
  if (!/^postgres(ql)?:\/\//.test(value)) {
    return 'must start with file: (SQLite, e.g. file:./data/dealership.db) or postgresql:// (PostgreSQL, e.g. postgresql://user@host:5432/dealership)';
  }
  const url = parseUrl(value);
  if (!url) return 'is not a valid URL: check for characters that need %-encoding in the password';
  if (url.hostname === '') return 'must name a host, e.g. postgresql://user@host:5432/dealership';
  if (url.pathname.length <= 1) return 'must name a database, e.g. postgresql://user@host:5432/dealership';
  return null;
}

/**
 * CORS_ORIGINS: comma-separated origins (`https://shop.example.com`), or `*`. Each must be a bare
 * http(s) origin, written as browsers send it in `Origin`, so the comparison is exact; `null` (sent by
 * sandboxed frames and files) is refused, since any page can make its requests carry it.
 */
function corsOrigins(value: string): { value: string[] } | { problems: string[] } {
  const entries = listEntries(value);
  if (entries.includes('*'))
    return entries.length > 1 ? { problems: ['must be * alone or a list of origins, not both'] } : { value: ['*'] };
  const origins: string[] = [];
  for (const entry of entries) {
    const url = parseUrl(entry);
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
      return { problems: [`must list origins such as https://shop.example.com (scheme, host and port only), not "${entry}"`] };
    }
    origins.push(url.origin);
  }
  return { value: origins };
}

/** `a.b.c.d`, `::1`, or either with a `/prefix`. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

export const SETTINGS = {
  APP_MODE: setting({
    schema: z.enum(['production', 'development'], 'must be development or production (or unset)'),
    meaning: '`development` (or `--dev` on the command line) for the local demo; see "Production and development modes"',
    defaultInWords: 'production rules',
  }),
  NODE_ENV: setting({
    schema: z.string(),
    meaning: '`production`: introspection needs `read:schema`, no name suggestions in errors, explorers off',
  }),
  ENV_FILE: setting({
    schema: text,
    default: '.env',
    meaning:
      'the file of settings read at start when it exists (relative to the project); `off` reads none; a variable already in the environment wins over the file',
  }),
  PORT: setting({ field: 'port', schema: wholeNumber(65_535), default: '4000', meaning: 'the TCP port the service listens on' }),
  HOST: setting({
    field: 'host',
    schema: text,
    default: '0.0.0.0',
    meaning: 'the address the service listens on (`0.0.0.0`: every interface)',
  }),
  DATABASE_URL: setting({
    field: 'databaseUrl',
    schema: text.superRefine((value, context) => {
      const problem = databaseUrlProblem(value);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    }),
    default: 'file:./data/dealership.db',
    meaning: '`file:` for SQLite (relative to the project), `postgresql://…` for PostgreSQL',
    confidential: true,
  }),
  LOG_LEVEL: setting({
    field: 'logLevel',
    schema: z.enum(logLevels, `must be one of ${logLevels.join(', ')}`),
    default: 'info',
    meaning: '`fatal` … `trace`, `silent`',
  }),
  LOG_FORMAT: setting({
    schema: z.enum(['json', 'pretty'], 'must be json or pretty'),
    defaultInWords: '`pretty` in development mode on a terminal, else `json`',
    meaning: '`json`: one JSON object per line, for log shippers; `pretty`: readable coloured lines (pino-pretty); see "Operating it"',
  }),
  METRICS_TOKEN: setting({
    field: 'metricsToken',
    schema: text.regex(/^[\x21-\x7e]{32,256}$/, 'must be 32 to 256 printable characters without spaces (e.g. openssl rand -hex 32)'),
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
    schema: z.enum(['otlp', 'console', 'none'], 'must be otlp, console or none'),
    defaultInWords: '`otlp` when an OTLP endpoint is set, else `none`',
    meaning:
      'where spans go: `otlp` (OTLP over HTTP, to the endpoint below, encoded as `OTEL_EXPORTER_OTLP_PROTOCOL` says), `console` (one object per span on standard output, for trying it) or `none` (no traces, and the OpenTelemetry SDK is not even loaded); see "Traces"',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting({
    schema: httpOrigin,
    defaultInWords: 'none',
    meaning: "the OTLP/HTTP collector's base URL (`http://otel-collector:4318`); spans go to `<it>/v1/traces`. Setting it turns traces on",
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting({
    schema: text.url('must be the full URL spans are posted to, e.g. http://otel-collector:4318/v1/traces'),
    defaultInWords: '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    meaning: "the full URL spans are posted to, when it is not the endpoint's `/v1/traces`. Setting it turns traces on",
  }),
  OTEL_EXPORTER_OTLP_HEADERS: setting({
    schema: nameValuePairs('must be name=value pairs separated by commas, e.g. authorization=Bearer%20abc'),
    defaultInWords: 'none',
    meaning: "headers of each export to the collector, as `name=value,name2=value2` (values percent-encoded), e.g. a vendor's API key",
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
    schema: text.regex(/^[\x21-\x7e]{1,100}$/, 'must be 1 to 100 printable characters without spaces'),
    default: 'dealership-gateway',
    meaning: 'the `service.name` of every span',
  }),
  OTEL_RESOURCE_ATTRIBUTES: setting({
    schema: nameValuePairs('must be key=value pairs separated by commas, e.g. deployment.environment=production').transform(decodedPairs),
    defaultInWords: 'none',
    meaning: "more attributes of every span's resource, `key=value,…` (e.g. `deployment.environment=production,service.instance.id=gw-1`)",
  }),
  DEPLOYMENT_ENVIRONMENT: setting({
    schema: text.regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-", e.g. production or staging'),
    defaultInWords: '`production` with `NODE_ENV=production`, else `development`',
    meaning: 'the `deployment.environment.name` of spans (production, staging…), so deployments can share a tracing system; see "Traces"',
  }),
  OTEL_TRACES_SAMPLER: setting({
    schema: z.enum(
      ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'],
      'must be always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio',
    ),
    default: 'parentbased_always_on',
    meaning: "which requests are traced (OpenTelemetry's sampler names); `parentbased_*` follows the caller's `traceparent` decision",
  }),
  OTEL_TRACES_SAMPLER_ARG: setting({
    schema: text.regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'must be a ratio from 0 to 1, e.g. 0.1').transform(Number),
    default: '1',
    meaning: 'the ratio of traces kept by the `*traceidratio` samplers, from 0 to 1',
  }),
  OTEL_BSP_SCHEDULE_DELAY: setting({
    schema: wholeNumber(3_600_000),
    default: '5000',
    meaning: 'milliseconds finished spans wait to be sent together (one POST per batch); a stop sends the rest at once',
  }),
  SEED_DEMO_DATA: setting({
    field: 'seedDemoData',
    schema: trueOrFalse,
    default: 'false',
    developmentDefault: 'true',
    meaning: 'seed the demo data when the database has no dealership',
  }),
  BODY_LIMIT_BYTES: setting({
    field: 'bodyLimitBytes',
    schema: wholeNumber(),
    default: String(10 * 1024 * 1024),
    meaning: 'largest request body, in bytes (10 MiB: attachments travel base64 in JSON)',
  }),
  // No keyless request (a GraphQL query, a redirect) needs more than the default.
  ANONYMOUS_BODY_LIMIT_BYTES: setting({
    field: 'anonymousBodyLimitBytes',
    schema: wholeNumber(),
    default: String(16 * 1024),
    meaning:
      'largest body of a request without an API key (no `Authorization`, no `?token=`), in bytes: refused 413 before it is read or parsed; the smaller of this and `BODY_LIMIT_BYTES` applies',
  }),
  LEAD_FILE_MAX_BYTES: setting({
    field: 'leadFileMaxBytes',
    schema: wholeNumber(),
    default: String(5 * 1024 * 1024),
    meaning: 'largest lead attachment, in bytes (decoded)',
  }),
  FILE_STORAGE: setting({
    schema: z.enum(FILE_STORAGE_KINDS, `must be one of ${FILE_STORAGE_KINDS.join(', ')}`),
    defaultInWords: '`database` on PostgreSQL, `local` on SQLite',
    meaning:
      'where lead attachments\' bytes are kept: `database` (the `stored_files` table), `s3` (a bucket, see below) or `local` (`FILE_STORAGE_DIR`); see "Several instances"',
  }),
  FILE_STORAGE_DIR: setting({
    field: 'fileStorageDir',
    schema: text.transform((dir) => path.resolve(projectRoot, dir)),
    default: 'data/files',
    meaning: 'the directory of `FILE_STORAGE=local` (relative to the project)',
  }),
  // At least a few minutes: a lead's files are stored a moment before its transaction commits them.
  FILE_SWEEP_GRACE_MINUTES: setting({
    field: 'fileSweepGraceMs',
    schema: inMs(wholeNumberOf('minutes', MIN_FILE_SWEEP_GRACE_MINUTES, MAX_FILE_SWEEP_GRACE_MINUTES), 60_000),
    default: '60',
    meaning: `attachment bytes a process killed between storing them and committing their lead left behind are removed once stored longer ago than this (${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}), by one instance at a time, hourly; see "Several instances"`,
  }),
  S3_BUCKET: setting({
    schema: text.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens'),
    defaultInWords: '**required** with `FILE_STORAGE=s3`',
    meaning: 'the bucket that keeps attachments',
  }),
  S3_REGION: setting({
    schema: text.regex(/^[a-z0-9-]{1,64}$/, 'must be a region name such as eu-west-1'),
    defaultInWords: '`AWS_REGION`, else `us-east-1`',
    meaning: "the bucket's region",
  }),
  AWS_REGION: setting({ schema: text, meaning: "the AWS SDK's own region setting; `S3_REGION` falls back to it" }),
  S3_ENDPOINT: setting({
    schema: httpOrigin,
    defaultInWords: "AWS's endpoint for the region",
    meaning: "an S3-compatible store's URL, e.g. `https://minio.internal:9000`",
  }),
  S3_FORCE_PATH_STYLE: setting({
    schema: trueOrFalse,
    default: 'false',
    meaning: '`true`: the bucket in the path (`https://host/bucket/key`), as most self-hosted stores need',
  }),
  S3_KEY_PREFIX: setting({
    schema: text
      .max(200, 'must be at most 200 characters')
      .regex(/^[A-Za-z0-9._/-]+$/, 'may hold only letters, digits, ".", "_", "-" and "/"')
      .transform((prefix) => (prefix.endsWith('/') ? prefix : `${prefix}/`)),
    meaning: 'put before every object key (`gateway/` → `gateway/leads/2026/11/<uuid>`)',
  }),
  DATABASE_POOL_MAX: setting({
    field: 'databasePoolMax',
    schema: wholeNumber(1_000, 1),
    // pg's own default.
    default: '10',
    meaning: 'PostgreSQL: the most connections one instance opens (1 to 1000); see "Several instances"',
  }),
  // A database that does not answer is answered 503 within these, never left to hang a request.
  DATABASE_STATEMENT_TIMEOUT_MS: setting({
    field: 'databaseStatementTimeoutMs',
    schema: positiveWholeNumber,
    default: '5000',
    meaning:
      'the longest one SQL statement may take before the request is answered 503 `unavailable`: PostgreSQL cancels it (`statement_timeout`) and the service gives up on a server that does not answer; SQLite waits this long for a lock another process holds (busy timeout)',
  }),
  CLI_TIMEOUT_MS: setting({
    field: 'cliTimeoutMs',
    schema: positiveWholeNumber,
    default: '30000',
    meaning:
      'the CLIs (`keys`, `outbox`, `secrets`, `db:migrate`, `db:seed`) end with one line and exit code 1 when the database or Redis has not let them finish within this long; on SQLite they wait up to this long for a write lock another process holds',
  }),
  DATABASE_CONNECT_TIMEOUT_MS: setting({
    field: 'databaseConnectTimeoutMs',
    schema: positiveWholeNumber,
    default: '2000',
    meaning: 'PostgreSQL: the longest it waits to open a connection, or for a free one of its pool, before answering 503 `unavailable`',
  }),
  PUBLIC_URL: setting({
    schema: httpOrigin,
    required: "set it to this service's public origin, e.g. https://api.example.com",
    defaultInWords: '**required**; development: `http://localhost:$PORT`',
    meaning: "this service's public origin, `http(s)://…` (the partner `redirect_url`)",
    example: 'https://api.example.com',
  }),
  PLATFORM_URL: setting({
    field: 'platformUrl',
    schema: httpOrigin,
    default: 'http://localhost:3000',
    meaning: "where the platform's pages live: the sign-on handoff lands there",
  }),
  SESSION_SIGNING_SECRET: setting({
    field: 'sessionSigningSecret',
    schema: z.string().min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -base64 48)`),
    required: `set it to a random value of ${MIN_SECRET_LENGTH}+ characters, shared by all instances (e.g. openssl rand -base64 48)`,
    // Development mode only: public, so the service refuses to use it outside development mode.
    developmentDefault: 'dev-only-session-signing-secret-change-me',
    defaultInWords: `**required** (${MIN_SECRET_LENGTH}+ characters); development: a public value`,
    meaning: 'signs the handoff session (HS256); the same on every instance',
    confidential: true,
  }),
  SECRETS_ENCRYPTION_KEYS: setting({
    field: 'secretsKeyring',
    schema: parsedWith((value) => {
      const parsed = parseEncryptionKeys(value);
      return 'keys' in parsed ? { value: keyringOf(parsed.keys) } : parsed;
    }),
    required: 'set it to <key id>:<base64 32-byte key>; make one with: npm run --silent secrets -- new-key',
    developmentDefault: `${DEVELOPMENT_KEY.id}:${DEVELOPMENT_KEY.key.toString('base64')}`,
    defaultInWords: '**required**; development: a public key `dev`',
    meaning: '`id:base64key,…` (32-byte keys): encrypts secrets stored in the database; the first encrypts, all decrypt',
    confidential: true,
  }),
  SMTP_URL: setting({
    field: 'smtpUrl',
    schema: text.refine((value) => /^smtps?:\/\/[^/\s]/.test(value), 'must be smtp://user:pass@host:port or smtps://…'),
    defaultInWords: 'none: notifications are logged',
    meaning: 'the mail server notifications are sent through, `smtp://user:pass@host:587` or `smtps://…`',
    confidential: true,
  }),
  MAIL_FROM: setting({
    field: 'mailFrom',
    schema: text,
    default: 'Dealership Platform <no-reply@dealership.local>',
    meaning: 'sender of notifications',
  }),
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
    field: 'apiContactEmail',
    schema: text.email('must be an e-mail address (api-support@example.com)'),
    meaning: 'the support address the OpenAPI document gives integrators (its `info.contact`, beside the `/docs` page)',
  }),
  SHUTDOWN_GRACE_MS: setting({
    field: 'shutdownGraceMs',
    schema: positiveWholeNumber,
    default: '10000',
    meaning: 'after SIGTERM (or SIGINT) the process exits 0 within this long; see "Stopping" below',
  }),
  // Node's own defaults let a slow client hold a connection for minutes.
  HTTP_HEADERS_TIMEOUT_MS: setting({
    field: 'httpHeadersTimeoutMs',
    schema: positiveWholeNumber,
    default: '10000',
    meaning: "a client must send a request's headers within this long, else 408 and the connection is closed",
  }),
  HTTP_REQUEST_TIMEOUT_MS: setting({
    field: 'httpRequestTimeoutMs',
    schema: positiveWholeNumber,
    default: '30000',
    meaning: '… and the whole request, body included, within this long (at least the headers timeout)',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: setting({
    field: 'httpKeepAliveTimeoutMs',
    schema: positiveWholeNumber,
    default: '5000',
    meaning: 'an idle keep-alive connection is closed after this long',
  }),
  HTTP_MAX_CONNECTIONS: setting({
    field: 'httpMaxConnections',
    schema: positiveWholeNumber,
    default: '1000',
    meaning:
      'connections beyond this many open at once are closed as soon as they arrive (logged); see "Connections and their bounds" in docs/operations.md',
  }),
  HTTP_MAX_UPLOADS: setting({
    schema: positiveWholeNumber,
    defaultInWords: 'a tenth of `HTTP_MAX_CONNECTIONS`',
    meaning:
      'requests whose body is still arriving after the moment their headers did (uploads in flight) at once; one more is answered 503 `unavailable` with `Retry-After`, its body unread, and its connection closed',
  }),
  HTTP_RESERVED_CONNECTIONS: setting({
    schema: wholeNumber(),
    defaultInWords: 'a tenth of `HTTP_MAX_CONNECTIONS`',
    meaning:
      'connections neither subscription streams nor uploads can take, kept for every other request (`/health` included): `SUBSCRIPTIONS_PER_INSTANCE` + `HTTP_MAX_UPLOADS` + this must be at most `HTTP_MAX_CONNECTIONS`; while fewer than this many are free, idle keep-alive connections are closed, longest idle first, so that a new connection is served rather than dropped',
  }),
  REDIS_URL: setting({
    field: 'redisUrl',
    schema: text.refine((value) => /^rediss?:\/\/[^/\s]/.test(value), 'must be redis://host:6379 or rediss://…'),
    meaning:
      '`redis://host:6379`: instances share key changes, caches (see "Caching") and rate-limit budgets (see "Rate limits") through it; while Redis is down the service serves from its own memory and logs it',
    confidential: true,
  }),
  REDIS_COMMAND_TIMEOUT_MS: setting({
    field: 'redisCommandTimeoutMs',
    schema: wholeNumberOf('milliseconds', 1, 10_000),
    default: '100',
    meaning:
      'how long one Redis command may take; a command that takes longer is given up on, and only that call is answered from memory (cache bypassed, rate limits counted in this instance): a slow reply is not an outage (see `REDIS_OUTAGE_AFTER_MS`)',
  }),
  REDIS_OUTAGE_AFTER_MS: setting({
    field: 'redisOutageAfterMs',
    schema: wholeNumberOf('milliseconds', 1, 600_000),
    default: '5000',
    meaning:
      'how long Redis commands must keep failing, with no success in between, before Redis is taken for down although its connection is up (a server that accepts connections but answers nothing); then it is not asked at all (the breaker: one command a second probes it) until it answers. A connection that closes or reconnects is an outage at once',
  }),
  REDIS_KEY_PREFIX: setting({
    schema: redisKeyPrefix,
    meaning:
      'what every Redis key and channel of this deployment starts with (cache entries and generations, rate limits, key changes); by default `dgw:<id>:`, where the id is made once and kept in the database, so instances of one database share their keys and deployments of different databases on one Redis never meet',
  }),
  RESPONSE_CACHE: setting({
    field: 'responseCache',
    schema: trueOrFalse,
    default: 'true',
    meaning: 'serve repeated reads from the response cache (see "Caching")',
  }),
  API_KEY_CACHE_TTL_MS: setting({
    field: 'apiKeyCacheTtlMs',
    schema: wholeNumber(),
    default: '5000',
    meaning: "how long an instance reuses a key's verdict: how soon a revocation is seen without Redis (`0` asks the database every time)",
  }),
  EXPLORERS: setting({
    schema: trueOrFalse,
    defaultInWords: '`on` unless `NODE_ENV=production`',
    meaning: 'serve GraphiQL (`/graphql` in a browser) and Swagger UI (`/docs`)',
  }),
  GRAPHQL_MAX_COST: setting({
    field: 'graphqlMaxCost',
    schema: positiveWholeNumber,
    default: String(DEFAULT_GRAPHQL_MAX_COST),
    meaning: 'the highest estimated cost one GraphQL operation may have (see GraphQL, Limits)',
  }),
  EXECUTION_SLOTS: setting({
    field: 'executionSlots.slots',
    schema: wholeNumberOf('operations', 0, 10_000),
    default: '8',
    meaning:
      'how many GraphQL operations (REST requests included) one instance executes at once; the next waits for one to finish. `0`: no bound. Subscriptions, health checks, metrics, the explorers and cached answers never wait; see "Execution slots" in docs/operations.md',
  }),
  EXECUTION_QUEUE_MAX: setting({
    field: 'executionSlots.queueMax',
    schema: wholeNumberOf('operations', 0, 100_000),
    default: '200',
    meaning:
      'how many operations may wait for an execution slot at once; one more is answered 503 `unavailable` with `Retry-After`, before anything of it ran (`0`: none waits)',
  }),
  EXECUTION_WAIT_MS: setting({
    field: 'executionSlots.waitMs',
    schema: wholeNumberOf('milliseconds', 1, 600_000),
    default: '10000',
    meaning: 'the longest an operation waits for an execution slot; then it is answered the same 503, nothing of it run',
  }),
  SUBSCRIPTION_HEARTBEAT_MS: setting({
    field: 'subscriptionHeartbeatMs',
    schema: wholeNumberOf('milliseconds', 1, 300_000),
    default: '15000',
    meaning: 'how often an open subscription stream gets a heartbeat (an SSE comment), so proxies and clients see it alive between events',
  }),
  SUBSCRIPTIONS_PER_KEY: setting({
    field: 'subscriptionsPerKey',
    schema: wholeNumberOf('subscriptions', 1, 1_000),
    default: '10',
    meaning: 'how many subscriptions one API key holds open per instance; the next is refused (`too_many_subscriptions`) until one closes',
  }),
  SUBSCRIPTIONS_PER_INSTANCE: setting({
    field: 'subscriptionsPerInstance',
    schema: wholeNumberOf('subscriptions', 1, 100_000),
    default: '500',
    meaning:
      'how many subscriptions one instance holds open, all keys together; the next is refused (`subscriptions_at_capacity`) until one closes. Below `HTTP_MAX_CONNECTIONS`, so that open streams never take every connection from the other requests',
  }),
  OUTBOX_LEASE_MS: setting({
    field: 'outboxLeaseMs',
    schema: wholeNumberIn(MIN_LEASE_MS, Number.MAX_SAFE_INTEGER, `must be a whole number of milliseconds, at least ${MIN_LEASE_MS}`),
    default: '120000',
    meaning: `how long a notification's claim lasts unless its sender renews it (it does while sending): how soon another instance retries a message whose sender died; at least ${MIN_LEASE_MS}`,
  }),
  OUTBOX_POLL_INTERVAL_MS: setting({
    field: 'outboxPollIntervalMs',
    schema: positiveWholeNumber,
    default: '5000',
    meaning: 'pause between two rounds of the outbox worker',
  }),
  IDEMPOTENCY_TTL_HOURS: setting({
    field: 'idempotencyTtlMs',
    schema: inMs(wholeNumberOf('hours', 1, MAX_IDEMPOTENCY_TTL_HOURS), HOUR_MS),
    default: '24',
    meaning: `how long an \`Idempotency-Key\`'s answer is kept (1 to ${MAX_IDEMPOTENCY_TTL_HOURS}); later, the key is free and the record is purged`,
  }),
  API_KEY_CALLS_RETENTION_DAYS: setting({
    field: 'apiKeyCallsRetentionMs',
    schema: inMs(wholeNumberOf('days', 1, MAX_API_KEY_CALLS_RETENTION_DAYS), 24 * HOUR_MS),
    default: '30',
    meaning: `how long the per-minute counts of each key's calls (\`npm run keys -- audit\`) are kept before they are purged (1 to ${MAX_API_KEY_CALLS_RETENTION_DAYS})`,
  }),
  WEBHOOK_ALLOWED_ADDRESSES: setting({
    field: 'webhookAllowedAddresses',
    schema: commaList.refine(
      (entries) => entries.every(isAddressOrRange),
      'must be a comma-separated list of IP addresses or CIDR ranges (10.0.0.0/8, ::1)',
    ),
    default: '',
    meaning:
      'private, loopback or link-local addresses (or CIDR ranges) webhooks may nevertheless be sent to; every other such address is refused (docs/webhooks.md, "Where webhooks may go")',
  }),
  WEBHOOK_RETRY_HOURS: setting({
    field: 'webhookRetryMs',
    schema: inMs(wholeNumberOf('hours', 1, MAX_WEBHOOK_RETRY_HOURS), HOUR_MS),
    default: '24',
    meaning: `how long a failing webhook delivery is retried (exponential backoff with jitter) before it fails for good and its subscription is disabled (1 to ${MAX_WEBHOOK_RETRY_HOURS})`,
  }),
  WEBHOOK_SECRET_GRACE_HOURS: setting({
    field: 'webhookSecretGraceMs',
    schema: inMs(wholeNumberOf('hours', 1, MAX_SECRET_GRACE_HOURS), HOUR_MS),
    default: '24',
    meaning: `after a webhook secret is rotated, how long deliveries are signed with the old secret too (1 to ${MAX_SECRET_GRACE_HOURS})`,
  }),
  WEBHOOK_POLL_INTERVAL_MS: setting({
    field: 'webhookPollIntervalMs',
    schema: positiveWholeNumber,
    default: '2000',
    meaning: 'pause between two rounds of the webhook worker',
  }),
  CORS_ORIGINS: setting({
    field: 'corsOrigins',
    schema: parsedWith(corsOrigins),
    default: '',
    defaultInWords: 'none',
    meaning: 'comma-separated origins (`https://shop.example.com`) whose web pages may call the API, or `*` for any',
  }),
  RATE_LIMIT_WINDOW_SECONDS: setting({
    field: 'rateLimits.windowMs',
    schema: inMs(positiveWholeNumber, 1_000),
    default: '60',
    meaning: 'the window of the per-key, per-dealership and cost limits (see "Rate limits")',
  }),
  RATE_LIMIT_KEY_REQUESTS: setting({
    field: 'rateLimits.keyRequests',
    schema: wholeNumber(),
    default: '600',
    meaning: 'operations one API key may run per window; `0`: no limit',
  }),
  RATE_LIMIT_DEALERSHIP_REQUESTS: setting({
    field: 'rateLimits.dealershipRequests',
    schema: wholeNumber(),
    default: '1200',
    meaning: 'operations all the keys of one dealership may run together per window; `0`: no limit',
  }),
  // Ten operations at the highest cost one may have (GRAPHQL_MAX_COST).
  RATE_LIMIT_KEY_COST: setting({
    field: 'rateLimits.keyCost',
    schema: wholeNumber(),
    default: '50000',
    meaning: 'estimated GraphQL cost one key may spend per window, on both doors; at least `GRAPHQL_MAX_COST`, or `0`: no budget',
  }),
  RATE_LIMIT_ADDRESS_WINDOW_SECONDS: setting({
    field: 'rateLimits.addressWindowMs',
    schema: inMs(positiveWholeNumber, 1_000),
    default: '300',
    meaning: 'the window of the two per-address limits below',
  }),
  RATE_LIMIT_AUTH_FAILURES: setting({
    field: 'rateLimits.authFailures',
    schema: wholeNumber(),
    default: '20',
    meaning:
      'requests with a key that is not accepted, per client address per window; beyond it, requests with a key from that address are 429; `0`: no limit',
  }),
  RATE_LIMIT_SIGN_ON: setting({
    field: 'rateLimits.signOnRedemptions',
    schema: wholeNumber(),
    default: '20',
    meaning: 'partner sign-on token redemptions per client address per window; `0`: no limit',
  }),
  // Two a second from one address: a person clicking car links, or a GraphiQL user, never comes close.
  RATE_LIMIT_ANONYMOUS: setting({
    field: 'rateLimits.anonymousRequests',
    schema: wholeNumber(),
    default: '120',
    meaning:
      'requests without an API key (the public redirect, the partner sign-on handoff, GraphQL without a key) per client address per minute; beyond it they are 429; `0`: no limit',
  }),
  RATE_LIMIT_REDIS_PREFIX: setting({
    schema: redisKeyPrefix,
    meaning: '**deprecated** (removal after 2027-06-30): use `REDIS_KEY_PREFIX`, which this is taken as when that is not set',
  }),
  TRUST_PROXY: setting({
    field: 'trustProxyHops',
    schema: wholeNumber(10),
    default: '0',
    meaning:
      "how many reverse proxies stand in front: the client address is read that many entries from the right of `X-Forwarded-For`; `0` uses the connection's address and ignores the header",
  }),
} as const satisfies Record<string, SettingDeclaration>;

export type SettingName = keyof typeof SETTINGS;
/** Every setting, in the order of their declaration: the documentation's. */
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];
export type Settings = ValuesOf<typeof SETTINGS>;
