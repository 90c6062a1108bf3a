// Once per `vitest run`: names this run, and at the end fails the run if any database it created
// (`dgw_test_<run>_…`, SQLite files or PostgreSQL databases) was left behind.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { postgresAdminUrl, testDatabasePrefix } from './database.ts';

export function setup(): void {
  // Inherited by the worker processes, which name their databases with it.
  process.env.TEST_RUN_ID = randomBytes(4).toString('hex');
}

export async function teardown(): Promise<void> {
  const prefix = testDatabasePrefix();
  const leftovers = readdirSync(tmpdir()).filter((name) => name.startsWith(prefix));
  if (process.env.TEST_DATABASE === 'postgresql') {
    const client = new pg.Client({ connectionString: postgresAdminUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
      leftovers.push(...rows.map((row) => row.datname));
    } finally {
      await client.end();
    }
  }
  if (leftovers.length > 0) throw new Error(`the test run left ${leftovers.length} database(s) behind: ${leftovers.join(', ')}`);
}
