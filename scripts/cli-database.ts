// How the CLIs (keys, outbox, secrets) open the database, with the service's settings (the .env file included): they may run before the service ever started, so
// they bring the schema up first (no demo data); a bad DATABASE_URL or a database that does not
// answer ends the command with one line saying what to do, not a stack trace, and within
// CLI_TIMEOUT_MS whatever the database or Redis does.
import path from 'node:path';
import pg from 'pg';
import { createDb, type Db } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadEnvFile } from '../src/config/env-file.ts';
import { loadCliTimeoutMs } from '../src/config/index.ts';
import { isDatabaseUnavailable } from '../src/db/unavailable.ts';
import { DatabaseStartupError, explainStartupFailure } from '../src/startup.ts';

/** The one line a CLI ends with when it cannot start: the setting at fault and what to do. */
export function failCli(error: unknown): never {
  console.error(explainStartupFailure(error).message.replace(/^cannot start: /, ''));
  process.exit(1);
}

/**
 * Ends the process, with one line and exit code 1, once CLI_TIMEOUT_MS has passed: a database or a
 * Redis that does not answer (frozen, or dropping packets) must not hold an operator's command, or a
 * script running it, for ever. Returns the timeout, which also bounds each statement (and, on
 * SQLite, the wait for a lock the service holds). Call it after the .env file is loaded.
 */
export function exitWhenOverdue(): number {
  let timeoutMs: number;
  try {
    timeoutMs = loadCliTimeoutMs();
  } catch (error) {
    failCli(error);
  }
  cliTimeoutMs = timeoutMs;
  const overdue = setTimeout(() => {
    console.error(
      `${commandName()}: not finished after ${timeoutMs} ms, the database or Redis did not answer (raise CLI_TIMEOUT_MS to wait longer)`,
    );
    process.exit(1);
  }, timeoutMs);
  // It never keeps a finished command waiting.
  overdue.unref();
  return timeoutMs;
}

let cliTimeoutMs: number | undefined;

/** `npm run keys`, as the operator typed it. */
function commandName(): string {
  return `npm run ${path.basename(process.argv[1] ?? 'cli', '.ts')}`;
}

/**
 * Ends a command that met a database that did not answer (src/db/unavailable.ts: busy past the
 * timeout, unreachable, connections cut) with one line and exit code 1; any other error is thrown on.
 */
export function failIfDatabaseUnavailable(error: unknown): void {
  if (!isDatabaseUnavailable(error)) return;
  const within = cliTimeoutMs === undefined ? '' : ` within ${cliTimeoutMs} ms (CLI_TIMEOUT_MS)`;
  console.error(`${commandName()}: the database did not answer${within}, or dropped the connection; nothing more was done`);
  process.exit(1);
}

/** The database of a CLI: each statement bounded by CLI_TIMEOUT_MS, and waiting as long on a busy SQLite file. */
export function createCliDb(databaseUrl: string, timeoutMs: number): Db {
  return createDb(databaseUrl, { statementTimeoutMs: timeoutMs, connectTimeoutMs: timeoutMs });
}

export async function openCliDatabase<C extends { databaseUrl: string }>(loadSettings: () => C): Promise<{ db: Db; config: C }> {
  try {
    loadEnvFile();
    const config = loadSettings();
    const timeoutMs = exitWhenOverdue();
    await migrate(config.databaseUrl).catch((error: unknown) => {
      throw new DatabaseStartupError(config.databaseUrl, error);
    });
    return { db: createCliDb(config.databaseUrl, timeoutMs), config };
  } catch (error) {
    failCli(error);
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
