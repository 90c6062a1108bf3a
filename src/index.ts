// The only place that opens a port: prepares the database, serves the app, shuts down cleanly.
import { loadConfig } from './config.ts';
import { createDb } from './db/client.ts';
import { prepareDatabase } from './db/prepare.ts';
import { createHttpServer } from './http-server.ts';
import { createLogger } from './logger.ts';
import { startOutboxWorker } from './notifications/worker.ts';
import { createApp } from './yoga.ts';
import { createKeyVerifier } from './auth/key-cache.ts';
import { connectRedis, redisKeyChangeFeed } from './redis.ts';
import { inMemoryReadCache, redisGeneration, redisStore } from './response-cache.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const db = createDb(config.databaseUrl);

async function main(): Promise<void> {
  await prepareDatabase(config, db, logger);
  const now = (): Date => new Date();
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : null;
  const keys = createKeyVerifier({ db, now, ttlMs: config.apiKeyCacheTtlMs, changes: redis ? redisKeyChangeFeed(redis, logger) : null });
  const readCache = !config.responseCache
    ? null
    : redis
      ? { generation: redisGeneration(redis.client, logger), store: redisStore(redis.client, logger) }
      : inMemoryReadCache();
  const deps = { config, db, logger, now, keys, readCache };
  const app = createApp(deps);
  const server = createHttpServer(app, config.bodyLimitBytes, logger);
  // Delivers lead notifications; every instance runs one, and claims keep a message to one sender.
  const outbox = startOutboxWorker(deps);
  server.listen(config.port, config.host, () => {
    logger.info(
      { port: config.port, engine: config.engine },
      `listening on http://localhost:${config.port} (GraphiQL at /graphql, REST docs at /docs); get a key with: npm run --silent keys -- create --name demo --all-permissions`,
    );
  });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing open requests');
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
    force.unref();
    server.close(() => {
      outbox
        .stop()
        .then(() => Promise.all([db.$disconnect(), redis?.close()]))
        .catch((error: unknown) => logger.error({ err: error }, 'closing the database failed'))
        .finally(() => {
          logger.info('stopped');
          process.exit(0);
        });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  logger.fatal({ err: error }, 'start-up failed');
  process.exit(1);
});
