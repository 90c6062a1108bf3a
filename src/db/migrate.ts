// Not Prisma's `migrate deploy`: it needs a native schema engine these machines cannot download.
// Concurrent starts take SQLite's write lock or a transaction-level advisory lock before reading what was applied.
import { hash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { engineOf, projectRoot, sqlitePath, type Engine } from '../config/index.ts';

export const migrationsDir = path.join(projectRoot, 'prisma', 'migrations');
const POSTGRES_LOCK_KEY = 7_201_984;

export function readMigrations(engine: Engine, dir = migrationsDir) {
  return readdirSync(dir)
    .filter((entry) => /^\d{14}_[a-z0-9_]+$/.test(entry))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, `${engine}.sql`), 'utf8');
      return { name, sql, checksum: hash('sha256', sql, 'hex') };
    });
}

/** The migrations not applied yet, given each applied one's checksum; one changed after it was applied is refused. */
function pendingMigrations(engine: Engine, dir: string, applied: ReadonlyMap<string, string>) {
  return readMigrations(engine, dir).filter(({ name, checksum }) => {
    const appliedChecksum = applied.get(name);
    if (appliedChecksum !== undefined && appliedChecksum !== checksum)
      throw new Error(`migration ${name} was changed after it was applied; add a new migration instead`);
    return appliedChecksum === undefined;
  });
}

/** `whileLocked` runs under the PostgreSQL lock, so one instance alone seeds a fresh database. */
export async function migrate(databaseUrl: string, whileLocked?: () => Promise<void>, dir = migrationsDir): Promise<string[]> {
  return engineOf(databaseUrl) === 'postgresql'
    ? migratePostgres(databaseUrl, dir, whileLocked)
    : migrateSqlite(databaseUrl, dir, whileLocked);
}

function appliedSqlite(sqlite: Database.Database): Map<string, string> {
  const rows = sqlite.prepare('SELECT name, checksum FROM _gateway_migrations').all() as { name: string; checksum: string }[];
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

function allAppliedSqlite(sqlite: Database.Database, dir: string): boolean {
  const recorded = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_gateway_migrations'").get();
  return recorded !== undefined && pendingMigrations('sqlite', dir, appliedSqlite(sqlite)).length === 0;
}

async function migrateSqlite(databaseUrl: string, dir: string, whileLocked?: () => Promise<void>): Promise<string[]> {
  const file = sqlitePath(databaseUrl);
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file);
  try {
    sqlite.pragma('busy_timeout = 10000');
    // All applied already (a CLI beside a running service): no need to wait for the write lock.
    if (allAppliedSqlite(sqlite, dir)) {
      if (whileLocked) await whileLocked();
      return [];
    }
    sqlite.pragma('journal_mode = WAL');
    sqlite.exec(`CREATE TABLE IF NOT EXISTS _gateway_migrations (
      name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    // IMMEDIATE takes the write lock before reading, so two processes cannot both apply a migration.
    const applied = sqlite
      .transaction(() => {
        const pending = pendingMigrations('sqlite', dir, appliedSqlite(sqlite));
        for (const migration of pending) {
          sqlite.exec(migration.sql);
          sqlite
            .prepare('INSERT INTO _gateway_migrations (name, checksum, applied_at) VALUES (?, ?, ?)')
            .run(migration.name, migration.checksum, new Date().toISOString());
        }
        return pending.map((migration) => migration.name);
      })
      .immediate();
    if (whileLocked) await whileLocked();
    return applied;
  } finally {
    sqlite.close();
  }
}

// A transaction-level lock survives PgBouncer in transaction mode, where a session lock's unlock could
// reach another connection; a waiter retries rather than blocking, so it holds no server connection.
async function inLockedTransaction<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  for (let waitMs = 50; ; waitMs = Math.min(waitMs * 2, 1_000)) {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [POSTGRES_LOCK_KEY]);
      if (rows[0]?.locked) {
        const result = await work();
        await client.query('COMMIT');
        return result;
      }
      await client.query('ROLLBACK');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

async function migratePostgres(databaseUrl: string, dir: string, whileLocked?: () => Promise<void>): Promise<string[]> {
  const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // One transaction: DDL is transactional, so a failing migration leaves the database as it was.
    const applied = await inLockedTransaction(client, async () => {
      await client.query(`CREATE TABLE IF NOT EXISTS _gateway_migrations (
        name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _gateway_migrations');
      const pending = pendingMigrations('postgresql', dir, new Map(rows.map((row) => [row.name, row.checksum])));
      for (const migration of pending) {
        await client.query(migration.sql);
        await client.query('INSERT INTO _gateway_migrations (name, checksum) VALUES ($1, $2)', [migration.name, migration.checksum]);
      }
      return pending.map((migration) => migration.name);
    });
    if (whileLocked) await inLockedTransaction(client, whileLocked);
    return applied;
  } finally {
    await client.end();
  }
}
