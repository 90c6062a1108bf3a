// How the CLIs (keys, secrets) open the database, with the service's settings (the .env file included): they may run before the service ever started, so
// they bring the schema up first (no demo data); a bad DATABASE_URL or a database that does not
// answer ends the command with one line saying what to do, not a stack trace.
import pg from 'pg';
import { createDb, type Db } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadEnvFile } from '../src/env-file.ts';
import { DatabaseStartupError, explainStartupFailure } from '../src/startup.ts';

export async function openCliDatabase<C extends { databaseUrl: string }>(loadSettings: () => C): Promise<{ db: Db; config: C }> {
  try {
    loadEnvFile();
    const config = loadSettings();
    await migrate(config.databaseUrl).catch((error: unknown) => {
      throw new DatabaseStartupError(config.databaseUrl, error);
    });
    return { db: createDb(config.databaseUrl), config };
  } catch (error) {
    console.error(explainStartupFailure(error).message.replace(/^cannot start: /, ''));
    process.exit(1);
  }
}

/** One statement on a PostgreSQL server's maintenance connection (CREATE or DROP DATABASE for the bench and scale runs). */
export async function runAdminSql(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
