// ─── the declaration: every setting, once ───
//
// Each setting is declared once, in the module of its concern beside this one, with its check, its
// default and what it means; nothing else reads the environment (test/config.test.ts greps src/ for
// it). docs/configuration.md's Configuration table and .env.example are generated from SETTINGS
// (`npm run config:docs`; the test fails when they are stale), in the order of SETTING_NAMES. To add a
// setting: one entry in its concern's module, its name in SETTING_NAMES, its use in loadConfig, then
// `npm run config:docs`.
import { API_SETTINGS } from './api.ts';
import { APP_SETTINGS } from './app.ts';
import { CACHE_SETTINGS } from './cache.ts';
import { DATABASE_SETTINGS } from './database.ts';
import type { SettingDeclaration, ValuesOf } from './declare.ts';
import { HTTP_SETTINGS } from './http.ts';
import { JOBS_SETTINGS } from './jobs.ts';
import { WEBHOOKS_SETTINGS } from './webhooks.ts';
import { MAIL_SETTINGS } from './mail.ts';
import { RATE_LIMITS_SETTINGS } from './rate-limits.ts';
import { REDIS_SETTINGS } from './redis.ts';
import { SECURITY_SETTINGS } from './security.ts';
import { STORAGE_SETTINGS } from './storage.ts';
import { SUBSCRIPTION_SETTINGS } from './subscriptions.ts';
import { TELEMETRY_SETTINGS } from './telemetry.ts';

export const SETTINGS = {
  ...APP_SETTINGS,
  ...HTTP_SETTINGS,
  ...API_SETTINGS,
  ...DATABASE_SETTINGS,
  ...REDIS_SETTINGS,
  ...CACHE_SETTINGS,
  ...SUBSCRIPTION_SETTINGS,
  ...TELEMETRY_SETTINGS,
  ...STORAGE_SETTINGS,
  ...MAIL_SETTINGS,
  ...SECURITY_SETTINGS,
  ...JOBS_SETTINGS,
  ...WEBHOOKS_SETTINGS,
  ...RATE_LIMITS_SETTINGS,
} as const satisfies Record<string, SettingDeclaration>;

export type SettingName = keyof typeof SETTINGS;

/**
 * Every setting in the order the documentation lists them (and a bad start reports them): the
 * mode first, then roughly what an operator sets up in turn. The type below refuses a list that
 * misses one.
 */
const DOCUMENTED_ORDER = [
  'APP_MODE',
  'NODE_ENV',
  'ENV_FILE',
  'PORT',
  'HOST',
  'DATABASE_URL',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'METRICS_TOKEN',
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'DEPLOYMENT_ENVIRONMENT',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_BSP_SCHEDULE_DELAY',
  'SEED_DEMO_DATA',
  'BODY_LIMIT_BYTES',
  'ANONYMOUS_BODY_LIMIT_BYTES',
  'LEAD_FILE_MAX_BYTES',
  'FILE_STORAGE',
  'FILE_STORAGE_DIR',
  'FILE_SWEEP_GRACE_MINUTES',
  'S3_BUCKET',
  'S3_REGION',
  'AWS_REGION',
  'S3_ENDPOINT',
  'S3_FORCE_PATH_STYLE',
  'S3_KEY_PREFIX',
  'DATABASE_POOL_MAX',
  'DATABASE_STATEMENT_TIMEOUT_MS',
  'CLI_TIMEOUT_MS',
  'DATABASE_CONNECT_TIMEOUT_MS',
  'PUBLIC_URL',
  'PLATFORM_URL',
  'SESSION_SIGNING_SECRET',
  'SECRETS_ENCRYPTION_KEYS',
  'SMTP_URL',
  'MAIL_FROM',
  'LEAD_EXTRA_SOURCES',
  'LEAD_EXTRA_MARKETING_SOURCES',
  'API_CONTACT_EMAIL',
  'SHUTDOWN_GRACE_MS',
  'HTTP_HEADERS_TIMEOUT_MS',
  'HTTP_REQUEST_TIMEOUT_MS',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS',
  'HTTP_MAX_CONNECTIONS',
  'HTTP_MAX_UPLOADS',
  'HTTP_RESERVED_CONNECTIONS',
  'REDIS_URL',
  'REDIS_COMMAND_TIMEOUT_MS',
  'REDIS_OUTAGE_AFTER_MS',
  'REDIS_KEY_PREFIX',
  'RESPONSE_CACHE',
  'API_KEY_CACHE_TTL_MS',
  'EXPLORERS',
  'GRAPHQL_MAX_COST',
  'SUBSCRIPTION_HEARTBEAT_MS',
  'SUBSCRIPTIONS_PER_KEY',
  'SUBSCRIPTIONS_PER_INSTANCE',
  'OUTBOX_LEASE_MS',
  'OUTBOX_POLL_INTERVAL_MS',
  'IDEMPOTENCY_TTL_HOURS',
  'API_KEY_CALLS_RETENTION_DAYS',
  'WEBHOOK_ALLOWED_ADDRESSES',
  'WEBHOOK_RETRY_HOURS',
  'WEBHOOK_SECRET_GRACE_HOURS',
  'WEBHOOK_POLL_INTERVAL_MS',
  'CORS_ORIGINS',
  'RATE_LIMIT_WINDOW_SECONDS',
  'RATE_LIMIT_KEY_REQUESTS',
  'RATE_LIMIT_DEALERSHIP_REQUESTS',
  'RATE_LIMIT_KEY_COST',
  'RATE_LIMIT_ADDRESS_WINDOW_SECONDS',
  'RATE_LIMIT_AUTH_FAILURES',
  'RATE_LIMIT_SIGN_ON',
  'RATE_LIMIT_ANONYMOUS',
  'RATE_LIMIT_REDIS_PREFIX',
  'TRUST_PROXY',
] as const satisfies readonly SettingName[];
/** never when DOCUMENTED_ORDER names every setting; a setting left out makes the line below fail to compile. */
type Undocumented = Exclude<SettingName, (typeof DOCUMENTED_ORDER)[number]>;
const everySettingListed: [Undocumented] extends [never] ? true : Undocumented = true;

export const SETTING_NAMES: SettingName[] = everySettingListed && [...DOCUMENTED_ORDER];

export type Settings = ValuesOf<typeof SETTINGS>;
