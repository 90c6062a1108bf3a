// A database that does not answer is answered honestly: 503 `unavailable` with Retry-After on both
// doors (GraphQL: extensions.code UNAVAILABLE), within the statement or connect timeout, and /ready
// says 503 within a second. Never a 500, and never a domain outcome: an error met while a rule asks
// the database is not "not found", "not your dealership" or "not a valid key".
//
// 1. Every read route of the REST table, and the writes that look a car up for a key, on the demo
//    data: the database fails at the 1st statement of the request, then at the 2nd, the 3rd … until
//    the request completes without reaching the failing one (the driver's own error, as a connection
//    closed mid-request gives). Every answer is the 503 or the healthy answer. (Both engines.)
// 2. PostgreSQL through a TCP proxy this test controls: refused, frozen, connections cut, and
//    pg_terminate_backend on the database's connections.
// 3. SQLite: a write lock held by another connection past the busy timeout.
import Database from 'better-sqlite3';
import { DriverAdapterError } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlitePath } from '../src/config/index.ts';
import { createDb, type Db } from '../src/db/client.ts';
import { DATABASE_RETRY_AFTER_SECONDS } from '../src/errors.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { instanceDeps, type TestApp } from './support/app.ts';
import { testEngine } from './support/database.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';
import { CREATE_LEAD, graphLead, samplePayload } from './support/fixtures-leads.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

interface Call {
  label: string;
  method: string;
  path: string;
  body?: unknown;
  /** Puts back what a successful attempt changed, so that every attempt meets the same state. */
  reset?: () => Promise<unknown>;
}

let app: TestApp;
let key: string;
let carNodeId: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  const { data } = (await app.graphql('{ car(id: "1") { id } }', {}, key)) as { data: { car: { id: string } } };
  carNodeId = data.car.id;
  // Seeding the demo data takes a while on a busy machine.
}, 180_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** An app of its own over `db`, as another instance of the service would be. */
function appOver(db: Db): Yoga {
  closers.push(() => db.$disconnect());
  return createApp(instanceDeps({ config: app.config, db, now: app.clock.now }));
}

async function send(
  yoga: Yoga,
  call: Call,
): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null; ms: number }> {
  const started = Date.now();
  const response = await yoga.fetch(`http://gateway.test${call.path}`, {
    method: call.method,
    headers: { authorization: `Bearer ${key}`, ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    retryAfter: response.headers.get('retry-after'),
    ms: Date.now() - started,
  };
}

const graphql = (label: string, query: string, variables: Record<string, unknown> = {}): Call => ({
  label,
  method: 'POST',
  path: '/graphql',
  body: { query, variables },
});

/** The database's answer on each door: REST's body, or GraphQL's error code. */
function expectUnavailable(answer: Awaited<ReturnType<typeof send>>, call: Call): void {
  const label = `${call.label}: ${JSON.stringify(answer.body)}`;
  expect(answer.status, label).toBe(503);
  expect(answer.retryAfter, label).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
  if (call.path === '/graphql') {
    const errors = answer.body.errors as { extensions?: { code?: string } }[];
    expect(
      errors.map((error) => error.extensions?.code),
      label,
    ).toContain('UNAVAILABLE');
  } else {
    expect(answer.body, label).toMatchObject({ error: 'unavailable', message: expect.stringMatching(/retry/) });
  }
}

function routeMethod(field: string): string {
  const route = restRoutes.find((candidate) => candidate.field === field);
  if (!route) throw new Error(`no route answers ${field}`);
  return route.method;
}

/** Every read route, the writes that tell "not your dealership" from "not found", and the graph's lookups. */
function walkedCalls(): Call[] {
  return [
    ...Object.entries(DEMO_READ_PATHS).map(([field, path]) => ({
      label: `${routeMethod(field)} ${path}`,
      method: routeMethod(field),
      path,
    })),
    {
      label: 'PUT update_car',
      method: routeMethod('Mutation.update_car'),
      path: '/api/cars/1',
      body: { car: { stocknum: 'MEL1001', dealership_id: 1, make: 'Toyota', model: 'Corolla', year: 2021 } },
    },
    {
      label: 'reserve_car',
      method: routeMethod('Mutation.reserve_car'),
      path: '/api/v1/cars/2/reserve?reserved=true',
      reset: () => app.db.car.update({ where: { id: 2 }, data: { reserved: false, reserved_at: null } }),
    },
    graphql('graph car', '{ car(id: "1") { id: databaseId stocknum dealership { name } } }'),
    graphql('graph cars', '{ cars(first: 2) { totalCount edges { node { id } } } }'),
    graphql('graph dealership', '{ dealership(id: 1) { name locations(first: 1) { totalCount } } }'),
    graphql('graph node', 'query ($id: ID!) { node(id: $id) { id ... on Car { stocknum } } }', { id: carNodeId }),
  ];
}

describe('a database that fails at any statement of a request', () => {
  it('answers every request 503 unavailable or as it answers when healthy, on both doors', async () => {
    let failAt = 0;
    let statements = 0;
    const failing = appOver(
      createDb(app.config.databaseUrl, {
        aroundStatement: (sql, run) => {
          // A statement that reads or writes rows fails; the transaction's own (BEGIN, COMMIT,
          // ROLLBACK) run, so that a failed request leaves no transaction open on the connection.
          if (/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(sql)) return run();
          statements += 1;
          // As the driver reports a connection that closed under a statement.
          if (statements === failAt) return Promise.reject(new DriverAdapterError({ kind: 'ConnectionClosed' }));
          return run();
        },
      }),
    );
    const walked: string[] = [];
    for (const call of walkedCalls()) {
      failAt = 0;
      await call.reset?.();
      const healthy = await send(failing, call);
      expect(healthy.status, `${call.label} on a healthy database: ${JSON.stringify(healthy.body)}`).toBeLessThan(400);
      expect(healthy.body.errors, `${call.label}: ${JSON.stringify(healthy.body)}`).toBeUndefined();
      for (let position = 1; ; position += 1) {
        await call.reset?.();
        failAt = position;
        statements = 0;
        const answer = await send(failing, call);
        if (statements < position) {
          // The request ended before the failing statement: as healthy.
          expect(answer.status, call.label).toBe(healthy.status);
          walked.push(`${call.label}: ${position - 1} statements`);
          break;
        }
        // A statement whose failure the service may outlive (recording a key's last use) leaves the
        // healthy answer; anything else is the 503.
        if (answer.status !== healthy.status || answer.body.errors !== undefined)
          expectUnavailable(answer, { ...call, label: `${call.label}, statement ${position} failing` });
      }
    }
    expect(walked).toHaveLength(walkedCalls().length);
  }, 120_000);
});

describe.runIf(testEngine === 'postgresql')('PostgreSQL that cannot be reached', () => {
  let proxy: TcpProxy;
  let yoga: Yoga;
  const STATEMENT_TIMEOUT_MS = 1_000;
  const CONNECT_TIMEOUT_MS = 2_000;
  const reads: Call[] = [
    { label: 'REST car performance', method: 'GET', path: DEMO_READ_PATHS['Query.car_performance'] as string },
    graphql('graph car', '{ car(id: "1") { id: databaseId stocknum } }'),
  ];

  beforeAll(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(app.config.databaseUrl).port || 5432) });
    closers.push(() => proxy.stop());
    const url = new URL(app.config.databaseUrl);
    url.port = String(proxy.port);
    yoga = appOver(
      createDb(url.toString(), { statementTimeoutMs: STATEMENT_TIMEOUT_MS, connectTimeoutMs: CONNECT_TIMEOUT_MS, poolMax: 4 }),
    );
    await answersAgain();
  });

  /** Once the database is back, the requests are answered again (the pool opens new connections). */
  async function answersAgain(): Promise<void> {
    for (const call of reads) {
      let answer = await send(yoga, call);
      for (let attempt = 1; answer.status !== 200 && attempt < 20; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        answer = await send(yoga, call);
      }
      expect(answer.status, `${call.label}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
  }

  async function ready(): Promise<{ status: number; ms: number }> {
    const started = Date.now();
    const response = await yoga.fetch('http://gateway.test/ready');
    return { status: response.status, ms: Date.now() - started };
  }

  it('answers 503 at once while connections are refused, and /ready 503', async () => {
    await proxy.stop();
    try {
      for (const call of reads) expectUnavailable(await send(yoga, call), call);
      expect(await ready()).toMatchObject({ status: 503 });
    } finally {
      await proxy.start();
    }
    await answersAgain();
  });

  it('answers 503 within the timeouts while the server is frozen, and /ready 503 within a second', async () => {
    proxy.freeze();
    try {
      const answers = await Promise.all(reads.map((call) => send(yoga, call)));
      for (const [index, answer] of answers.entries()) {
        expectUnavailable(answer, reads[index] as Call);
        // Bounded by the statement timeout (and the client's margin over it), not left to hang.
        expect(answer.ms).toBeLessThan(STATEMENT_TIMEOUT_MS + 5_000);
      }
      const check = await ready();
      expect(check.status).toBe(503);
      expect(check.ms).toBeLessThan(1_500);
    } finally {
      proxy.thaw();
    }
    await answersAgain();
  }, 180_000);

  it('never answers a read whose connection was cut or terminated as anything but itself or 503', async () => {
    const admin = new pg.Client({ connectionString: app.config.databaseUrl });
    await admin.connect();
    const outcomes = new Map<string, number>();
    let stop = false;
    const disrupt = (async () => {
      for (let round = 0; !stop; round += 1) {
        if (round % 2 === 0) proxy.cutConnections();
        else
          await admin.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    const calls = [
      ...reads,
      { label: 'REST payment processors', method: 'GET', path: DEMO_READ_PATHS['Query.car_payment_processors'] as string },
    ];
    try {
      for (let i = 0; i < 60; i += 1) {
        const call = calls[i % calls.length] as Call;
        const answer = await send(yoga, call);
        const failed = answer.status !== 200 || answer.body.errors !== undefined;
        if (failed) expectUnavailable(answer, call);
        const outcome = failed ? 'unavailable' : 'answered';
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    } finally {
      stop = true;
      await disrupt;
      await admin.end();
    }
    console.info(`reads while connections were cut and terminated: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  }, 180_000);
});

describe.runIf(testEngine === 'sqlite')('SQLite locked by another process', () => {
  it('answers a write 503 once the busy timeout ran out, stores nothing, and answers again once the lock is gone', async () => {
    const BUSY_TIMEOUT_MS = 300;
    const yoga = appOver(createDb(app.config.databaseUrl, { statementTimeoutMs: BUSY_TIMEOUT_MS }));
    const rest: Call = {
      label: 'REST create lead',
      method: 'POST',
      path: '/api/v1/leads',
      body: { lead: samplePayload(1, { email: 'busy.rest@example.com' }) },
    };
    const graph = graphql('graph create lead', CREATE_LEAD, { lead: graphLead(samplePayload(1, { email: 'busy.graph@example.com' })) });
    const holder = new Database(sqlitePath(app.config.databaseUrl));
    holder.exec('BEGIN IMMEDIATE');
    try {
      for (const call of [rest, graph]) {
        const answer = await send(yoga, call);
        expectUnavailable(answer, call);
        expect(answer.ms).toBeLessThan(BUSY_TIMEOUT_MS + 5_000);
      }
      // Reads are not blocked by a writer (WAL): the instance is ready.
      expect((await yoga.fetch('http://gateway.test/ready')).status).toBe(200);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await app.db.lead.count({ where: { email: { startsWith: 'busy.' } } })).toBe(0);
    expect((await send(yoga, rest)).status).toBe(201);
  });
});
