// Every kind of connection that can be held open (subscription streams, uploads in flight, idle
// keep-alive connections) is under a bound of its own, so that the others are always served: the real
// server on a loopback port is flooded with each kind, up to its bound and past it, and then with all
// of them together, and `/health`, a REST read and a lead POST, each on a new connection, are answered
// as usual every time. Each flood is a fixed number of clients; a slow upload stops by itself after
// a bounded number of pieces, and every socket is closed at the end of its case.
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { createTestApp, testSettings, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { isAnswer, keepAliveClient, requestOnce, sleep, type KeepAliveClient } from './support/http-client.ts';

/** Small, so that the floods stay cheap; their shares are those of the defaults' relation (streams + uploads + reserve ≤ connections). */
const MAX_CONNECTIONS = 60;
const MAX_STREAMS = 20;
const MAX_UPLOADS = 8;
const RESERVED = 8;
/** How many of each kind a flood opens: more than the server has connections, so that without its bound a kind would take them all. */
const FLOOD = MAX_CONNECTIONS + 10;
/** A slow upload sends one byte this often, at most SLOW_PIECES times, unless its connection closes first. */
const DRIP_MS = 100;
const SLOW_PIECES = 300;
const LEAD_CREATED = JSON.stringify({ query: 'subscription { leadCreated { databaseId } }' });

let app: TestApp;
let gateway: GatewayServer;
let port: number;
let dealershipId: number;
/** Each of these keys may hold SUBSCRIPTIONS_PER_KEY streams: together, more than the instance takes. */
let readers: string[];
let writer: string;

beforeAll(async () => {
  app = await createTestApp({ subscriptionsPerInstance: MAX_STREAMS, subscriptionHeartbeatMs: 60_000 });
  // Timeouts far beyond the test, so that only the bounds under test close anything.
  gateway = createHttpServer(
    app.yoga,
    {
      ...app.config,
      httpMaxConnections: MAX_CONNECTIONS,
      httpMaxUploads: MAX_UPLOADS,
      httpReservedConnections: RESERVED,
      httpHeadersTimeoutMs: 60_000,
      httpRequestTimeoutMs: 60_000,
      httpKeepAliveTimeoutMs: 60_000,
    },
    pino({ level: 'silent' }),
    createLifecycle(),
  );
  ({ port } = await gateway.listen(0, '127.0.0.1'));
  dealershipId = (await makeDealership(app.db)).id;
  const keysNeeded = Math.ceil(FLOOD / app.config.subscriptionsPerKey);
  readers = await Promise.all(
    Array.from({ length: keysNeeded }, async () => (await makeKey(app.db, { permissions: ['read:lead', 'read:car'] })).key),
  );
  writer = (await makeKey(app.db, { permissions: ['create:lead'] })).key;
}, 180_000);

afterAll(async () => {
  gateway.cutConnections();
  await gateway.drain(0);
});

/** Whatever a case opened, closed when it ends however it ends. */
const opened: (() => void)[] = [];

/** A raw connection and what it has received so far. */
interface Held {
  socket: Socket;
  received(): string;
  closed(): boolean;
}

function hold(request: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let isClosed = false;
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => (isClosed = true));
    opened.push(() => socket.destroy());
    socket.once('connect', () => {
      socket.write(request);
      resolve({ socket, received: () => text, closed: () => isClosed });
    });
    socket.once('error', reject);
  });
}

/** Waits, a bounded number of times, until `ready` holds. */
async function until(ready: () => boolean, what: string, maxMs = 5_000): Promise<void> {
  for (let waited = 0; !ready(); waited += 10) {
    if (waited >= maxMs) throw new Error(`still waiting for ${what}`);
    await sleep(10);
  }
}

const statusOf = (held: Held): number => Number(/^HTTP\/1\.1 (\d{3}) /.exec(held.received())?.[1] ?? 0);

/** A subscription stream: accepted once its first heartbeat came, or refused with a status. */
async function openStream(index: number): Promise<Held> {
  const key = readers[Math.floor(index / app.config.subscriptionsPerKey)] ?? '';
  const held = await hold(
    `POST /graphql HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(LEAD_CREATED)}\r\n\r\n${LEAD_CREATED}`,
  );
  // Accepted: the stream's first heartbeat (a comment line) has come after the headers.
  await until(() => statusOf(held) !== 0 && (statusOf(held) !== 200 || held.received().includes(':\n\n')), 'a stream to open');
  return held;
}

/** An upload that sends its body one byte at a time and never finishes (unless refused or closed). */
async function startSlowUpload(): Promise<Held> {
  const held = await hold(
    `POST /api/v1/leads HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${writer}\r\nContent-Type: application/json\r\nContent-Length: ${SLOW_PIECES + 10}\r\n\r\n{`,
  );
  void (async () => {
    for (let piece = 0; piece < SLOW_PIECES && !held.closed(); piece += 1) {
      await sleep(DRIP_MS);
      if (!held.closed()) held.socket.write(' ');
    }
  })();
  return held;
}

/** A keep-alive connection that asked once and now sits idle. */
async function idleKeepAlive(): Promise<KeepAliveClient> {
  const client = keepAliveClient(port);
  opened.push(() => client.close());
  expect(await client.send('GET', '/health')).toMatchObject({ status: 200 });
  return client;
}

/** What must be served whatever else holds connections: each on a new connection, as a new client comes. */
async function expectOthersServed(label: string): Promise<void> {
  const health = await requestOnce(port, 'GET', '/health');
  expect(health, `${label}: /health`).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  const read = await requestOnce(port, 'GET', '/api/v1/apikeys/apikey_details.json', {
    headers: { authorization: `Bearer ${readers[0]}` },
  });
  expect(isAnswer(read) && read.status, `${label}: a REST read`).toBe(200);
  const email = `bounds.${label.replace(/\W+/g, '-')}.${Date.now()}@example.com`;
  const post = await requestOnce(port, 'POST', '/api/v1/leads', {
    headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lead: samplePayload(dealershipId, { email }) }),
  });
  expect(isAnswer(post) && [post.status, post.body.slice(0, 200)], `${label}: a lead POST`).toEqual([201, expect.any(String)]);
  expect(await app.db.lead.count({ where: { email } }), `${label}: the lead is stored`).toBe(1);
}

/** One kind of flood: it opens its connections and checks what its bound made of them. */
interface Flood {
  kind: string;
  open(): Promise<void>;
}

async function floodStreams(): Promise<void> {
  const streams: Held[] = [];
  for (let index = 0; index < FLOOD; index += 1) streams.push(await openStream(index));
  // One stream more than the instance holds is refused on its stream, as docs/subscriptions.md
  // says: an error naming the limit, then `complete`; its connection is then free for other requests.
  const refused = (): Held[] => streams.filter((held) => held.received().includes('subscriptions_at_capacity'));
  await until(() => refused().length >= FLOOD - MAX_STREAMS, 'the streams past the bound to be refused');
  for (const held of refused()) expect(held.received()).toContain('event: complete');
  expect(refused()).toHaveLength(FLOOD - MAX_STREAMS);
  expect(streams.filter((held) => statusOf(held) === 200)).toHaveLength(FLOOD);
  expect(app.events.openStreams()).toBe(MAX_STREAMS);
}

async function floodUploads(): Promise<void> {
  const uploads: Held[] = [];
  for (let index = 0; index < FLOOD; index += 1) uploads.push(await startSlowUpload());
  // The refusals come at once; the uploads within the bound are still sending, unanswered.
  await until(() => uploads.filter((held) => held.closed()).length >= FLOOD - MAX_UPLOADS, 'the uploads past the bound to be refused');
  await sleep(DRIP_MS * 3);
  const refused = uploads.filter((held) => held.received() !== '');
  expect(refused).toHaveLength(FLOOD - MAX_UPLOADS);
  for (const held of refused) {
    expect(statusOf(held)).toBe(503);
    expect(held.received().toLowerCase()).toContain('\r\nretry-after: 5\r\n');
    expect(held.received().toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(held.received()).toContain('"error":"unavailable"');
    expect(held.closed()).toBe(true);
  }
  expect(uploads.filter((held) => !held.closed())).toHaveLength(MAX_UPLOADS);
}

async function floodIdleKeepAlive(): Promise<void> {
  // More idle connections than the server takes: the ones idle longest are closed to make room.
  for (let index = 0; index < FLOOD; index += 1) await idleKeepAlive();
  expect(gateway.openConnections()).toBeLessThanOrEqual(MAX_CONNECTIONS - RESERVED);
}

const FLOODS: Flood[] = [
  { kind: 'subscription streams', open: floodStreams },
  { kind: 'uploads in flight', open: floodUploads },
  { kind: 'idle keep-alive connections', open: floodIdleKeepAlive },
];

/** After each case: nothing of it left open, so that the next starts from an empty server. */
async function settle(): Promise<void> {
  for (const close of opened.splice(0)) close();
  await until(() => gateway.openConnections() === 0 && app.events.openStreams() === 0, 'the connections of the case to close');
}

describe('every kind of held connection under its own bound', () => {
  it.each(FLOODS)('$kind, up to and past their bound: /health, a REST read and a lead POST are answered', async ({ kind, open }) => {
    try {
      await open();
      await expectOthersServed(kind);
    } finally {
      await settle();
    }
  });

  it('all of them at once, every kind past its bound: /health, a REST read and a lead POST are answered', async () => {
    try {
      for (const { open } of FLOODS) await open();
      await expectOthersServed('all at once');
      // And again, now that the new connections of the first round are idle too.
      await expectOthersServed('all at once, again');
    } finally {
      await settle();
    }
  });
});

describe('the bounds as settings', () => {
  it('default to a tenth of HTTP_MAX_CONNECTIONS each for uploads and the reserve, and take what is set', () => {
    expect(loadConfig({ ...testSettings })).toMatchObject({ httpMaxConnections: 1000, httpMaxUploads: 100, httpReservedConnections: 100 });
    expect(loadConfig({ ...testSettings, HTTP_MAX_CONNECTIONS: '4000' })).toMatchObject({
      httpMaxUploads: 400,
      httpReservedConnections: 400,
    });
    expect(loadConfig({ ...testSettings, HTTP_MAX_UPLOADS: '20', HTTP_RESERVED_CONNECTIONS: '0' })).toMatchObject({
      httpMaxUploads: 20,
      httpReservedConnections: 0,
    });
  });

  it('refuse to start when streams, uploads and the reserve together do not fit in HTTP_MAX_CONNECTIONS', () => {
    const start = (settings: Record<string, string>): unknown => {
      try {
        return loadConfig({ ...testSettings, ...settings });
      } catch (error) {
        return error instanceof ConfigError ? error.problems : error;
      }
    };
    // 500 streams (SUBSCRIPTIONS_PER_INSTANCE's default) + 60 uploads + 60 reserved > 600.
    expect(start({ HTTP_MAX_CONNECTIONS: '600' })).toEqual([
      { setting: 'HTTP_RESERVED_CONNECTIONS', message: expect.stringContaining('must be at most HTTP_MAX_CONNECTIONS (600)') },
    ]);
    expect(start({ HTTP_MAX_CONNECTIONS: '600', SUBSCRIPTIONS_PER_INSTANCE: '480' })).toMatchObject({ httpMaxConnections: 600 });
    expect(start({ HTTP_MAX_UPLOADS: '450' })).toEqual([{ setting: 'HTTP_RESERVED_CONNECTIONS', message: expect.any(String) }]);
    expect(start({ HTTP_MAX_UPLOADS: '0' })).toEqual([{ setting: 'HTTP_MAX_UPLOADS', message: expect.stringContaining('greater than 0') }]);
  });
});
