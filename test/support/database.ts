// A fresh, migrated database per test file, on the engine chosen by TEST_DATABASE (sqlite | postgresql).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';
import type { Engine } from '../../src/config/index.ts';

export const testEngine: Engine = process.env.TEST_DATABASE === 'postgresql' ? 'postgresql' : 'sqlite';
export const postgresAdminUrl = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Every database of one `vitest run` starts with this (test/support/global-setup.ts checks none is left). */
export function testDatabasePrefix(): string {
  return `dgw_test_${process.env.TEST_RUN_ID ?? 'adhoc'}_`;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** An empty database (not migrated). */
export async function createEmptyDatabase(): Promise<TestDatabase> {
  const name = `${testDatabasePrefix()}${process.pid}_${randomBytes(4).toString('hex')}`;
  if (testEngine === 'sqlite') {
    const file = path.join(tmpdir(), `${name}.db`);
    return {
      url: `file:${file}`,
      async drop() {
        for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}

export async function createMigratedDatabase(): Promise<TestDatabase> {
  const database = await createEmptyDatabase();
  await migrate(database.url);
  return database;
}
