// The Prisma client for the configured engine. Both generated clients come from the one data model,
// so the SQLite client's type describes the PostgreSQL one as well.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type pg from 'pg';
import { PrismaClient } from '../generated/prisma/sqlite/client.ts';
import { PrismaClient as PostgresPrismaClient } from '../generated/prisma/postgresql/client.ts';
import { engineOf, sqlitePath } from '../config/index.ts';
import { boundedRelations } from './bounded-relations.ts';
import { serialisedSqliteAdapter } from './sqlite-adapter.ts';
import { postgresTarget, statementWrappedFactory, tracedAdapterFactory, type AroundStatement } from './traced-adapter.ts';

// The PostgreSQL driver (pg and Prisma's adapter over it) is loaded only when the engine is
// PostgreSQL: an instance on SQLite never pays for loading it at start-up.
const requirePackage = createRequire(import.meta.url);

export type Db = PrismaClient;
export type { Prisma } from '../generated/prisma/sqlite/client.ts';

interface DbOptions {
  /** Called for every SQL statement; tests count queries with it. */
  onQuery?: (sql: string, params: readonly unknown[]) => void;
  /**
   * PostgreSQL: the most connections this client opens (DATABASE_POOL_MAX; pg's default of 10 when
   * unset). No session state is kept on a connection (no named prepared statements, no SET, no
   * session locks), so the pool may sit behind PgBouncer in transaction mode.
   */
  poolMax?: number;
  /** A span per SQL statement (src/db/traced-adapter.ts): set when traces are on. */
  traced?: boolean;
  /**
   * DATABASE_STATEMENT_TIMEOUT_MS. PostgreSQL: the server cancels a statement running longer
   * (`statement_timeout`, sent as a connection option, which PgBouncer may be told to ignore), and
   * the client gives up on a server that does not answer at all a little later. SQLite: how long a
   * statement waits for a lock another process holds (the busy timeout; better-sqlite3's default, 5 s,
   * when unset). Either way the error is one src/db/unavailable.ts recognises: 503, not a hang.
   */
  statementTimeoutMs?: number;
  /** DATABASE_CONNECT_TIMEOUT_MS, PostgreSQL: opening a connection or waiting for a free one in the pool. */
  connectTimeoutMs?: number;
  /**
   * Runs every SQL statement (tests make the database fail at a chosen statement with it, the way
   * the driver fails: test/database-outage.test.ts).
   */
  aroundStatement?: AroundStatement;
}

/** How much later than the server's statement_timeout the client gives up on a server that does not answer. */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

/** Each PostgreSQL client's connection pool, for the metrics (src/telemetry/metrics.ts) to read. */
const poolByDb = new WeakMap<Db, pg.Pool>();

/** The pg pool under a PostgreSQL client; undefined for SQLite, which has none. */
export function poolOf(db: Db): pg.Pool | undefined {
  return poolByDb.get(db);
}

/** Statements each client has sent, for the metrics (src/telemetry/metrics.ts) to read. */
const statementsByDb = new WeakMap<Db, { sent: number }>();

/** The SQL statements a client createDb made has sent since it was made (queries and writes, in a transaction or not). */
export function statementsSentBy(db: Db): number | undefined {
  return statementsByDb.get(db)?.sent;
}

function wrapped<F extends { provider: string; adapterName: string; connect(): Promise<unknown> }>(
  factory: F,
  options: DbOptions,
  tally: { sent: number },
): F {
  const around = options.aroundStatement;
  // Every statement is counted (one sum, no labels), then run as the options ask.
  return statementWrappedFactory(factory, <T>(sql: string, run: () => Promise<T>): Promise<T> => {
    tally.sent += 1;
    return around ? around(sql, run) : run();
  });
}

// Prisma's own error formatting is never shown (src/errors.ts masks every unexpected error), and any
// other format makes Prisma capture a stack trace on every query to point at the caller: 'minimal', as
// Prisma chooses by itself only when NODE_ENV=production, so development measures what production runs.
const ERROR_FORMAT = 'minimal' as const;

/**
 * Query plans Prisma keeps, per kind (single queries and batches), least recently used first out:
 * its own default, stated here because it is one of the memory bounds (docs/caching.md, "Bounded by
 * construction"). Prisma counts entries only, so the bytes are bounded by what the plans are of: the
 * statement shapes the code writes, never a batch whose size follows the traffic (the key call log
 * upserts one row at a time for that reason: src/domain/api-key-calls.ts).
 */
const QUERY_PLAN_CACHE_ENTRIES = 1_000;

/** The parameters of a logged statement: Prisma logs them as a JSON array. */
function parameterList(params: string): readonly unknown[] {
  try {
    const list: unknown = JSON.parse(params);
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const log = options.onQuery ? [{ emit: 'event' as const, level: 'query' as const }] : [];
  const tally = { sent: 0 };
  let client: Db;
  let pool: pg.Pool | undefined;
  if (engineOf(databaseUrl) === 'postgresql') {
    // The pool is made here, not by the adapter, so that its counts (in use, waiting) can be read;
    // the adapter still ends it when the client disconnects.
    const { Pool } = requirePackage('pg') as typeof pg;
    pool = new Pool({
      connectionString: databaseUrl,
      ...(options.poolMax !== undefined ? { max: options.poolMax } : {}),
      ...(options.connectTimeoutMs !== undefined ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
      ...(options.statementTimeoutMs !== undefined
        ? {
            options: `-c statement_timeout=${options.statementTimeoutMs}`,
            query_timeout: options.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
          }
        : {}),
    });
    const { PrismaPg } = requirePackage('@prisma/adapter-pg') as typeof import('@prisma/adapter-pg');
    const pgAdapter = new PrismaPg(pool, { disposeExternalPool: true });
    const factory = wrapped(options.traced ? tracedAdapterFactory(pgAdapter, postgresTarget(databaseUrl)) : pgAdapter, options, tally);
    // Same models, same API: only the SQL dialect differs, so the SQLite client type is used throughout.
    client = new PostgresPrismaClient({
      adapter: factory,
      log,
      errorFormat: ERROR_FORMAT,
      queryPlanCacheMaxSize: QUERY_PLAN_CACHE_ENTRIES,
    }) as unknown as Db;
  } else {
    const file = sqlitePath(databaseUrl);
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    const sqliteAdapter = serialisedSqliteAdapter(`file:${file}`, options.statementTimeoutMs);
    const factory = wrapped(options.traced ? tracedAdapterFactory(sqliteAdapter, { system: 'sqlite' }) : sqliteAdapter, options, tally);
    client = new PrismaClient({
      adapter: factory,
      log,
      errorFormat: ERROR_FORMAT,
      queryPlanCacheMaxSize: QUERY_PLAN_CACHE_ENTRIES,
    });
  }
  if (options.onQuery) {
    const onQuery = options.onQuery;
    (client as unknown as { $on(event: 'query', cb: (e: { query: string; params: string }) => void): void }).$on('query', (event) =>
      onQuery(event.query, parameterList(event.params)),
    );
  }
  // Every relation count and nested page of every query is read for the query's own rows (src/db/bounded-relations.ts).
  // A query-only extension leaves the client's API as it was, so it keeps the base type.
  const db = client.$extends(boundedRelations) as unknown as Db;
  if (pool) poolByDb.set(db, pool);
  statementsByDb.set(db, tally);
  return db;
}

/** Prisma's unique-constraint violation (P2002), on either engine: the database settled a race. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}
