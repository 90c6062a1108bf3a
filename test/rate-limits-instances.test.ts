// Three instances of the service, as real processes over one PostgreSQL database and one Redis,
// spend one rate-limit budget: a key's requests, sent to them in turn, are allowed exactly as often
// as the limit says, whichever instance answers. (SQLite: one file serves one instance, so this runs
// on PostgreSQL only.)
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client.ts';
import { testSettings } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { createMigratedDatabase, testEngine, type TestDatabase } from './support/database.ts';
import { makeKey } from './support/fixtures.ts';
import { freePort, startService, type RunningService } from './support/processes.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROCESS_TIMEOUT = 180_000;
const LIMIT = 9;
const DETAILS = '/api/v1/apikeys/apikey_details.json';

describe.runIf(testEngine === 'postgresql')('three instances sharing Redis', () => {
  let database: TestDatabase;
  const instances: { port: number; service: RunningService }[] = [];

  beforeAll(async () => {
    database = await createMigratedDatabase();
    onFileEnd(() => database.drop());
    // Counters of this run only: other runs on the same Redis have keys with the same ids.
    const prefix = `dgw:test:${randomBytes(6).toString('hex')}:`;
    const settings = {
      ...testSettings,
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_KEY_REQUESTS: String(LIMIT),
      // The window is long enough that the whole test runs inside one.
      RATE_LIMIT_WINDOW_SECONDS: '3600',
    };
    const ports = [await freePort(), await freePort(), await freePort()];
    const started = await Promise.all(ports.map((port) => startService([], { ...settings, PORT: String(port) })));
    for (const [index, service] of started.entries()) instances.push({ port: ports[index] as number, service });
  }, PROCESS_TIMEOUT);

  afterAll(async () => {
    await Promise.all(instances.map(({ service }) => service.stop()));
  }, PROCESS_TIMEOUT);

  it(
    'allows a key its limit once across all three, then refuses it on every one',
    async () => {
      const db = createDb(database.url);
      const { key } = await makeKey(db);
      await db.$disconnect();
      const answers: { instance: number; status: number; remaining: string | null }[] = [];
      for (let request = 0; request < LIMIT + 6; request += 1) {
        const instance = request % instances.length;
        const response = await fetch(`http://127.0.0.1:${instances[instance]?.port}${DETAILS}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        answers.push({ instance, status: response.status, remaining: response.headers.get('ratelimit-remaining') });
        await response.arrayBuffer();
      }
      expect(answers.slice(0, LIMIT).map((answer) => answer.status)).toEqual(Array(LIMIT).fill(200));
      // The count goes down by one per request whichever instance answered it.
      expect(answers.slice(0, LIMIT).map((answer) => answer.remaining)).toEqual(
        Array.from({ length: LIMIT }, (_, index) => String(LIMIT - 1 - index)),
      );
      const refused = answers.slice(LIMIT);
      expect(refused.map((answer) => answer.status)).toEqual(Array(6).fill(429));
      expect(new Set(refused.map((answer) => answer.instance))).toEqual(new Set([0, 1, 2]));
    },
    PROCESS_TIMEOUT,
  );
});
