// Live subscriptions across instances, with real parts: two apps over one database, each with its own
// live event hub on the real Redis (a prefix of this run's own), instance B behind the real HTTP
// server. A client of B, graphql-sse's own (createClient, distinct connections mode) or a plain SSE
// reader, receives a lead created through instance A. B's stream outlives HTTP_REQUEST_TIMEOUT_MS,
// and closing B's hub at shutdown completes it, so the drain ends without cutting it.
// Instance C, behind its own HTTP server with a heartbeat too long to matter, hears key changes as
// the keys CLI announces them on Redis: a revoked key's stream, or one that lost its permission,
// ends at once; a client that closes its stream may open another at once under a per-key limit of
// 1; and a client that missed an event (written on an instance whose events reach no other, as while
// Redis is stopped) is sent it when it reconnects with Last-Event-ID; when C's subscription to Redis
// is lost and made again, C ends its streams, and their clients resume what was published meanwhile.
// test/instances-processes.test.ts has a client of one real service process receive a lead created
// through another's REST door.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../src/auth/api-keys.ts';
import { createKeyVerifier } from '../src/auth/key-cache.ts';
import { removeDealerships, removePermissions } from '../src/auth/key-admin.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { createLiveEventHub, type LiveEventHub } from '../src/gateway/live-events.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { connectRedis, redisKeyChangeFeed, type RedisConnections } from '../src/redis/client.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { readSse, type SseReader } from './support/sse.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Short, so that the streams below outlive it several times over. */
const REQUEST_TIMEOUT_MS = 500;
const LEAD_CREATED = 'subscription { leadCreated { databaseId dealership_id name } }';
const CREATE_LEAD = 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }';

let app: TestApp;
const silent = pino({ level: 'silent' });
const connections: RedisConnections[] = [];
const hubs: LiveEventHub[] = [];
let instanceA: Yoga;
let server: GatewayServer;
let port: number;
let dealershipId: number;
let reader: { key: string };
let writer: { key: string };

function instance(prefix: string): { yoga: Yoga; hub: LiveEventHub } {
  const redis = connectRedis(REDIS_URL, silent, prefix, { commandTimeoutMs: 1_000 });
  connections.push(redis);
  const config = { ...app.config, subscriptionHeartbeatMs: 200 };
  const hub = createLiveEventHub({ perKeyLimit: config.subscriptionsPerKey, logger: silent, redis });
  hubs.push(hub);
  return { yoga: createApp(instanceDeps({ config, db: app.db, now: app.clock.now }, { events: hub, liveEvents: hub })), hub };
}

beforeAll(async () => {
  app = await createTestApp();
  const prefix = `dgw:test:${randomBytes(6).toString('hex')}:`;
  instanceA = instance(prefix).yoga;
  const b = instance(prefix);
  await Promise.all([...connections.map((redis) => redis.ready()), ...hubs.map((hub) => hub.ready())]);
  server = createHttpServer(
    b.yoga,
    { ...app.config, httpHeadersTimeoutMs: REQUEST_TIMEOUT_MS, httpRequestTimeoutMs: REQUEST_TIMEOUT_MS },
    silent,
    createLifecycle(),
  );
  ({ port } = await server.listen(0, '127.0.0.1'));
  dealershipId = (await makeDealership(app.db)).id;
  reader = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'] });
  writer = await makeKey(app.db, { permissions: ['create:lead'] });
}, 60_000);

afterAll(async () => {
  for (const hub of hubs) hub.close();
  await server?.drain(0);
  await Promise.all(connections.map((redis) => redis.close()));
});

async function createLeadOnA(name: string, on: Yoga = instanceA): Promise<number> {
  const response = await on.fetch('http://instance-a.test/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: CREATE_LEAD,
      variables: {
        lead: {
          dealership_id: dealershipId,
          category: 'GENERAL_ENQUIRY',
          source: 'Website',
          name,
          email: 'x@example.com',
          phone: '+61412345678',
        },
      },
    }),
  });
  const body = (await response.json()) as { data?: { create_lead: { lead: { id: number } } }; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data?.create_lead.lead.id as number;
}

describe('a lead created on instance A, subscribed to on instance B', () => {
  it("reaches graphql-sse's client of B, through Redis", async () => {
    const client: Client = createClient({ url: `http://127.0.0.1:${port}/graphql`, headers: { authorization: `Bearer ${reader.key}` } });
    const received: unknown[] = [];
    let failed: unknown = null;
    const opened = new Promise<void>((resolve) => {
      // graphql-sse says nothing when the stream opens: B's hub counting it is the sign.
      const poll = setInterval(() => {
        if ((hubs[1]?.openStreams() ?? 0) > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    const firstEvent = new Promise<void>((resolve, reject) => {
      const dispose = client.subscribe(
        { query: LEAD_CREATED },
        {
          next: (value) => {
            received.push(value);
            dispose();
            resolve();
          },
          error: (error) => {
            failed = error;
            reject(error);
          },
          complete: () => undefined,
        },
      );
    });
    await opened;
    const id = await createLeadOnA('Across Instances');
    await firstEvent;
    client.dispose();
    expect(failed).toBeNull();
    expect(received).toEqual([{ data: { leadCreated: { databaseId: id, dealership_id: dealershipId, name: 'Across Instances' } } }]);
  });

  it('keeps a stream open past HTTP_REQUEST_TIMEOUT_MS, with heartbeats, and ends it when the hub closes at shutdown', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reader.key}`, accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: LEAD_CREATED }),
    });
    expect(response.status).toBe(200);
    const stream = readSse(response);
    expect(await stream.next()).toEqual({ kind: 'heartbeat' });
    await new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS * 3));
    const id = await createLeadOnA('After The Timeout');
    expect(await stream.nextEvent()).toEqual({
      data: { leadCreated: { databaseId: id, dealership_id: dealershipId, name: 'After The Timeout' } },
    });
    // The shutdown's order (src/service.ts): the hub closes, then the server drains; the open stream
    // completes, so the drain has nothing to cut.
    hubs[1]?.close();
    let message = await stream.next();
    while (message.kind === 'heartbeat') message = await stream.next();
    expect(message).toEqual({ kind: 'complete' });
    await server.drain(1_000);
    expect(server.openConnections()).toBe(0);
  });
});

describe('instance C: key changes announced on Redis, reconnects, and resuming', () => {
  /** Far longer than any wait below: nothing here may pass by a heartbeat. */
  const HEARTBEAT_MS = 60_000;
  let c: { hub: LiveEventHub; server: GatewayServer; port: number };
  /** An instance whose events reach no other (no Redis), as a write's events do while Redis is stopped. */
  let isolated: Yoga;
  /** Writes here reach C through Redis. */
  let writer: Yoga;
  let announcer: RedisConnections;
  /** C's own connections to Redis. */
  let cRedis: RedisConnections;
  const streams: SseReader[] = [];

  beforeAll(async () => {
    const prefix = `dgw:test:${randomBytes(6).toString('hex')}:`;
    writer = instance(prefix).yoga;
    const redis = connectRedis(REDIS_URL, silent, prefix, { commandTimeoutMs: 1_000 });
    announcer = connectRedis(REDIS_URL, silent, prefix, { commandTimeoutMs: 1_000 });
    connections.push(redis, announcer);
    cRedis = redis;
    const config = { ...app.config, subscriptionHeartbeatMs: HEARTBEAT_MS, subscriptionsPerKey: 1 };
    // As src/service.ts wires them: the verifier hears key changes on Redis and tells the hub.
    const keys = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 60 * 60_000, changes: redisKeyChangeFeed(redis, silent) });
    const hub = createLiveEventHub({ perKeyLimit: config.subscriptionsPerKey, logger: silent, redis, keyChanges: keys });
    hubs.push(hub);
    const yoga = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }, { keys, events: hub, liveEvents: hub }));
    const isolatedHub = createLiveEventHub({ perKeyLimit: 10, logger: silent });
    hubs.push(isolatedHub);
    isolated = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }, { events: isolatedHub, liveEvents: isolatedHub }));
    await Promise.all([redis.ready(), announcer.ready(), hub.ready(), ...hubs.map((each) => each.ready())]);
    // ioredis has sent SUBSCRIBE for the key changes once the verifier asked; wait for Redis to count it.
    for (let tries = 0; tries < 100; tries += 1) {
      const [, listening] = (await redis.client.pubsub('NUMSUB', `${prefix}api-key-changed`)) as [string, number];
      if (Number(listening) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const cServer = createHttpServer(yoga, config, silent, createLifecycle());
    const { port: cPort } = await cServer.listen(0, '127.0.0.1');
    c = { hub, server: cServer, port: cPort };
  }, 60_000);

  afterAll(async () => {
    await Promise.all(streams.splice(0).map((stream) => stream.close()));
    c?.hub.close();
    await c?.server.drain(0);
  });

  async function subscribeToC(key: string, init: { lastEventId?: string; signal?: AbortSignal } = {}): Promise<SseReader> {
    const response = await fetch(`http://127.0.0.1:${c.port}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        accept: 'text/event-stream',
        'content-type': 'application/json',
        ...(init.lastEventId ? { 'last-event-id': init.lastEventId } : {}),
      },
      body: JSON.stringify({ query: LEAD_CREATED }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    expect(response.status).toBe(200);
    const stream = readSse(response);
    streams.push(stream);
    expect(await stream.next()).toEqual({ kind: 'heartbeat' });
    return stream;
  }

  /** The stream's last event is the error that ended it (well before a heartbeat), then it completes and frees its place. */
  async function expectEndedAtOnce(stream: SseReader, extensions: Record<string, unknown>): Promise<void> {
    expect(await stream.nextEvent(5_000)).toEqual({
      data: { leadCreated: null },
      errors: [expect.objectContaining({ extensions: expect.objectContaining(extensions) })],
    });
    expect(await stream.next(1_000)).toEqual({ kind: 'complete' });
    await expect.poll(() => c.hub.openStreams(), { timeout: 1_000 }).toBe(0);
  }

  it('a key revoked and announced (as `npm run keys revoke` does): its open stream ends at once with 401', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead'] });
    const stream = await subscribeToC(key.key);
    await revokeKey(app.db, key.id, app.clock.now());
    await redisKeyChangeFeed(announcer, silent).publish(key.id);
    await expectEndedAtOnce(stream, { code: 'UNAUTHENTICATED', error: 'unauthorized' });
  });

  it('a key that lost read:lead, announced: its open stream ends at once with 403 and the permission', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:car'] });
    const stream = await subscribeToC(key.key);
    await removePermissions(app.db, key.id, ['read:lead']);
    await redisKeyChangeFeed(announcer, silent).publish(key.id);
    await expectEndedAtOnce(stream, { code: 'FORBIDDEN', error: 'forbidden', permission: 'read:lead' });
  });

  it('a change that leaves the key its permission keeps the stream, which follows the key as it is now', async () => {
    const other = await makeDealership(app.db);
    const key = await makeKey(app.db, { permissions: ['read:lead'], dealershipIds: [dealershipId, other.id] });
    const stream = await subscribeToC(key.key);
    await removeDealerships(app.db, key.id, [other.id]);
    await redisKeyChangeFeed(announcer, silent).publish(key.id);
    expect(await stream.eventsWithin(300)).toEqual([]);
    expect(c.hub.openStreams()).toBe(1);
    const id = await createLeadOnA('Still Listening', writer);
    expect(await stream.nextEvent()).toEqual({ data: { leadCreated: { databaseId: id, dealership_id: dealershipId, name: null } } });
    await stream.close();
    await expect.poll(() => c.hub.openStreams(), { timeout: 1_000 }).toBe(0);
  });

  it('a client that closes its stream may open another at once, under a per-key limit of 1', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead'] });
    const controller = new AbortController();
    await subscribeToC(key.key, { signal: controller.signal });
    expect(c.hub.openStreams()).toBe(1);
    controller.abort();
    // Freed when the client's socket closes, not at the stream's next heartbeat (a minute away).
    await expect.poll(() => c.hub.openStreams(), { timeout: 1_000, interval: 5 }).toBe(0);
    const again = await subscribeToC(key.key);
    const id = await createLeadOnA('After Reconnecting', writer);
    expect(await again.nextEvent()).toEqual({ data: { leadCreated: { databaseId: id, dealership_id: dealershipId, name: null } } });
    await again.close();
    await expect.poll(() => c.hub.openStreams(), { timeout: 1_000 }).toBe(0);
  });

  it('a client that missed an event that never reached Redis is sent it when it reconnects with Last-Event-ID', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'] });
    const first = await subscribeToC(key.key);
    const seen = await createLeadOnA('Seen Live', writer);
    expect(await first.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: seen } } });
    const lastEventId = first.lastEventId();
    expect(lastEventId).toMatch(/^evt_/);
    const missed = await createLeadOnA('Missed While Redis Was Away', isolated);
    expect(await first.eventsWithin(500)).toEqual([]);
    await first.close();
    await expect.poll(() => c.hub.openStreams(), { timeout: 1_000 }).toBe(0);

    const resumed = await subscribeToC(key.key, { lastEventId });
    expect(await resumed.nextEvent()).toEqual({
      data: { leadCreated: { databaseId: missed, dealership_id: dealershipId, name: 'Missed While Redis Was Away' } },
    });
    const live = await createLeadOnA('Live After Resuming', writer);
    expect(await resumed.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: live } } });
    expect(await resumed.eventsWithin(300)).toEqual([]);
  });

  it('ends its streams when its subscription to Redis is made again, and their clients resume what was published while it was lost', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'] });
    const first = await subscribeToC(key.key);
    const seen = await createLeadOnA('Before The Drop', writer);
    expect(await first.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: seen } } });
    const lastEventId = first.lastEventId();
    // C's subscriber connection goes; a lead written meanwhile is published on Redis, and C does not hear it.
    cRedis.subscriber.disconnect();
    const missed = await createLeadOnA('Published While C Was Away', writer);
    expect(await first.eventsWithin(300)).toEqual([]);
    await cRedis.subscriber.connect();
    let message = await first.next();
    while (message.kind === 'heartbeat') message = await first.next();
    expect(message).toEqual({ kind: 'complete' });
    await expect.poll(() => c.hub.openStreams(), { timeout: 1_000 }).toBe(0);

    const resumed = await subscribeToC(key.key, { lastEventId });
    expect(await resumed.nextEvent()).toEqual({
      data: { leadCreated: { databaseId: missed, dealership_id: dealershipId, name: 'Published While C Was Away' } },
    });
    const live = await createLeadOnA('Heard Again', writer);
    expect(await resumed.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: live } } });
  });
});
