// The loaders: each start (the service, a CLI) checks the settings it needs from the environment.
// This is the one module that reads process.env (besides the .env loader, src/config/env-file.ts).
import { leadSourceLists } from './api.ts';
import { engineOf } from './database.ts';
import { connectionBoundsOf } from './http.ts';
import { DAY_MS, HOUR_MS } from './jobs.ts';
import { rateLimitsOf } from './rate-limits.ts';
import { ConfigError, parseSettings, readSettings, type SettingProblem } from './read.ts';
import { SETTING_NAMES, type Settings } from './settings.ts';
import { storageOf } from './storage.ts';
import { tracingConfig } from './telemetry.ts';
import type { Config } from './types.ts';

/** The environment of this process, with `--dev` on the command line meaning APP_MODE=development. */
export function processEnvironment(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return argv.slice(2).includes('--dev') ? { ...env, APP_MODE: 'development' } : env;
}

/**
 * What the database tools (migrations, the keys CLI) need: DATABASE_URL, and REDIS_URL to announce
 * key changes, with API_KEY_CACHE_TTL_MS to say when instances see one that could not be announced.
 */
export function loadDatabaseConfig(
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, 'databaseUrl' | 'engine' | 'redisUrl' | 'redisKeyPrefix' | 'apiKeyCacheTtlMs'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX', 'RATE_LIMIT_REDIS_PREFIX', 'API_KEY_CACHE_TTL_MS']);
  return {
    databaseUrl: settings.DATABASE_URL,
    engine: engineOf(settings.DATABASE_URL),
    redisUrl: settings.REDIS_URL ?? null,
    redisKeyPrefix: settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null,
    apiKeyCacheTtlMs: settings.API_KEY_CACHE_TTL_MS,
  };
}

/** CLI_TIMEOUT_MS: how long a CLI may take before it ends with one line and exit code 1. */
export function loadCliTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return parseSettings(env, ['CLI_TIMEOUT_MS']).CLI_TIMEOUT_MS;
}

/** What the secrets CLI needs: the database and the encryption keys. */
export function loadSecretsConfig(
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, 'databaseUrl' | 'engine' | 'mode' | 'secretsKeyring'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'SECRETS_ENCRYPTION_KEYS']);
  return {
    databaseUrl: settings.DATABASE_URL,
    engine: engineOf(settings.DATABASE_URL),
    mode: settings.mode,
    secretsKeyring: settings.SECRETS_ENCRYPTION_KEYS,
  };
}

/** What `secrets record-session-secret` needs: the database and the session signing secret. */
export function loadSessionSecretConfig(
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, 'databaseUrl' | 'engine' | 'sessionSigningSecret'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'SESSION_SIGNING_SECRET']);
  return {
    databaseUrl: settings.DATABASE_URL,
    engine: engineOf(settings.DATABASE_URL),
    sessionSigningSecret: settings.SESSION_SIGNING_SECRET,
  };
}

/**
 * The rules between settings, checked on those that are themselves valid, so that they are reported
 * together with every other problem.
 */
function problemsBetweenSettings(settings: Partial<Settings>): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const {
    HTTP_HEADERS_TIMEOUT_MS: headers,
    HTTP_REQUEST_TIMEOUT_MS: request,
    GRAPHQL_MAX_COST: maxCost,
    RATE_LIMIT_KEY_COST: keyCost,
    SUBSCRIPTIONS_PER_INSTANCE: streams,
    HTTP_MAX_CONNECTIONS: connections,
  } = settings;
  if (headers !== undefined && request !== undefined && headers > request) {
    problems.push({
      setting: 'HTTP_HEADERS_TIMEOUT_MS',
      message: 'must not be greater than HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    });
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
  // Each open stream holds a connection: as many streams as connections would leave none for anything else.
  if (streams !== undefined && connections !== undefined && streams >= connections) {
    problems.push({
      setting: 'SUBSCRIPTIONS_PER_INSTANCE',
      message: `must be less than HTTP_MAX_CONNECTIONS (${connections}), so that open streams leave connections for other requests (got "${streams}")`,
    });
  }
  return problems;
}

/** HTTP_MAX_UPLOADS and HTTP_RESERVED_CONNECTIONS in effect (set, or their share of HTTP_MAX_CONNECTIONS). */
function httpConnectionBounds(settings: Partial<Settings>): Pick<Config, 'httpMaxUploads' | 'httpReservedConnections'> {
  const { maxUploads, reservedConnections } = connectionBoundsOf(settings.HTTP_MAX_CONNECTIONS ?? 0, {
    maxUploads: settings.HTTP_MAX_UPLOADS,
    reservedConnections: settings.HTTP_RESERVED_CONNECTIONS,
  });
  return { httpMaxUploads: maxUploads, httpReservedConnections: reservedConnections };
}

/**
 * Open subscription streams, uploads in flight and the reserve each hold connections of their own:
 * together they must fit in HTTP_MAX_CONNECTIONS, or the reserve would not be there when the other two
 * are full. (As many streams as connections is its own problem, reported beside the subscriptions.)
 */
function connectionBoundProblems(settings: Partial<Settings>): SettingProblem[] {
  const { HTTP_MAX_CONNECTIONS: connections, SUBSCRIPTIONS_PER_INSTANCE: streams } = settings;
  if (connections === undefined || streams === undefined || streams >= connections) return [];
  const { httpMaxUploads: uploads, httpReservedConnections: reserved } = httpConnectionBounds(settings);
  if (streams + uploads + reserved <= connections) return [];
  return [
    {
      setting: 'HTTP_RESERVED_CONNECTIONS',
      message: `(${reserved}) + SUBSCRIPTIONS_PER_INSTANCE (${streams}) + HTTP_MAX_UPLOADS (${uploads}) must be at most HTTP_MAX_CONNECTIONS (${connections}): lower one of them, or raise HTTP_MAX_CONNECTIONS`,
    },
  ];
}

/** Every setting, checked; throws a ConfigError naming each bad or missing one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = readSettings(env, SETTING_NAMES);
  const problems = [...read.problems, ...problemsBetweenSettings(read.settings), ...connectionBoundProblems(read.settings)];
  if (problems.length > 0) throw new ConfigError(problems);
  // No problem: every setting was checked and holds its value (or its default).
  const settings = read.settings as Settings;
  const { mode, developmentDefaults } = read;
  const port = settings.PORT;
  const engine = engineOf(settings.DATABASE_URL);
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
    tracing: tracingConfig(
      settings,
      settings.DEPLOYMENT_ENVIRONMENT ?? (settings.NODE_ENV === 'production' ? 'production' : 'development'),
    ),
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
    apiContactEmail: settings.API_CONTACT_EMAIL ?? null,
    ...storageOf(settings, engine),
    databasePoolMax: settings.DATABASE_POOL_MAX,
    databaseStatementTimeoutMs: settings.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseConnectTimeoutMs: settings.DATABASE_CONNECT_TIMEOUT_MS,
    leadSources: leadSourceLists(settings.LEAD_EXTRA_SOURCES, settings.LEAD_EXTRA_MARKETING_SOURCES),
    shutdownGraceMs: settings.SHUTDOWN_GRACE_MS,
    httpHeadersTimeoutMs: settings.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: settings.HTTP_REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: settings.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    httpMaxConnections: settings.HTTP_MAX_CONNECTIONS,
    ...httpConnectionBounds(settings),
    outboxLeaseMs: settings.OUTBOX_LEASE_MS,
    outboxPollIntervalMs: settings.OUTBOX_POLL_INTERVAL_MS,
    webhookAllowedAddresses: settings.WEBHOOK_ALLOWED_ADDRESSES,
    webhookRetryMs: settings.WEBHOOK_RETRY_HOURS * HOUR_MS,
    webhookSecretGraceMs: settings.WEBHOOK_SECRET_GRACE_HOURS * HOUR_MS,
    webhookPollIntervalMs: settings.WEBHOOK_POLL_INTERVAL_MS,
    idempotencyTtlMs: settings.IDEMPOTENCY_TTL_HOURS * HOUR_MS,
    apiKeyCallsRetentionMs: settings.API_KEY_CALLS_RETENTION_DAYS * DAY_MS,
    redisUrl: settings.REDIS_URL ?? null,
    redisKeyPrefix: settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null,
    redisCommandTimeoutMs: settings.REDIS_COMMAND_TIMEOUT_MS,
    redisOutageAfterMs: settings.REDIS_OUTAGE_AFTER_MS,
    apiKeyCacheTtlMs: settings.API_KEY_CACHE_TTL_MS,
    responseCache: settings.RESPONSE_CACHE,
    production: settings.NODE_ENV === 'production',
    // The explorers are a development aid; a production deployment opts in with EXPLORERS=on.
    explorers: settings.EXPLORERS ?? settings.NODE_ENV !== 'production',
    corsOrigins: settings.CORS_ORIGINS ?? [],
    graphqlMaxCost: settings.GRAPHQL_MAX_COST,
    subscriptionHeartbeatMs: settings.SUBSCRIPTION_HEARTBEAT_MS,
    subscriptionsPerKey: settings.SUBSCRIPTIONS_PER_KEY,
    subscriptionsPerInstance: settings.SUBSCRIPTIONS_PER_INSTANCE,
    rateLimits: rateLimitsOf(settings),
    trustProxyHops: settings.TRUST_PROXY,
  };
}
