// The Node server around the app, on a loopback port: bodies are capped even without a length, slow
// clients are cut by the configured timeouts, connections are capped, a client that half-closes its
// side after its request is answered, and a drain answers every request it received before it closes
// the connections (a request whose body is still arriving when the grace period ends, with a 503).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import pino from 'pino';
import { PROTECTIVE_HEADERS } from '../src/gateway/security-headers.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config/index.ts';
import { createHttpServer, type GatewayServer, type HttpServerSettings } from '../src/http/server.ts';
import { createLifecycle, type Lifecycle } from '../src/gateway/lifecycle.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { Response } from '../src/web/fetch-api.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { CREATE_LEAD, graphLead, samplePayload } from './support/fixtures-leads.ts';
import { isAnswer, isDrainAnswer, keepAliveClient, openRaw, requestOnce, sleep, type HttpAnswer } from './support/http-client.ts';

const silent = pino({ level: 'silent' });
const LIMIT = 4096;
// Small on purpose: the timeouts are the behaviour under test, and the suite must stay quick.
const HEADERS_TIMEOUT_MS = 300;
const REQUEST_TIMEOUT_MS = 600;
let app: TestApp;
let key: string;
const servers: GatewayServer[] = [];

async function serve(
  overrides: Partial<HttpServerSettings> = {},
  lifecycle: Lifecycle = createLifecycle(),
  yoga?: Yoga,
): Promise<{ gateway: GatewayServer; port: number }> {
  const config: Config = app.config;
  const settings: HttpServerSettings = {
    bodyLimitBytes: LIMIT,
    httpHeadersTimeoutMs: HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: 5_000,
    httpMaxConnections: 100,
    ...overrides,
  };
  const gateway = createHttpServer(
    yoga ?? createApp(instanceDeps({ config, db: app.db, now: app.clock.now }, { lifecycle })),
    settings,
    silent,
    lifecycle,
  );
  servers.push(gateway);
  const { port } = await gateway.listen(0, '127.0.0.1');
  return { gateway, port };
}

let port: number;

beforeAll(async () => {
  app = await createTestApp();
  key = (await makeKey(app.db, { permissions: ['read:car'] })).key;
  ({ port } = await serve());
});

afterAll(async () => {
  for (const gateway of servers) {
    gateway.cutConnections();
    await gateway.drain();
  }
});

function send(chunks: string[], headers: Record<string, string>): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/graphql', method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

const query = JSON.stringify({ query: '{ apikey_details { id: databaseId } }' });

describe('the HTTP server', () => {
  it('serves a request end to end', async () => {
    const result = await send([query], { 'content-type': 'application/json', authorization: `Bearer ${key}` });
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body).data.apikey_details.id).toEqual(expect.any(Number));
  });

  // The server builds the app's Request itself (src/web/fetch-api.ts): a header the client sent with an
  // empty value must reach the app as sent, or a blank Idempotency-Key would create a lead. This is
  // the behaviour over the wire, on both doors (the REST door copies the headers into a request of
  // its own, /graphql reads them as the server built them); test/fetch-api.test.ts holds the
  // request's Headers to Node's own, whose has() and get() see an empty value.
  it('hands the app a header sent with an empty value as sent: a blank Idempotency-Key is 422 on both doors, nothing stored', async () => {
    const dealership = await makeDealership(app.db);
    const writer = await makeKey(app.db, { permissions: ['create:lead'] });
    const before = await app.db.lead.count();
    const post = (path: string, body: unknown): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path,
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${writer.key}`, 'idempotency-key': '' },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    const rest = await post('/api/v1/leads', { lead: samplePayload(dealership.id, { email: 'blank.key@example.com' }) });
    expect(rest.status).toBe(422);
    expect(JSON.parse(rest.body)).toMatchObject({ error: 'invalid_input', field: 'Idempotency-Key' });
    const graph = await post('/graphql', {
      query: CREATE_LEAD,
      variables: { lead: graphLead(samplePayload(dealership.id, { email: 'blank.key.graph@example.com' })) },
    });
    expect((JSON.parse(graph.body) as { errors?: { extensions?: unknown }[] }).errors?.[0]?.extensions).toMatchObject({
      error: 'invalid_input',
      field: 'Idempotency-Key',
    });
    expect(await app.db.lead.count()).toBe(before);
  });

  it('answers a Host header that makes no URL with 400 malformed_request, not 500', async () => {
    for (const host of ['a b', '[::1', 'x@y:z']) {
      const raw = await openRaw(port);
      raw.socket.write(`GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      await raw.closed;
      const text = raw.received();
      expect(text.split('\r\n')[0], host).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'malformed_request' });
    }
  });

  it('refuses a chunked body over the limit with 413', async () => {
    const chunk = 'x'.repeat(1024);
    const result = await send([`{"query":"{ apikey_details { databaseId } }","pad":"`, ...Array(8).fill(chunk), '"}'], {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error).toBe('payload_too_large');
    // Answered by the server itself, outside the app, with the same protective headers as every answer.
    for (const [name, value] of Object.entries(PROTECTIVE_HEADERS)) expect(result.headers[name], name).toBe(value);
    expect(result.headers['cache-control']).toBe('no-store');
  });
});

describe('a client that half-closes its side (TCP FIN) right after its request', () => {
  let writer: string;
  let dealershipId: number;
  beforeAll(async () => {
    writer = (await makeKey(app.db, { permissions: ['create:lead', 'read:lead'] })).key;
    dealershipId = (await makeDealership(app.db)).id;
  });

  const leadBody = (email: string): string => JSON.stringify({ lead: samplePayload(dealershipId, { email }) });
  const post = (path: string, body: string): string =>
    `POST ${path} HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${writer}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;

  // Every way a client ends its side after what it sends: one write, a body in pieces, the other
  // door, and pipelined requests. Each is answered, with Connection: close, and then closed.
  it.each([
    {
      way: 'a REST lead POST sent whole',
      send: (email: string) => [post('/api/v1/leads', leadBody(email)) + leadBody(email)],
      statuses: [201],
    },
    {
      way: 'a REST lead POST whose body comes in pieces, the FIN right after the last',
      send: (email: string) => {
        const body = leadBody(email);
        return [post('/api/v1/leads', body), body.slice(0, 40), body.slice(40, 120), body.slice(120)];
      },
      statuses: [201],
    },
    {
      way: 'a GraphQL create_lead',
      send: (email: string) => {
        const body = JSON.stringify({ query: CREATE_LEAD, variables: { lead: graphLead(samplePayload(dealershipId, { email })) } });
        return [post('/graphql', body) + body];
      },
      statuses: [200],
    },
    {
      way: 'a GET /health and a lead POST pipelined',
      send: (email: string) => [
        `GET /health HTTP/1.1\r\nHost: gateway.test\r\n\r\n${post('/api/v1/leads', leadBody(email))}${leadBody(email)}`,
      ],
      statuses: [200, 201],
    },
  ])('answers $way, and stores the lead', async ({ way, send, statuses }) => {
    const email = `half.close.${statuses.length}.${Date.now()}.${way.length}@example.com`;
    const client = await openRaw(port);
    const pieces = send(email);
    for (const [index, piece] of pieces.entries()) {
      if (index > 0) await sleep(5);
      client.socket.write(piece);
    }
    // The FIN, at once: what a client that has nothing more to send does (socket.end(), shutdown(SHUT_WR)).
    client.socket.end();
    await client.closed;
    const answers = client.received().split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(
      answers.map((text) => Number(text.slice(9, 12))),
      client.received().slice(0, 300),
    ).toEqual(statuses);
    expect(answers.at(-1)?.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(await app.db.lead.count({ where: { email } })).toBe(1);
  });

  it("ends a subscription stream at its client's FIN, at once, freeing its place", async () => {
    const { port: streamPort } = await serve({}, createLifecycle(), app.yoga);
    const body = JSON.stringify({ query: 'subscription { leadCreated { databaseId } }' });
    const client = await openRaw(streamPort);
    client.socket.write(
      `POST /graphql HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${writer}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    while (!client.received().includes(':\n\n') && !client.isClosed()) await sleep(5);
    expect(app.events.openStreams()).toBe(1);
    client.socket.end();
    // At once, not at the stream's next write (its heartbeat, 15 s away), which would find the client gone.
    await Promise.race([client.closed, sleep(2_000)]);
    expect(client.isClosed()).toBe(true);
    for (let waited = 0; app.events.openStreams() > 0 && waited < 2_000; waited += 5) await sleep(5);
    expect(app.events.openStreams()).toBe(0);
  });
});

describe('HEAD on the wire', () => {
  it('sends the GET headers with its Content-Length and no body, and the connection stays usable', async () => {
    const connection = await openRaw(port);
    connection.socket.write(
      'HEAD /health HTTP/1.1\r\nHost: gateway.test\r\n\r\nGET /health HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n\r\n',
    );
    await connection.closed;
    const answers = connection.received().split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    const [head = '', get = ''] = answers;
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\ncontent-length: 15\r\n/i);
    // Nothing after the blank line: the next bytes on the connection are the GET's answer.
    expect(head.endsWith('\r\n\r\n')).toBe(true);
    expect(get).toMatch(/^HTTP\/1\.1 200 /);
    expect(get.endsWith('{"status":"ok"}')).toBe(true);
  });
});

describe('slow clients', () => {
  // Each client keeps sending, one piece every 50 ms, for up to 100 pieces (5 s, far beyond the
  // timeouts); the server must close the connection long before the client runs out.
  const DRIP_MS = 50;
  const MAX_PIECES = 100;

  async function drip(pieces: (i: number) => string, start: string): Promise<{ sent: number; received: string }> {
    const connection = await openRaw(port);
    connection.socket.write(start);
    let sent = 0;
    while (!connection.isClosed() && sent < MAX_PIECES) {
      await sleep(DRIP_MS);
      if (connection.isClosed()) break;
      connection.socket.write(pieces(sent));
      sent += 1;
    }
    connection.socket.destroy();
    return { sent, received: connection.received() };
  }

  it('cuts a connection whose headers arrive slowly, with 408', async () => {
    const result = await drip((i) => `x-slow-${i}: 1\r\n`, 'GET /health HTTP/1.1\r\nHost: gateway.test\r\n');
    expect(result.sent).toBeLessThan(MAX_PIECES);
    expect(result.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('cuts a connection whose body arrives slowly, with 408', async () => {
    const length = MAX_PIECES + query.length;
    const head = `POST /graphql HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const result = await drip(() => ' ', head);
    expect(result.sent).toBeLessThan(MAX_PIECES);
    expect(result.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes connections over the cap as soon as they are accepted', async () => {
    const capped = await serve({ httpMaxConnections: 2 });
    const holders = [keepAliveClient(capped.port), keepAliveClient(capped.port)];
    for (const holder of holders) expect(await holder.send('GET', '/health')).toMatchObject({ status: 200 });
    const third = keepAliveClient(capped.port);
    const refused = await third.send('GET', '/health');
    expect(isAnswer(refused)).toBe(false);
    // A held connection is let go: the next client gets in.
    holders[0]?.close();
    let admitted: Awaited<ReturnType<typeof third.send>> = refused;
    for (let attempt = 0; attempt < 50 && !isAnswer(admitted); attempt += 1) {
      await sleep(20);
      admitted = await third.send('GET', '/health');
    }
    expect(admitted).toMatchObject({ status: 200 });
    for (const client of [...holders, third]) client.close();
  });
});

describe('draining', () => {
  it('answers what it received with Connection: close, reports /ready 503, refuses new connections and closes idle ones', async () => {
    const lifecycle = createLifecycle();
    // A long keep-alive timeout, so that no connection of this test is closed for idling before the
    // drain (however busy the machine); the drain closes idle ones after the linger passed to it.
    const { gateway, port: drainPort } = await serve({ httpKeepAliveTimeoutMs: 30_000 }, lifecycle);
    const idle = keepAliveClient(drainPort);
    const busy = keepAliveClient(drainPort);
    const prober = keepAliveClient(drainPort);
    for (const client of [idle, busy, prober])
      expect(await client.send('GET', '/health')).toMatchObject({ status: 200, reusedSocket: false });

    // A request whose headers arrived and whose body is still on its way when the drain begins.
    const inFlight = await openRaw(drainPort);
    const body = query;
    inFlight.socket.write(
      `POST /graphql HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\nAuthorization: Bearer ${key}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await sleep(50);

    const drained = gateway.drain(3_000);
    let drainedYet = false;
    void drained.then(() => (drainedYet = true));
    expect(lifecycle.draining).toBe(true);

    // Requests arriving on keep-alive connections opened before the drain are answered, each with
    // Connection: close; /ready is 503.
    const [ready, queued] = (await Promise.all([
      prober.send('GET', '/ready'),
      busy.send('POST', '/graphql', { headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: query }),
    ])) as [HttpAnswer, HttpAnswer];
    expect(ready).toMatchObject({ status: 503, reusedSocket: true });
    expect(JSON.parse(ready.body)).toEqual({ status: 'draining' });
    expect(ready.headers.connection).toBe('close');
    expect(queued).toMatchObject({ status: 200, reusedSocket: true });
    expect(queued.headers.connection).toBe('close');
    // A new connection is refused once the listening socket has closed (it closes when no
    // connection waits to be accepted, within a few turns of the event loop).
    while (gateway.server.listening) await sleep(1);
    expect(await keepAliveClient(drainPort).send('GET', '/health')).toMatchObject({ error: 'ECONNREFUSED' });

    // The request that was in flight is completed and answered.
    expect(drainedYet).toBe(false);
    inFlight.socket.write(body.slice(5));
    await inFlight.closed;
    expect(inFlight.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(inFlight.received().toLowerCase()).toContain('connection: close');
    expect(inFlight.received()).toContain('"apikey_details"');

    // The idle keep-alive connection is closed by the server after the linger; then the drain ends.
    await drained;
    expect(gateway.openConnections()).toBe(0);
    for (const client of [idle, busy, prober]) client.close();
  });

  it('answers 503 with Retry-After and Connection: close on connections accepted while the listening socket was closing, after it closed', async () => {
    const lifecycle = createLifecycle();
    const { gateway, port: drainPort } = await serve({}, lifecycle);
    // Connections whose handshake the kernel completes while the process is busy: they wait in the
    // accept queue when the drain begins, and are accepted during it (never reset by the close).
    const connections = Array.from({ length: 5 }, () => {
      const socket = connect({ host: '127.0.0.1', port: drainPort });
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      socket.on('error', (error) => (received += `error: ${error.message}`));
      socket.write('GET /health HTTP/1.1\r\nHost: gateway.test\r\n\r\n');
      return { closed: new Promise<void>((resolve) => socket.once('close', () => resolve())), received: () => received };
    });
    // Node starts a connection to an address on the next tick: let it, then keep the event loop
    // busy (no poll phase, so nothing is accepted) while the kernel completes the handshakes.
    await new Promise((resolve) => process.nextTick(resolve));
    const busyUntil = Date.now() + 200;
    while (Date.now() < busyUntil);
    const drained = gateway.drain(1_000);
    await Promise.all(connections.map(({ closed }) => closed));
    for (const { received } of connections) {
      expect(received()).toMatch(/^HTTP\/1\.1 503 /);
      expect(received().toLowerCase()).toContain('retry-after: 1\r\n');
      expect(received().toLowerCase()).toContain('connection: close\r\n');
      expect(received()).toContain('"error":"unavailable"');
    }
    // And the listening socket is closed: a new connection is refused.
    expect(await keepAliveClient(drainPort).send('GET', '/health')).toMatchObject({ error: 'ECONNREFUSED' });
    await drained;
  });

  it('answers a request whose body is still arriving when the grace period ends 503 with Retry-After before closing its connection (opened before the drain, or accepted during it); nothing is stored', async () => {
    const lifecycle = createLifecycle();
    const { gateway, port: drainPort } = await serve({ httpKeepAliveTimeoutMs: 30_000 }, lifecycle);
    const writer = (await makeKey(app.db, { permissions: ['create:lead'] })).key;
    const dealershipId = (await makeDealership(app.db)).id;
    const startUpload = async (email: string): Promise<Awaited<ReturnType<typeof openRaw>>> => {
      const body = JSON.stringify({ lead: samplePayload(dealershipId, { email }) });
      const upload = await openRaw(drainPort);
      upload.socket.write(
        `POST /api/v1/leads HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${writer}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 30)}`,
      );
      return upload;
    };
    const before = await startUpload('cut.before@example.com');
    while (gateway.openConnections() < 1) await sleep(1);
    const drained = gateway.drain(3_000);
    // Accepted while the listening socket is still open (it stays open until none has arrived for 100 ms).
    const during = await startUpload('cut.during@example.com');
    while (gateway.openConnections() < 2) await sleep(1);
    await sleep(50);
    // What src/service.ts does when the grace period runs out.
    expect(gateway.cutConnections()).toBe(2);
    await Promise.all([before.closed, during.closed]);
    for (const upload of [before, during]) {
      expect(upload.received()).toMatch(/^HTTP\/1\.1 503 /);
      expect(upload.received().toLowerCase()).toContain('\r\nretry-after: 1\r\n');
      expect(upload.received().toLowerCase()).toContain('\r\nconnection: close\r\n');
      expect(upload.received()).toContain('"error":"unavailable"');
    }
    await drained;
    expect(await app.db.lead.count({ where: { email: { startsWith: 'cut.' } } })).toBe(0);
  });

  it('keeps the listening socket open until no connection has arrived for 100 ms, and then closes it', async () => {
    // A client answered just before the drain connects again a moment later (later on a loaded
    // machine): accepted and told 503, not caught by the close.
    const { gateway, port: drainPort } = await serve({}, createLifecycle());
    const began = Date.now();
    const drained = gateway.drain(1_000);
    await sleep(5);
    const late = await requestOnce(drainPort, 'GET', '/health');
    expect(isAnswer(late) && isDrainAnswer(late)).toBe(true);
    while (gateway.server.listening) await sleep(1);
    expect(Date.now() - began).toBeGreaterThanOrEqual(100);
    expect(await requestOnce(drainPort, 'GET', '/health')).toMatchObject({ error: 'ECONNREFUSED', connected: false });
    await drained;
  });

  /** How the test settles the held app's one answer. */
  interface HeldOutcome {
    resolve(response: Response): void;
    reject(error: Error): void;
  }
  // Every answer this path writes: the app's, and the 500 of a request that failed outside it.
  it.each([
    {
      finished: 'the app answers',
      settle: (outcome: HeldOutcome) =>
        outcome.resolve(new Response('{"status":"ok"}', { status: 200, headers: { 'content-type': 'application/json' } })),
      status: 200,
      body: '{"status":"ok"}',
    },
    {
      finished: 'the request fails outside the app',
      settle: (outcome: HeldOutcome) => outcome.reject(new Error('lost')),
      status: 500,
      body: '"error":"internal_error"',
    },
  ])(
    'sends an answer finished while the listening socket is still open only after it closed ($finished): the client that connects again at once is refused, not reset',
    async ({ settle, status, body }) => {
      // An app whose one answer the test settles: it finishes in the same turn as the drain begins,
      // before the listening socket can have closed.
      let outcome: HeldOutcome | undefined;
      const heldApp = {
        handleRequest: () => {
          return new Promise<Response>((resolve, reject) => (outcome = { resolve, reject }));
        },
      } as unknown as Yoga;
      const lifecycle = createLifecycle();
      const { gateway, port: drainPort } = await serve({}, lifecycle, heldApp);
      const client = await openRaw(drainPort);
      // What a client that opens a connection per request does on its answer: it connects again at once.
      const reconnected = new Promise<'refused' | 'accepted'>((resolve) =>
        client.socket.once('data', () => {
          const next = connect({ host: '127.0.0.1', port: drainPort });
          next.once('connect', () => {
            next.destroy();
            resolve('accepted');
          });
          next.once('error', () => resolve('refused'));
        }),
      );
      client.socket.write('GET /health HTTP/1.1\r\nHost: gateway.test\r\n\r\n');
      while (!outcome) await sleep(1);

      const drained = gateway.drain(1_000);
      settle(outcome);
      // Accepted, it would be told 503 to go elsewhere; had it completed its handshake in the instant the
      // listening socket closed, the kernel would have reset it.
      expect(await reconnected).toBe('refused');
      await client.closed;
      expect(client.received()).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(client.received().toLowerCase()).toContain('connection: close\r\n');
      expect(client.received()).toContain(body);
      await drained;
    },
  );
});
