// The rate limits (docs/rate-limits.md, "Rate limits") on both doors: per key, per dealership, the GraphQL cost
// budget, failed authentication and sign-on redemption per client address, the RateLimit headers,
// windows that end (the clock is the app's injectable clock), one budget shared through a real Redis
// by two instances, and a Redis that cannot be reached (never a 5xx).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { parse } from 'graphql';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_RATE_LIMITS, loadConfig, type RateLimitSettings } from '../src/config/index.ts';
import { operationShape } from '../src/schema/graphql-limits.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { memoryCounters, redisCounters, type CounterStore } from '../src/rate-limit/counters.ts';
import { connectRedis, type RedisConnections } from '../src/redis/client.ts';
import { getSchema } from '../src/schema/index.ts';
import { routeCosts } from '../scripts/docs/rest.ts';
import { accessOfRoute, restRoutes } from '../src/rest/routes.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import {
  createClock,
  createTestApp,
  instanceDeps,
  testSettings,
  withRequestIdChecked,
  type TestApp,
  type TestClock,
} from './support/app.ts';
import { assertMatchesContract } from './support/contract.ts';
import { makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import { makePartnerToken } from './support/fixtures-events.ts';
import { freePort } from './support/processes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DETAILS = '/api/v1/apikeys/apikey_details.json';
const SIGN_ON = '/api/v1/partner/sign_on';
const WEBHOOK = '/api/v1/webhooks/phone_calls_webhooks/generic';
const MINUTE = 60_000;

let app: TestApp;
let dealershipA: { id: number };
let dealershipB: { id: number };

beforeAll(async () => {
  app = await createTestApp();
  dealershipA = await makeDealership(app.db);
  dealershipB = await makeDealership(app.db);
});

interface Limited {
  yoga: Yoga;
  clock: TestClock;
  request(
    path: string,
    init?: { key?: string; from?: string; method?: string; json?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  graphql(
    query: string,
    options?: { key?: string; from?: string; variables?: Record<string, unknown> },
  ): Promise<{ response: Response; body: GraphQLBody }>;
}

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/**
 * An instance with these limits over the test database (every limit not named keeps its default),
 * its own clock, one proxy trusted (so `from` is the client address, sent as X-Forwarded-For) and
 * memory counters unless others are given. Every REST answer is checked against the OpenAPI document.
 */
function limitedApp(
  limits: Partial<RateLimitSettings>,
  options: { counters?: CounterStore; logger?: Logger; clock?: TestClock } = {},
): Limited {
  const clock = options.clock ?? createClock();
  const config = { ...app.config, rateLimits: { ...DEFAULT_RATE_LIMITS, ...limits }, trustProxyHops: 1 };
  const yoga = createApp(
    instanceDeps(
      { config, db: app.db, now: clock.now },
      { rateCounters: options.counters ?? memoryCounters(), ...(options.logger ? { logger: options.logger } : {}) },
    ),
  );
  const request: Limited['request'] = async (path, init = {}) => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set('authorization', `Bearer ${init.key}`);
    if (init.from) headers.set('x-forwarded-for', init.from);
    if (init.json !== undefined) headers.set('content-type', 'application/json');
    const method = init.method ?? 'GET';
    const response = await yoga.fetch(`http://gateway.test${path}`, {
      method,
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    await assertMatchesContract(method, path, response);
    return withRequestIdChecked(response);
  };
  return {
    yoga,
    clock,
    request,
    async graphql(query, { key, from, variables } = {}) {
      const response = await request('/graphql', { method: 'POST', key, from, json: { query, variables } });
      return { response, body: (await response.clone().json()) as GraphQLBody };
    },
  };
}

/** The RateLimit field's item for one policy: remaining and seconds to reset. */
function rateLimitItem(response: Response, policy: string): { r: number; t: number } | undefined {
  const field = response.headers.get('ratelimit') ?? '';
  const match = new RegExp(`"${policy}";r=(\\d+);t=(\\d+)`).exec(field);
  return match ? { r: Number(match[1]), t: Number(match[2]) } : undefined;
}

const someAddress = (): string => `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
const bogusToken = (): string => randomBytes(32).toString('base64url');

describe('per key', () => {
  it('allows the limit per window on REST, with the RateLimit headers, then answers 429 with Retry-After and the error body', async () => {
    const limited = limitedApp({ keyRequests: 3 });
    const { key } = await makeKey(app.db);
    for (const left of [2, 1, 0]) {
      const response = await limited.request(DETAILS, { key });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toContain('"key";q=3;w=60');
      // The test clock stands at a whole minute: the window has all of its 60 s left.
      expect(rateLimitItem(response, 'key')).toEqual({ r: left, t: 60 });
    }
    const refused = await limited.request(DETAILS, { key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    expect(rateLimitItem(refused, 'key')).toEqual({ r: 0, t: 60 });
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(await refused.json()).toEqual({
      error: 'rate_limited',
      message: 'This API key has made its 3 requests allowed per 60 s. Retry after 60 s.',
    });

    // Another key has its own budget.
    const other = await makeKey(app.db);
    expect((await limited.request(DETAILS, { key: other.key })).status).toBe(200);
  });

  it('counts both doors against one budget; GraphQL refuses with 429 and extensions.code RATE_LIMITED', async () => {
    const limited = limitedApp({ keyRequests: 2 });
    const { key } = await makeKey(app.db);
    expect((await limited.request(DETAILS, { key })).status).toBe(200);
    const second = await limited.graphql('{ apikey_details { id: databaseId } }', { key });
    expect(second.response.status).toBe(200);
    expect(second.body.errors).toBeUndefined();
    expect(rateLimitItem(second.response, 'key')).toEqual({ r: 0, t: 60 });

    const refused = await limited.graphql('{ apikey_details { id: databaseId } }', { key });
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get('retry-after')).toBe('60');
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED', error: 'rate_limited', policy: 'key', retry_after: 60 });
    expect((await limited.request(DETAILS, { key })).status).toBe(429);
  });

  it('starts afresh when the window ends, and says how long is left until then', async () => {
    const limited = limitedApp({ keyRequests: 1 });
    const { key } = await makeKey(app.db);
    expect((await limited.request(DETAILS, { key })).status).toBe(200);
    limited.clock.advance(45_000);
    const refused = await limited.request(DETAILS, { key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('15');
    limited.clock.advance(15_000);
    const again = await limited.request(DETAILS, { key });
    expect(again.status).toBe(200);
    expect(rateLimitItem(again, 'key')).toEqual({ r: 0, t: 60 });
  });

  it('never limits /health, /ready or the published documents', async () => {
    const limited = limitedApp({ keyRequests: 1 });
    const { key } = await makeKey(app.db);
    expect((await limited.request(DETAILS, { key })).status).toBe(200);
    expect((await limited.request(DETAILS, { key })).status).toBe(429);
    for (const path of ['/health', '/ready', '/openapi.json']) {
      const response = await limited.request(path, { key });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('ratelimit'), path).toBeNull();
    }
  });
});

describe('per dealership', () => {
  it("counts every key of a dealership against the dealership's one budget", async () => {
    const limited = limitedApp({ keyRequests: 100, dealershipRequests: 3 });
    const first = await makeKey(app.db, { dealershipIds: [dealershipA.id] });
    const second = await makeKey(app.db, { dealershipIds: [dealershipA.id] });
    const elsewhere = await makeKey(app.db, { dealershipIds: [dealershipB.id] });
    expect((await limited.request(DETAILS, { key: first.key })).status).toBe(200);
    expect((await limited.request(DETAILS, { key: first.key })).status).toBe(200);
    const third = await limited.request(DETAILS, { key: second.key });
    expect(third.status).toBe(200);
    expect(rateLimitItem(third, 'dealership')).toEqual({ r: 0, t: 60 });
    expect(rateLimitItem(third, 'key')).toEqual({ r: 99, t: 60 });

    const refused = await limited.request(DETAILS, { key: second.key });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: 'rate_limited',
      message: 'The API keys of this dealership have made the 3 requests allowed together per 60 s. Retry after 60 s.',
    });
    const graph = await limited.graphql('{ apikey_details { id: databaseId } }', { key: first.key });
    expect(graph.body.errors?.[0]?.extensions?.policy).toBe('dealership');
    expect((await limited.request(DETAILS, { key: elsewhere.key })).status).toBe(200);
  });

  it('refuses a key of two dealerships when either is spent, and then spends nothing from the other', async () => {
    const limited = limitedApp({ keyRequests: 100, dealershipRequests: 1 });
    const both = await makeKey(app.db, { dealershipIds: [dealershipA.id, dealershipB.id] });
    const onlyA = await makeKey(app.db, { dealershipIds: [dealershipA.id] });
    const onlyB = await makeKey(app.db, { dealershipIds: [dealershipB.id] });
    expect((await limited.request(DETAILS, { key: onlyA.key })).status).toBe(200);
    expect((await limited.request(DETAILS, { key: both.key })).status).toBe(429);
    // B's budget was not touched by the refused request.
    expect((await limited.request(DETAILS, { key: onlyB.key })).status).toBe(200);
  });
});

describe('GraphQL cost budget', () => {
  const cheap = '{ apikey_details { id: databaseId } }';
  const expensive = '{ dealerships(first: 100) { edges { node { id: databaseId name slug } } } }';

  it('spends the cost the query limit estimates, so an expensive query spends more, on the same budget as REST', async () => {
    expect(costOf(expensive)).toBeGreaterThan(100 * costOf(cheap));
    const { key } = await makeKey(app.db, { permissions: ['index:dealership'] });
    // What a REST path spends: its fixed document's cost, measured on an instance of its own.
    const measured = await limitedApp({ keyCost: 1_000_000 }).request(DETAILS, { key });
    const restCost = 1_000_000 - (rateLimitItem(measured, 'cost')?.r ?? 1_000_000);
    expect(restCost).toBeGreaterThan(0);
    // Room for a cheap query, a REST call and two expensive queries, then for a cheap one but not a third expensive one.
    const budget = 2 * costOf(cheap) + restCost + 2 * costOf(expensive) + 10;
    const limited = limitedApp({ keyRequests: 100, keyCost: budget });

    const first = await limited.graphql(cheap, { key });
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('ratelimit-policy')).toContain(`"cost";q=${budget};w=60`);
    expect(rateLimitItem(first.response, 'cost')?.r).toBe(budget - costOf(cheap));
    const rest = await limited.request(DETAILS, { key });
    expect(rateLimitItem(rest, 'cost')?.r).toBe(budget - costOf(cheap) - restCost);

    let left = budget - costOf(cheap) - restCost;
    for (let run = 0; run < 2; run += 1) {
      const spent = await limited.graphql(expensive, { key });
      expect(spent.response.status).toBe(200);
      left -= costOf(expensive);
      expect(rateLimitItem(spent.response, 'cost')?.r).toBe(left);
    }
    const refused = await limited.graphql(expensive, { key });
    expect(refused.response.status).toBe(429);
    expect(refused.body.errors?.[0]?.extensions?.policy).toBe('cost');
    expect(refused.body.errors?.[0]?.message).toMatch(/cost budget of \d+ per 60 s/);
    // What is left still pays for a cheap query: the refusal spent nothing.
    const stillCheap = await limited.graphql(cheap, { key });
    expect(stillCheap.response.status).toBe(200);
    expect(rateLimitItem(stillCheap.response, 'cost')?.r).toBe(left - costOf(cheap));
  });
});

describe('what a REST path costs', () => {
  const costs = () => routeCosts(getSchema(), DEFAULT_RATE_LIMITS);

  it('every REST path at its largest page fits at least 60 calls a minute in the default per-key budget', () => {
    expect(
      costs()
        .map(({ route }) => route.field)
        .sort(),
    ).toEqual(restRoutes.map((route) => route.field).sort());
    for (const { route, cost, callsPerMinute, largestPage } of costs()) {
      expect(cost, `${route.method} ${route.path} ${JSON.stringify(largestPage)}`).toBeGreaterThanOrEqual(1);
      if (accessOfRoute(route, getSchema()).access === 'public') continue;
      expect(callsPerMinute, `${route.method} ${route.path} at ${JSON.stringify(largestPage)} costs ${cost}`).toBeGreaterThanOrEqual(60);
      expect(Math.floor(DEFAULT_RATE_LIMITS.keyCost / cost), `${route.method} ${route.path}`).toBeGreaterThanOrEqual(60);
    }
    // The largest page there is: 200 contacts, one unit each, and the call.
    expect(costs().find(({ route }) => route.field === 'Query.contacts')).toMatchObject({ largestPage: { per_page: 200 }, cost: 201 });
  });

  it('is what a call spends from the cost budget: a record per unit, the page size the caller asks for', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:contact', 'search:location', 'index:dealership'] });
    const limited = limitedApp({ keyRequests: 1_000, keyCost: 1_000_000 });
    const spent = async (path: string): Promise<number> => {
      // What is left before the call, read from the answer of one before it.
      const before = rateLimitItem(await limited.request(DETAILS, { key }), 'cost')?.r ?? 0;
      const response = await limited.request(path, { key });
      expect(response.status, path).toBeLessThan(300);
      return before - (rateLimitItem(response, 'cost')?.r ?? 0);
    };
    expect(await spent(`/dealerships/${dealershipA.id}/contacts?per_page=200`)).toBe(201);
    expect(await spent(`/dealerships/${dealershipA.id}/contacts?per_page=7`)).toBe(8);
    expect(await spent(`/dealerships/${dealershipA.id}/contacts`)).toBe(51);
    expect(await spent('/api/v1/partner/dealerships')).toBe(costs().find(({ route }) => route.field === 'Query.partner_dealerships')?.cost);
  });

  it('leaves a GraphQL document costed by what it selects: the same page of 200 contacts with their fields is refused', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:contact'] });
    const limited = limitedApp({});
    const page = `{ contacts(dealership_id: ${dealershipA.id}, per_page: 200) { id: databaseId dealership_id first_name postcode vehicles { id: databaseId make raw_model year rego } } }`;
    const refused = await limited.graphql(page, { key });
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', error: 'query_too_costly' });
    expect(costOf(page)).toBeGreaterThan(DEFAULT_RATE_LIMITS.keyCost / 10);
    // The REST path answers the same page, for 201.
    expect((await limited.request(`/dealerships/${dealershipA.id}/contacts?per_page=200`, { key })).status).toBe(200);
  });
});

const costOf = (query: string): number => operationShape(getSchema(), parse(query), null, {})?.cost ?? Number.NaN;

describe('failed authentication per client address', () => {
  it('refuses every request that presents a key from an address with too many failures, even a valid key, until the window ends', async () => {
    const limited = limitedApp({ authFailures: 3, addressWindowMs: 300_000 });
    const { key } = await makeKey(app.db);
    const attacker = someAddress();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await limited.request(DETAILS, { key: `dgw_wrong${attempt}`, from: attacker })).status).toBe(401);
    }
    // Refused before the key is looked at: a guess can no longer tell a valid key from an invalid one.
    const refused = await limited.request(DETAILS, { key, from: attacker });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('300');
    expect(await refused.json()).toEqual({
      error: 'rate_limited',
      message: 'Too many requests with an API key that is not accepted came from this address. Retry after 300 s.',
    });
    const graph = await limited.graphql('{ apikey_details { id: databaseId } }', { key, from: attacker });
    expect(graph.response.status).toBe(429);
    expect(graph.body.errors?.[0]?.extensions).toEqual({
      code: 'RATE_LIMITED',
      error: 'rate_limited',
      policy: 'auth-failures',
      retry_after: 300,
    });

    // Only that address: the same key from elsewhere, and keyless requests from there, are answered.
    expect((await limited.request(DETAILS, { key, from: someAddress().replace('198.51', '192.0') })).status).toBe(200);
    expect((await limited.graphql('{ __typename }', { from: attacker })).response.status).toBe(200);

    limited.clock.advance(300_000);
    expect((await limited.request(DETAILS, { key, from: attacker })).status).toBe(200);
  });

  it('counts a key sent as ?token= and a GraphQL request with a bad key alike', async () => {
    const limited = limitedApp({ authFailures: 2 });
    const { key } = await makeKey(app.db, { permissions: ['create:phone_call'] });
    const from = someAddress();
    const webhook = await limited.request(`${WEBHOOK}?token=dgw_wrong`, {
      method: 'POST',
      from,
      json: { called_number: '0390000000', caller_number: '0412345678' },
    });
    expect(webhook.status).toBe(401);
    const graph = await limited.graphql('{ __typename }', { key: 'dgw_wrong', from });
    expect(graph.response.status).toBe(200);
    const refused = await limited.request(`${WEBHOOK}?token=${key}`, {
      method: 'POST',
      from,
      json: { called_number: '0390000000', caller_number: '0412345678' },
    });
    expect(refused.status).toBe(429);
  });

  it('does not count an accepted key, nor a request without one', async () => {
    const limited = limitedApp({ authFailures: 1 });
    const { key } = await makeKey(app.db);
    const from = someAddress();
    for (let request = 0; request < 3; request += 1) {
      expect((await limited.request(DETAILS, { key, from })).status).toBe(200);
      expect((await limited.request(DETAILS, { from })).status).toBe(401);
    }
    expect((await limited.request(DETAILS, { key: 'dgw_wrong', from })).status).toBe(401);
    expect((await limited.request(DETAILS, { key, from })).status).toBe(429);
  });

  it("believes X-Forwarded-For only as far as the trusted proxies: the client's own entries are ignored", async () => {
    const limited = limitedApp({ authFailures: 2 });
    const { key } = await makeKey(app.db);
    const client = someAddress();
    // One trusted proxy appended the address it saw; whatever the client wrote before it changes nothing.
    expect((await limited.request(DETAILS, { key: 'dgw_wrong', from: `10.0.0.1, ${client}` })).status).toBe(401);
    expect((await limited.request(DETAILS, { key: 'dgw_wrong', from: `10.0.0.2, ${client}` })).status).toBe(401);
    expect((await limited.request(DETAILS, { key, from: `10.0.0.3, ${client}` })).status).toBe(429);
  });

  it('uses the socket address over a real connection, and ignores X-Forwarded-For without TRUST_PROXY', async () => {
    const clock = createClock();
    const config = { ...app.config, rateLimits: { ...DEFAULT_RATE_LIMITS, authFailures: 2 }, trustProxyHops: 0 };
    const yoga = createApp(instanceDeps({ config, db: app.db, now: clock.now }));
    const server = createHttpServer(yoga, config, pino({ level: 'silent' }), createLifecycle());
    const address = await server.listen(0, '127.0.0.1');
    try {
      const { key } = await makeKey(app.db);
      const call = (presented: string, forwardedFor: string) =>
        fetch(`http://127.0.0.1:${address.port}${DETAILS}`, {
          headers: { authorization: `Bearer ${presented}`, 'x-forwarded-for': forwardedFor },
        });
      expect((await call('dgw_wrong', someAddress())).status).toBe(401);
      expect((await call('dgw_wrong', someAddress())).status).toBe(401);
      const refused = await call(key, someAddress());
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('300');
    } finally {
      await server.drain(0);
    }
  });
});

describe('sign-on token redemption per client address', () => {
  it('allows the limit of redemptions per address on both doors, then 429 even for a valid token, which stays unspent', async () => {
    const limited = limitedApp({ signOnRedemptions: 2 });
    const dealership = await makeDealership(app.db);
    const user = await makeUser(app.db, [dealership.id]);
    const token = bogusToken();
    await makePartnerToken(app.db, user.id, token, { expires_at: new Date(limited.clock.now().getTime() + 10 * MINUTE) });
    const from = someAddress();

    const guess = await limited.request(`${SIGN_ON}?token=${bogusToken()}`, { from });
    expect(guess.status).toBe(404);
    expect(rateLimitItem(guess, 'sign-on')).toEqual({ r: 1, t: 300 });
    const graphGuess = await limited.graphql('mutation ($token: String) { redeem_partner_token(token: $token) { location } }', {
      from,
      variables: { token: bogusToken() },
    });
    expect(graphGuess.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const refused = await limited.request(`${SIGN_ON}?token=${token}`, { from });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('location')).toBeNull();
    expect(refused.headers.get('retry-after')).toBe('300');
    expect(await refused.json()).toEqual({
      error: 'rate_limited',
      message: 'Too many sign-on links were opened from this address. Retry after 300 s.',
    });
    const graphRefused = await limited.graphql('mutation { redeem_partner_token(token: "x") { location } }', { from });
    expect(graphRefused.response.status).toBe(429);

    // Another address may still redeem; the refused redemption did not spend the token.
    expect((await limited.request(`${SIGN_ON}?token=${token}`, { from: someAddress().replace('198.51', '192.0') })).status).toBe(302);
  });

  it('starts afresh when the address window ends', async () => {
    const limited = limitedApp({ signOnRedemptions: 1, addressWindowMs: 120_000 });
    const from = someAddress();
    expect((await limited.request(`${SIGN_ON}?token=${bogusToken()}`, { from })).status).toBe(404);
    expect((await limited.request(`${SIGN_ON}?token=${bogusToken()}`, { from })).status).toBe(429);
    limited.clock.advance(120_000);
    expect((await limited.request(`${SIGN_ON}?token=${bogusToken()}`, { from })).status).toBe(404);
  });
});

describe('shared through Redis', () => {
  const connections: RedisConnections[] = [];
  const silent = pino({ level: 'silent' });
  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.close()));
  });
  const connect = (url: string, logger: Logger = silent): RedisConnections => {
    const connection = connectRedis(url, logger, '');
    connections.push(connection);
    return connection;
  };
  /** A key prefix of this test's own, so no other test (nor a rerun) shares its counters. */
  const uniquePrefix = (): string => `dgw:test:rate:${randomBytes(6).toString('hex')}:`;

  it('makes two instances spend one budget, also when their requests arrive at once', async () => {
    const prefix = uniquePrefix();
    const [first, second] = [connect(REDIS_URL), connect(REDIS_URL)];
    await Promise.all([first.ready(), second.ready()]);
    const clock = createClock();
    const one = limitedApp({ keyRequests: 4 }, { clock, counters: redisCounters(first.client, { prefix }) });
    const two = limitedApp({ keyRequests: 4 }, { clock, counters: redisCounters(second.client, { prefix }) });
    const { key } = await makeKey(app.db);
    const a = await one.request(DETAILS, { key });
    const b = await two.request(DETAILS, { key });
    expect(rateLimitItem(a, 'key')?.r).toBe(3);
    expect(rateLimitItem(b, 'key')?.r).toBe(2);

    const burst = await Promise.all(Array.from({ length: 10 }, (_, index) => (index % 2 === 0 ? one : two).request(DETAILS, { key })));
    const statuses = burst.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(8);

    clock.advance(MINUTE);
    expect((await two.request(DETAILS, { key })).status).toBe(200);
    // The counters live in Redis under the prefix, with an expiry.
    const stored = await first.client.keys(`${prefix}*`);
    expect(stored.length).toBeGreaterThan(0);
    expect(await first.client.pttl(stored[0] ?? '')).toBeGreaterThan(0);
    await first.client.del(...stored);
  });

  it('answers every request while Redis cannot be reached, counting in memory, with one log line for the outage', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const closed = connect(`redis://127.0.0.1:${await freePort()}`, logger);
    const limited = limitedApp({ keyRequests: 15 }, { logger, counters: redisCounters(closed.client, { prefix: uniquePrefix() }) });
    const { key } = await makeKey(app.db);
    const statuses: number[] = [];
    for (let request = 0; request < 15; request += 1) statuses.push((await limited.request(DETAILS, { key })).status);
    statuses.push((await limited.graphql('{ apikey_details { id: databaseId } }', { key })).response.status);
    expect(statuses.slice(0, 15)).toEqual(Array(15).fill(200));
    // The instance's own count still holds the key to its limit; nothing answered 5xx.
    expect(statuses[15]).toBe(429);
    // The Redis circuit breaker's line (src/redis/client.ts), once for the outage, naming what it does.
    const outage = lines.filter((line) => line.includes('Redis unavailable'));
    expect(outage).toHaveLength(1);
    expect(outage[0]).toContain('rate limits counted here');
  });
});

describe('settings', () => {
  const base = {
    PUBLIC_URL: testSettings.PUBLIC_URL,
    SESSION_SIGNING_SECRET: testSettings.SESSION_SIGNING_SECRET,
    SECRETS_ENCRYPTION_KEYS: testSettings.SECRETS_ENCRYPTION_KEYS,
  };

  it('has the documented defaults, and reads every limit and TRUST_PROXY', () => {
    const defaults = loadConfig(base);
    expect(defaults.rateLimits).toEqual({
      windowMs: 60_000,
      keyRequests: 600,
      dealershipRequests: 1_200,
      keyCost: 50_000,
      addressWindowMs: 300_000,
      authFailures: 20,
      signOnRedemptions: 20,
      anonymousRequests: 120,
    });
    expect(defaults.redisKeyPrefix).toBeNull();
    expect(defaults.trustProxyHops).toBe(0);
    const set = loadConfig({
      ...base,
      RATE_LIMIT_WINDOW_SECONDS: '10',
      RATE_LIMIT_KEY_REQUESTS: '5',
      RATE_LIMIT_DEALERSHIP_REQUESTS: '0',
      RATE_LIMIT_KEY_COST: '7000',
      RATE_LIMIT_ADDRESS_WINDOW_SECONDS: '30',
      RATE_LIMIT_AUTH_FAILURES: '3',
      RATE_LIMIT_SIGN_ON: '4',
      RATE_LIMIT_ANONYMOUS: '9',
      TRUST_PROXY: '2',
      RATE_LIMIT_REDIS_PREFIX: 'shop-a:',
    });
    expect(set.rateLimits).toEqual({
      windowMs: 10_000,
      keyRequests: 5,
      dealershipRequests: 0,
      keyCost: 7_000,
      addressWindowMs: 30_000,
      authFailures: 3,
      signOnRedemptions: 4,
      anonymousRequests: 9,
    });
    // The deprecated name is taken as REDIS_KEY_PREFIX when that is not set, and gives way to it.
    expect(set.redisKeyPrefix).toBe('shop-a:');
    expect(loadConfig({ ...base, RATE_LIMIT_REDIS_PREFIX: 'shop-a:', REDIS_KEY_PREFIX: 'shop-b:' }).redisKeyPrefix).toBe('shop-b:');
    expect(set.trustProxyHops).toBe(2);
  });

  it('refuses a cost budget below the cost one operation may have, and limits that are not whole numbers', () => {
    expect(() => loadConfig({ ...base, RATE_LIMIT_KEY_COST: '4999' })).toThrow(
      /RATE_LIMIT_KEY_COST must be 0 \(no budget\) or at least GRAPHQL_MAX_COST \(5000\)/,
    );
    expect(loadConfig({ ...base, RATE_LIMIT_KEY_COST: '0' }).rateLimits.keyCost).toBe(0);
    try {
      loadConfig({ ...base, RATE_LIMIT_KEY_REQUESTS: 'lots', RATE_LIMIT_WINDOW_SECONDS: '0', TRUST_PROXY: 'true' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.map((problem) => problem.setting).sort()).toEqual([
        'RATE_LIMIT_KEY_REQUESTS',
        'RATE_LIMIT_WINDOW_SECONDS',
        'TRUST_PROXY',
      ]);
    }
  });
});

describe('memory counters', () => {
  it('keep at most their maximum of counters, forgetting the oldest first', async () => {
    const counters = memoryCounters(3);
    const spend = (name: string) => counters.spend([{ name, amount: 1, limit: 1, windowMs: MINUTE }], 0);
    for (const name of ['a', 'b', 'c', 'd']) expect((await spend(name)).allowed).toBe(true);
    // `a` was forgotten to make room for `d`; `d` is still counted.
    expect((await spend('a')).allowed).toBe(true);
    expect((await spend('d')).allowed).toBe(false);
  });
});
