// The configuration the service runs with, as loadConfig (src/config/load.ts) hands it out.
import type { LeadSourceLists } from './api.ts';
import type { Keyring } from './secrets.ts';
import type { AppMode } from './app.ts';
import type { Engine } from './database.ts';
import type { RateLimitSettings } from './rate-limits.ts';
import type { FileStorageKind, S3Settings } from './storage.ts';
import type { LogFormat, LogLevel, TracingConfig } from './telemetry.ts';

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
  /** How long one Redis command may take before it is given up on (that call alone: src/redis/client.ts). */
  redisCommandTimeoutMs: number;
  /** How long Redis commands must keep failing, no success between, before Redis is taken for down (src/redis/client.ts). */
  redisOutageAfterMs: number;
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
  /** How often an open subscription stream is sent a heartbeat (src/gateway/live-streams.ts). */
  subscriptionHeartbeatMs: number;
  /** How many subscriptions one key may hold open on one instance (src/gateway/live-events.ts). */
  subscriptionsPerKey: number;
  /** How many subscriptions one instance holds open, every key together (src/gateway/live-events.ts). */
  subscriptionsPerInstance: number;
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
  /** Requests whose body is still arriving, at once; one more is answered 503 (src/http/server.ts). */
  httpMaxUploads: number;
  /** Connections kept free of subscription streams and uploads; idle keep-alive ones are closed to keep them free. */
  httpReservedConnections: number;
  /**
   * How long an outbox claim lasts without renewal: the sender renews it while it sends, so this is
   * how soon another instance retries a message whose sender died (src/notifications/worker.ts).
   */
  outboxLeaseMs: number;
  /** Pause between two outbox polling rounds. */
  outboxPollIntervalMs: number;
  /** Private, loopback or link-local addresses and ranges webhooks may go to all the same (src/domain/webhook-address.ts). */
  webhookAllowedAddresses: readonly string[];
  /** How long a failing webhook delivery is retried before it fails for good and its subscription is disabled. */
  webhookRetryMs: number;
  /** How long a rotated webhook secret keeps signing beside the new one. */
  webhookSecretGraceMs: number;
  /** Pause between two webhook worker rounds. */
  webhookPollIntervalMs: number;
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
