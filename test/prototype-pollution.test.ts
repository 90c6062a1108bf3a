// Keys that reach an object's prototype (`__proto__`, `constructor`, `prototype`) are refused
// wherever a request's text becomes an object, on every route of the route table and on /graphql:
// one written onto Object.prototype is seen by every object of the process, and took a whole
// instance down (every later answer 500, /health included, then a crash at the next write).
// Each hostile spelling is sent in each channel that can carry it (the query string, a JSON body, a
// urlencoded and a multipart body, a JSON-valued parameter; GraphQL's variables and extensions by
// every transport Yoga reads, and free-form JSON in the document), and after each answer nothing
// may have been added to the shared prototypes, the answer must be a 4xx with a JSON error body,
// and the next ordinary requests (a read, /health, a write) must still succeed.
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { createLogger } from '../src/logger.ts';
import { restRoutes, type RestRoute } from '../src/rest/routes.ts';
import { REFUSED_KEY_REASON } from '../src/web/refused-keys.ts';
import { createDemoApp } from './support/demo.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import type { TestApp } from './support/app.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
}, 120_000);

/** The shared prototypes a polluting key reaches: `__proto__` of an object or a list, `constructor.prototype` of either. */
const SHARED_PROTOTYPES = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype } as const;
const ownNames = (): Record<string, string[]> =>
  Object.fromEntries(Object.entries(SHARED_PROTOTYPES).map(([name, prototype]) => [name, Reflect.ownKeys(prototype).map(String)]));
const pristine = ownNames();

/**
 * What a request added to the shared prototypes, removed again at once: the test files of a worker
 * share its process (vitest.config.ts), so a failure here must not poison the next file.
 */
function pollution(): string[] {
  const added: string[] = [];
  for (const [name, prototype] of Object.entries(SHARED_PROTOTYPES)) {
    for (const property of Reflect.ownKeys(prototype).map(String)) {
      if (pristine[name]!.includes(property)) continue;
      added.push(`${name}.prototype.${property}`);
      Reflect.deleteProperty(prototype, property);
    }
  }
  return added;
}

afterEach(() => {
  expect(pollution(), 'nothing is left on the shared prototypes').toEqual([]);
});

/** Demo values for every path parameter of the route table. */
const PATH_VALUES: Readonly<Record<string, string>> = {
  id: '1',
  slug: 'toyota-corolla-sx-hybrid',
  website_id: '1',
  dealership_id: '1',
  dealership_slug: 'richmond-toyota',
  service: 'sms',
  delivery_id: '1',
};

function concretePath(route: RestRoute): string {
  return route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
    const value = PATH_VALUES[name];
    if (value === undefined) throw new Error(`no demo value for the path parameter ${name} of ${route.path}`);
    return value;
  });
}

/** The names a route reads from its body and its query, and one it does not read. */
const namesOf = (route: RestRoute): string[] => [...new Set([...(route.body ?? []), ...(route.query ?? []), 'extra'])];

/** Parameter and form field names, as bracket parsers read them. */
const hostileNames = (name: string): string[] => [
  `${name}[__proto__][polluted]`,
  `${name}[constructor][prototype][polluted]`,
  `${name}[prototype][polluted]`,
  `${name}[__proto__]`,
  `${name}[0][__proto__][polluted]`,
  '__proto__[polluted]',
  'constructor[prototype][polluted]',
];

/** JSON objects holding a polluting key, as text (a JavaScript literal's `__proto__` would set the prototype, not a key). */
const HOSTILE_OBJECTS = [
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"prototype":{"polluted":1}}',
  '{"a":[{"b":{"__proto__":{"polluted":1}}}]}',
  '{"\\u005f_proto__":{"polluted":1}}',
];

/** JSON bodies with a polluting key at the top or under one of the route's names. */
const hostileBodies = (name: string): string[] => [
  ...HOSTILE_OBJECTS.map((object) => `{"${name}":${object}}`),
  `{"${name}":[${HOSTILE_OBJECTS[0]}]}`,
  HOSTILE_OBJECTS[0]!,
  HOSTILE_OBJECTS[1]!,
];

interface Attempt {
  label: string;
  path: string;
  init: RequestInit;
  /** The answer when the channel is read: 422 naming the key; 400 where the route reads no such body. */
  expected: { status: 422 } | { status: 400; error: string };
}

type Channel = (route: RestRoute, path: string) => Attempt[];

const refused = { status: 422 } as const;
const notJson = { status: 400, error: 'malformed_json' } as const;

const CHANNELS: Readonly<Record<string, Channel>> = {
  'the query string': (route, path) =>
    namesOf(route).flatMap((name) =>
      hostileNames(name).map((hostile) => ({
        label: `?${hostile}=1`,
        path: `${path}?${encodeURIComponent(hostile)}=1`,
        init: { method: route.method },
        expected: refused,
      })),
    ),
  'a JSON-valued query parameter': (route, path) =>
    namesOf(route).flatMap((name) =>
      HOSTILE_OBJECTS.map((object) => ({
        label: `?${name}=${object}`,
        path: `${path}?${name}=${encodeURIComponent(object)}`,
        init: { method: route.method },
        expected: refused,
      })),
    ),
  'a JSON body': (route, path) =>
    route.method === 'GET'
      ? []
      : namesOf(route).flatMap((name) =>
          hostileBodies(name).map((body) => ({
            label: body,
            path,
            init: { method: route.method, headers: { 'content-type': 'application/json' }, body },
            expected: refused,
          })),
        ),
  'a urlencoded body': (route, path) =>
    route.method === 'GET'
      ? []
      : namesOf(route).flatMap((name) =>
          hostileNames(name).map((hostile) => ({
            label: `${hostile}=1`,
            path,
            init: {
              method: route.method,
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: `${encodeURIComponent(hostile)}=1`,
            },
            expected: route.acceptsForm ? refused : notJson,
          })),
        ),
  'a multipart body': (route, path) =>
    route.method === 'GET'
      ? []
      : namesOf(route).flatMap((name) =>
          hostileNames(name).map((hostile) => {
            const form = new FormData();
            form.set(hostile, '1');
            return { label: `part ${hostile}`, path, init: { method: route.method, body: form }, expected: route.body ? refused : notJson };
          }),
        ),
};

/** The answer is a 4xx with the REST error body, and the one expected: a refused key is named with its reason. */
async function expectRefusal(response: Response, attempt: Attempt, label: string): Promise<void> {
  expect(response.status, label).toBe(attempt.expected.status);
  expect(response.headers.get('content-type'), label).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: string; message: string; field?: string };
  if (attempt.expected.status === 422) {
    expect(body.error, label).toBe('invalid_input');
    expect(body.field, label).toMatch(/(^|\.)(__proto__|constructor|prototype)$/);
    expect(body.message, label).toBe(`${body.field}: ${REFUSED_KEY_REASON}`);
  } else {
    expect(body.error, label).toBe(attempt.expected.error);
  }
}

let leadsWritten = 0;

/** The ordinary requests of an instance: a read, /health and a write, each answered and the write stored. */
async function expectInstanceServes(label: string): Promise<void> {
  const read = await app.request('/api/v1/apikeys/apikey_details.json', { key });
  expect(read.status, `${label}: a read afterwards`).toBe(200);
  const health = await app.request('/health');
  expect(health.status, `${label}: /health afterwards`).toBe(200);
  leadsWritten += 1;
  const email = `pollution.${leadsWritten}@example.com`;
  const write = await app.request('/api/v1/leads', { method: 'POST', key, json: { lead: samplePayload(1, { email }) } });
  expect(write.status, `${label}: a write afterwards`).toBe(201);
  expect(await app.db.lead.count({ where: { email } }), `${label}: the write is stored`).toBe(1);
}

describe('the REST door', () => {
  it('walks every route of the route table', () => {
    // Each route is tried below; a route added later is tried without changing this file.
    expect(restRoutes.length).toBeGreaterThanOrEqual(28);
    for (const route of restRoutes) expect(() => concretePath(route)).not.toThrow();
  });

  it.each(Object.keys(CHANNELS))(
    'refuses polluting keys in %s on every route, and goes on serving',
    async (channel) => {
      let attempts = 0;
      for (const route of restRoutes) {
        const path = concretePath(route);
        for (const attempt of CHANNELS[channel]!(route, path)) {
          const label = `${route.method} ${route.path} with ${attempt.label}`;
          const response = await app.request(attempt.path, { ...attempt.init, key });
          // Read before pollution() takes away whatever a request added.
          expect(({} as Record<string, unknown>).polluted, label).toBeUndefined();
          expect(pollution(), label).toEqual([]);
          await expectRefusal(response, attempt, label);
          attempts += 1;
        }
        await expectInstanceServes(`${channel}, ${route.method} ${route.path}`);
      }
      expect(attempts).toBeGreaterThan(restRoutes.length);
    },
    120_000,
  );

  it('names a repeated or doubly given nested key of lead events data, and an empty data', async () => {
    const create = '/api/v1/lead_events/sms/create';
    const cases: [string, string, string][] = [
      ['data[leadId]=1&data[leadId]=2', 'data.leadId', 'data.leadId: is sent twice'],
      ['data[leadId]=1&data[leadId][x]=2', 'data.leadId', 'data.leadId: is both a value and a group of keys'],
      [
        'data[messageDetail][sentBy]=a&data[messageDetail]=b',
        'data.messageDetail',
        'data.messageDetail: is both a value and a group of keys',
      ],
      ['data={}', 'data.leadId', 'data.leadId: is required'],
      [`data=${encodeURIComponent('{}')}`, 'data.leadId', 'data.leadId: is required'],
    ];
    for (const [query, field, message] of cases) {
      const response = await app.request(`${create}?${query}`, { method: 'POST', key });
      expect(response.status, query).toBe(422);
      expect(await response.json(), query).toEqual({ error: 'invalid_input', field, message });
    }
    await expectInstanceServes('lead events data');
  });
});

describe('/graphql', () => {
  const query = 'query ($lead: JSONObject) { __typename }';
  const hostileVariables = (object: string): string => `{"lead":${object}}`;

  /** Every transport Yoga reads parameters from, with `variables` or `extensions` holding the JSON text. */
  const transports = (parameter: 'variables' | 'extensions', json: string): [string, string, RequestInit][] => {
    const operations = `{"query":${JSON.stringify(query)},"${parameter}":${json}}`;
    const form = new FormData();
    form.set('operations', operations);
    form.set('map', '{}');
    const search = new URLSearchParams({ query, [parameter]: json });
    return [
      ['a JSON body', '/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: operations }],
      ['the query string', `/graphql?${search}`, { headers: { accept: 'application/json' } }],
      [
        'a urlencoded body',
        '/graphql',
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `${search}` },
      ],
      ['a multipart body', '/graphql', { method: 'POST', body: form }],
    ];
  };

  it('refuses polluting keys in variables and extensions, by every transport, 422 naming the key', async () => {
    for (const parameter of ['variables', 'extensions'] as const) {
      for (const object of HOSTILE_OBJECTS) {
        for (const json of [object, hostileVariables(object)]) {
          for (const [transport, path, init] of transports(parameter, json)) {
            const label = `${parameter} ${json} in ${transport}`;
            const response = await app.request(path, { ...init, key });
            expect(pollution(), label).toEqual([]);
            expect(response.status, label).toBe(422);
            const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
            const [error] = body.errors;
            expect(error?.extensions, label).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input' });
            expect(error?.extensions.field, label).toMatch(new RegExp(`^${parameter}(\\.|\\[).*(__proto__|constructor|prototype)$`));
            expect(error?.message, label).toBe(`${String(error?.extensions.field)}: ${REFUSED_KEY_REASON}`);
          }
        }
      }
    }
    await expectInstanceServes('GraphQL parameters');
  });

  it('refuses polluting keys in free-form JSON written in the document, naming the field', async () => {
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const document = `mutation { create_lead(lead: { dealership_id: 1, email: "doc@example.com", name: "Doc", category: USED_VEHICLE_ENQUIRY, source: "Website", fields: { a: { ${name}: { polluted: 1 } } } }) { lead { id: databaseId } } }`;
      const response = await app.request('/graphql', { method: 'POST', key, json: { query: document } });
      expect(pollution(), name).toEqual([]);
      // An operation's own input error: answered as GraphQL answers every one (docs/errors.md), 200 with `errors`.
      expect(response.status, name).toBe(200);
      const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(body.errors[0]?.extensions, name).toMatchObject({ code: 'BAD_USER_INPUT', field: `lead.fields.a.${name}` });
      expect(body.data ?? null, name).toBeNull();
    }
    expect(await app.db.lead.count({ where: { email: 'doc@example.com' } })).toBe(0);
    await expectInstanceServes('GraphQL document');
  });
});

describe('headers', () => {
  let server: GatewayServer;
  let port: number;

  beforeAll(async () => {
    server = createHttpServer(app.yoga, app.config, createLogger('silent'), createLifecycle());
    ({ port } = await server.listen(0, '127.0.0.1'));
  });
  afterAll(async () => {
    await server.drain(0);
  });

  /** One request written as raw HTTP/1.1, so header lines reach Node's parser exactly as written; its status. */
  function rawRequest(lines: readonly string[], body = ''): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`${lines.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      });
      let answer = '';
      socket.on('data', (chunk) => {
        answer += String(chunk);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    });
  }

  const hostileHeaders = [
    '__proto__: {"polluted":1}',
    'constructor: {"prototype":{"polluted":1}}',
    'prototype: {"polluted":1}',
    'X-Request-Id: {"__proto__":{"polluted":1}}',
  ];

  it('never become object keys that reach a prototype: requests with them are served as without them', async () => {
    const read = await rawRequest([
      'GET /api/v1/apikeys/apikey_details.json HTTP/1.1',
      'Host: gateway.test',
      `Authorization: Bearer ${key}`,
      ...hostileHeaders,
    ]);
    expect(pollution()).toEqual([]);
    expect(read).toBe(200);
    const body = JSON.stringify({ lead: samplePayload(1, { email: 'headers@example.com' }) });
    const write = await rawRequest(
      [
        'POST /api/v1/leads HTTP/1.1',
        'Host: gateway.test',
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        ...hostileHeaders,
      ],
      body,
    );
    expect(pollution()).toEqual([]);
    expect(write).toBe(201);
    const graph = await rawRequest(
      ['POST /graphql HTTP/1.1', 'Host: gateway.test', `Authorization: Bearer ${key}`, 'Content-Type: application/json', ...hostileHeaders],
      '{"query":"{ __typename }"}',
    );
    expect(graph).toBe(200);
    expect(pollution()).toEqual([]);
  });

  it("over a real server, the issue's request is refused and the instance still answers /health and a write", async () => {
    const hostile = await rawRequest([
      'POST /api/v1/leads?lead[__proto__][polluted]=1 HTTP/1.1',
      'Host: gateway.test',
      `Authorization: Bearer ${key}`,
    ]);
    expect(pollution()).toEqual([]);
    expect(hostile).toBe(422);
    expect(await rawRequest(['GET /health HTTP/1.1', 'Host: gateway.test'])).toBe(200);
    const body = JSON.stringify({ lead: samplePayload(1, { email: 'after.hostile@example.com' }) });
    const write = await rawRequest(
      ['POST /api/v1/leads HTTP/1.1', 'Host: gateway.test', `Authorization: Bearer ${key}`, 'Content-Type: application/json'],
      body,
    );
    expect(write).toBe(201);
  });
});
