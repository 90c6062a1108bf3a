// Every setting comes from the environment, with the defaults documented in README.md. All of them are
// checked here, with zod, before anything starts: a bad start names every bad setting at once.
//
// Two modes. By default every secret and the public URL must be set (the service refuses to start
// without them). Development mode (APP_MODE=development, or `--dev` on the command line, which
// `npm start` uses for the demo) fills them with public development values and seeds demo data; the
// service logs a warning that it is not for production.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
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
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
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
  /** The bucket of FILE_STORAGE=s3; null otherwise. */
  s3: S3Settings | null;
  /** PostgreSQL: the most connections one instance opens (its pg pool size). */
  databasePoolMax: number;
  /** Largest lead attachment, in bytes (decoded). */
  leadFileMaxBytes: number;
  /** After SIGTERM the process drains and exits within this long; open requests are cut just before. */
  shutdownGraceMs: number;
  /** redis://…; null: caches and key verdicts live in each instance's memory only. */
  redisUrl: string | null;
  /** How long a key's verdict is reused without asking the database (the bound on a revocation without Redis). */
  apiKeyCacheTtlMs: number;
  /** Serve repeated reads from the response cache (src/response-cache.ts). */
  responseCache: boolean;
  /** NODE_ENV=production: introspection needs `read:schema`, errors carry no field suggestions. */
  production: boolean;
  /** Serve GraphiQL (/graphql in a browser) and Swagger UI (/docs). */
  explorers: boolean;
  /** The highest estimated cost one GraphQL operation may have (src/graphql-limits.ts). */
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
  /** Estimated GraphQL cost (src/graphql-limits.ts) one key may spend per window, on both doors. */
  keyCost: number;
  /** The window of the per-client-address limits below. */
  addressWindowMs: number;
  /** Requests with a key that is not accepted, per client address per address window. */
  authFailures: number;
  /** Sign-on token redemptions per client address per address window. */
  signOnRedemptions: number;
  /** What the counters' names start with in Redis (deployments, or test runs, sharing one Redis keep apart). */
  redisPrefix: string;
}

/** The default of GRAPHQL_MAX_COST (src/graphql-limits.ts explains the cost). */
export const DEFAULT_GRAPHQL_MAX_COST = 5_000;

/** Below this, a lease could end between two of its renewals on a busy machine. */
export const MIN_OUTBOX_LEASE_MS = 1_000;
const HOUR_MS = 3_600_000;
/** A year: records kept longer only grow the table, retries never come that late. */
const MAX_IDEMPOTENCY_TTL_HOURS = 8_760;
/** The default of DATABASE_POOL_MAX: connections one instance may open to PostgreSQL. */
export const DEFAULT_DATABASE_POOL_MAX = 10;

/** Development mode only: public, so the service refuses to use it outside development mode. */
const DEV_SIGNING_SECRET = 'dev-only-session-signing-secret-change-me';
export const SESSION_SIGNING_SECRET_MIN_LENGTH = 32;

// ─── reporting ───

export interface SettingProblem {
  /** The environment variable at fault. */
  setting: string;
  /** What is wrong and what to do, in words for the operator. */
  message: string;
}

/** Settings that must never be echoed back in a message (their values are secrets or hold passwords). */
const CONFIDENTIAL_SETTINGS = new Set(['SESSION_SIGNING_SECRET', 'SECRETS_ENCRYPTION_KEYS', 'DATABASE_URL', 'SMTP_URL', 'REDIS_URL', 'METRICS_TOKEN']);

/** One or more settings are wrong; the message lists every one of them. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(problems.map((problem) => `${problem.setting} ${problem.message}`).join('; '));
  }
}

function describeProblem(setting: string, message: string, env: NodeJS.ProcessEnv): SettingProblem {
  const raw = env[setting];
  const got = raw !== undefined && raw !== '' && !CONFIDENTIAL_SETTINGS.has(setting) ? ` (got "${raw}")` : '';
  return { setting, message: `${message}${got}` };
}

// ─── the settings, as zod schemas of their environment text ───

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

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[];

const settingsSchema = z.object({
  APP_MODE: optional(z.enum(['production', 'development'], 'must be development or production (or unset)')),
  NODE_ENV: optional(z.string()),
  PORT: wholeNumber(65_535),
  HOST: optional(z.string().trim()),
  DATABASE_URL: optional(
    z.string().trim().superRefine((value, context) => {
      const problem = databaseUrlProblem(value);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    }),
  ),
  LOG_LEVEL: optional(z.enum(logLevels, `must be one of ${logLevels.join(', ')}`)),
  LOG_FORMAT: optional(z.enum(['json', 'pretty'], 'must be json or pretty')),
  METRICS_TOKEN: optional(z.string().trim().regex(/^[\x21-\x7e]{32,256}$/, 'must be 32 to 256 printable characters without spaces (e.g. openssl rand -hex 32)')),
  BODY_LIMIT_BYTES: wholeNumber(),
  SEED_DEMO_DATA: trueOrFalse,
  PUBLIC_URL: httpOrigin,
  PLATFORM_URL: httpOrigin,
  SESSION_SIGNING_SECRET: optional(
    z.string().min(SESSION_SIGNING_SECRET_MIN_LENGTH, `must be at least ${SESSION_SIGNING_SECRET_MIN_LENGTH} characters (e.g. openssl rand -base64 48)`),
  ),
  SECRETS_ENCRYPTION_KEYS: optional(
    z.string().transform((value, context) => {
      const parsed = parseEncryptionKeys(value);
      if ('problems' in parsed) {
        for (const message of parsed.problems) context.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return keyringOf(parsed.keys);
    }),
  ),
  SMTP_URL: optional(
    z.string().trim().refine((value) => /^smtps?:\/\/[^/\s]/.test(value), 'must be smtp://user:pass@host:port or smtps://…'),
  ),
  MAIL_FROM: optional(z.string().trim()),
  FILE_STORAGE: optional(z.enum(FILE_STORAGE_KINDS, `must be one of ${FILE_STORAGE_KINDS.join(', ')}`)),
  API_CONTACT_EMAIL: optional(z.string().trim().email('must be an e-mail address (api-support@example.com)')),
  FILE_STORAGE_DIR: optional(z.string().trim()),
  S3_BUCKET: optional(
    z.string().trim().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens'),
  ),
  S3_KEY_PREFIX: optional(
    z.string().trim().max(200, 'must be at most 200 characters').regex(/^[A-Za-z0-9._\/-]+$/, 'may hold only letters, digits, ".", "_", "-" and "/"'),
  ),
  S3_REGION: optional(z.string().trim().regex(/^[a-z0-9-]{1,64}$/, 'must be a region name such as eu-west-1')),
  AWS_REGION: optional(z.string().trim()),
  S3_ENDPOINT: httpOrigin,
  S3_FORCE_PATH_STYLE: trueOrFalse,
  DATABASE_POOL_MAX: optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, 'must be a whole number from 1 to 1000')
      .transform(Number)
      .refine((value) => value >= 1 && value <= 1_000, 'must be a whole number from 1 to 1000'),
  ),
  LEAD_FILE_MAX_BYTES: wholeNumber(),
  SHUTDOWN_GRACE_MS: positiveWholeNumber,
  HTTP_HEADERS_TIMEOUT_MS: positiveWholeNumber,
  HTTP_REQUEST_TIMEOUT_MS: positiveWholeNumber,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveWholeNumber,
  HTTP_MAX_CONNECTIONS: positiveWholeNumber,
  OUTBOX_LEASE_MS: optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, `must be a whole number of milliseconds, at least ${MIN_OUTBOX_LEASE_MS}`)
      .transform(Number)
      .refine((value) => value >= MIN_OUTBOX_LEASE_MS && value <= Number.MAX_SAFE_INTEGER, `must be a whole number of milliseconds, at least ${MIN_OUTBOX_LEASE_MS}`),
  ),
  OUTBOX_POLL_INTERVAL_MS: positiveWholeNumber,
  IDEMPOTENCY_TTL_HOURS: optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, `must be a whole number of hours from 1 to ${MAX_IDEMPOTENCY_TTL_HOURS}`)
      .transform(Number)
      .refine((value) => value >= 1 && value <= MAX_IDEMPOTENCY_TTL_HOURS, `must be a whole number of hours from 1 to ${MAX_IDEMPOTENCY_TTL_HOURS}`),
  ),
  REDIS_URL: optional(z.string().trim().refine((value) => /^rediss?:\/\/[^/\s]/.test(value), 'must be redis://host:6379 or rediss://…')),
  API_KEY_CACHE_TTL_MS: wholeNumber(),
  RESPONSE_CACHE: trueOrFalse,
  EXPLORERS: trueOrFalse,
  GRAPHQL_MAX_COST: positiveWholeNumber,
  RATE_LIMIT_WINDOW_SECONDS: positiveWholeNumber,
  RATE_LIMIT_KEY_REQUESTS: wholeNumber(),
  RATE_LIMIT_DEALERSHIP_REQUESTS: wholeNumber(),
  RATE_LIMIT_KEY_COST: wholeNumber(),
  RATE_LIMIT_ADDRESS_WINDOW_SECONDS: positiveWholeNumber,
  RATE_LIMIT_AUTH_FAILURES: wholeNumber(),
  RATE_LIMIT_SIGN_ON: wholeNumber(),
  TRUST_PROXY: wholeNumber(10),
  RATE_LIMIT_REDIS_PREFIX: optional(z.string().trim().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable characters without spaces')),
  CORS_ORIGINS: optional(
    z.string().transform((value, context) => {
      const parsed = parseCorsOrigins(value);
      if ('problem' in parsed) {
        context.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }
      return parsed.origins;
    }),
  ),
});

type SettingName = keyof typeof settingsSchema.shape;
type Settings = z.output<typeof settingsSchema>;

/** Settings the service cannot run safely without; development mode supplies public stand-ins. */
const REQUIRED_OUTSIDE_DEVELOPMENT = {
  PUBLIC_URL: "is required: set it to this service's public origin, e.g. https://api.example.com",
  SESSION_SIGNING_SECRET: `is required: set it to a random value of ${SESSION_SIGNING_SECRET_MIN_LENGTH}+ characters, shared by all instances (e.g. openssl rand -base64 48)`,
  SECRETS_ENCRYPTION_KEYS: 'is required: set it to <key id>:<base64 32-byte key>; make one with: npm run --silent secrets -- new-key',
} as const satisfies Partial<Record<SettingName, string>>;

const DEVELOPMENT_MODE_HINT = ' (or start in development mode, APP_MODE=development or --dev, for a local demo only)';

/**
 * Validates the chosen settings, and the mode rules for those of them that are required outside
 * development mode. Throws one ConfigError listing every problem.
 */
function parseSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): Pick<Settings, K | 'APP_MODE'> & { mode: AppMode } {
  const mask: { [P in SettingName]?: true } = Object.fromEntries([...names, 'APP_MODE', 'NODE_ENV'].map((name) => [name, true]));
  // The picked schema's output is the chosen part of Settings (zod cannot type a generic pick).
  const result = (settingsSchema.pick(mask) as unknown as z.ZodType<Partial<Settings>>).safeParse(env);
  const problems: SettingProblem[] = [];
  if (!result.success) {
    for (const issue of result.error.issues) {
      const setting = String(issue.path[0] ?? 'environment');
      problems.push(describeProblem(setting, issue.message, env));
    }
  }
  const settings: Partial<Settings> = result.success ? result.data : {};
  const mode: AppMode = settings.APP_MODE === 'development' ? 'development' : 'production';
  if (mode === 'development' && env.NODE_ENV === 'production') {
    problems.push({ setting: 'APP_MODE', message: 'development cannot be combined with NODE_ENV=production: remove one of them' });
  }
  if (mode === 'production') {
    for (const [setting, message] of Object.entries(REQUIRED_OUTSIDE_DEVELOPMENT) as [keyof typeof REQUIRED_OUTSIDE_DEVELOPMENT, string][]) {
      const alreadyReported = problems.some((problem) => problem.setting === setting);
      if ((names as readonly string[]).includes(setting) && unsetIfEmpty(env[setting]) === undefined && !alreadyReported) {
        problems.push({ setting, message: `${message}${DEVELOPMENT_MODE_HINT}` });
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...(settings as Pick<Settings, K | 'APP_MODE'>), mode };
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

const DEFAULT_DATABASE_URL = 'file:./data/dealership.db';

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
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine' | 'redisUrl'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'REDIS_URL']);
  const databaseUrl = settings.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  return { databaseUrl, engine: engineOf(databaseUrl), redisUrl: settings.REDIS_URL ?? null };
}

function keyringFrom(settings: { SECRETS_ENCRYPTION_KEYS?: Keyring | undefined }, developmentDefaults: string[]): Keyring {
  if (settings.SECRETS_ENCRYPTION_KEYS) return settings.SECRETS_ENCRYPTION_KEYS;
  // parseSettings has refused a missing key outside development mode.
  developmentDefaults.push('SECRETS_ENCRYPTION_KEYS');
  return keyringOf([DEVELOPMENT_KEY]);
}

/** What the secrets CLI needs: the database and the encryption keys. */
export function loadSecretsConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine' | 'mode' | 'secretsKeyring'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'SECRETS_ENCRYPTION_KEYS']);
  const databaseUrl = settings.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  return { databaseUrl, engine: engineOf(databaseUrl), mode: settings.mode, secretsKeyring: keyringFrom(settings, []) };
}

/** What `secrets record-session-secret` needs: the database and the session signing secret. */
export function loadSessionSecretConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'databaseUrl' | 'engine' | 'sessionSigningSecret'> {
  const settings = parseSettings(env, ['DATABASE_URL', 'SESSION_SIGNING_SECRET']);
  const databaseUrl = settings.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  // parseSettings has refused a missing secret outside development mode.
  return { databaseUrl, engine: engineOf(databaseUrl), sessionSigningSecret: settings.SESSION_SIGNING_SECRET ?? DEV_SIGNING_SECRET };
}

/** Every setting, checked; throws a ConfigError naming each bad or missing one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const settings = parseSettings(env, Object.keys(settingsSchema.shape) as SettingName[]);
  const developmentDefaults: string[] = [];
  const port = settings.PORT ?? 4000;
  const databaseUrl = settings.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  let publicUrl = settings.PUBLIC_URL;
  if (publicUrl === undefined) {
    developmentDefaults.push('PUBLIC_URL');
    publicUrl = `http://localhost:${port}`;
  }
  let sessionSigningSecret = settings.SESSION_SIGNING_SECRET;
  if (sessionSigningSecret === undefined) {
    developmentDefaults.push('SESSION_SIGNING_SECRET');
    sessionSigningSecret = DEV_SIGNING_SECRET;
  }
  const secretsKeyring = keyringFrom(settings, developmentDefaults);
  const httpHeadersTimeoutMs = settings.HTTP_HEADERS_TIMEOUT_MS ?? 10_000;
  const httpRequestTimeoutMs = settings.HTTP_REQUEST_TIMEOUT_MS ?? 30_000;
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError([
      { setting: 'HTTP_HEADERS_TIMEOUT_MS', message: 'must not be greater than HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)' },
    ]);
  }
  const engine = engineOf(databaseUrl);
  // Several instances share a PostgreSQL database, so there the files go where all of them read;
  // a SQLite file belongs to one process, and so may its files' directory.
  const fileStorage: FileStorageKind = settings.FILE_STORAGE ?? (engine === 'postgresql' ? 'database' : 'local');
  let s3: S3Settings | null = null;
  if (fileStorage === 's3') {
    if (settings.S3_BUCKET === undefined) {
      throw new ConfigError([{ setting: 'S3_BUCKET', message: 'is required with FILE_STORAGE=s3: set it to the bucket that keeps lead attachments' }]);
    }
    const keyPrefix = settings.S3_KEY_PREFIX ?? '';
    s3 = {
      bucket: settings.S3_BUCKET,
      keyPrefix: keyPrefix === '' || keyPrefix.endsWith('/') ? keyPrefix : `${keyPrefix}/`,
      region: settings.S3_REGION ?? settings.AWS_REGION ?? 'us-east-1',
      endpoint: settings.S3_ENDPOINT ?? null,
      forcePathStyle: settings.S3_FORCE_PATH_STYLE ?? false,
    };
  }
  const graphqlMaxCost = settings.GRAPHQL_MAX_COST ?? DEFAULT_GRAPHQL_MAX_COST;
  const rateLimits = rateLimitSettings(settings, graphqlMaxCost);
  return {
    mode: settings.mode,
    developmentDefaults,
    port,
    host: settings.HOST ?? '0.0.0.0',
    databaseUrl,
    engine,
    logLevel: settings.LOG_LEVEL ?? 'info',
    // Readable lines are for a person at a terminal running the demo; anything else gets JSON.
    logFormat: settings.LOG_FORMAT ?? (settings.mode === 'development' && process.stdout.isTTY === true ? 'pretty' : 'json'),
    metricsToken: settings.METRICS_TOKEN ?? null,
    // Lead attachments travel base64-encoded inside the JSON body, so the body limit leaves room for them.
    bodyLimitBytes: settings.BODY_LIMIT_BYTES ?? 10 * 1024 * 1024,
    // Demo data belongs to the development demo: a real deployment never gets it by accident.
    seedDemoData: settings.SEED_DEMO_DATA ?? settings.mode === 'development',
    publicUrl,
    platformUrl: settings.PLATFORM_URL ?? 'http://localhost:3000',
    sessionSigningSecret,
    secretsKeyring,
    smtpUrl: settings.SMTP_URL ?? null,
    mailFrom: settings.MAIL_FROM ?? 'Dealership Platform <no-reply@dealership.local>',
    fileStorage,
    apiContactEmail: settings.API_CONTACT_EMAIL ?? null,
    fileStorageDir: path.resolve(projectRoot, settings.FILE_STORAGE_DIR ?? 'data/files'),
    s3,
    // pg's own default; see README (PostgreSQL, Connections) for sizing it against max_connections.
    databasePoolMax: settings.DATABASE_POOL_MAX ?? DEFAULT_DATABASE_POOL_MAX,
    leadFileMaxBytes: settings.LEAD_FILE_MAX_BYTES ?? 5 * 1024 * 1024,
    shutdownGraceMs: settings.SHUTDOWN_GRACE_MS ?? 10_000,
    // Node's own defaults (60 s for headers, 300 s per request) let a slow client hold a connection for minutes.
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: settings.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 5_000,
    httpMaxConnections: settings.HTTP_MAX_CONNECTIONS ?? 1_000,
    outboxLeaseMs: settings.OUTBOX_LEASE_MS ?? 120_000,
    outboxPollIntervalMs: settings.OUTBOX_POLL_INTERVAL_MS ?? 5_000,
    idempotencyTtlMs: (settings.IDEMPOTENCY_TTL_HOURS ?? 24) * HOUR_MS,
    redisUrl: settings.REDIS_URL ?? null,
    apiKeyCacheTtlMs: settings.API_KEY_CACHE_TTL_MS ?? 5_000,
    responseCache: settings.RESPONSE_CACHE ?? true,
    production: env.NODE_ENV === 'production',
    // The explorers are a development aid; a production deployment opts in with EXPLORERS=on.
    explorers: settings.EXPLORERS ?? env.NODE_ENV !== 'production',
    corsOrigins: settings.CORS_ORIGINS ?? [],
    graphqlMaxCost,
    rateLimits,
    trustProxyHops: settings.TRUST_PROXY ?? 0,
  };
}

/** The defaults of the rate limits (README, Rate limits). */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  windowMs: 60_000,
  keyRequests: 600,
  dealershipRequests: 1_200,
  // Ten operations at the highest cost one may have (GRAPHQL_MAX_COST), or about 190 pages of 20 cars a minute.
  keyCost: 50_000,
  addressWindowMs: 300_000,
  authFailures: 20,
  signOnRedemptions: 20,
  redisPrefix: 'dgw:rate:',
};

function rateLimitSettings(settings: Partial<Settings>, graphqlMaxCost: number): RateLimitSettings {
  const keyCost = settings.RATE_LIMIT_KEY_COST ?? DEFAULT_RATE_LIMITS.keyCost;
  // A budget below the cost of one allowed operation would refuse that operation forever.
  if (keyCost !== 0 && keyCost < graphqlMaxCost) {
    throw new ConfigError([
      { setting: 'RATE_LIMIT_KEY_COST', message: `must be 0 (no budget) or at least GRAPHQL_MAX_COST (${graphqlMaxCost}), the cost one operation may have (got "${keyCost}")` },
    ]);
  }
  return {
    windowMs: (settings.RATE_LIMIT_WINDOW_SECONDS ?? DEFAULT_RATE_LIMITS.windowMs / 1_000) * 1_000,
    keyRequests: settings.RATE_LIMIT_KEY_REQUESTS ?? DEFAULT_RATE_LIMITS.keyRequests,
    dealershipRequests: settings.RATE_LIMIT_DEALERSHIP_REQUESTS ?? DEFAULT_RATE_LIMITS.dealershipRequests,
    keyCost,
    addressWindowMs: (settings.RATE_LIMIT_ADDRESS_WINDOW_SECONDS ?? DEFAULT_RATE_LIMITS.addressWindowMs / 1_000) * 1_000,
    authFailures: settings.RATE_LIMIT_AUTH_FAILURES ?? DEFAULT_RATE_LIMITS.authFailures,
    signOnRedemptions: settings.RATE_LIMIT_SIGN_ON ?? DEFAULT_RATE_LIMITS.signOnRedemptions,
    redisPrefix: settings.RATE_LIMIT_REDIS_PREFIX ?? DEFAULT_RATE_LIMITS.redisPrefix,
  };
}
