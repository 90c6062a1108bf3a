// The app under test: Yoga over a real migrated database, called with yoga.fetch (no port).
import pino from 'pino';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { createKeyVerifier } from '../../src/auth/key-cache.ts';
import { keyringOf, type Keyring } from '../../src/config/secrets.ts';
import { createDb, type Db } from '../../src/db/client.ts';
import type { AppDeps } from '../../src/gateway/app.ts';
import { createKeyCallLog, type KeyCallLog } from '../../src/domain/api-key-calls.ts';
import { createApp, type Yoga } from '../../src/gateway/yoga.ts';
import { createLiveEventHub, type LiveEventHub } from '../../src/gateway/live-events.ts';
import { createFileStorage } from '../../src/storage/file-storage.ts';
import { memoryCounters } from '../../src/rate-limit/counters.ts';
import { assertMatchesContract } from './contract.ts';
import { onFileEnd } from './cleanup.ts';
import { PostcodeGeocoder } from '../../src/domain/geocoding.ts';
import { createMigratedDatabase } from './database.ts';

/** The encryption key of the test apps (production rules: no development default is used). */
export const TEST_ENCRYPTION_KEY = { id: 'test-2026', key: Buffer.alloc(32, 7) };
export const testKeyring: Keyring = keyringOf([TEST_ENCRYPTION_KEY]);

/** The settings a test app (and a test's child process) runs with, outside development mode. */
export const testSettings = {
  PUBLIC_URL: 'http://localhost:4000',
  SESSION_SIGNING_SECRET: 'test-only-session-signing-secret-0123456789',
  SECRETS_ENCRYPTION_KEYS: `${TEST_ENCRYPTION_KEY.id}:${TEST_ENCRYPTION_KEY.key.toString('base64')}`,
  LOG_LEVEL: 'silent',
  // The suite makes thousands of requests per key and per address within one window (its clock
  // stands still): limits this high never refuse them, while every request is still counted and
  // answered with the RateLimit headers. test/rate-limits.test.ts sets small limits to prove them.
  RATE_LIMIT_KEY_REQUESTS: '1000000',
  RATE_LIMIT_DEALERSHIP_REQUESTS: '1000000',
  RATE_LIMIT_KEY_COST: '1000000000',
  RATE_LIMIT_AUTH_FAILURES: '1000000',
  RATE_LIMIT_SIGN_ON: '1000000',
  RATE_LIMIT_ANONYMOUS: '1000000',
} as const;

export interface TestClock {
  now(): Date;
  set(date: Date | string): void;
  advance(ms: number): void;
}

export function createClock(start = new Date('2026-11-21T09:00:00.000Z')): TestClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set: (date) => {
      current = new Date(date).getTime();
    },
    advance: (ms) => {
      current += ms;
    },
  };
}

export interface TestApp {
  yoga: Yoga;
  db: Db;
  config: Config;
  clock: TestClock;
  /** The app's live events (in this process, as a service without Redis): what writes publish and subscriptions read. */
  events: LiveEventHub;
  /** SQL statements run since the last reset (for N+1 checks). */
  queries: string[];
  /** The same statements with the parameters they were sent with (a LIMIT's value, say). */
  statements: { sql: string; params: readonly unknown[] }[];
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  graphql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    key?: string,
  ): Promise<{ status: number; data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>;
}

/** A REST answer's status and JSON body, checked together; `label` names the case inside a loop. */
export async function expectAnswer(response: Response, status: number, body: unknown, label?: string): Promise<void> {
  expect(response.status, label).toBe(status);
  expect(await response.json(), label).toEqual(body);
}

/**
 * What one more instance of the service over the same database needs (its own key verifier, no
 * response cache unless given): for tests that run several instances or another configuration.
 */
/** One bundled geocoder for the test process: its data set is read once, like one service's. */
const sharedGeocoder = new PostcodeGeocoder();

export function instanceDeps(base: Pick<AppDeps, 'config' | 'db' | 'now'>, overrides: Partial<AppDeps> = {}): AppDeps {
  return {
    ...base,
    logger: pino({ level: 'silent' }),
    keys: createKeyVerifier({ db: base.db, now: base.now, ttlMs: base.config.apiKeyCacheTtlMs }),
    readCache: null,
    // Chosen from the instance's settings, as the service does: over one database, the database store is shared.
    files: createFileStorage(base.config, base.db),
    geocoder: sharedGeocoder,
    rateCounters: memoryCounters(),
    ...overrides,
  };
}

/**
 * Every error answer of the suite quotes its request id (src/gateway/request-telemetry.ts): checked
 * here against the answer's Request-Id header, then taken out of the body, so that the tests of each
 * feature compare the error as it is about that feature.
 */
export async function withRequestIdChecked(response: Response): Promise<Response> {
  const requestId = response.headers.get('request-id');
  expect(requestId, 'every answer carries Request-Id').toEqual(expect.any(String));
  if (!response.body || !(response.headers.get('content-type') ?? '').includes('json')) return response;
  const body = (await response.clone().json()) as Record<string, unknown> | null;
  if (!body || typeof body !== 'object') return response;
  let changed = false;
  if (typeof body.error === 'string' && response.status >= 400) {
    expect(body.request_id, 'an error body quotes its request id').toBe(requestId);
    delete body.request_id;
    changed = true;
  }
  if (Array.isArray(body.errors)) {
    for (const error of body.errors as { extensions?: Record<string, unknown> }[]) {
      expect(error.extensions?.request_id, 'a GraphQL error quotes its request id').toBe(requestId);
      delete error.extensions?.request_id;
      if (error.extensions && Object.keys(error.extensions).length === 0) delete error.extensions;
      changed = true;
    }
  }
  if (!changed) return response;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: response.status, statusText: response.statusText, headers });
}

/** One app per test file; its database is dropped when the file ends. */
export async function createTestApp(overrides: Partial<Config> = {}, deps: Partial<AppDeps> = {}): Promise<TestApp> {
  const database = await createMigratedDatabase();
  const config: Config = { ...loadConfig({ ...testSettings, DATABASE_URL: database.url }), ...overrides };
  const queries: string[] = [];
  const statements: TestApp['statements'] = [];
  const db = createDb(database.url, {
    onQuery: (sql, params) => {
      queries.push(sql);
      statements.push({ sql, params });
    },
  });
  const clock = createClock();
  const keys = deps.keys ?? createKeyVerifier({ db, now: clock.now, ttlMs: config.apiKeyCacheTtlMs });
  const events = createLiveEventHub({
    perKeyLimit: config.subscriptionsPerKey,
    instanceLimit: config.subscriptionsPerInstance,
    logger: pino({ level: 'silent' }),
    keyChanges: keys,
  });
  const yoga = createApp(instanceDeps({ config, db, now: clock.now }, { events, liveEvents: events, ...deps, keys }));
  onFileEnd(async () => {
    events.close();
    await db.$disconnect();
    await database.drop();
  });

  const request: TestApp['request'] = (path, init = {}) => {
    const { key, json, headers, ...rest } = init;
    const allHeaders = new Headers(headers);
    if (key) allHeaders.set('authorization', `Bearer ${key}`);
    if (json !== undefined) allHeaders.set('content-type', 'application/json');
    return Promise.resolve(
      yoga.fetch(`http://gateway.test${path}`, {
        ...rest,
        headers: allHeaders,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      }),
    ).then(async (response) => {
      // Every REST answer in the suite is also a check of the published contract.
      await assertMatchesContract(rest.method ?? 'GET', path, response);
      return withRequestIdChecked(response);
    });
  };

  return {
    yoga,
    db,
    config,
    clock,
    events,
    queries,
    statements,
    request,
    async graphql(query, variables, key) {
      const response = await request('/graphql', { method: 'POST', key, json: { query, variables } });
      return { status: response.status, ...(await response.json()) };
    },
  };
}

/** A key-call log on the test app's database and clock that writes only when a test flushes it. */
export function testKeyCallLog(app: Pick<TestApp, 'db' | 'config' | 'clock'>): KeyCallLog {
  return createKeyCallLog({
    db: app.db,
    engine: app.config.engine,
    now: app.clock.now,
    logger: pino({ level: 'silent' }),
    flushIntervalMs: null,
  });
}
