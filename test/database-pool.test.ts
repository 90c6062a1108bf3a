// DATABASE_POOL_MAX: the setting, checked, and the most connections one instance's client opens to
// PostgreSQL (src/db/client.ts hands it to the pg pool of @prisma/adapter-pg).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { testSettings } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { createMigratedDatabase, testEngine } from './support/database.ts';

describe('DATABASE_POOL_MAX', () => {
  it('defaults to 10 and accepts 1 to 1000, naming the setting otherwise', () => {
    expect(loadConfig({ ...testSettings }).databasePoolMax).toBe(10);
    expect(loadConfig({ ...testSettings, DATABASE_POOL_MAX: '4' }).databasePoolMax).toBe(4);
    for (const bad of ['0', '1001', 'ten', '-1']) {
      expect(() => loadConfig({ ...testSettings, DATABASE_POOL_MAX: bad }), bad).toThrow(
        /DATABASE_POOL_MAX must be a whole number from 1 to 1000/,
      );
    }
  });

  it.runIf(testEngine === 'postgresql')('caps the connections one client opens, however many queries run at once', async () => {
    const database = await createMigratedDatabase();
    onFileEnd(() => database.drop());
    const name = new URL(database.url).pathname.slice(1);
    const connectionsNow = async (): Promise<number> => {
      const observer = new pg.Client({ connectionString: database.url });
      await observer.connect();
      try {
        const { rows } = await observer.query<{ count: string }>(
          'SELECT count(*) AS count FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        return Number(rows[0]?.count);
      } finally {
        await observer.end();
      }
    };
    for (const poolMax of [2, 6]) {
      const db = createDb(database.url, { poolMax });
      try {
        // Twelve queries at once, each holding its connection a moment.
        await Promise.all(Array.from({ length: 12 }, () => db.$queryRawUnsafe('SELECT 1 AS one FROM pg_sleep(0.05)')));
        expect(await connectionsNow()).toBe(poolMax);
      } finally {
        await db.$disconnect();
      }
    }
  });
});
