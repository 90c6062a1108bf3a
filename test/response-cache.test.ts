// The response cache for reads (src/gateway/response-cache.ts) and conditional GETs (src/gateway/etags.ts):
// repeated reads cost no statement, callers that see different things never share an entry, a write
// is visible on the next read (on another instance too, through Redis), and a Redis outage only
// turns the cache off.
import { Redis } from 'ioredis';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AnswerStore } from '../src/gateway/answer-cache.ts';
import type { Config } from '../src/config/index.ts';
import { redisKeyPrefixOf } from '../src/domain/shared-settings.ts';
import { cacheTtls, inMemoryReadCache, redisReadCache, type ReadCacheOptions } from '../src/gateway/response-cache.ts';
import { createFileStorage } from '../src/storage/file-storage.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { makeCar, makeContact, makeDealership, makeKey } from './support/fixtures.ts';
import { graphLead, samplePayload } from './support/fixtures-leads.ts';

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
function instance(readCache: ReadCacheOptions | null, config: Config = app.config): Yoga {
  return createApp(
    instanceDeps({ config, db: app.db, now: app.clock.now }, { files: createFileStorage(app.config, app.db), logger, readCache }),
  );
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

describe('the cache times', () => {
  it('name only types the graph has (a renamed or folded type would silently fall back to the default)', () => {
    const schema = getSchema();
    expect(Object.keys(cacheTtls.perType).filter((typeName) => !schema.getType(typeName))).toEqual([]);
  });
});

describe('a new instance', () => {
  it('reads the schema for the cache at its first executions, under concurrent first requests, and caches from the first answer', async () => {
    // The plugin reads the schema at the first execution, not when the app is built (src/gateway/response-cache.ts).
    const yoga = instance(inMemoryReadCache());
    const query = '{ dealerships(first: 10) { edges { node { id: databaseId } } } }';
    const first = await Promise.all([
      ...Array.from({ length: 6 }, () => graphql(yoga, query, keys.north)),
      ...Array.from({ length: 2 }, () => get(yoga, '/api/v1/apikeys/apikey_details.json', keys.north).then((response) => response.json())),
    ]);
    for (const answer of first.slice(0, 6)) expect(answer).toEqual({ data: { dealerships: { edges: [{ node: { id: north.id } }] } } });
    expect(first[7]).toEqual(first[6]);
    app.queries.length = 0;
    expect(await graphql(yoga, query, keys.north)).toEqual(first[0]);
    expect(await (await get(yoga, '/api/v1/apikeys/apikey_details.json', keys.north)).json()).toEqual(first[6]);
    expect(app.queries).toEqual([]);
  });
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
    const viaGraphql = await graphql(
      yoga,
      '{ apikey_details { id: databaseId permissions dealerships { id: databaseId name slug locations { id: databaseId name location_type } users { id: databaseId name email } } dealerships_truncated } }',
      keys.north,
    );
    expect(viaGraphql.data?.apikey_details).toEqual(body);
  });

  it('never shares an entry between keys that reach different dealerships', async () => {
    const query = '{ dealerships(first: 10) { edges { node { id: databaseId } } } }';
    const seen = async (key: string): Promise<number[]> =>
      ((await graphql(yoga, query, key)).data!.dealerships as { edges: { node: { id: number } }[] }).edges.map((edge) => edge.node.id);
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

/** An in-memory cache whose answer tier counts the answers it served. */
function countingReadCache(): { readCache: ReadCacheOptions; served: () => number } {
  const readCache = inMemoryReadCache();
  let served = 0;
  const answers: AnswerStore = {
    get(key, nowMs) {
      const answer = readCache.answers.get(key, nowMs);
      if (answer) served += 1;
      return answer;
    },
    set: (key, answer) => readCache.answers.set(key, answer),
    clear: () => readCache.answers.clear(),
  };
  return { readCache: { ...readCache, answers }, served: () => served };
}

async function graphqlPost(yoga: Yoga, body: string, key: string, headers: Record<string, string> = {}): Promise<Response> {
  return yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });
}

describe('the answer tier: a repeated read answered before the REST door and GraphQL run', () => {
  const path = '/api/v1/apikeys/apikey_details.json';

  it('serves the same status, headers and body, and runs no statement', async () => {
    const { readCache, served } = countingReadCache();
    const yoga = instance(readCache);
    const first = await get(yoga, path, keys.north);
    const firstBody = await first.text();
    expect(first.status).toBe(200);
    expect(served()).toBe(0);
    app.queries.length = 0;
    const again = await get(yoga, path, keys.north);
    expect(served()).toBe(1);
    expect(app.queries).toEqual([]);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstBody);
    for (const name of ['content-type', 'etag', 'cache-control', 'x-content-type-options', 'ratelimit-policy']) {
      expect(again.headers.get(name), name).toBe(first.headers.get(name));
    }
    // HEAD is answered from the same entry, without a body.
    const head = await yoga.fetch(`http://gateway.test${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${keys.north}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(served()).toBe(2);
  });

  it('serves a repeated GraphQL query, never a mutation, and keeps answers per Accept header', async () => {
    const { readCache, served } = countingReadCache();
    const yoga = instance(readCache);
    const body = JSON.stringify({ query: '{ apikey_details { id: databaseId dealerships { id: databaseId } } }' });
    const first = await graphqlPost(yoga, body, keys.north);
    const firstText = await first.text();
    const again = await graphqlPost(yoga, body, keys.north);
    expect(served()).toBe(1);
    expect(await again.text()).toBe(firstText);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    const otherMedia = await graphqlPost(yoga, body, keys.north, { accept: 'application/json' });
    expect(served()).toBe(1);
    expect(otherMedia.headers.get('content-type')).toMatch(/^application\/json/);

    const before = await leadsCount(yoga, keys.north);
    const mutation = JSON.stringify({
      query: 'mutation($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }',
      variables: { lead: graphLead(samplePayload(north.id, { stocknum: 'CACHE1' })) },
    });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const created = (await (await graphqlPost(yoga, mutation, keys.north)).json()) as { data?: unknown; errors?: unknown };
      expect(created.errors).toBeUndefined();
    }
    expect(await leadsCount(yoga, keys.north)).toBe(before + 2);
  });

  it('shows a write on the next read, and never serves one key what another sees', async () => {
    const { readCache, served } = countingReadCache();
    const yoga = instance(readCache);
    const before = await leadsCount(yoga, keys.north);
    expect(await leadsCount(yoga, keys.north)).toBe(before);
    expect(served()).toBe(1);
    await createLead(yoga, keys.north, north.id, 'CACHE1');
    expect(await leadsCount(yoga, keys.north)).toBe(before + 1);
    expect(served()).toBe(1);

    const northAnswer = await (await get(yoga, path, keys.north)).json();
    const southAnswer = await (await get(yoga, path, keys.south)).json();
    expect(southAnswer).not.toEqual(northAnswer);
    expect(JSON.stringify(southAnswer)).not.toContain(`"id":${north.id},`);
  });

  it('stops serving an answer when its response cache entry expires', async () => {
    const { readCache, served } = countingReadCache();
    const yoga = instance(readCache);
    await get(yoga, path, keys.north);
    await get(yoga, path, keys.north);
    expect(served()).toBe(1);
    app.clock.advance(cacheTtls.default + 1);
    app.queries.length = 0;
    expect((await get(yoga, path, keys.north)).status).toBe(200);
    expect(served()).toBe(1);
    expect(app.queries.length).toBeGreaterThan(0);
  });

  it("spends the rate limits on every answer it serves, and refuses past them in each door's shape", async () => {
    const { readCache, served } = countingReadCache();
    const config: Config = { ...app.config, rateLimits: { ...app.config.rateLimits, keyRequests: 3 } };
    const yoga = instance(readCache, config);
    const remaining: (string | null)[] = [];
    for (let call = 0; call < 3; call += 1) {
      const response = await get(yoga, path, keys.south);
      expect(response.status).toBe(200);
      remaining.push(response.headers.get('ratelimit-remaining'));
    }
    expect(served()).toBe(2);
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await get(yoga, path, keys.south);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ error: 'rate_limited' });

    const body = JSON.stringify({ query: '{ apikey_details { id: databaseId } }' });
    const yogaForGraphql = instance(countingReadCache().readCache, config);
    for (let call = 0; call < 3; call += 1) expect((await graphqlPost(yogaForGraphql, body, keys.south)).status).toBe(200);
    const refusedGraphql = await graphqlPost(yogaForGraphql, body, keys.south);
    expect(refusedGraphql.status).toBe(429);
    expect(await refusedGraphql.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
  });
});

describe('several instances sharing Redis', () => {
  let redis: Redis[];
  let instances: Yoga[];

  beforeAll(async () => {
    // The deployment's prefix, as the service takes it: each test database has its own, so parallel
    // runs never read each other's entries.
    const keyPrefix = await redisKeyPrefixOf(app.db, null);
    redis = [new Redis(REDIS_URL, { keyPrefix }), new Redis(REDIS_URL, { keyPrefix })];
    onFileEnd(async () => {
      await Promise.all(redis.map((connection) => connection.quit()));
    });
    instances = redis.map((connection) => instance(redisReadCache(connection, logger)));
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
    const unreachable = new Redis('redis://127.0.0.1:1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    unreachable.on('error', () => undefined);
    const yoga = instance(redisReadCache(unreachable, logger));
    const before = await leadsCount(yoga, keys.all);
    await createLead(yoga, keys.all, north.id, 'CACHE1');
    expect(await leadsCount(yoga, keys.all)).toBe(before + 1);
    unreachable.disconnect();
  });
});
