// Redis is an accelerator, never a dependency of an answer: while it is down the service serves from
// memory. A slow Redis must not pass for a down one (that instance would count rate limits alone), so
// each command has a timeout, and only a connection not `ready` or failures for REDIS_OUTAGE_AFTER_MS
// open the breaker, which lets one probe through per BREAKER_PROBE_MS.
import { Redis, type Command } from 'ioredis';
import type { Logger } from 'pino';
import type { KeyChangeFeed } from '../auth/key-cache.ts';
import { SETTINGS } from '../config/index.ts';

/** Channels are not keys: ioredis does not prefix them. */
const KEY_CHANGES_CHANNEL = 'api-key-changed';

const DEFAULT_OUTAGE_AFTER_MS = Number(SETTINGS.REDIS_OUTAGE_AFTER_MS.default);

const BREAKER_PROBE_MS = 1_000;

export type RedisConnections = ReturnType<typeof connectRedis>;

interface RedisOptions {
  commandTimeoutMs?: number;
  outageAfterMs?: number;
  onAvailability?: (available: boolean) => void;
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

/** Commands sent while the connection is not ready pass untouched: ioredis refuses them at once itself. */
function guardCommands(connection: Redis, logger: Logger, { outageAfterMs = DEFAULT_OUTAGE_AFTER_MS, onAvailability }: RedisOptions) {
  let connected = connection.status === 'ready';
  let failingSince: number | null = null;
  let breakerOpen = false;
  let nextProbeAt = 0;
  let probing = false;
  let down = false;
  let closing = false;
  let lastError = 'the connection is not up';
  const report = (): void => {
    const nowDown = breakerOpen || !connected;
    if (nowDown === down || closing) return;
    down = nowDown;
    if (down) {
      logger.warn(
        { err: { message: lastError } },
        "Redis unavailable: serving from this instance's memory (response cache bypassed, rate limits counted here, key changes within API_KEY_CACHE_TTL_MS) until it answers",
      );
    } else {
      logger.info('Redis answers again: caches and rate limits are shared through it again');
    }
    onAvailability?.(!down);
  };
  const answered = (): void => {
    failingSince = null;
    probing = false;
    if (!breakerOpen) return;
    breakerOpen = false;
    report();
  };
  const failed = (error: unknown): void => {
    probing = false;
    lastError = (error as Error).message;
    // A command refused because the connection is down says nothing the connection's events do not.
    if (connection.status !== 'ready') return;
    const now = Date.now();
    failingSince ??= now;
    if (breakerOpen) {
      nextProbeAt = now + BREAKER_PROBE_MS;
    } else if (now - failingSince >= outageAfterMs) {
      breakerOpen = true;
      nextProbeAt = now + BREAKER_PROBE_MS;
      report();
    }
  };
  connection.on('ready', () => {
    // A new connection's handshake has just been answered: Redis is up, whatever failed before.
    connected = true;
    failingSince = null;
    breakerOpen = false;
    report();
  });
  const lost = (): void => {
    connected = false;
    report();
  };
  connection.on('close', lost);
  connection.on('reconnecting', lost);
  connection.on('end', lost);
  connection.on('error', (error: Error) => {
    lastError = error.message;
  });
  const commands = connection as unknown as { sendCommand: (command: Command, stream?: unknown) => unknown };
  const send = commands.sendCommand.bind(connection);
  commands.sendCommand = (command, stream) => {
    if (connection.status === 'ready' && breakerOpen) {
      if (probing || Date.now() < nextProbeAt) {
        command.reject(new Error('Redis not asked: it has not answered for a while (circuit breaker open)'));
        return command.promise;
      }
      probing = true;
    }
    const sent = send(command, stream);
    command.promise.then(answered, failed);
    return sent;
  };
  return {
    available: () => !down && connected,
    closing: () => {
      closing = true;
    },
  };
}

export function connectRedis(url: string, logger: Logger, prefix: string, options: RedisOptions = {}) {
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
  const guard = guardCommands(client, logger, options);
  return {
    prefix,
    available: guard.available,
    client,
    subscriber,
    async ready(timeoutMs = 2_000): Promise<void> {
      await Promise.all([readyWithin(client, timeoutMs), readyWithin(subscriber, timeoutMs)]);
    },
    async close(): Promise<void> {
      guard.closing();
      await Promise.allSettled([client.quit(), subscriber.quit()]);
    },
  };
}

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
