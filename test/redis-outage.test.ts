// Redis is an optimisation, never a single point of failure (src/redis.ts): with its own redis-server
// frozen (SIGSTOP), an instance answers every request, most of them without waiting for Redis at all
// (the command timeout and the circuit breaker), serves its own write's new value rather than a cached
// old one (the owed generation: src/response-cache.ts), keeps /ready at 200, logs the outage once and
// Redis's return once, and once Redis answers again publishes the generation its write owed.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect as connectTcp } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyVerifier, type KeyVerifier } from '../src/auth/key-cache.ts';
import { RATE_COUNTER_PREFIX, redisCounters } from '../src/rate-limit/counters.ts';
import { BREAKER_FAILURES, connectRedis, redisKeyChangeFeed, type RedisConnections } from '../src/redis.ts';
import { redisReadCache } from '../src/response-cache.ts';
import { createApp, type Yoga } from '../src/yoga.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { freePort } from './support/processes.ts';

/** Long beside a request served from memory, so that the requests which waited for Redis are plain to count. */
const COMMAND_TIMEOUT_MS = 1_000;
const PREFIX = 'dgw:outage-test:';

let app: TestApp;
let server: ChildProcess;
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
  const port = await freePort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let ready = false; !ready; ) {
    ready = await new Promise<boolean>((resolve) => {
      const socket = connectTcp({ host: '127.0.0.1', port }, () => (socket.destroy(), resolve(true)));
      socket.on('error', () => setTimeout(() => resolve(false), 50));
    });
  }
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
  redis = connectRedis(`redis://127.0.0.1:${port}`, logger, PREFIX, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
  await redis.ready();
  keys = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 60_000, changes: redisKeyChangeFeed(redis, logger) });
  yoga = createApp(
    instanceDeps(
      { config: app.config, db: app.db, now: app.clock.now },
      { logger, keys, readCache: redisReadCache(redis.client, logger), rateCounters: redisCounters(redis.client, { prefix: RATE_COUNTER_PREFIX }) },
    ),
  );
}, 60_000);

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

    // Only the commands before the breaker opened, and its probes (one a second), waited for the timeout.
    const waited = timings.filter((ms) => ms >= COMMAND_TIMEOUT_MS).length;
    expect(waited).toBeLessThanOrEqual(BREAKER_FAILURES + 3);
    expect(timings.filter((ms) => ms < COMMAND_TIMEOUT_MS).length).toBeGreaterThanOrEqual(30 - BREAKER_FAILURES - 3);
    expect(outageLines()).toHaveLength(1);

    server.kill('SIGCONT');
    // The breaker's next probe finds Redis: the owed generation is published, the cache is used again.
    const deadline = Date.now() + 10_000;
    while ((!redis.available() || Number((await redis.client.get('cache:generation').catch(() => null)) ?? '0') <= generationBefore) && Date.now() < deadline) {
      await leadCount();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(redis.available()).toBe(true);
    expect(Number(await redis.client.get('cache:generation'))).toBeGreaterThan(generationBefore);
    expect((await leadCount()).count).toBe(before + 1);
    expect(returnLines()).toHaveLength(1);
    expect(outageLines()).toHaveLength(1);
  }, 60_000);
});
