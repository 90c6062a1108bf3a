// Redis, when REDIS_URL is set: what instances share (key changes now; caches and rate limits use the
// same connection). Redis is an accelerator, never a dependency of an answer: while it is down the
// service keeps serving from its own memory and logs the outage, it does not fail requests.
//
// A Redis that does not answer must not hold requests up either. Every command has a timeout
// (REDIS_COMMAND_TIMEOUT_MS), and a circuit breaker sits in front of the command connection: after
// BREAKER_FAILURES failures in a row it stops asking Redis for BREAKER_OPEN_MS (each command fails at
// once, and its caller answers from memory), then lets one command through to probe. The breaker logs
// the outage once when it opens and once when Redis answers again, and tells the metrics.
import { Redis, type Command } from 'ioredis';
import type { Logger } from 'pino';
import type { KeyChangeFeed } from '../auth/key-cache.ts';

/** The channel of key changes, after the deployment's prefix (channels are not keys: ioredis does not prefix them). */
const KEY_CHANGES_CHANNEL = 'api-key-changed';

/** Failures in a row that open the breaker. */
export const BREAKER_FAILURES = 3;
/** How long an open breaker answers every command at once, before it lets one through to probe. */
const BREAKER_OPEN_MS = 1_000;

export interface RedisConnections {
  /** What every key (applied by the client itself) and channel of this deployment starts with. */
  prefix: string;
  /** False while the breaker is open: Redis is not being asked. */
  available(): boolean;
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

/**
 * The breaker in front of a connection's commands (see the top of this file). Commands sent while the
 * connection is not ready (its own handshake) pass untouched: ioredis refuses them at once itself.
 */
function guardCommands(connection: Redis, logger: Logger, onChange: (available: boolean) => void): () => boolean {
  let failures = 0;
  let openUntil = 0;
  let open = false;
  let probing = false;
  const send = connection.sendCommand.bind(connection) as (command: Command, stream?: unknown) => unknown;
  const succeeded = (): void => {
    failures = 0;
    probing = false;
    if (!open) return;
    open = false;
    logger.info('Redis answers again: caches and rate limits are shared through it again');
    onChange(true);
  };
  const failed = (error: unknown): void => {
    probing = false;
    failures += 1;
    if (open) {
      openUntil = Date.now() + BREAKER_OPEN_MS;
    } else if (failures >= BREAKER_FAILURES) {
      open = true;
      openUntil = Date.now() + BREAKER_OPEN_MS;
      logger.warn(
        { err: { message: (error as Error).message } },
        "Redis unavailable: serving from this instance's memory (response cache bypassed, rate limits counted here, key changes within API_KEY_CACHE_TTL_MS) until it answers",
      );
      onChange(false);
    }
  };
  (connection as unknown as { sendCommand: (command: Command, stream?: unknown) => unknown }).sendCommand = (command, stream) => {
    if (connection.status === 'ready' && open) {
      if (probing || Date.now() < openUntil) {
        command.reject(new Error('Redis not asked: its circuit breaker is open'));
        return command.promise;
      }
      probing = true;
    }
    const sent = send(command, stream);
    command.promise.then(succeeded, failed);
    return sent;
  };
  return () => !open;
}

/**
 * `prefix`: the deployment's (src/domain/shared-settings.ts, redisKeyPrefixOf), put before every key
 * and channel; `commandTimeoutMs`: REDIS_COMMAND_TIMEOUT_MS; `onAvailability`: told when the breaker
 * opens (false) and closes (true), for the metrics.
 */
export function connectRedis(
  url: string,
  logger: Logger,
  prefix: string,
  options: { commandTimeoutMs?: number; onAvailability?: (available: boolean) => void } = {},
): RedisConnections {
  const open = (role: string): Redis => {
    const connection = new Redis(url, {
      keyPrefix: prefix,
      ...(options.commandTimeoutMs !== undefined && role === 'client' ? { commandTimeout: options.commandTimeoutMs } : {}),
      // Fail fast rather than queue: a command while Redis is down is answered from memory instead.
      enableOfflineQueue: role === 'subscriber',
      maxRetriesPerRequest: 1,
      lazyConnect: false,
    });
    let down = false;
    connection.on('error', (error: Error) => {
      // Debug only: the outage's one line is the breaker's, when a command first meets it.
      if (!down) logger.debug({ err: { message: error.message }, redis: role }, 'Redis connection lost; reconnecting');
      down = true;
    });
    connection.on('ready', () => {
      if (down) logger.debug({ redis: role }, 'Redis connection back');
      down = false;
    });
    return connection;
  };
  const client = open('client');
  const subscriber = open('subscriber');
  const available = guardCommands(client, logger, options.onAvailability ?? (() => undefined));
  return {
    prefix,
    available,
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
    if (Number.isInteger(apiKeyId)) for (const listener of listeners) listener(apiKeyId);
  });
  return {
    async publish(apiKeyId) {
      try {
        await redis.client.publish(channelName, String(apiKeyId));
      } catch (error) {
        logger.warn(
          { err: { message: (error as Error).message }, apiKeyId },
          'could not announce a key change; instances see it within API_KEY_CACHE_TTL_MS',
        );
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
