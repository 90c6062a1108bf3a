// Stopping, within SHUTDOWN_GRACE_MS so nothing received is lost: subscription streams end and the
// listening socket closes once the accept queue is empty; every received request is answered with
// `Connection: close`; the outbox worker and background tasks finish; key call counts are written;
// then the database closes. Connections still open just before the end are cut, so the exit is in time.
import { setTimeout as delay } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createKeyVerifier } from './auth/key-cache.ts';
import { ConfigError, type Config } from './config/index.ts';
import { createDb, type Db } from './db/client.ts';
import { createDatabaseClock } from './db/clock.ts';
import { startIdempotencyPurge, type BackgroundTask } from './domain/leads/idempotency.ts';
import { prepareDatabase, type DemoDataSeeder } from './db/prepare.ts';
import type { RedisConnections } from './redis/client.ts';
import { inMemoryReadCache, redisReadCache } from './gateway/response-cache.ts';
import { DatabaseStartupError } from './startup.ts';
import { createHttpServer, type GatewayServer } from './http/server.ts';
import { createLifecycle } from './gateway/lifecycle.ts';
import { startOutboxWorker } from './notifications/worker.ts';
import { createApp } from './gateway/yoga.ts';
import { createDocumentUseLog } from './gateway/trusted-documents.ts';
import type { DocumentUseLog } from './gateway/app.ts';
import { createLiveEventHub, type LiveEventHub } from './gateway/live-events.ts';
import { createPayloadRenderer } from './gateway/webhook-payloads.ts';
import { startWebhookWorker } from './notifications/webhook-worker.ts';
import { getSchema } from './schema/index.ts';
import { createFileStorage } from './storage/file-storage.ts';
import { startFileSweep } from './domain/leads/file-sweep.ts';
import { PostcodeGeocoder } from './domain/geocoding.ts';
import { CACHE_EPOCH_POLL_MS, checkSessionSecret, redisKeyPrefixOf, watchCacheEpoch } from './domain/shared-settings.ts';
import { memoryCounters, RATE_COUNTER_PREFIX, redisCounters } from './rate-limit/counters.ts';
import { createKeyCallLog, KEY_CALL_FLUSH_INTERVAL_MS, startKeyCallPurge, type KeyCallLog } from './domain/api-key-calls.ts';
import { createMetrics } from './telemetry/metrics.ts';
import { startTracing, type Tracing, type TracingOptions } from './telemetry/tracing.ts';

/** Time kept at the end of the grace period for closing the database after connections are cut. */
const CLOSE_RESERVE_MS = 1_000;

interface StopParts {
  http: GatewayServer;
  outbox: BackgroundTask;
  background?: readonly BackgroundTask[];
  /** Flushed once every received request is answered, so the drained requests' calls are counted too. */
  keyCalls?: Pick<KeyCallLog, 'stop'>;
  documentUses?: Pick<DocumentUseLog, 'flush'>;
  db: Pick<Db, '$disconnect'>;
  /** Closed first: its subscriptions' streams end, so their connections are answered rather than held to the cut. */
  liveEvents?: Pick<LiveEventHub, 'close'>;
  redis?: Pick<RedisConnections, 'close'> | null;
  /** Flushed last, once nothing more can make a span. */
  tracing?: Pick<Tracing, 'shutdown'> | null;
  logger: Logger;
  graceMs: number;
}

function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    const settled = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(settled, settled);
  });
}

async function stopService(parts: StopParts, signal: string) {
  const { http, outbox, background = [], keyCalls, documentUses, db, redis, liveEvents, tracing, logger, graceMs } = parts;
  const started = Date.now();
  const deadline = started + graceMs;
  logger.info(
    { signal, grace_ms: graceMs, open_connections: http.openConnections() },
    'shutting down: /ready is 503, new connections answered 503 until the listening socket closes, answering the requests received',
  );
  liveEvents?.close();

  let cutConnections = 0;
  const cutAfterMs = Math.max(graceMs - CLOSE_RESERVE_MS, graceMs / 2);
  const cut = setTimeout(() => {
    cutConnections = http.cutConnections();
    logger.warn({ connections: cutConnections, grace_ms: graceMs }, 'grace period ending: cut the connections still open');
  }, cutAfterMs);

  const outboxStopped = Promise.all([
    outbox.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the outbox worker failed')),
    ...background.map((task) => task.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping a background task failed'))),
  ]);
  // Idle keep-alive connections get at most half the grace period, so an idle client never holds the exit up to the cut.
  await http.drain(graceMs / 2);
  clearTimeout(cut);
  const keyCallsFlushed = keyCalls?.stop().catch((error: unknown) => logger.error({ err: error }, 'flushing the API key call log failed'));
  let closedInTime = await settledBy(Promise.all([outboxStopped, keyCallsFlushed, documentUses?.flush()]), deadline);
  if (!closedInTime)
    logger.warn('the outbox worker was still sending at the end of the grace period; its lease lets another instance retry');
  const disconnected = Promise.all([
    db.$disconnect().catch((error: unknown) => logger.error({ err: error }, 'closing the database failed')),
    redis?.close(),
  ]);
  closedInTime = (await settledBy(disconnected, deadline)) && closedInTime;
  if (tracing) {
    const flushed = tracing.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'sending the last spans failed'));
    closedInTime = (await settledBy(flushed, deadline)) && closedInTime;
  }
  const report = { signal, cutConnections, closedInTime, ms: Date.now() - started };
  logger.info({ ...report }, 'stopped');
  return report;
}

interface StartOptions {
  tracing?: TracingOptions;
  demoData?: DemoDataSeeder;
}

async function openDatabase(config: Config, logger: Logger, tracing: Tracing | null, demoData: DemoDataSeeder | null): Promise<Db> {
  let db: Db;
  try {
    db = createDb(config.databaseUrl, {
      poolMax: config.databasePoolMax,
      traced: tracing !== null,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
    });
  } catch (error) {
    await tracing?.shutdown();
    throw new DatabaseStartupError(config.databaseUrl, error);
  }
  // Reported against DATABASE_URL, except the stored secrets' check, which names SECRETS_ENCRYPTION_KEYS itself.
  await prepareDatabase(config, db, logger, demoData).catch((error: unknown) => {
    throw error instanceof ConfigError ? error : new DatabaseStartupError(config.databaseUrl, error);
  });
  // Instances sharing a database must sign with one secret; a differing one stops this start and names SESSION_SIGNING_SECRET.
  const secretCheck = await checkSessionSecret(db, config.sessionSigningSecret).catch(async (error: unknown) => {
    await db.$disconnect();
    throw error instanceof ConfigError ? error : new DatabaseStartupError(config.databaseUrl, error);
  });
  if (secretCheck === 'recorded')
    logger.info('recorded the fingerprint of SESSION_SIGNING_SECRET: instances sharing this database must use the same secret');
  return db;
}

/** Rules comparing times across requests and instances read the database's clock: read once, then kept in step. */
async function startDatabaseClock(config: Config, db: Db, logger: Logger) {
  const clock = createDatabaseClock(db, config.engine);
  try {
    await clock.sync();
  } catch (error) {
    await db.$disconnect();
    throw new DatabaseStartupError(config.databaseUrl, error);
  }
  clock.start(logger);
  logger.info({ offset_ms: clock.offsetMs() }, 'database clock read: the rules use its time');
  return clock;
}

export async function startService(config: Config, logger: Logger, options: StartOptions = {}) {
  const tracing = await startTracing(config.tracing, options.tracing);
  if (tracing)
    logger.info(
      { exporter: config.tracing?.exporter ?? 'given', endpoint: config.tracing?.otlpUrl ?? undefined },
      'traces on: a span per request, operation and SQL statement',
    );
  const db = await openDatabase(config, logger, tracing, options.demoData ?? null);
  const lifecycle = createLifecycle();
  const clock = await startDatabaseClock(config, db, logger);
  const now = clock.now;
  // Loaded only when Redis is configured: a single instance never pays for it.
  const redisModule = config.redisUrl ? await import('./redis/client.ts') : null;
  const redis =
    redisModule && config.redisUrl
      ? redisModule.connectRedis(config.redisUrl, logger, await redisKeyPrefixOf(db, config.redisKeyPrefix), {
          commandTimeoutMs: config.redisCommandTimeoutMs,
          outageAfterMs: config.redisOutageAfterMs,
        })
      : null;
  const keys = createKeyVerifier({
    db,
    now,
    ttlMs: config.apiKeyCacheTtlMs,
    changes: redis && redisModule ? redisModule.redisKeyChangeFeed(redis, logger) : null,
  });
  // With Redis, a write whose generation Redis did not take is announced through the database instead.
  const cacheEpoch = redis && config.responseCache ? watchCacheEpoch(db, CACHE_EPOCH_POLL_MS) : null;
  const readCache = !config.responseCache
    ? null
    : redis
      ? redisReadCache(redis.client, logger, cacheEpoch ?? undefined)
      : inMemoryReadCache();
  const files = createFileStorage(config, db);
  const rateCounters = redis ? redisCounters(redis.client, { prefix: RATE_COUNTER_PREFIX }) : memoryCounters();
  const keyCalls = createKeyCallLog({ db, engine: config.engine, now, logger, flushIntervalMs: KEY_CALL_FLUSH_INTERVAL_MS });
  const documentUses = createDocumentUseLog({ db, logger });
  // One registry for the app and the outbox worker: what /metrics shows is this whole instance.
  const metrics = createMetrics({ db, now, logger, ...(redis ? { redisAvailable: redis.available } : {}) });
  const geocoder = new PostcodeGeocoder();
  const liveEvents = createLiveEventHub({
    perKeyLimit: config.subscriptionsPerKey,
    instanceLimit: config.subscriptionsPerInstance,
    logger,
    redis,
    keyChanges: keys,
  });
  const deps = {
    config,
    db,
    logger,
    now,
    keys,
    readCache,
    files,
    geocoder,
    rateCounters,
    keyCalls,
    documentUses,
    lifecycle,
    metrics,
    events: liveEvents,
    liveEvents,
  };
  const http = createHttpServer(createApp(deps), config, logger, lifecycle);
  // Listen once the hub has subscribed to other instances' channel, but never wait on a frozen Redis longer than a command.
  await Promise.race([liveEvents.ready(), delay(config.redisCommandTimeoutMs, undefined, { ref: false })]);
  let address: AddressInfo;
  try {
    address = await http.listen(config.port, config.host);
  } catch (error) {
    keys.close();
    clock.stop();
    await keyCalls.stop();
    await Promise.all([db.$disconnect(), redis?.close()]);
    throw error;
  }
  // Every instance runs one; claims keep a message to one sender.
  const outbox = startOutboxWorker(deps);
  const webhooks = startWebhookWorker({
    db,
    config,
    logger,
    now,
    render: createPayloadRenderer(deps, getSchema()),
    intervalMs: config.webhookPollIntervalMs,
  });
  const background: BackgroundTask[] = [
    webhooks,
    { stop: async () => clock.stop() },
    { stop: async () => cacheEpoch?.stop() },
    startIdempotencyPurge({ db, engine: config.engine, now, ttlMs: config.idempotencyTtlMs, logger }),
    startKeyCallPurge({ db, engine: config.engine, now, retentionMs: config.apiKeyCallsRetentionMs, logger }),
    startFileSweep({ db, files, now, logger, graceMs: config.fileSweepGraceMs, holder: `${hostname()}:${process.pid}:${randomUUID()}` }),
  ];
  let stopping: ReturnType<typeof stopService> | undefined;
  return {
    address,
    http,
    stop(signal: string) {
      keys.close();
      stopping ??= stopService(
        { http, outbox, background, keyCalls, documentUses, db, redis, liveEvents, tracing, logger, graceMs: config.shutdownGraceMs },
        signal,
      );
      return stopping;
    },
  };
}
