// Keys are verified without a database round trip per request: a verdict is remembered for
// API_KEY_CACHE_TTL_MS, never past the key's expiry or its secret's retirement, and a change announced
// through Redis reaches every instance at once.
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKey, revokeKey } from '../src/auth/api-keys.ts';
import { createKeyVerifier, type KeyVerifier } from '../src/auth/key-cache.ts';
import { grantPermissions } from '../src/auth/key-admin.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { connectRedis, redisKeyChangeFeed, type RedisConnections } from '../src/redis/client.ts';
import { redisKeyPrefixOf } from '../src/domain/shared-settings.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { makeKey } from './support/fixtures.ts';

const DETAILS = '/api/v1/apikeys/apikey_details.json';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MINUTE = 60_000;

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
});

const keyLookups = (): number => app.queries.filter((sql) => /api_key_secret/i.test(sql)).length;
const keyWrites = (): number => app.queries.filter((sql) => /^UPDATE\b.*"?api_key"?/i.test(sql.trim())).length;

async function status(yoga: Yoga, key: string): Promise<number> {
  const response = await yoga.fetch(`http://gateway.test${DETAILS}`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

describe('one instance', () => {
  it('asks the database once for a key, then answers from memory until the TTL runs out', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:car'] });
    app.queries.length = 0;
    for (let i = 0; i < 5; i += 1) expect(await status(app.yoga, key)).toBe(200);
    expect(keyLookups()).toBe(1);
    app.clock.advance(app.config.apiKeyCacheTtlMs);
    expect(await status(app.yoga, key)).toBe(200);
    expect(keyLookups()).toBe(2);
  });

  it('remembers a refused key too, so a flood of one bad key costs one lookup per TTL', async () => {
    // Well-formed, with a valid checksum, never issued: only the database can say no.
    const unknown = generateKey().key;
    app.queries.length = 0;
    for (let i = 0; i < 5; i += 1) expect(await status(app.yoga, unknown)).toBe(401);
    expect(keyLookups()).toBe(1);
  });

  it('bounds its verdicts in bytes as well as in number: the oldest go first when their bytes run out', async () => {
    const presented = await Promise.all(Array.from({ length: 40 }, () => makeKey(app.db, { permissions: [...allPermissions] })));
    // Room for a thousand verdicts but only 40 KB, about 20 verdicts of keys holding every permission.
    const keys = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 60 * MINUTE, bounds: { maxEntries: 1_000, maxBytes: 40_000 } });
    app.queries.length = 0;
    for (const { key } of presented) await keys.verify(key);
    expect(keyLookups()).toBe(40);
    await keys.verify(presented[39]!.key);
    expect(keyLookups()).toBe(40);
    await keys.verify(presented[0]!.key);
    expect(keyLookups()).toBe(41);
    keys.close();
  });

  it('writes last_used_at at most once a minute per key', async () => {
    const { id, key } = await makeKey(app.db, { permissions: ['read:car'] });
    app.queries.length = 0;
    for (let i = 0; i < 5; i += 1) expect(await status(app.yoga, key)).toBe(200);
    expect(keyWrites()).toBe(1);
    const first = (await app.db.apiKey.findUniqueOrThrow({ where: { id } })).last_used_at;
    expect(first).toEqual(app.clock.now());
    app.clock.advance(MINUTE - 1);
    expect(await status(app.yoga, key)).toBe(200);
    expect(keyWrites()).toBe(1);
    app.clock.advance(1);
    expect(await status(app.yoga, key)).toBe(200);
    expect(keyWrites()).toBe(2);
    expect((await app.db.apiKey.findUniqueOrThrow({ where: { id } })).last_used_at).toEqual(app.clock.now());
  });

  it('refuses a key from its expiry on, even while its verdict is remembered', async () => {
    const expiresAt = new Date(app.clock.now().getTime() + 1_000);
    const { key } = await makeKey(app.db, { permissions: ['read:car'], expiresAt });
    expect(await status(app.yoga, key)).toBe(200);
    app.clock.advance(1_000);
    expect(await status(app.yoga, key)).toBe(401);
  });

  it('sees new permissions once the TTL has run out', async () => {
    const { id, key } = await makeKey(app.db, { permissions: ['read:car'] });
    const contacts = (): Promise<number> =>
      status(app.yoga, key).then(() => app.request('/dealerships/1/contacts', { key }).then((r) => r.status));
    expect(await contacts()).toBe(403);
    await grantPermissions(app.db, id, ['read:contact']);
    app.clock.advance(app.config.apiKeyCacheTtlMs);
    expect([200, 404]).toContain(await contacts());
  });
});

describe('several instances sharing Redis', () => {
  let redis: RedisConnections[];
  let prefix: string;
  let instances: { yoga: Yoga; keys: KeyVerifier }[];

  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    // The prefix every instance and the keys CLI read from this database (src/domain/shared-settings.ts).
    prefix = await redisKeyPrefixOf(app.db, null);
    redis = [connectRedis(REDIS_URL, logger, prefix), connectRedis(REDIS_URL, logger, prefix), connectRedis(REDIS_URL, logger, prefix)];
    instances = redis.slice(0, 2).map((connections) => {
      const keys = createKeyVerifier({
        db: app.db,
        now: app.clock.now,
        ttlMs: 60 * MINUTE,
        changes: redisKeyChangeFeed(connections, logger),
      });
      return { keys, yoga: createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { logger, keys })) };
    });
    await Promise.all(redis.map((connections) => connections.ready()));
    onFileEnd(async () => {
      for (const instance of instances) instance.keys.close();
      await Promise.all(redis.map((connections) => connections.close()));
    });
  });

  it('a revocation announced by the keys CLI stops the key on every instance at once, with no clock change', async () => {
    const { id, key } = await makeKey(app.db, { permissions: ['read:car'] });
    for (const instance of instances) expect(await status(instance.yoga, key)).toBe(200);
    // Give the subscriptions time to be in place before the announcement.
    await Promise.all(
      redis
        .slice(0, 2)
        .map((connections) => waitFor(async () => (await connections.client.pubsub('NUMSUB', `${prefix}api-key-changed`))[1] !== 0)),
    );
    await revokeKey(app.db, id, app.clock.now());
    // What scripts/keys.ts does after a change: announce it (from its own connection).
    await redisKeyChangeFeed(redis[2]!, pino({ level: 'silent' })).publish(id);
    for (const instance of instances) await waitFor(async () => (await status(instance.yoga, key)) === 401);
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

describe('a change announced while a lookup of the key is in flight', () => {
  it('is not undone by that lookup: a later verification looks the key up again, and the listeners hear the change', async () => {
    const { id, key } = await makeKey(app.db, { permissions: ['read:car'] });
    // The first lookup reads the key before the revocation, and answers only once let go.
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let lookups = 0;
    let firstRead = false;
    const db = new Proxy(app.db, {
      get(target, property, receiver) {
        if (property !== 'apiKeySecret') return Reflect.get(target, property, receiver);
        return {
          findUnique: async (args: Parameters<typeof target.apiKeySecret.findUnique>[0]) => {
            lookups += 1;
            const found = await target.apiKeySecret.findUnique(args);
            if (lookups === 1) {
              firstRead = true;
              await held;
            }
            return found;
          },
        };
      },
    });
    const announced = new Set<(apiKeyId: number) => void>();
    const verifier = createKeyVerifier({
      db,
      now: app.clock.now,
      ttlMs: 60 * MINUTE,
      changes: {
        publish: async () => undefined,
        subscribe: (listener) => {
          announced.add(listener);
          return () => announced.delete(listener);
        },
      },
    });
    const heard: number[] = [];
    verifier.onChange((apiKeyId) => heard.push(apiKeyId));

    const before = verifier.verify(key);
    await waitFor(async () => firstRead);
    await revokeKey(app.db, id, app.clock.now());
    for (const listener of announced) listener(id);
    expect(heard).toEqual([id]);
    // A verification begun after the change looks the key up itself, rather than waiting for the one in flight.
    expect(await verifier.verify(key)).toBeNull();
    letGo();
    // The verification begun before the change answers what it read, which is not remembered over the change.
    expect((await before)?.apiKeyId).toBe(id);
    expect(await verifier.verify(key)).toBeNull();
    expect(lookups).toBe(2);
    verifier.close();
  });
});
