// An unexpected failure (here: the database losing a table) answers a generic error on both doors,
// with nothing of the SQL, the table or the stack in the body.
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await createTestApp();
  await makeDealership(app.db, { slug: 'masked-motors' });
  key = (await makeKey(app.db, { permissions: ['index:plugin'] })).key;
  await app.db.$executeRawUnsafe('DROP TABLE dealership_plugins');
});

const internals = /dealership_plugins|SELECT|prisma|sqlite|postgres|\.ts:\d+|at [A-Za-z]/i;

describe('an unexpected failure', () => {
  it('is a 500 internal_error on the REST door', async () => {
    const response = await app.request('/api/v1/dealerships/masked-motors/plugins', { key });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: 'internal_error', message: 'Unexpected error.' });
    expect(text).not.toMatch(internals);
  });

  it('is "Unexpected error." with INTERNAL_SERVER_ERROR on GraphQL', async () => {
    const result = await app.graphql('{ dealership_plugins(dealership_slug: "masked-motors") { plugins { slug } } }', {}, key);
    expect(result.errors?.[0]?.message).toBe('Unexpected error.');
    expect(result.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    // The error's path names the root field (dealership_plugins, like the table); the rest says nothing.
    const error = result.errors?.[0];
    expect(JSON.stringify({ message: error?.message, extensions: error?.extensions })).not.toMatch(internals);
    expect(result.errors).toHaveLength(1);
  });
});

/** Log lines written by an app, parsed. */
function logSink(): { lines: { request_id?: string; level: number; err?: { message?: string } }[]; sink: Writable } {
  const lines: { request_id?: string; level: number; err?: { message?: string } }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { lines, sink };
}

describe('the log of an unexpected failure', () => {
  it('carries the request id when the request fails before its operation runs (the database fails the key lookup)', async () => {
    const { lines, sink } = logSink();
    // Every statement fails, as with the database unreachable; the key is not cached in this new app.
    const failing = new Proxy(app.db, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'object' || value === null || !('findFirst' in value)) return value;
        return new Proxy(value, {
          get: (model, method) =>
            typeof Reflect.get(model, method) === 'function'
              ? () => Promise.reject(new Error('connection refused'))
              : Reflect.get(model, method),
        });
      },
    });
    const logged = createApp(instanceDeps({ config: app.config, db: failing, now: app.clock.now }, { logger: createLogger('info', sink) }));
    const response = await logged.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ apikey_details { id: databaseId } }' }),
    });
    expect(await response.text()).not.toMatch(/connection refused/);
    const requestId = response.headers.get('request-id');
    const errorLines = lines.filter((line) => line.level === 50);
    expect(errorLines.length).toBeGreaterThan(0);
    expect(
      errorLines.every((line) => line.request_id === requestId),
      JSON.stringify(errorLines),
    ).toBe(true);
    expect(JSON.stringify(errorLines)).toMatch(/connection refused/);
  });

  it('carries the request id of the answer, with the error, on both doors', async () => {
    const lines: { request_id?: string; level: number; err?: { message?: string } }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
        done();
      },
    });
    const logged = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { logger: createLogger('info', sink) }));
    const rest = await logged.fetch('http://gateway.test/api/v1/dealerships/masked-motors/plugins', {
      headers: { authorization: `Bearer ${key}` },
    });
    const graphql = await logged.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ dealership_plugins(dealership_slug: "masked-motors") { plugins { slug } } }' }),
    });
    for (const response of [rest, graphql]) {
      const requestId = response.headers.get('request-id');
      expect(requestId).toBeTruthy();
      // The error line (level 50) is Yoga's own, written where no request is at hand.
      const errorLines = lines.filter((line) => line.level === 50 && line.request_id === requestId);
      expect(errorLines.length, `an error line for ${requestId}`).toBeGreaterThan(0);
      expect(JSON.stringify(errorLines)).toMatch(/dealership_plugins/);
    }
    // No error line is written without a request id.
    expect(lines.filter((line) => line.level === 50 && !line.request_id)).toEqual([]);
  });
});
