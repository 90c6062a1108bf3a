// The response cache for reads (src/response-cache.ts) and conditional GETs (src/http-etags.ts):
// repeated reads cost no statement, callers that see different things never share an entry, a write
// is visible on the next read (on another instance too, through Redis), and a Redis outage only
// turns the cache off.
import { Redis } from 'ioredis';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKeyVerifier } from '../src/auth/key-cache.ts';
import { inMemoryReadCache, redisGeneration, redisStore, type ReadCacheOptions } from '../src/response-cache.ts';
import { createFileStorage } from '../src/storage/file-storage.ts';
import { createApp, type Yoga } from '../src/yoga.ts';
import { memoryCounters } from '../src/rate-limit/counters.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { makeCar, makeContact, makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';

/** Personal data (read:personal_data) the cache must never hand to a key without it. */
const NORTHERNER_POSTCODE = '0810';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = pino({ level: 'silent' });

let app: TestApp;
let north: { id: number };
let south: { id: number };
let carId: number;
let keys: Record<'all' | 'north' | 'south' | 'allNoPersonal', string>;

/** An instance of the service over the test database, with its own key verifier and the given cache. */
function instance(readCache: ReadCacheOptions | null): Yoga {
  return createApp({
    files: createFileStorage(app.config, app.db),
    config: app.config,
    db: app.db,
    logger,
    now: app.clock.now,
    keys: createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: app.config.apiKeyCacheTtlMs }),
    readCache,
    rateCounters: memoryCounters(),
  });
}

async function get(yoga: Yoga, path: string, key: string, headers: Record<string, string> = {}): Promise<Response> {
  return yoga.fetch(`http://gateway.test${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
}

async function graphql(yoga: Yoga, query: string, key: string): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const response = await yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

async function createLead(yoga: Yoga, key: string, dealershipId: number, stocknum: string): Promise<void> {
  const response = await yoga.fetch('http://gateway.test/api/v1/leads', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lead: samplePayload(dealershipId, { stocknum }) }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
}

const leadsCount = async (yoga: Yoga, key: string): Promise<number> => {
  const response = await get(yoga, `/api/v1/cars/${carId}/performance.json`, key);
  expect(response.status).toBe(200);
  return ((await response.json()) as { leads_count: number }).leads_count;
};

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  const car = await makeCar(app.db, north.id, { stocknum: 'CACHE1' });
  carId = car.id;
  await makeContact(app.db, north.id, { first_name: 'Northerner', postcode: NORTHERNER_POSTCODE });
  await makeContact(app.db, south.id, { first_name: 'Southerner' });
  const all = ['read:car', 'read:contact', 'read:personal_data', 'create:lead', 'index:dealership'] as const;
  keys = {
    all: (await makeKey(app.db, { permissions: all })).key,
    north: (await makeKey(app.db, { permissions: all, dealershipIds: [north.id] })).key,
    south: (await makeKey(app.db, { permissions: all, dealershipIds: [south.id] })).key,
    allNoPersonal: (await makeKey(app.db, { permissions: all.filter((p) => p !== 'read:personal_data') })).key,
  };
});

describe('one instance, in memory', () => {
  let yoga: Yoga;
  beforeAll(() => {
    yoga = instance(inMemoryReadCache());
  });

  it('answers a repeated read without a statement, the same body on both doors', async () => {
    const first = await get(yoga, '/api/v1/apikeys/apikey_details.json', keys.north);
    expect(first.status).toBe(200);
    const body = await first.json();
    app.queries.length = 0;
    const again = await get(yoga, '/api/v1/apikeys/apikey_details.json', keys.north);
    expect(await again.json()).toEqual(body);
    expect(app.queries).toEqual([]);
    const viaGraphql = await graphql(yoga, '{ apikey_details { id permissions dealerships { id name slug locations { id name location_type } users { id name email } } } }', keys.north);
    expect(viaGraphql.data?.apikey_details).toEqual(body);
  });

  it('never shares an entry between keys that reach different dealerships', async () => {
    const query = '{ dealerships(first: 10) { edges { node { id } } } }';
    const seen = async (key: string): Promise<number[]> =>
      ((await graphql(yoga, query, key)).data?.dealerships as { edges: { node: { id: number } }[] }).edges.map((edge) => edge.node.id);
    expect(await seen(keys.north)).toEqual([north.id]);
    expect(await seen(keys.south)).toEqual([south.id]);
    expect(await seen(keys.north)).toEqual([north.id]);
  });

  it('never hands personal data to a key without read:personal_data, whoever read it first', async () => {
    const query = `{ contacts(dealership_id: ${north.id}) { first_name postcode } }`;
    expect((await graphql(yoga, query, keys.all)).data?.contacts).toEqual([{ first_name: 'Northerner', postcode: NORTHERNER_POSTCODE }]);
    expect((await graphql(yoga, query, keys.allNoPersonal)).data?.contacts).toEqual([{ first_name: 'Northerner', postcode: null }]);
  });

  it('shows a write on the next read', async () => {
    const before = await leadsCount(yoga, keys.north);
    expect(await leadsCount(yoga, keys.north)).toBe(before);
    await createLead(yoga, keys.north, north.id, 'CACHE1');
    expect(await leadsCount(yoga, keys.north)).toBe(before + 1);
  });

  it('names each GET answer with an ETag and answers 304 while it is unchanged', async () => {
    const path = `/api/v1/cars/${carId}/performance.json`;
    const first = await get(yoga, path, keys.north);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const notModified = await get(yoga, path, keys.north, { 'if-none-match': etag! });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await get(yoga, path, keys.north, { 'if-none-match': `W/${etag!}, "other"` })).status).toBe(304);
    await createLead(yoga, keys.north, north.id, 'CACHE1');
    const changed = await get(yoga, path, keys.north, { 'if-none-match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });
});

describe('several instances sharing Redis', () => {
  let redis: Redis[];
  let instances: Yoga[];

  beforeAll(async () => {
    redis = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
    onFileEnd(async () => {
      await Promise.all(redis.map((connection) => connection.quit()));
    });
    // Each test file run has its own generation, so parallel runs never read each other's entries.
    await redis[0]!.incr('dgw:cache:generation');
    instances = redis.map((connection) => instance({ generation: redisGeneration(connection, logger), store: redisStore(connection, logger) }));
  });

  it('a write on one instance is visible on the next read on the other', async () => {
    const [a, b] = instances as [Yoga, Yoga];
    const before = await leadsCount(a, keys.all);
    expect(await leadsCount(b, keys.all)).toBe(before);
    app.queries.length = 0;
    expect(await leadsCount(a, keys.all)).toBe(before);
    expect(app.queries).toEqual([]);
    await createLead(b, keys.all, north.id, 'CACHE1');
    expect(await leadsCount(a, keys.all)).toBe(before + 1);
  });

  it('answers uncached, never with an error, while Redis is unreachable', async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    unreachable.on('error', () => undefined);
    const yoga = instance({ generation: redisGeneration(unreachable, logger), store: redisStore(unreachable, logger) });
    const before = await leadsCount(yoga, keys.all);
    await createLead(yoga, keys.all, north.id, 'CACHE1');
    expect(await leadsCount(yoga, keys.all)).toBe(before + 1);
    unreachable.disconnect();
  });
});
