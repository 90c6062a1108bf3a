// Both generated clients come from the one data model, so the SQLite client's type describes both.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type pg from 'pg';
import { PrismaClient } from '../generated/prisma/sqlite/client.ts';
import { PrismaClient as PostgresPrismaClient } from '../generated/prisma/postgresql/client.ts';
import { engineOf, sqlitePath } from '../config/index.ts';
import { parsedJson } from '../lib/json.ts';
import { boundedRelations } from './bounded-relations.ts';
import { serialisedSqliteAdapter } from './sqlite-adapter.ts';
import { postgresTarget, statementWrappedFactory, tracedStatement, type AroundStatement, type DatabaseTarget } from './traced-adapter.ts';

// The PostgreSQL driver is loaded only on PostgreSQL, so a SQLite instance never pays for it at start-up.
const requirePackage = createRequire(import.meta.url);

export type Db = PrismaClient;
export type { Prisma } from '../generated/prisma/sqlite/client.ts';

interface DbOptions {
  onQuery?: (sql: string, params: readonly unknown[]) => void;
  /** No session state is kept on a connection, so the pool may sit behind PgBouncer in transaction mode. */
  poolMax?: number;
  traced?: boolean;
  /** PostgreSQL's statement_timeout (and the client's, a little later), SQLite's busy timeout: a 503, not a hang. */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  aroundStatement?: AroundStatement;
}

const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

const factsByDb = new WeakMap<Db, { pool: pg.Pool | undefined; tally: { sent: number } }>();

export function poolOf(db: Db): pg.Pool | undefined {
  return factsByDb.get(db)?.pool;
}

export function statementsSentBy(db: Db): number | undefined {
  return factsByDb.get(db)?.tally.sent;
}

// Any other format makes Prisma capture a stack trace on every query, for messages that are masked anyway.
const ERROR_FORMAT = 'minimal' as const;

// Prisma's own default, stated because it is a memory bound: plans of the code's statement shapes.
const QUERY_PLAN_CACHE_ENTRIES = 1_000;

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const log = options.onQuery ? [{ emit: 'event' as const, level: 'query' as const }] : [];
  const clientOptions = { log, errorFormat: ERROR_FORMAT, queryPlanCacheMaxSize: QUERY_PLAN_CACHE_ENTRIES };
  const tally = { sent: 0 };
  const { aroundStatement: around, traced } = options;
  // Every statement is counted (and traced, with traces on) on its way to the driver.
  const counted = <F extends object>(factory: F, target: DatabaseTarget): F =>
    statementWrappedFactory(factory, <T>(sql: string, run: () => Promise<T>) => {
      tally.sent += 1;
      const sent = traced ? () => tracedStatement(target, sql, run) : run;
      return around ? around(sql, sent) : sent();
    });
  let client: Db;
  let pool: pg.Pool | undefined;
  if (engineOf(databaseUrl) === 'postgresql') {
    // Made here, not by the adapter, so that the metrics can read its counts.
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
    client = new PostgresPrismaClient({ adapter: counted(pgAdapter, postgresTarget(databaseUrl)), ...clientOptions }) as unknown as Db;
  } else {
    const file = sqlitePath(databaseUrl);
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    const sqliteAdapter = serialisedSqliteAdapter(`file:${file}`, options.statementTimeoutMs);
    client = new PrismaClient({ adapter: counted(sqliteAdapter, { 'db.system.name': 'sqlite' }), ...clientOptions });
  }
  if (options.onQuery) {
    const onQuery = options.onQuery;
    (client as unknown as { $on(event: 'query', cb: (e: { query: string; params: string }) => void): void }).$on('query', (event) => {
      const params = parsedJson(event.params);
      onQuery(event.query, Array.isArray(params) ? params : []);
    });
  }
  // A query-only extension leaves the client's API as it was, so it keeps the base type.
  const db = client.$extends(boundedRelations) as unknown as Db;
  factsByDb.set(db, { pool, tally });
  return db;
}

/** P2002 on either engine: the database settled a race. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}
