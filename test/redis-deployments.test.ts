// Two deployments, each with its own database, sharing one Redis server (REDIS_KEY_PREFIX, and by
// default the prefix each database records: src/domain/shared-settings.ts). Their key ids, permissions
// and dealership ids are the same, so without a prefix their cache scopes and counters would be too;
// with it neither ever sees the other's cached answers, rate-limit counts or key revocations, and every
// key either writes in Redis starts with its prefix.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyVerifier, type KeyVerifier } from '../src/auth/key-cache.ts';
import { revokeKey } from '../src/auth/api-keys.ts';
import { redisKeyPrefixOf } from '../src/domain/shared-settings.ts';
import { RATE_COUNTER_PREFIX, redisCounters } from '../src/rate-limit/counters.ts';
import { connectRedis, redisKeyChangeFeed, type RedisConnections } from '../src/redis/client.ts';
import { redisReadCache } from '../src/gateway/response-cache.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

// A Redis database of this file's own, so that every key in it was written by these two deployments.
const REDIS_URL = `${(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379').replace(/\/\d*$/, '')}/${process.env.TEST_DATABASE === 'postgresql' ? 12 : 11}`;
const logger = pino({ level: 'silent' });
const KEY_REQUESTS = 5;

interface Deployment {
  app: TestApp;
  prefix: string;
  redis: RedisConnections;
  keys: KeyVerifier;
  yoga: Yoga;
  key: { id: number; key: string };
  name: string;
}

let a: Deployment;
let b: Deployment;

async function deployment(name: string): Promise<Deployment> {
  const app = await createTestApp();
  // The first dealership and key of each database: the same ids, named after the deployment.
  const dealership = await makeDealership(app.db, { name });
  const key = await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [dealership.id] });
  const prefix = await redisKeyPrefixOf(app.db, null);
  const redis = connectRedis(REDIS_URL, logger, prefix);
  await redis.ready();
  const keys = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 60 * 60_000, changes: redisKeyChangeFeed(redis, logger) });
  const config = { ...app.config, rateLimits: { ...app.config.rateLimits, keyRequests: KEY_REQUESTS } };
  const yoga = createApp(
    instanceDeps(
      { config, db: app.db, now: app.clock.now },
      {
        logger,
        keys,
        readCache: redisReadCache(redis.client, logger),
        rateCounters: redisCounters(redis.client, { prefix: RATE_COUNTER_PREFIX }),
      },
    ),
  );
  return { app, prefix, redis, keys, yoga, key, name };
}

const details = (deployment: Deployment): Promise<Response> =>
  Promise.resolve(
    deployment.yoga.fetch('http://gateway.test/api/v1/apikeys/apikey_details.json', {
      headers: { authorization: `Bearer ${deployment.key.key}` },
    }),
  );

beforeAll(async () => {
  const admin = connectRedis(REDIS_URL, logger, '');
  await admin.ready();
  await admin.client.flushdb();
  await admin.close();
  a = await deployment('deployment A');
  b = await deployment('deployment B');
}, 120_000);

afterAll(async () => {
  for (const deployment of [a, b]) {
    deployment.keys.close();
    await deployment.redis.close();
  }
});

describe('two deployments on one Redis', () => {
  it('have the same key and dealership ids but prefixes of their own, recorded once per database', async () => {
    expect(a.key.id).toBe(b.key.id);
    expect(await a.app.db.dealership.findFirstOrThrow({ where: { name: a.name } })).toMatchObject({
      id: (await b.app.db.dealership.findFirstOrThrow({ where: { name: b.name } })).id,
    });
    expect(a.prefix).not.toBe(b.prefix);
    expect(a.prefix).toMatch(/^dgw:[\w-]+:$/);
    expect(await redisKeyPrefixOf(a.app.db, null)).toBe(a.prefix);
    // A configured prefix wins over the recorded one.
    expect(await redisKeyPrefixOf(a.app.db, 'shop-a:')).toBe('shop-a:');
  });

  it('never answer each other from the response cache', async () => {
    const first = await details(a);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ dealerships: [{ name: 'deployment A' }] });
    // Cached on A now: the same request runs no statement.
    a.app.queries.length = 0;
    expect(await (await details(a)).json()).toMatchObject({ dealerships: [{ name: 'deployment A' }] });
    expect(a.app.queries).toEqual([]);
    // B asks the same question with a key of the same id, permissions and dealerships: its own answer.
    b.app.queries.length = 0;
    expect(await (await details(b)).json()).toMatchObject({ dealerships: [{ name: 'deployment B' }] });
    expect(b.app.queries.length).toBeGreaterThan(0);
  });

  it('count their rate limits apart', async () => {
    // A spends the rest of its key's budget (two requests were made above), B has made one.
    for (let call = 0; call < KEY_REQUESTS - 2; call += 1) expect((await details(a)).status).toBe(200);
    expect((await details(a)).status).toBe(429);
    expect((await details(b)).status).toBe(200);
  });

  it('hear only their own key revocations', async () => {
    const revoked = await makeKey(a.app.db, { permissions: ['read:car'] });
    const kept = await makeKey(b.app.db, { permissions: ['read:car'] });
    expect(revoked.id).toBe(kept.id);
    const ask = (deployment: Deployment, key: string) =>
      Promise.resolve(
        deployment.yoga.fetch('http://gateway.test/api/v1/apikeys/apikey_details.json', { headers: { authorization: `Bearer ${key}` } }),
      );
    expect((await ask(b, kept.key)).status).toBe(200);
    expect((await ask(a, revoked.key)).status).toBe(200);
    await waitFor(async () => ((await a.redis.client.pubsub('NUMSUB', `${a.prefix}api-key-changed`)) as [string, number])[1] > 0);
    await revokeKey(a.app.db, revoked.id, a.app.clock.now());
    await redisKeyChangeFeed(a.redis, logger).publish(revoked.id);
    await waitFor(async () => (await ask(a, revoked.key)).status === 401);
    // B remembers its key of the same id (its cache TTL is an hour): it heard nothing.
    expect((await ask(b, kept.key)).status).toBe(200);
  });

  it('write every key in Redis under their own prefix', async () => {
    const names: string[] = [];
    let cursor = '0';
    const admin = connectRedis(REDIS_URL, logger, '');
    await admin.ready();
    do {
      const [next, batch] = await admin.client.scan(cursor, 'COUNT', 1000);
      cursor = next;
      names.push(...batch);
    } while (cursor !== '0');
    await admin.close();
    expect(names.length).toBeGreaterThan(3);
    const outside = names.filter((name) => !name.startsWith(a.prefix) && !name.startsWith(b.prefix));
    expect(outside).toEqual([]);
    // Both kinds of key were written by both deployments: cache entries and rate counters.
    for (const prefix of [a.prefix, b.prefix]) {
      expect(names.some((name) => name.startsWith(`${prefix}cache:`))).toBe(true);
      expect(names.some((name) => name.startsWith(`${prefix}${RATE_COUNTER_PREFIX}`))).toBe(true);
    }
  });
});

/** Polls until the condition holds (Redis delivers asynchronously); fails after 5 s. */
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
