// Redis is an optimisation, never a single point of failure (src/redis/client.ts): with its own redis-server
// frozen (SIGSTOP), an instance answers every request, most of them without waiting for Redis at all
// (the command timeout and the circuit breaker), serves its own write's new value rather than a cached
// old one (the owed generation: src/gateway/response-cache.ts), keeps /ready at 200, logs the outage once and
// Redis's return once, and once Redis answers again publishes the generation its write owed. An
// instance cut off from a Redis the others still reach makes them drop results from before its
// write through the database's cache epoch. A Redis that answers late, again and again, is not an
// outage: the breaker stays closed and rate limits are still counted in Redis; a connection that is
// lost is one at once, and commands failing for longer than the outage window are one too.
import type { ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyVerifier, type KeyVerifier } from '../src/auth/key-cache.ts';
import { RATE_COUNTER_PREFIX, redisCounters } from '../src/rate-limit/counters.ts';
import { Redis } from 'ioredis';
import { connectRedis, redisKeyChangeFeed, type RedisConnections } from '../src/redis/client.ts';
import { redisReadCache } from '../src/gateway/response-cache.ts';
import { redisKeyPrefixOf, watchCacheEpoch } from '../src/domain/shared-settings.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { startRedisServer } from './support/processes.ts';

/** Long beside a request served from memory, so that the requests which waited for Redis are plain to count. */
const COMMAND_TIMEOUT_MS = 1_000;
/** How long commands must keep failing before the frozen Redis is taken for down. */
const OUTAGE_AFTER_MS = 2_000;
const PREFIX = 'dgw:outage-test:';

let app: TestApp;
let server: ChildProcess;
let port: number;
let redis: RedisConnections;
let keys: KeyVerifier;
let yoga: Yoga;
let key: string;
let dealershipId: number;
const lines: string[] = [];

beforeAll(async () => {
  app = await createTestApp();
  dealershipId = (await makeDealership(app.db)).id;
  ({ key } = await makeKey(app.db, { permissions: ['create:lead', 'read:lead'] }));
  const started = await startRedisServer();
  server = started.server;
  port = started.port;
  const logger = pino(
    { level: 'info' },
    new Writable({
      write: (chunk, _encoding, done) => {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  redis = connectRedis(`redis://127.0.0.1:${port}`, logger, PREFIX, {
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    outageAfterMs: OUTAGE_AFTER_MS,
  });
  await redis.ready();
  keys = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 60_000, changes: redisKeyChangeFeed(redis, logger) });
  yoga = createApp(
    instanceDeps(
      { config: app.config, db: app.db, now: app.clock.now },
      {
        logger,
        keys,
        readCache: redisReadCache(redis.client, logger),
        rateCounters: redisCounters(redis.client, { prefix: RATE_COUNTER_PREFIX }),
      },
    ),
  );
}, 180_000);

afterAll(async () => {
  server.kill('SIGCONT');
  keys.close();
  redis.client.disconnect();
  redis.subscriber.disconnect();
  server.kill('SIGKILL');
});

const LEADS = `query ($d: Int!) { leads(first: 1, dealership_id: $d) { totalCount } }`;

async function leadCount(): Promise<{ count: number; ms: number }> {
  const started = performance.now();
  const response = await yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: LEADS, variables: { d: dealershipId } }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { data: { leads: { totalCount: number } } };
  return { count: body.data.leads.totalCount, ms: performance.now() - started };
}

async function createLead(): Promise<number> {
  const response = await yoga.fetch('http://gateway.test/api/v1/leads', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lead: samplePayload(dealershipId) }),
  });
  return response.status;
}

const outageLines = (): string[] => lines.filter((line) => line.includes('Redis unavailable'));
const returnLines = (): string[] => lines.filter((line) => line.includes('Redis answers again'));

describe('a frozen Redis', () => {
  it('holds no request up: every one is answered, with its own write seen, and the outage logged once', async () => {
    const before = (await leadCount()).count;
    // Cached now: the same read runs no statement.
    app.queries.length = 0;
    expect((await leadCount()).count).toBe(before);
    expect(app.queries).toEqual([]);
    const generationBefore = Number((await redis.client.get('cache:generation')) ?? '0');

    server.kill('SIGSTOP');
    const timings: number[] = [];
    for (let request = 0; request < 30; request += 1) {
      const { count, ms } = await leadCount();
      expect(count).toBe(before);
      timings.push(ms);
    }
    // A write while Redis is frozen: its new generation cannot be published, so this instance stops
    // answering from the cache rather than serving the count from before the write.
    expect(await createLead()).toBe(201);
    for (let request = 0; request < 5; request += 1) expect((await leadCount()).count).toBe(before + 1);
    expect((await yoga.fetch('http://gateway.test/ready')).status).toBe(200);
    expect(redis.available()).toBe(false);

    // Only the requests before the breaker opened (commands failing for OUTAGE_AFTER_MS), and its
    // probes (one a second), waited for the timeout.
    const mostWaited = Math.ceil(OUTAGE_AFTER_MS / COMMAND_TIMEOUT_MS) + 3;
    const waited = timings.filter((ms) => ms >= COMMAND_TIMEOUT_MS).length;
    expect(waited).toBeLessThanOrEqual(mostWaited);
    expect(timings.filter((ms) => ms < COMMAND_TIMEOUT_MS).length).toBeGreaterThanOrEqual(30 - mostWaited);
    expect(outageLines()).toHaveLength(1);

    server.kill('SIGCONT');
    // The breaker's next probe finds Redis: the owed generation is published, the cache is used again.
    const deadline = Date.now() + 10_000;
    while (
      (!redis.available() || Number((await redis.client.get('cache:generation').catch(() => null)) ?? '0') <= generationBefore) &&
      Date.now() < deadline
    ) {
      await leadCount();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(redis.available()).toBe(true);
    expect(Number(await redis.client.get('cache:generation'))).toBeGreaterThan(generationBefore);
    expect((await leadCount()).count).toBe(before + 1);
    expect(returnLines()).toHaveLength(1);
    expect(outageLines()).toHaveLength(1);
  }, 180_000);
});

describe('an instance cut off from a Redis the others still reach', () => {
  it('makes the others stop serving results from before its write within the cache epoch poll', async () => {
    const { startTcpProxy } = await import('./support/tcp-proxy.ts');
    const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    const proxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    const prefix = await redisKeyPrefixOf(app.db, null);
    const silent = pino({ level: 'silent' });
    const POLL_MS = 200;
    const instanceOver = (url: string) => {
      const connections = connectRedis(url, silent, prefix, { commandTimeoutMs: 300 });
      const epoch = watchCacheEpoch(app.db, POLL_MS);
      const instance = createApp(
        instanceDeps(
          { config: app.config, db: app.db, now: app.clock.now },
          { logger: silent, readCache: redisReadCache(connections.client, silent, epoch) },
        ),
      );
      return { connections, epoch, instance };
    };
    const cutOff = instanceOver(`redis://127.0.0.1:${proxy.port}`);
    const other = instanceOver(redisUrl.toString());
    try {
      await Promise.all([cutOff.connections.ready(), other.connections.ready()]);
      const count = async (instance: Yoga): Promise<number> => {
        const response = await instance.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: LEADS, variables: { d: dealershipId } }),
        });
        return ((await response.json()) as { data: { leads: { totalCount: number } } }).data.leads.totalCount;
      };
      const before = await count(other.instance);
      // Served from the shared cache now: no statement reads leads (the epoch's poll reads shared_settings meanwhile).
      app.queries.length = 0;
      expect(await count(other.instance)).toBe(before);
      expect(app.queries.filter((sql) => /leads/.test(sql))).toEqual([]);

      proxy.freeze();
      const created = await cutOff.instance.fetch('http://gateway.test/api/v1/leads', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lead: samplePayload(dealershipId) }),
      });
      expect(created.status).toBe(201);
      const written = performance.now();
      // The other instance still reaches Redis, where the generation did not move: only the epoch in
      // the database tells it. Polled a few times its interval; an entry's TTL is 30 s.
      let seen = await count(other.instance);
      while (seen !== before + 1 && performance.now() - written < 20 * POLL_MS) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS / 4));
        seen = await count(other.instance);
      }
      expect(seen).toBe(before + 1);
      expect(await count(cutOff.instance)).toBe(before + 1);
    } finally {
      proxy.thaw();
      for (const { connections, epoch } of [cutOff, other]) {
        epoch.stop();
        connections.client.disconnect();
        connections.subscriber.disconnect();
      }
      await proxy.stop();
    }
  }, 180_000);
});

/** The figures: a command may take 100 ms; Redis is down after commands fail for a second. */
const SHORT_TIMEOUT_MS = 100;
const SHORT_OUTAGE_AFTER_MS = 1_000;

/** An instance over `url` with the short timeout, its log lines, and every availability change it reported. */
function instanceOn(url: string, prefix: string) {
  const logged: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write: (chunk, _encoding, done) => {
        logged.push(String(chunk));
        done();
      },
    }),
  );
  const changes: boolean[] = [];
  const connections = connectRedis(url, logger, prefix, {
    commandTimeoutMs: SHORT_TIMEOUT_MS,
    outageAfterMs: SHORT_OUTAGE_AFTER_MS,
    onAvailability: (available) => changes.push(available),
  });
  const instance = createApp(
    instanceDeps(
      { config: app.config, db: app.db, now: app.clock.now },
      {
        logger,
        readCache: redisReadCache(connections.client, logger),
        rateCounters: redisCounters(connections.client, { prefix: RATE_COUNTER_PREFIX }),
      },
    ),
  );
  const read = async (): Promise<number> => {
    const started = performance.now();
    const response = await instance.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: LEADS, variables: { d: dealershipId } }),
    });
    expect(response.status).toBe(200);
    await response.text();
    return performance.now() - started;
  };
  const outages = () => logged.filter((line) => line.includes('Redis unavailable'));
  const returns = () => logged.filter((line) => line.includes('Redis answers again'));
  return { connections, instance, read, changes, outages, returns };
}

/** Everything this instance's rate limits have counted in Redis (every request spends on its counters). */
async function countedInRedis(admin: Redis, prefix: string): Promise<number> {
  const names = await admin.keys(`${prefix}${RATE_COUNTER_PREFIX}*`);
  if (names.length === 0) return 0;
  return (await admin.mget(...names)).reduce((sum, value) => sum + Number(value ?? 0), 0);
}

async function until(condition: () => boolean, withinMs: number, meanwhile: () => Promise<unknown> = async () => undefined) {
  const deadline = Date.now() + withinMs;
  while (!condition() && Date.now() < deadline) {
    await meanwhile();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a Redis that answers late, again and again (slow, not down)', () => {
  it('keeps the breaker closed: each late reply fails its own call only, and rate limits are still counted in Redis', async () => {
    const prefix = 'dgw:slow-test:';
    const slow = instanceOn(`redis://127.0.0.1:${port}`, prefix);
    const admin = new Redis(`redis://127.0.0.1:${port}`);
    try {
      await slow.connections.ready();
      await slow.read();
      let late = 0;
      for (let round = 0; round < 5; round += 1) {
        // Every client of this test's own server waits 300 ms: three timeouts' worth.
        await admin.call('CLIENT', 'PAUSE', '300');
        const pausedAt = performance.now();
        while (performance.now() - pausedAt < 300) if ((await slow.read()) >= SHORT_TIMEOUT_MS) late += 1;
        expect(slow.connections.available(), `round ${round}`).toBe(true);
        // Right after the pause Redis answers on time again: requests are counted in Redis (a few
        // tries, for a loaded machine; an open breaker would keep every one of them out for a second).
        const before = await countedInRedis(admin, prefix);
        for (let tries = 0; tries < 3 && (await countedInRedis(admin, prefix)) === before; tries += 1) await slow.read();
        expect(await countedInRedis(admin, prefix), `round ${round}`).toBeGreaterThan(before);
      }
      // The pauses did make replies late, several in a row each time.
      expect(late).toBeGreaterThanOrEqual(5);
      expect(slow.changes).toEqual([]);
      expect(slow.outages()).toEqual([]);
    } finally {
      admin.disconnect();
      slow.connections.client.disconnect();
      slow.connections.subscriber.disconnect();
    }
  }, 180_000);

  it('is down once its commands have failed for longer than the outage window, and up again when it answers', async () => {
    const prefix = 'dgw:paused-test:';
    const paused = instanceOn(`redis://127.0.0.1:${port}`, prefix);
    const admin = new Redis(`redis://127.0.0.1:${port}`);
    try {
      await paused.connections.ready();
      await admin.call('CLIENT', 'PAUSE', String(SHORT_OUTAGE_AFTER_MS * 3));
      const pausedAt = performance.now();
      await until(() => !paused.connections.available(), SHORT_OUTAGE_AFTER_MS * 3, paused.read);
      expect(paused.connections.available()).toBe(false);
      expect(performance.now() - pausedAt).toBeGreaterThanOrEqual(SHORT_OUTAGE_AFTER_MS);
      expect(paused.outages()).toHaveLength(1);
      // Meanwhile Redis is not asked: a command fails at once, and its caller answers from memory.
      await expect(paused.connections.client.get('anything')).rejects.toThrow(/circuit breaker/);
      await until(() => paused.connections.available(), SHORT_OUTAGE_AFTER_MS * 6, paused.read);
      expect(paused.connections.available()).toBe(true);
      expect(paused.changes).toEqual([false, true]);
      expect(paused.returns()).toHaveLength(1);
    } finally {
      admin.disconnect();
      paused.connections.client.disconnect();
      paused.connections.subscriber.disconnect();
    }
  }, 180_000);
});

describe('a Redis that cannot be reached', () => {
  it('is down as soon as its connection is lost, and up again as soon as it is back', async () => {
    const { startTcpProxy } = await import('./support/tcp-proxy.ts');
    const proxy = await startTcpProxy({ host: '127.0.0.1', port });
    const cut = instanceOn(`redis://127.0.0.1:${proxy.port}`, 'dgw:cut-test:');
    try {
      await cut.connections.ready();
      expect(cut.connections.available()).toBe(true);
      await proxy.stop();
      // No command is sent meanwhile: the connection itself tells the outage, not failed commands.
      await until(() => !cut.connections.available(), 5_000);
      expect(cut.connections.available()).toBe(false);
      expect(cut.outages()).toHaveLength(1);
      // ioredis refuses commands at once while it reconnects: requests are answered from memory.
      await expect(cut.connections.client.get('anything')).rejects.toThrow();
      await cut.read();
      await proxy.start();
      await until(() => cut.connections.available(), 10_000);
      expect(cut.connections.available()).toBe(true);
      expect(cut.changes).toEqual([false, true]);
      expect(cut.returns()).toHaveLength(1);
    } finally {
      cut.connections.client.disconnect();
      cut.connections.subscriber.disconnect();
      await proxy.stop().catch(() => undefined);
    }
  }, 180_000);
});
