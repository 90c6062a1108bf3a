// Applies prisma/migrations/*/<engine>.sql in order and records each in _gateway_migrations.
// Prisma's own `migrate deploy` needs a native schema engine that these machines cannot download,
// so one runner serves both engines. Concurrent starts are safe: SQLite takes its write lock, and
// PostgreSQL a transaction-level advisory lock, before reading what was applied; nothing is held on a
// connection beyond a transaction, so migrations also run through PgBouncer in transaction mode.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { engineOf, projectRoot, sqlitePath, type Engine } from '../config/index.ts';

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export const migrationsDir = path.join(projectRoot, 'prisma', 'migrations');
/** Any fixed number: every gateway instance takes the same lock. */
const POSTGRES_LOCK_KEY = 7_201_984;

/** The migrations of `dir` (the project's own unless a test writes a throwaway set elsewhere). */
export function readMigrations(engine: Engine, dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((entry) => /^\d{14}_[a-z0-9_]+$/.test(entry))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, `${engine}.sql`), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

function assertUnchanged(migration: Migration, appliedChecksum: string | undefined): boolean {
  if (appliedChecksum === undefined) return false;
  if (appliedChecksum !== migration.checksum) {
    throw new Error(`migration ${migration.name} was changed after it was applied; add a new migration instead`);
  }
  return true;
}

/**
 * Brings the database to the current schema and returns the names of the migrations it applied.
 * On PostgreSQL, where many instances share one database, `whileLocked` runs while the advisory
 * lock is still held, so that one instance alone seeds a fresh database. SQLite is embedded (one
 * process owns the file), so there it simply runs after the migrations.
 */
export async function migrate(databaseUrl: string, whileLocked?: () => Promise<void>, dir = migrationsDir): Promise<string[]> {
  return engineOf(databaseUrl) === 'postgresql'
    ? migratePostgres(databaseUrl, dir, whileLocked)
    : migrateSqlite(databaseUrl, dir, whileLocked);
}

/** Whether the file's record lists every migration of `dir`, unchanged; read without taking the write lock. */
function allAppliedSqlite(sqlite: Database.Database, dir: string): boolean {
  const recorded = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_gateway_migrations'").get();
  if (!recorded) return false;
  const done = new Map(
    (sqlite.prepare('SELECT name, checksum FROM _gateway_migrations').all() as { name: string; checksum: string }[]).map((row) => [
      row.name,
      row.checksum,
    ]),
  );
  return readMigrations('sqlite', dir).every((migration) => assertUnchanged(migration, done.get(migration.name)));
}

async function migrateSqlite(databaseUrl: string, dir: string, whileLocked?: () => Promise<void>): Promise<string[]> {
  const file = sqlitePath(databaseUrl);
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file);
  try {
    sqlite.pragma('busy_timeout = 10000');
    // With every migration applied already (a CLI run beside a running service), nothing here needs
    // the write lock, which the service may hold for a while (seeding the demo data): reading the
    // record does not wait for it (WAL).
    if (allAppliedSqlite(sqlite, dir)) {
      if (whileLocked) await whileLocked();
      return [];
    }
    sqlite.pragma('journal_mode = WAL');
    sqlite.exec(`CREATE TABLE IF NOT EXISTS _gateway_migrations (
      name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    const applied: string[] = [];
    // IMMEDIATE takes the write lock before reading, so two processes cannot both apply a migration.
    sqlite
      .transaction(() => {
        const done = new Map(
          (sqlite.prepare('SELECT name, checksum FROM _gateway_migrations').all() as { name: string; checksum: string }[]).map((row) => [
            row.name,
            row.checksum,
          ]),
        );
        for (const migration of readMigrations('sqlite', dir)) {
          if (assertUnchanged(migration, done.get(migration.name))) continue;
          sqlite.exec(migration.sql);
          sqlite
            .prepare('INSERT INTO _gateway_migrations (name, checksum, applied_at) VALUES (?, ?, ?)')
            .run(migration.name, migration.checksum, new Date().toISOString());
          applied.push(migration.name);
        }
      })
      .immediate();
    if (whileLocked) await whileLocked();
    return applied;
  } finally {
    sqlite.close();
  }
}

/**
 * Runs `work` inside a transaction that holds the migration lock. The lock is transaction-level
 * (pg_advisory_xact_lock): PostgreSQL releases it at COMMIT or ROLLBACK, and it lives on the one
 * server connection the transaction runs on. A session-level lock would not survive a pooler in
 * transaction mode (PgBouncer hands each transaction any server connection, so the unlock could
 * reach another one and leave the lock held for good).
 *
 * A waiting instance does not block inside a transaction: it tries, and when the lock is taken it
 * ends its transaction and tries again a little later. Behind a pooler, a blocked transaction would
 * hold a server connection for as long as it waits, and with as many instances starting as the
 * pooler has server connections, the holder's seed (which writes through other connections) would
 * find none free.
 */
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
  // Loaded here, not at the top: an instance on SQLite never loads the PostgreSQL driver.
  const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // All pending migrations in one locked transaction: one instance brings the schema up to date
    // and the others, waiting on the lock, find nothing left to do. PostgreSQL DDL is transactional,
    // so a failing migration leaves the database exactly as it was.
    const applied = await inLockedTransaction(client, async () => {
      await client.query(`CREATE TABLE IF NOT EXISTS _gateway_migrations (
        name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _gateway_migrations');
      const done = new Map(rows.map((row) => [row.name, row.checksum]));
      const names: string[] = [];
      for (const migration of readMigrations('postgresql', dir)) {
        if (assertUnchanged(migration, done.get(migration.name))) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO _gateway_migrations (name, checksum) VALUES ($1, $2)', [migration.name, migration.checksum]);
        names.push(migration.name);
      }
      return names;
    });
    // The seed writes through other connections (they see the committed schema); this transaction
    // only holds the lock meanwhile, so a second instance waits, then finds the data there.
    if (whileLocked) await inLockedTransaction(client, whileLocked);
    return applied;
  } finally {
    await client.end();
  }
}
