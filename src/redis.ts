// Redis, when REDIS_URL is set: what instances share (key changes now; caches and rate limits use the
// same connection). Redis is an accelerator, never a dependency of an answer: while it is down the
// service keeps serving from its own memory and logs the outage, it does not fail requests.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { KeyChangeFeed } from './auth/key-cache.ts';

/** The channel of key changes, after the deployment's prefix (channels are not keys: ioredis does not prefix them). */
const KEY_CHANGES_CHANNEL = 'api-key-changed';

export interface RedisConnections {
  /** What every key (applied by the client itself) and channel of this deployment starts with. */
  prefix: string;
  /** Commands (caches, counters, publishing); every key it names is prefixed with `prefix`. */
  client: Redis;
  /** A connection in subscriber mode, which can do nothing else. */
  subscriber: Redis;
  /** Resolves once both connections are up (the CLI waits before it announces; fails after `timeoutMs`). */
  ready(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function readyWithin(connection: Redis, timeoutMs: number): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis not ready within ${timeoutMs} ms`)), timeoutMs);
    connection.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** `prefix`: the deployment's (src/domain/shared-settings.ts, redisKeyPrefixOf), put before every key and channel. */
export function connectRedis(url: string, logger: Logger, prefix: string): RedisConnections {
  const open = (role: string): Redis => {
    const connection = new Redis(url, {
      keyPrefix: prefix,
      // Fail fast rather than queue: a command while Redis is down is answered from memory instead.
      enableOfflineQueue: role === 'subscriber',
      maxRetriesPerRequest: 1,
      lazyConnect: false,
    });
    let down = false;
    connection.on('error', (error: Error) => {
      if (!down) logger.warn({ err: { message: error.message }, redis: role }, 'Redis unavailable: serving from local memory until it is back');
      down = true;
    });
    connection.on('ready', () => {
      if (down) logger.info({ redis: role }, 'Redis is back');
      down = false;
    });
    return connection;
  };
  const client = open('client');
  const subscriber = open('subscriber');
  return {
    prefix,
    client,
    subscriber,
    async ready(timeoutMs = 2_000) {
      await Promise.all([readyWithin(client, timeoutMs), readyWithin(subscriber, timeoutMs)]);
    },
    async close() {
      await Promise.allSettled([client.quit(), subscriber.quit()]);
    },
  };
}

/** Key changes announced to every instance through publish/subscribe. */
export function redisKeyChangeFeed(redis: RedisConnections, logger: Logger): KeyChangeFeed {
  const listeners = new Set<(apiKeyId: number) => void>();
  const channelName = `${redis.prefix}${KEY_CHANGES_CHANNEL}`;
  let subscribed = false;
  redis.subscriber.on('message', (channel: string, message: string) => {
    if (channel !== channelName) return;
    const apiKeyId = Number(message);
    if (Number.isInteger(apiKeyId)) listeners.forEach((listener) => listener(apiKeyId));
  });
  return {
    async publish(apiKeyId) {
      try {
        await redis.client.publish(channelName, String(apiKeyId));
      } catch (error) {
        logger.warn({ err: { message: (error as Error).message }, apiKeyId }, 'could not announce a key change; instances see it within API_KEY_CACHE_TTL_MS');
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      if (!subscribed) {
        subscribed = true;
        redis.subscriber.subscribe(channelName).catch((error: unknown) => {
          subscribed = false;
          logger.warn({ err: { message: (error as Error).message } }, 'could not subscribe to key changes');
        });
      }
      return () => listeners.delete(listener);
    },
  };
}
