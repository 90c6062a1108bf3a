// Request ids and the request log: every answer names its request (Request-Id), error bodies quote
// the id, every log line written for the request carries it with the key id, scope, door, status,
// duration and error code, and no log line carries anyone's e-mail address or phone number.
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { loadConfig } from '../src/config/index.ts';
import { createLogger } from '../src/logger.ts';
import { createMailer } from '../src/notifications/mailer.ts';
import { inMemoryReadCache } from '../src/gateway/response-cache.ts';
import { MAX_REQUEST_ID_LENGTH } from '../src/telemetry/request-id.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { instanceDeps, testSettings, type TestApp } from './support/app.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';
import { openApiDocument } from './support/contract.ts';
import { makeKey } from './support/fixtures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface LogEntry {
  level: number;
  msg: string;
  request_id?: string;
  [field: string]: unknown;
}

let app: TestApp;
let key: string;
/** The demo app again, logging at debug level into `lines` through the service's own logger. */
let logged: Yoga;
const lines: string[] = [];

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  logged = createApp(
    instanceDeps(
      { config: app.config, db: app.db, now: app.clock.now },
      { logger: createLogger('debug', sink), readCache: inMemoryReadCache() },
    ),
  );
});

function call(path: string, init: RequestInit & { key?: string; json?: unknown } = {}): Promise<Response> {
  const { key: bearer, json, headers, ...rest } = init;
  const all = new Headers(headers);
  if (bearer) all.set('authorization', `Bearer ${bearer}`);
  if (json !== undefined) all.set('content-type', 'application/json');
  return Promise.resolve(
    logged.fetch(`http://gateway.test${path}`, { ...rest, headers: all, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) }),
  );
}

const entriesOf = (requestId: string): LogEntry[] =>
  lines.map((line) => JSON.parse(line) as LogEntry).filter((entry) => entry.request_id === requestId);

const requestLine = (requestId: string): LogEntry | undefined => entriesOf(requestId).find((entry) => entry.msg === 'request');

describe('Request-Id', () => {
  it('is on every answer, a new UUID per request unless the caller names it', async () => {
    const answers = [
      await call('/api/v1/cars/1/performance.json', { key }),
      await call('/nowhere/at/all'),
      await call('/health'),
      await call('/ready'),
      await call('/graphql', { method: 'POST', key, json: { query: '{ apikey_details { id: databaseId } }' } }),
      await call('/api/v1/cars/1/performance.json', { method: 'HEAD', key }),
      await call('/no/such/path', { method: 'HEAD' }),
      await call('/api/v1/cars/1/performance.json', { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example' } }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 404, 200, 200, 200, 200, 404, 403]);
    const ids = answers.map((answer) => answer.headers.get('request-id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is on a 304 and on a 429', async () => {
    const first = await call('/api/v1/cars/1/performance.json', { key });
    const etag = first.headers.get('etag') ?? '';
    const notModified = await call('/api/v1/cars/1/performance.json', { key, headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('request-id')).toMatch(UUID);

    const limitedKey = (await makeKey(app.db, { permissions: ['read:car'] })).key;
    const limited = createApp(
      instanceDeps({ config: { ...app.config, rateLimits: { ...app.config.rateLimits, keyRequests: 1 } }, db: app.db, now: app.clock.now }),
    );
    const headers = { authorization: `Bearer ${limitedKey}` };
    expect((await limited.fetch('http://gateway.test/api/v1/cars/1/performance.json', { headers })).status).toBe(200);
    const refused = await limited.fetch('http://gateway.test/api/v1/cars/1/performance.json', { headers });
    expect(refused.status).toBe(429);
    const id = refused.headers.get('request-id');
    expect(id).toMatch(UUID);
    expect(await refused.json()).toEqual({ error: 'rate_limited', message: expect.any(String), request_id: id });
  });

  it("keeps the caller's X-Request-Id when it is short and printable-safe, else makes one", async () => {
    const named = await call('/health', { headers: { 'x-request-id': 'shop-7f3a.42' } });
    expect(named.headers.get('request-id')).toBe('shop-7f3a.42');
    const longest = 'a'.repeat(MAX_REQUEST_ID_LENGTH);
    expect((await call('/health', { headers: { 'x-request-id': longest } })).headers.get('request-id')).toBe(longest);
    for (const unsafe of ['a'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'two words', 'quote"d', 'new\\nline', '<script>']) {
      expect((await call('/health', { headers: { 'x-request-id': unsafe } })).headers.get('request-id'), unsafe).toMatch(UUID);
    }
  });

  it("takes a valid traceparent's trace id when no X-Request-Id is sent", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect((await call('/health', { headers: { traceparent } })).headers.get('request-id')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    // X-Request-Id wins over traceparent.
    expect((await call('/health', { headers: { traceparent, 'x-request-id': 'mine-1' } })).headers.get('request-id')).toBe('mine-1');
    for (const invalid of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'garbage',
    ]) {
      expect((await call('/health', { headers: { traceparent: invalid } })).headers.get('request-id'), invalid).toMatch(UUID);
    }
  });
});

describe('error bodies', () => {
  it('quote the request id on the REST door', async () => {
    const cases: [string, RequestInit & { key?: string }, number, string][] = [
      ['/api/v1/cars/999999/performance.json', { key }, 404, 'car_not_found'],
      ['/api/v1/cars/1/performance.json', { key: 'not-a-key' }, 401, 'unauthorized'],
      ['/no/such/path', {}, 404, 'not_found'],
      ['/api/v1/leads', { method: 'DELETE', key }, 405, 'method_not_allowed'],
    ];
    for (const [path, init, status, code] of cases) {
      const response = await call(path, init);
      expect(response.status, path).toBe(status);
      const id = response.headers.get('request-id');
      expect(await response.json(), path).toMatchObject({ error: code, request_id: id });
    }
  });

  it('quote it in extensions.request_id on /graphql', async () => {
    const response = await call('/graphql', { method: 'POST', key, json: { query: '{ car_performance(id: "999999") { __typename } }' } });
    const id = response.headers.get('request-id');
    const body = (await response.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors.length).toBeGreaterThan(0);
    for (const error of body.errors) expect(error.extensions.request_id).toBe(id);

    const invalid = await call('/graphql', { method: 'POST', key, json: { query: '{ no_such_field }' } });
    // A document that fails validation never executes: its error is stamped all the same.
    const invalidBody = (await invalid.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(invalidBody.errors).toHaveLength(1);
    expect(invalidBody.errors[0]?.extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      request_id: invalid.headers.get('request-id'),
    });
  });
});

describe('the OpenAPI document', () => {
  it('names Request-Id on every answer and request_id in every error body', () => {
    const document = openApiDocument() as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
      components: { schemas: { Error: { required: string[] } } };
    };
    expect(document.components.schemas.Error.required).toContain('request_id');
    let answers = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (status === '304') continue;
          answers += 1;
          expect(Object.keys(response.headers ?? {}), `${method} ${path} ${status}`).toContain('Request-Id');
        }
      }
    }
    expect(answers).toBeGreaterThan(50);
  });
});

describe('the request log', () => {
  it('names the key, scope, door, status, duration and error code under the request id', async () => {
    const scoped = await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [1, 2] });
    const ok = await call('/api/v1/cars/1/performance.json', { key: scoped.key });
    expect(requestLine(ok.headers.get('request-id') ?? '')).toMatchObject({
      door: 'GET /api/v1/cars/{id}/performance.json',
      status: 200,
      key_id: scoped.id,
      scope: 2,
      error_code: null,
      ms: expect.any(Number),
    });
    const missing = await call('/api/v1/cars/999999/performance.json', { key });
    expect(requestLine(missing.headers.get('request-id') ?? '')).toMatchObject({
      door: 'GET /api/v1/cars/{id}/performance.json',
      status: 404,
      scope: 'all',
      error_code: 'car_not_found',
    });
    const graph = await call('/graphql', {
      method: 'POST',
      key,
      json: { query: 'query Perf { car_performance(id: "999999") { __typename } }', operationName: 'Perf' },
    });
    expect(requestLine(graph.headers.get('request-id') ?? '')).toMatchObject({
      door: 'query car_performance',
      status: 200,
      error_code: 'car_not_found',
    });
    const anonymous = await call('/graphql', { method: 'POST', key, json: { query: '{ apikey_details { id: databaseId } }' } });
    expect(requestLine(anonymous.headers.get('request-id') ?? '')).toMatchObject({ door: 'query apikey_details', status: 200 });
    const unknown = await call('/api/v1/cars/1/nonsense/42');
    expect(requestLine(unknown.headers.get('request-id') ?? '')).toMatchObject({
      door: 'unmatched',
      status: 404,
      key_id: null,
      scope: null,
      error_code: 'not_found',
    });
    const named = await call('/health', { headers: { 'x-request-id': 'follow-me-123' } });
    expect(named.status).toBe(200);
    expect(requestLine('follow-me-123')).toMatchObject({ door: 'GET /health', status: 200 });
  });

  it('gives what runs for the request a logger that carries the id', async () => {
    const response = await call('/api/v1/leads', {
      method: 'POST',
      key,
      json: {
        lead: {
          name: 'Ari Park',
          email: 'ari.park@example.com',
          phone: '0401 234 567',
          dealership_id: 1,
          category: 'General Enquiry',
          source: 'Website',
          bogus: true,
        },
      },
    });
    expect(response.status).toBe(201);
    const id = response.headers.get('request-id') ?? '';
    expect(entriesOf(id).map((entry) => entry.msg)).toEqual(
      expect.arrayContaining(['ignored parameters the operation does not take', 'request']),
    );
  });

  it("makes the request's own logger only when something logs for it: reads on either door make none", async () => {
    const logger = createLogger('info', new Writable({ write: (_chunk, _encoding, done) => done() }));
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof child>) => {
      children += 1;
      return child(...args);
    }) as typeof logger.child;
    const quiet = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { logger, readCache: null }));
    const send = (path: string, init: RequestInit = {}) =>
      Promise.resolve(
        quiet.fetch(`http://gateway.test${path}`, {
          ...init,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        }),
      );
    expect((await send('/api/v1/apikeys/apikey_details.json')).status).toBe(200);
    expect((await send('/api/v1/cars/1/performance.json')).status).toBe(200);
    const graph = await send('/graphql', {
      method: 'POST',
      body: JSON.stringify({ query: '{ apikey_details { databaseId dealerships { name } } }' }),
    });
    expect(await graph.json()).toMatchObject({ data: { apikey_details: { databaseId: expect.any(Number) } } });
    expect(children).toBe(0);
    // A request whose operation writes a line of its own gets one, carrying its id.
    const lead = await send('/api/v1/leads', {
      method: 'POST',
      body: JSON.stringify({
        lead: {
          name: 'Ari Park',
          email: 'ari.p@example.com',
          phone: '0401 234 567',
          dealership_id: 1,
          category: 'General Enquiry',
          source: 'Website',
          bogus: true,
        },
      }),
    });
    expect(lead.status).toBe(201);
    expect(children).toBe(1);
  });

  it('never carries a demo e-mail address or phone number, on any demo operation, at debug level', async () => {
    const car = await app.db.car.findUniqueOrThrow({ where: { id: 1 } });
    const user = await app.db.user.findFirstOrThrow({ where: { dealerships: { some: { dealership_id: 1 } } }, orderBy: { id: 'asc' } });
    const lead = {
      name: 'Jordan Lee',
      email: 'jordan.lee@example.com',
      phone: '0412 345 678',
      dealership_id: 1,
      category: 'Used Vehicle Enquiry',
      source: 'Website',
      stocknum: car.stocknum,
      message: 'Call me on 0412 345 678',
    };
    const personal = new Set<string>([lead.email, lead.phone, '+61412345678', '0412345678', user.email]);
    const answers: Response[] = [];
    for (const path of Object.values(DEMO_READ_PATHS)) answers.push(await call(path, { key }));
    answers.push(await call('/api/v1/leads', { method: 'POST', key, json: { lead } }));
    answers.push(await call('/api/v1/partner/tokens', { method: 'POST', key, json: { email: user.email } }));
    answers.push(await call('/api/v1/leads', { method: 'POST', key, json: { lead: { ...lead, email: 'not an email' } } }));
    answers.push(
      await call('/graphql', {
        method: 'POST',
        key,
        json: { query: '{ contacts(dealership_id: 1) { id: databaseId first_name postcode } }' },
      }),
    );
    for (const answer of answers) {
      expect(answer.status, answer.url).toBeLessThan(500);
      const text = await answer.clone().text();
      for (const email of text.match(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g) ?? []) personal.add(email);
      for (const phone of text.match(/\+61\d{8,9}|\b0[2-478]\d{8}\b|\b04\d{2} \d{3} \d{3}\b/g) ?? []) personal.add(phone);
      // Each request is in the log under the id its answer names.
      expect(requestLine(answer.headers.get('request-id') ?? ''), answer.url).toBeDefined();
    }
    // The demo data really holds personal data, so the check below checks something.
    expect(personal.size).toBeGreaterThan(5);
    const log = lines.join('\n');
    for (const value of personal) expect(log, value).not.toContain(value);
  });
});

describe('the logger', () => {
  it('is JSON unless LOG_FORMAT says pretty (development on a terminal defaults to pretty)', () => {
    // The suite's stdout is not a terminal: development mode stays JSON here too.
    expect(loadConfig({ ...testSettings }).logFormat).toBe('json');
    expect(loadConfig({ ...testSettings, APP_MODE: 'development' }).logFormat).toBe(process.stdout.isTTY ? 'pretty' : 'json');
    expect(loadConfig({ ...testSettings, LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ ...testSettings, LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT must be json or pretty/);
  });

  it('censors the fields that could hold personal data, as the mail logged instead of sent (no SMTP_URL)', async () => {
    const written: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        written.push(String(chunk));
        done();
      },
    });
    const logger = createLogger('info', sink);
    const mailer = createMailer({ smtpUrl: null, mailFrom: 'no-reply@dealership.local' }, logger);
    await mailer.send({
      to: 'kim.owner@example.com',
      subject: 'New lead from Jo Bloggs',
      text: 'Call Jo on 0412 345 678',
      messageId: '<1@dealership.local>',
    });
    logger.info({ lead: { email: 'jo@example.com', phone: '0412 345 678' }, authorization: 'Bearer secret-key' }, 'an object logged whole');
    logger.info({ request: { headers: { authorization: 'Bearer deep-key' } }, rows: [{ recipient: 'ann@example.com' }] }, 'deeper');
    logger.error({ err: Object.assign(new Error('refused'), { token: 'sign-on-token' }) }, 'an error with a secret field');
    const text = written.join('');
    expect(written).toHaveLength(4);
    for (const secret of [
      'kim.owner@example.com',
      'Jo Bloggs',
      '0412 345 678',
      'jo@example.com',
      'secret-key',
      'deep-key',
      'ann@example.com',
      'sign-on-token',
    ])
      expect(text, secret).not.toContain(secret);
    expect(JSON.parse(written[0] ?? '{}')).toMatchObject({
      mail: { to: '[redacted]', subject: '[redacted]', text: '[redacted]', messageId: '<1@dealership.local>' },
    });
    // The error keeps what pino's serialiser writes: its type, message and whole stack.
    expect(JSON.parse(written[3] ?? '{}').err).toMatchObject({ type: 'Error', message: 'refused', token: '[redacted]' });
    expect(JSON.parse(written[3] ?? '{}').err.stack).toContain('request-ids.test.ts');
  });
});

describe('answers the HTTP server writes itself', () => {
  const servers: GatewayServer[] = [];
  afterAll(async () => {
    for (const server of servers) {
      server.cutConnections();
      await server.drain(0);
    }
  });

  async function serve(yoga: Yoga): Promise<number> {
    const server = createHttpServer(yoga, { ...app.config, bodyLimitBytes: 1024 }, createLogger('silent'), createLifecycle());
    servers.push(server);
    return (await server.listen(0, '127.0.0.1')).port;
  }

  function post(
    port: number,
    headers: Record<string, string>,
    chunks: string[],
  ): Promise<{ status: number; id: string | undefined; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/graphql', method: 'POST', headers }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, id: res.headers['request-id'] as string | undefined, body }));
      });
      req.on('error', reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  }

  it('carry the Request-Id too: a chunked body over the limit (413) and a failure outside the app (500)', async () => {
    const port = await serve(logged);
    const tooLarge = await post(port, { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'x-request-id': 'big-1' }, [
      'x'.repeat(800),
      'x'.repeat(800),
    ]);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.id).toBe('big-1');
    expect(JSON.parse(tooLarge.body)).toMatchObject({ error: 'payload_too_large', request_id: 'big-1' });

    const failing = { fetch: () => Promise.reject(new Error('boom')) } as unknown as Yoga;
    const failed = await post(await serve(failing), { 'content-type': 'application/json' }, ['{}']);
    expect(failed.status).toBe(500);
    expect(failed.id).toMatch(UUID);
    expect(JSON.parse(failed.body)).toEqual({ error: 'internal_error', message: 'Unexpected error.', request_id: failed.id });
  });

  it("keep the id the app logs under: a generated one reaches the app's log line", async () => {
    const port = await serve(logged);
    const answered = await post(port, { 'content-type': 'application/json', authorization: `Bearer ${key}` }, [
      JSON.stringify({ query: '{ apikey_details { id: databaseId } }' }),
    ]);
    expect(answered.status).toBe(200);
    expect(answered.id).toMatch(UUID);
    expect(requestLine(answered.id ?? '')).toMatchObject({ status: 200, door: 'query apikey_details' });
  });
});
