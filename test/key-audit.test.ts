// The key call log and `npm run keys -- audit`: calls made through both doors are counted in memory,
// flushed as per-minute rows (upsert-increment), and the CLI, run as a real process, reports them
// by operation and status. Old minutes are purged.
import { get } from 'node:http';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { inMemoryReadCache } from '../src/gateway/response-cache.ts';
import { purgeOldKeyCalls, type KeyCallLog } from '../src/domain/api-key-calls.ts';
import type { Db } from '../src/db/client.ts';
import { createTestApp, instanceDeps, testKeyCallLog, testSettings, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { freePort, runScript, startService, type Finished } from './support/processes.ts';

/** Each command is a process that starts tsx and opens the database: seconds apiece on a busy machine. */
const CLI_TEST_TIMEOUT_MS = 120_000;

let app: TestApp;
let yoga: Yoga;
let keyCalls: KeyCallLog;
let caller: { id: number; key: string };
let other: { id: number; key: string };
let dealershipId: number;

const DAY_MS = 86_400_000;

function keysCli(...args: string[]): Promise<Finished> {
  return runScript('scripts/keys.ts', args, { DATABASE_URL: app.config.databaseUrl });
}

function call(path: string, init: { key?: string; method?: string; json?: unknown } = {}): Promise<Response> {
  const headers = new Headers();
  if (init.key) headers.set('authorization', `Bearer ${init.key}`);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  return Promise.resolve(
    yoga.fetch(`http://gateway.test${path}`, {
      method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    }),
  );
}

const graphql = (query: string, key: string) => call('/graphql', { key, json: { query } });

interface AuditDocument {
  api_key: { id: number; name: string; status: string };
  since: string;
  until: string;
  calls: number;
  operations: { operation: string; status: number; calls: number; rest: number; graphql: number; last_seen_at: string }[];
}

async function audit(...args: string[]): Promise<AuditDocument> {
  const result = await keysCli('audit', ...args, '--json');
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as AuditDocument;
}

beforeAll(async () => {
  app = await createTestApp();
  // The CLI reads the database's (the real) time, so the calls happen now: at the start of this
  // minute, so that the seconds the tests below advance stay in the minute the first calls counted in.
  app.clock.set(new Date(Math.floor(Date.now() / 60_000) * 60_000));
  keyCalls = testKeyCallLog(app);
  yoga = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { keyCalls }));
  dealershipId = (await makeDealership(app.db)).id;
  caller = await makeKey(app.db, { name: 'crm', permissions: ['read:car'] });
  other = await makeKey(app.db, { name: 'other', permissions: ['read:contact'] });
});

describe('the key call log', () => {
  it('counts each door and outcome under the operation, and nothing for a refused or missing key', async () => {
    expect((await call('/api/v1/apikeys/apikey_details.json', { key: caller.key })).status).toBe(200);
    expect((await call('/api/v1/apikeys/apikey_details.json', { key: caller.key })).status).toBe(200);
    expect((await graphql('{ apikey_details { id: databaseId } }', caller.key)).status).toBe(200);
    // Without read:contact: 403 on REST, FORBIDDEN (answered 200) on GraphQL; both count as 403.
    expect((await call(`/dealerships/${dealershipId}/contacts`, { key: caller.key })).status).toBe(403);
    const forbidden = (await (await graphql(`{ contacts(dealership_id: ${dealershipId}) { id: databaseId } }`, caller.key)).json()) as {
      errors: { extensions: { code: string } }[];
    };
    expect(forbidden.errors[0]?.extensions.code).toBe('FORBIDDEN');
    // A document refused before its context was built never had its key looked at: not counted.
    await graphql('{ no_such_field }', caller.key);
    // The other key's call is its own; a refused key and no key are not counted at all.
    expect((await call(`/dealerships/${dealershipId}/contacts`, { key: other.key })).status).toBe(200);
    // Its last character changed (a key that already ends in x would stay itself with an x).
    const wrongKey = `${caller.key.slice(0, -1)}${caller.key.endsWith('x') ? 'y' : 'x'}`;
    expect((await call('/api/v1/apikeys/apikey_details.json', { key: wrongKey })).status).toBe(401);
    expect((await call('/api/v1/apikeys/apikey_details.json')).status).toBe(401);

    expect(await app.db.apiKeyCall.count()).toBe(0);
    expect(await keyCalls.flush()).toBeGreaterThan(0);
    const rows = await app.db.apiKeyCall.findMany({
      orderBy: [{ api_key_id: 'asc' }, { operation: 'asc' }, { door: 'asc' }, { status: 'asc' }],
    });
    expect(rows.map(({ api_key_id, operation, door, status, calls }) => ({ api_key_id, operation, door, status, calls }))).toEqual([
      { api_key_id: caller.id, operation: 'apikey_details', door: 'graphql', status: 200, calls: 1 },
      { api_key_id: caller.id, operation: 'apikey_details', door: 'rest', status: 200, calls: 2 },
      { api_key_id: caller.id, operation: 'contacts', door: 'graphql', status: 403, calls: 1 },
      { api_key_id: caller.id, operation: 'contacts', door: 'rest', status: 403, calls: 1 },
      { api_key_id: other.id, operation: 'contacts', door: 'rest', status: 200, calls: 1 },
    ]);
    const minute = Math.floor(app.clock.now().getTime() / 60_000) * 60_000;
    expect(rows.every((row) => row.minute.getTime() === minute)).toBe(true);
  });

  it('counts an operation the per-key limit refuses as 429 on both doors', async () => {
    const log = testKeyCallLog(app);
    const config = { ...app.config, rateLimits: { ...app.config.rateLimits, keyRequests: 1 } };
    const limited = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }, { keyCalls: log }));
    const { id, key } = await makeKey(app.db, { name: 'limited' });
    const ask = (path: string, body?: unknown) =>
      limited.fetch(`http://gateway.test${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    expect((await ask('/api/v1/apikeys/apikey_details.json')).status).toBe(200);
    expect((await ask('/api/v1/apikeys/apikey_details.json')).status).toBe(429);
    const refused = (await (await ask('/graphql', { query: '{ apikey_details { id: databaseId } }' })).json()) as {
      errors: { extensions: { code: string } }[];
    };
    expect(refused.errors[0]?.extensions.code).toBe('RATE_LIMITED');
    await log.stop();
    const rows = await app.db.apiKeyCall.findMany({ where: { api_key_id: id }, orderBy: [{ door: 'asc' }, { status: 'asc' }] });
    expect(rows.map(({ operation, door, status, calls }) => ({ operation, door, status, calls }))).toEqual([
      { operation: 'apikey_details', door: 'graphql', status: 429, calls: 1 },
      { operation: 'apikey_details', door: 'rest', status: 200, calls: 1 },
      { operation: 'apikey_details', door: 'rest', status: 429, calls: 1 },
    ]);
  });

  it('adds a later flush to the same minute, and stop() writes what is left', async () => {
    app.clock.advance(1_000);
    await call('/api/v1/apikeys/apikey_details.json', { key: caller.key });
    await keyCalls.flush();
    app.clock.advance(1_000);
    await call('/api/v1/apikeys/apikey_details.json', { key: caller.key });
    await keyCalls.stop();
    const row = await app.db.apiKeyCall.findFirst({ where: { api_key_id: caller.id, operation: 'apikey_details', door: 'rest' } });
    expect(row?.calls).toBe(4);
    expect(row?.last_at.getTime()).toBe(app.clock.now().getTime());
  });
});

describe('answers the answer tier serves (src/gateway/answer-cache.ts)', () => {
  it('count under the operation they answer, on both doors, like the call they repeat', async () => {
    const log = testKeyCallLog(app);
    const cached = createApp(
      instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { keyCalls: log, readCache: inMemoryReadCache() }),
    );
    const reader = await makeKey(app.db, { name: 'cached reader', permissions: ['read:car'] });
    const ask = (path: string, body?: unknown): Promise<Response> =>
      Promise.resolve(
        cached.fetch(`http://gateway.test${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${reader.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
    for (let call = 0; call < 2; call += 1) {
      expect((await ask('/api/v1/apikeys/apikey_details.json')).status).toBe(200);
      expect((await ask('/graphql', { query: '{ apikey_details { id: databaseId } }' })).status).toBe(200);
    }
    await log.stop();
    const rows = await app.db.apiKeyCall.findMany({ where: { api_key_id: reader.id }, orderBy: [{ door: 'asc' }] });
    expect(rows.map(({ operation, door, status, calls }) => ({ operation, door, status, calls }))).toEqual([
      { operation: 'apikey_details', door: 'graphql', status: 200, calls: 2 },
      { operation: 'apikey_details', door: 'rest', status: 200, calls: 2 },
    ]);
  });
});

describe('the service process', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('counts the calls it answers and writes them when it stops', async () => {
    const port = await freePort();
    const service = await startService([], {
      ...testSettings,
      LOG_LEVEL: 'info',
      DATABASE_URL: app.config.databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
    });
    const { id, key } = await makeKey(app.db, { name: 'process' });
    // No keep-alive connection is left open, so the stop follows at once rather than after the
    // keep-alive timeout, by when the periodic flush (every 5 s) would have written the calls anyway.
    const status = (): Promise<number | undefined> =>
      new Promise((resolve, reject) => {
        get(
          `http://127.0.0.1:${port}/api/v1/apikeys/apikey_details.json`,
          { agent: false, headers: { authorization: `Bearer ${key}` } },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
          },
        ).on('error', reject);
      });
    expect([await status(), await status()]).toEqual([200, 200]);
    expect(await service.stop()).toBe(0);
    const rows = await app.db.apiKeyCall.findMany({
      where: { api_key_id: id },
      select: { operation: true, door: true, status: true, calls: true },
    });
    expect(rows).toEqual([{ operation: 'apikey_details', door: 'rest', status: 200, calls: 2 }]);
  });
});

describe("a flush's query plans (Prisma's plan cache)", () => {
  it('are the same few whatever the number of counters: no plan is compiled, nor kept, per flush size', async () => {
    // Prisma compiles a query plan per distinct query or batch and keeps up to a thousand of them;
    // its debug log names each miss. A flush written as one batch of its counters (its size the
    // callers of the last seconds) missed once per new size, each plan as big as its batch.
    const debug = globalThis as { DEBUG?: string };
    const previous = debug.DEBUG;
    const misses: string[] = [];
    debug.DEBUG = 'prisma:client:clientEngine';
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      const line = args.map(String).join(' ');
      if (line.includes('prisma:client:clientEngine') && line.includes('cache miss')) misses.push(line);
    });
    try {
      const log = testKeyCallLog(app);
      const apiKeyId = (await makeKey(app.db, { name: 'plans' })).id;
      for (let size = 1; size <= 12; size += 1) {
        for (let n = 0; n < size; n += 1) log.record({ apiKeyId, operation: `operation_${n}`, door: 'rest', status: 200 });
        expect(await log.flush()).toBe(size);
        // The first flushes compile the statement(s) a flush is made of, once.
        if (size <= 2) misses.length = 0;
      }
    } finally {
      warn.mockRestore();
      debug.DEBUG = previous;
    }
    expect(misses).toEqual([]);
  });
});

describe('a flush the database refuses', () => {
  it('keeps its counts for the next flush', async () => {
    let down = true;
    // The real database, except that the statements a flush writes with fail while `down`.
    const flaky = new Proxy(app.db, {
      get(target, property, receiver) {
        if (down && (property === '$transaction' || property === '$executeRaw')) return () => Promise.reject(new Error('database down'));
        return Reflect.get(target, property, receiver) as unknown;
      },
    }) as Db;
    const log = testKeyCallLog({ ...app, db: flaky });
    const apiKeyId = (await makeKey(app.db, { name: 'flaky' })).id;
    log.record({ apiKeyId, operation: 'apikey_details', door: 'rest', status: 200 });
    expect(await log.flush()).toBe(0);
    log.record({ apiKeyId, operation: 'apikey_details', door: 'rest', status: 200 });
    down = false;
    expect(await log.flush()).toBe(1);
    expect(await app.db.apiKeyCall.findMany({ where: { api_key_id: apiKeyId }, select: { operation: true, calls: true } })).toEqual([
      { operation: 'apikey_details', calls: 2 },
    ]);
  });
});

describe('npm run keys -- audit', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('reports the calls by operation and status as JSON', async () => {
    const document = await audit(String(caller.id));
    expect(document.api_key).toEqual({ id: caller.id, name: 'crm', status: 'active' });
    expect(new Date(document.until).getTime() - new Date(document.since).getTime()).toBe(DAY_MS);
    const lastSeen = app.clock.now().toISOString();
    expect(document.operations.map(({ last_seen_at: _at, ...rest }) => rest)).toEqual([
      { operation: 'apikey_details', status: 200, calls: 5, rest: 4, graphql: 1 },
      { operation: 'contacts', status: 403, calls: 2, rest: 1, graphql: 1 },
    ]);
    expect(document.operations[0]?.last_seen_at).toBe(lastSeen);
    expect(document.calls).toBe(7);
  });

  it('finds the key by the prefix list and show print, and prints a table', async () => {
    const { lookup_id } = await app.db.apiKeySecret.findFirstOrThrow({ where: { api_key_id: caller.id } });
    const result = await keysCli('audit', `dlr_${lookup_id}_…`);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^key #${caller.id} crm \\[active\\]: 7 call\\(s\\) from `));
    expect(lines[1]).toMatch(/^OPERATION\s+STATUS\s+CALLS\s+REST\s+GRAPHQL\s+LAST SEEN$/);
    expect(lines[2]).toMatch(/^apikey_details\s+200\s+5\s+4\s+1\s+\d{4}-/);
    expect(lines[3]).toMatch(/^contacts\s+403\s+2\s+1\s+1\s+/);
  });

  it('counts only the chosen period, and the purge removes minutes past the retention', async () => {
    // Two days ago: outside the default 24 hours, inside --since 3d.
    const now = app.clock.now();
    app.clock.set(new Date(now.getTime() - 2 * DAY_MS));
    const late = testKeyCallLog(app);
    late.record({ apiKeyId: other.id, operation: 'contacts', door: 'graphql', status: 200 });
    await late.stop();
    app.clock.set(now);

    expect((await audit(String(other.id))).calls).toBe(1);
    expect((await audit(String(other.id), '--since', '3d')).operations).toMatchObject([
      { operation: 'contacts', status: 200, calls: 2, rest: 1, graphql: 1 },
    ]);

    expect(await purgeOldKeyCalls(app.db, app.config.engine, app.clock.now, DAY_MS)).toBe(1);
    expect((await audit(String(other.id), '--since', '3d')).calls).toBe(1);
  });

  it('refuses an unknown key (exit 1) and a malformed --since (usage, exit 2)', async () => {
    const unknown = await keysCli('audit', '999999');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No API key has that id or prefix/);
    const unknownPrefix = await keysCli('audit', 'dlr_000000000000');
    expect(unknownPrefix.code).toBe(1);
    const badSince = await keysCli('audit', String(caller.id), '--since', 'yesterday');
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toMatch(/--since must be/);
  });
});
