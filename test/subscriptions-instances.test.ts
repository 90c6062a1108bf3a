// Live subscriptions across instances, with real parts: two apps over one database, each with its own
// live event hub on the real Redis (a prefix of this run's own), instance B behind the real HTTP
// server. A client of B, graphql-sse's own (createClient, distinct connections mode) or a plain SSE
// reader, receives a lead created through instance A. B's stream outlives HTTP_REQUEST_TIMEOUT_MS,
// and closing B's hub at shutdown completes it, so the drain ends without cutting it.
// test/instances-processes.test.ts has a client of one real service process receive a lead created
// through another's REST door.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { createLiveEventHub, type LiveEventHub } from '../src/gateway/live-events.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { connectRedis, type RedisConnections } from '../src/redis/client.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { readSse } from './support/sse.ts';

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

async function createLeadOnA(name: string): Promise<number> {
  const response = await instanceA.fetch('http://instance-a.test/graphql', {
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
