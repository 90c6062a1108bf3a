// Every error the service answers is logged at the level its code says (src/errors.ts,
// logLevelByCode): a client's mistake, and any other expected, coded error, at most `warn` and
// without a stack; only an unexpected error is an `error` line, with its stack, and masked in the
// body. Walked through both doors: every code of the error model (thrown where a resolver's read
// runs, so each takes the path a real one takes), GraphQL's own parse, validation and variable
// errors, and every bad argument of every connection (issue 42, item 6).
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiError, statusByCode } from '../src/errors.ts';
import type { Db } from '../src/db/client.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createLogger } from '../src/logger.ts';
import { createTestApp, instanceDeps } from './support/app.ts';
import { connectionFields, seedEveryConnection } from './support/connections.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

interface LogLine {
  level: number;
  msg: string;
  err?: { stack?: unknown; message?: string };
}

const WARN = 40;
const ERROR = 50;

const lines: LogLine[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
    done();
  },
});

/** What the next read of dealership plugins throws (null: it reads). */
let thrownByRead: unknown = null;
let app: Yoga;
let key: string;
let everyPermissionKey: string;
const SLUG = 'logged-motors';

beforeAll(async () => {
  const base = await createTestApp();
  await makeDealership(base.db, { slug: SLUG });
  ({ key: everyPermissionKey } = await seedEveryConnection(base.db));
  key = (await makeKey(base.db, { permissions: ['index:plugin'] })).key;
  // The read behind GET /api/v1/dealerships/{slug}/plugins and Query.dealership_plugins.
  const db = base.db.$extends({
    query: {
      dealershipPlugin: {
        findMany({ args, query }) {
          if (thrownByRead !== null) throw thrownByRead;
          return query(args);
        },
      },
    },
  }) as unknown as Db;
  app = createApp(instanceDeps({ config: base.config, db, now: base.clock.now }, { logger: createLogger('info', sink) }));
});

interface Answer {
  status: number;
  body: { error?: string; message?: string; errors?: { message: string; extensions?: { code?: string } }[] };
  /** The lines the service logged while it answered. */
  logged: LogLine[];
}

async function answerOf(path: string, init: RequestInit = {}): Promise<Answer> {
  lines.length = 0;
  const response = await app.fetch(`http://gateway.test${path}`, init);
  const body = (await response.json()) as Answer['body'];
  // Yoga may log after the answer is made: one turn for it.
  await new Promise((resolve) => setImmediate(resolve));
  return { status: response.status, body, logged: [...lines] };
}

const withKey = (token: string | null): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

const graphql = (query: string, variables: Record<string, unknown> = {}, token: string | null = key) =>
  answerOf('/graphql', {
    method: 'POST',
    headers: { ...withKey(token), 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });

const rest = (path: string, init: RequestInit & { token?: string | null } = {}) =>
  answerOf(path, { ...init, headers: { ...withKey(init.token === undefined ? key : init.token), ...(init.headers ?? {}) } });

const PLUGINS_QUERY = `{ dealership_plugins(dealership_slug: "${SLUG}") { plugins { slug } } }`;
const PLUGINS_PATH = `/api/v1/dealerships/${SLUG}/plugins`;

/** An expected error's lines: none at `error`, none with a stack. */
function expectCalmLines(answer: Answer, label: string): void {
  for (const line of answer.logged) {
    expect(line.level, `${label}: ${JSON.stringify(line)}`).toBeLessThanOrEqual(WARN);
    expect(JSON.stringify(line), label).not.toContain('"stack"');
  }
}

describe('every code of the error model', () => {
  const codes = Object.keys(statusByCode) as (keyof typeof statusByCode)[];

  for (const code of codes) {
    it(`${code}: at most warn, no stack, on both doors`, async () => {
      thrownByRead = apiError(code, `injected_${code.toLowerCase()}`, `Injected ${code}.`);
      try {
        const viaGraph = await graphql(PLUGINS_QUERY);
        expect(viaGraph.body.errors?.[0]?.extensions?.code, JSON.stringify(viaGraph.body)).toBe(code);
        expectCalmLines(viaGraph, `graph ${code}`);
        const viaRest = await rest(PLUGINS_PATH);
        expect(viaRest.status, JSON.stringify(viaRest.body)).toBe(statusByCode[code]);
        expectCalmLines(viaRest, `rest ${code}`);
      } finally {
        thrownByRead = null;
      }
    });
  }

  it('UNAVAILABLE from the database itself (a driver error the masking recognises): warn, no stack, 503 on both doors', async () => {
    thrownByRead = Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001' });
    try {
      const viaGraph = await graphql(PLUGINS_QUERY);
      expect(viaGraph.body.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
      expectCalmLines(viaGraph, 'graph unavailable');
      expect(viaGraph.logged.some((line) => line.level === WARN)).toBe(true);
      const viaRest = await rest(PLUGINS_PATH);
      expect(viaRest.status).toBe(503);
      expectCalmLines(viaRest, 'rest unavailable');
      expect(viaRest.logged.some((line) => line.level === WARN)).toBe(true);
    } finally {
      thrownByRead = null;
    }
  });

  it('an unexpected error: an error line with its stack, masked in the body, on both doors', async () => {
    thrownByRead = new Error('injected failure: no such table dealership_plugins');
    try {
      const viaGraph = await graphql(PLUGINS_QUERY);
      expect(viaGraph.body.errors?.[0]?.message).toBe('Unexpected error.');
      const viaRest = await rest(PLUGINS_PATH);
      expect(viaRest.status).toBe(500);
      expect(viaRest.body).toMatchObject({ error: 'internal_error', message: 'Unexpected error.' });
      for (const answer of [viaGraph, viaRest]) {
        expect(JSON.stringify(answer.body)).not.toContain('injected failure');
        const errorLine = answer.logged.find((line) => line.level === ERROR);
        expect(errorLine?.err?.message).toContain('injected failure');
        expect(errorLine?.err?.stack).toEqual(expect.stringContaining('at '));
      }
    } finally {
      thrownByRead = null;
    }
  });
});

describe("the client's own mistakes GraphQL and the REST door find", () => {
  const cases: { label: string; send: () => Promise<Answer>; status?: number; code?: string }[] = [
    { label: 'a document that does not parse', send: () => graphql('{ cars('), code: 'GRAPHQL_PARSE_FAILED' },
    { label: 'an unknown field', send: () => graphql('{ no_such_field }'), code: 'GRAPHQL_VALIDATION_FAILED' },
    {
      label: 'a variable of the wrong type',
      send: () => graphql('query($n: Int) { cars(first: $n) { totalCount } }', { n: 'many' }),
      code: 'BAD_USER_INPUT',
    },
    { label: 'a global id that is not one', send: () => graphql('{ node(id: "not-a-global-id") { id } }', {}, everyPermissionKey) },
    { label: 'global ids that are not', send: () => graphql('{ nodes(ids: ["%%%", "Q2FyOng="]) { id } }', {}, everyPermissionKey) },
    { label: 'no key (graph)', send: () => graphql(PLUGINS_QUERY, {}, null), code: 'UNAUTHENTICATED' },
    { label: 'an unknown key (graph)', send: () => graphql(PLUGINS_QUERY, {}, 'dk_unknown'), code: 'UNAUTHENTICATED' },
    { label: 'no key (REST)', send: () => rest(PLUGINS_PATH, { token: null }), status: 401 },
    { label: 'an unknown dealership (REST)', send: () => rest('/api/v1/dealerships/no-such-dealer/plugins'), status: 404 },
    {
      label: 'a body that is not JSON (REST)',
      send: () =>
        rest('/api/v1/leads', {
          method: 'POST',
          token: everyPermissionKey,
          headers: { 'content-type': 'application/json' },
          body: '{"lead":',
        }),
      status: 400,
    },
    {
      label: 'an invalid argument (REST)',
      send: () =>
        rest('/api/v1/leads', {
          method: 'POST',
          token: everyPermissionKey,
          headers: { 'content-type': 'application/json' },
          body: '{"lead":"oops"}',
        }),
      status: 422,
    },
  ];
  for (const { label, send, status, code } of cases) {
    it(`${label}: at most warn, no stack`, async () => {
      const answer = await send();
      if (status) expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      if (code) expect(answer.body.errors?.[0]?.extensions?.code, JSON.stringify(answer.body)).toBe(code);
      expectCalmLines(answer, label);
    });
  }
});

describe('every bad argument of every connection', () => {
  const cursor = (text: string) => Buffer.from(text).toString('base64');
  /** Relay's and the Prisma plugin's refusals, by the arguments a connection takes. */
  const badArguments: { label: string; needs: string[]; args: string }[] = [
    { label: 'first: -1', needs: ['first'], args: 'first: -1' },
    { label: 'last: -1', needs: ['last'], args: 'last: -1' },
    { label: 'first over the ceiling', needs: ['first'], args: 'first: 1000000' },
    { label: 'after: not a cursor', needs: ['after'], args: 'after: "not-a-cursor"' },
    { label: 'before: not a cursor', needs: ['before'], args: 'before: "%%%"' },
    { label: 'after: a cursor of another shape', needs: ['after'], args: `after: "${cursor('GPC:J:"x"')}"` },
    { label: 'after: a string cursor where ids are numbers', needs: ['after'], args: `after: "${cursor('GPC:S:x')}"` },
    { label: 'before with first', needs: ['before', 'first'], args: `before: "${cursor('GPC:N:1')}", first: 1` },
    { label: 'after with last', needs: ['after', 'last'], args: `after: "${cursor('GPC:N:1')}", last: 1` },
  ];

  for (const connection of connectionFields()) {
    it(`${connection.coordinate}: refused as BAD_USER_INPUT, at most warn, no stack`, async () => {
      const names = connection.field.args.map((arg) => arg.name);
      let walked = 0;
      for (const bad of badArguments.filter((candidate) => candidate.needs.every((name) => names.includes(name)))) {
        const query = connection.template
          .replace('($a: %VARS%)', '')
          .replace('%ARGS%', bad.args)
          .replace('%SELECTION%', 'edges { cursor }');
        const label = `${connection.coordinate} ${bad.label}`;
        const answer = await graphql(query, {}, everyPermissionKey);
        const codes = (answer.body.errors ?? []).map((error) => error.extensions?.code);
        expect(codes.length, `${label}: ${JSON.stringify(answer.body)}`).toBeGreaterThan(0);
        expect(new Set(codes), `${label}: ${JSON.stringify(answer.body)}`).toEqual(new Set(['BAD_USER_INPUT']));
        expectCalmLines(answer, label);
        walked += 1;
      }
      expect(walked, connection.coordinate).toBeGreaterThan(0);
    });
  }
});
