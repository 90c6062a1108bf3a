// What a caller without a key, or with a large or odd request, can make the service do: every keyless
// path is limited per client address (RATE_LIMIT_ANONYMOUS), the caller's text in log lines is cut,
// a keyless body is capped far below a keyed one and refused 413 before it is read or parsed, and
// JSON nested too deep is refused 422 before anything recurses over it, on both doors.
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, LOGGED_LINE_MAX, LOGGED_STRING_MAX } from '../src/logger.ts';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { MAX_BODY_DEPTH } from '../src/domain/input-limits.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, withRequestIdChecked, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeUser, uniqueNumber } from './support/fixtures.ts';
import { makeLead, makePartnerToken } from './support/fixtures-events.ts';
import { graphLead, samplePayload } from './support/fixtures-leads.ts';

const ANONYMOUS_LIMIT = 3;
const ANONYMOUS_BODY_LIMIT = 2_048;
let app: TestApp;
let limited: Yoga;
let dealership: { id: number; slug: string };
let user: { id: number };
let key: string;

beforeAll(async () => {
  app = await createTestApp({ anonymousBodyLimitBytes: ANONYMOUS_BODY_LIMIT });
  dealership = await makeDealership(app.db);
  user = await makeUser(app.db, [dealership.id], { email: `abuse.${uniqueNumber()}@example.com` });
  ({ key } = await makeKey(app.db, { permissions: ['create:lead', 'create:lead_event'] }));
  // One proxy in front, so each test can speak from an address of its own (X-Forwarded-For).
  const config = { ...app.config, trustProxyHops: 1, rateLimits: { ...app.config.rateLimits, anonymousRequests: ANONYMOUS_LIMIT } };
  limited = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }));
});

let addresses = 0;
const newAddress = (): string => {
  addresses += 1;
  return `198.51.100.${addresses}`;
};

function from(yoga: Yoga, address: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('x-forwarded-for', address);
  return Promise.resolve(yoga.fetch(`http://gateway.test${path}`, { ...init, headers })).then(withRequestIdChecked);
}

async function newSignOnToken(): Promise<string> {
  const token = createHash('sha256').update(`abuse ${uniqueNumber()}`).digest('base64url');
  await makePartnerToken(app.db, user.id, token, { expires_at: new Date(app.clock.now().getTime() + 10 * 60_000) });
  return token;
}

const tokenUsed = async (token: string): Promise<boolean> =>
  (await app.db.partnerToken.findUniqueOrThrow({ where: { token_hash: createHash('sha256').update(token).digest('hex') } })).used_at !==
  null;

describe('RATE_LIMIT_ANONYMOUS', () => {
  it('limits the public redirect per client address, with the RateLimit headers, and a refused call reads nothing', async () => {
    const address = newAddress();
    const path = `/api/v1/dealerships/${dealership.slug}/redirect_service?stocknum=NOPE`;
    for (let call = 1; call <= ANONYMOUS_LIMIT; call += 1) {
      const response = await from(limited, address, path);
      expect(response.status, `call ${call}`).not.toBe(429);
      expect(response.headers.get('ratelimit-policy')).toBe(`"anonymous";q=${ANONYMOUS_LIMIT};w=60`);
      expect(response.headers.get('ratelimit-remaining')).toBe(String(ANONYMOUS_LIMIT - call));
    }
    const refused = await from(limited, address, path);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toEqual({
      error: 'rate_limited',
      message: expect.stringContaining(`This address has made the ${ANONYMOUS_LIMIT} requests without an API key allowed per 60 s.`),
    });
    // Another address, and the same address with a key, are not affected.
    expect((await from(limited, newAddress(), path)).status).not.toBe(429);
    expect(
      (await from(limited, address, '/api/v1/leads', { method: 'POST', headers: { authorization: `Bearer ${key}` } })).status,
    ).not.toBe(429);
  });

  it('limits the partner sign-on handoff: the refused redemption does not spend its token', async () => {
    const address = newAddress();
    for (let call = 0; call < ANONYMOUS_LIMIT; call += 1) {
      const response = await from(limited, address, `/api/v1/partner/sign_on?token=${await newSignOnToken()}`);
      expect(response.status).toBe(302);
    }
    const token = await newSignOnToken();
    const refused = await from(limited, address, `/api/v1/partner/sign_on?token=${token}`);
    expect(refused.status).toBe(429);
    expect(await tokenUsed(token)).toBe(false);
  });

  it('limits GraphQL without a key, answered in GraphQL shape; a new window starts afresh', async () => {
    const address = newAddress();
    const ask = () =>
      from(limited, address, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
    for (let call = 0; call < ANONYMOUS_LIMIT; call += 1) expect((await ask()).status).toBe(200);
    const refused = await ask();
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { errors: { extensions: { code: string; policy: string } }[] };
    expect(body.errors[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', policy: 'anonymous' });
    app.clock.advance(60_000);
    expect((await ask()).status).toBe(200);
  });

  it('never counts the explorers and the service paths (GraphiQL, /docs, /openapi.json, /health)', async () => {
    const address = newAddress();
    for (let call = 0; call <= ANONYMOUS_LIMIT * 2; call += 1) {
      for (const [path, accept] of [
        ['/graphql', 'text/html'],
        ['/docs', '*/*'],
        ['/openapi.json', '*/*'],
        ['/health', '*/*'],
      ] as const) {
        const response = await from(limited, address, path, { headers: { accept } });
        expect(response.status, path).toBe(200);
        expect(response.headers.get('ratelimit-policy'), path).toBeNull();
      }
    }
  });

  it('is off at 0: keyless requests are then not counted', async () => {
    const config = { ...app.config, trustProxyHops: 1, rateLimits: { ...app.config.rateLimits, anonymousRequests: 0 } };
    const unlimited = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }));
    const address = newAddress();
    for (let call = 0; call <= ANONYMOUS_LIMIT; call += 1) {
      const response = await from(unlimited, address, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBeNull();
    }
  });
});

describe('logged caller text', () => {
  it('cuts each ignored name and the number of names in the log line, and says how many there were', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { logger: createLogger('info', sink) }));
    const names = Array.from({ length: 60 }, (_, index) => `${String(index).padStart(2, '0')}${'n'.repeat(9_000)}`);
    const lead = {
      ...samplePayload(dealership.id, { email: `logged.${uniqueNumber()}@example.com` }),
      ...Object.fromEntries(names.map((name) => [name, 1])),
    };
    const response = await logged.fetch('http://gateway.test/api/v1/leads', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lead }),
    });
    expect(response.status).toBe(201);
    const entry = lines
      .map((line) => JSON.parse(line) as { msg: string; ignored?: string[]; ignored_count?: number })
      .find((line) => line.ignored);
    expect(entry?.ignored_count).toBe(60);
    expect(entry?.ignored?.length).toBeLessThanOrEqual(20);
    for (const name of entry?.ignored ?? []) expect(name.length).toBeLessThanOrEqual(LOGGED_STRING_MAX + 1);
    for (const line of lines) expect(line.length).toBeLessThan(LOGGED_LINE_MAX);
  });

  it('cuts every string field, list and message of any line, and replaces a line still too long', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info(
      { path: `/${'p'.repeat(100_000)}`, nested: { names: Array.from({ length: 500 }, () => 'x'.repeat(500)) } },
      `m${'m'.repeat(100_000)}`,
    );
    logger.info({ wide: Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`k${index}`, 'v'.repeat(150)])) }, 'wide');
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect((first!.path as string).length).toBeLessThanOrEqual(LOGGED_STRING_MAX + 1);
    expect((first!.nested as { names: string[] }).names.length).toBeLessThanOrEqual(51);
    expect((first!.msg as string).length).toBeLessThanOrEqual(1_001);
    expect(second?.msg).toMatch(/^log line of \d+ characters cut$/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(LOGGED_LINE_MAX);
  });
});

describe('ANONYMOUS_BODY_LIMIT_BYTES', () => {
  const padding = 'x'.repeat(ANONYMOUS_BODY_LIMIT + 100);

  it('refuses a keyless body over it with 413 before parsing it (even one that is not JSON), on both doors', async () => {
    const graph = await app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{not json ${padding}`,
    });
    expect(graph.status).toBe(413);
    expect(await graph.json()).toEqual({
      error: 'payload_too_large',
      message: `The request body is over ${ANONYMOUS_BODY_LIMIT} bytes, the limit for a request without an API key.`,
    });
    const rest = await app.yoga.fetch('http://gateway.test/api/v1/partner/sign_on', { method: 'POST', body: padding });
    expect(rest.status).toBe(413);
  });

  it('leaves a request with a key to BODY_LIMIT_BYTES', async () => {
    const lead = samplePayload(dealership.id, { email: `keyed.${uniqueNumber()}@example.com`, message: padding.slice(0, 3_000) });
    const response = await app.request('/api/v1/leads', { method: 'POST', key, json: { lead } });
    expect(response.status).toBe(201);
  });

  describe('through the HTTP server', () => {
    let server: GatewayServer;
    let port: number;
    beforeAll(async () => {
      server = createHttpServer(app.yoga, app.config, createLogger('silent'), createLifecycle());
      ({ port } = await server.listen(0, '127.0.0.1'));
    });
    afterAll(async () => {
      await server.drain(0);
    });

    it('counts a chunked keyless body against it, and a keyed one against BODY_LIMIT_BYTES', async () => {
      const send = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(
            { port, host: '127.0.0.1', path: '/graphql', method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          // No Content-Length: chunked, so the server counts the bytes as they come.
          req.write(JSON.stringify({ query: '{ __typename }', variables: { padding } }));
          req.end();
        });
      expect(await send({})).toBe(413);
      expect(await send({ authorization: `Bearer ${key}` })).toBe(200);
    });
  });
});

describe('JSON nesting', () => {
  const nested = (depth: number, leaf: unknown = 1): unknown => {
    let value: unknown = leaf;
    for (let level = 0; level < depth; level += 1) value = { a: value };
    return value;
  };
  /** JSON text nested `depth` deep, written without JSON.stringify (which recurses, and runs out of stack first). */
  const nestedText = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  /** `value` as JSON with the string "NESTED" replaced by JSON nested `depth` deep. */
  const withNested = (value: unknown, depth: number): string => JSON.stringify(value).replace('"NESTED"', nestedText(depth));

  it.each([5_000, MAX_BODY_DEPTH + 1])('REST: lead.fields nested %i deep is 422 before parsing, nothing stored', async (depth) => {
    const email = `deep.${uniqueNumber()}@example.com`;
    const body = withNested({ lead: samplePayload(dealership.id, { email, fields: 'NESTED' }) }, depth);
    const response = await app.request('/api/v1/leads', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      error: 'invalid_input',
      message: `body: must not nest objects and lists more than ${MAX_BODY_DEPTH} levels deep`,
      field: 'body',
    });
    expect(await app.db.lead.count({ where: { email } })).toBe(0);
  });

  it('REST: within the body limit, a too-deep lead.fields is still named by its field', async () => {
    const response = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: { lead: samplePayload(dealership.id, { fields: nested(40) }) },
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { field: string }).field).toBe('lead.fields');
  });

  it('REST: a JSON query parameter (lead events ?data=) nested 3,000 deep is 422', async () => {
    const lead = await makeLead(app.db, dealership.id);
    const data = withNested({ leadId: lead.id, messageDetail: 'NESTED' }, 3_000);
    const response = await app.request(`/api/v1/lead_events/sms/create?data=${encodeURIComponent(data)}`, { method: 'POST', key });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { field: string }).field).toBe('data');
    expect(await app.db.leadEvent.count({ where: { lead_id: lead.id } })).toBe(0);
  });

  it('GraphQL: variables nested 5,000 deep are 422 before parsing, by POST and by GET, nothing stored', async () => {
    const email = `deep.graph.${uniqueNumber()}@example.com`;
    const query = 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }';
    const body = withNested({ query, variables: { lead: graphLead(samplePayload(dealership.id, { email, fields: 'NESTED' })) } }, 5_000);
    const post = await app.request('/graphql', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body });
    expect(post.status).toBe(422);
    const answer = (await post.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(answer.errors[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'body' });
    expect(await app.db.lead.count({ where: { email } })).toBe(0);

    const search = new URLSearchParams({ query: '{ __typename }', variables: withNested({ deep: 'NESTED' }, 3_000) });
    const get = await app.request(`/graphql?${search}`, { key, headers: { accept: 'application/json' } });
    expect(get.status).toBe(422);
  });
});
