// A span per SQL statement when traces are on (src/telemetry/tracing.ts): the driver adapter under
// Prisma is wrapped, so every statement of either engine, in a transaction or not, is seen once with
// the SQL Prisma sent. Prisma sends parameterised SQL: the text has placeholders, never the values
// (which may be personal data). A statement with no span active (a background task between its own
// spans) makes none, so only work done for a request or a traced delivery is recorded.
//
// The attributes are OpenTelemetry's database conventions: `db.system.name`, `db.query.text`,
// `db.operation.name`, `db.collection.name`, and for PostgreSQL `db.namespace`, `server.address` and
// `server.port`. Why this wrapper rather than @prisma/instrumentation: with driver adapters Prisma 7's
// own `db_query` span carries only `db.query.text` and `db.system.name` (no operation or table), and
// the instrumentation package brings a second, older copy of OpenTelemetry's instrumentation base
// (@opentelemetry/instrumentation 0.207, where the exporter here is 0.223) for no span this one lacks.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { tracer } from '../telemetry/tracing.ts';

type Factory = PrismaBetterSqlite3;
type Adapter = Awaited<ReturnType<Factory['connect']>>;
type Transaction = Awaited<ReturnType<Adapter['startTransaction']>>;
type Query = Parameters<Adapter['queryRaw']>[0];

type DatabaseSystem = 'sqlite' | 'postgresql';

/** What every statement span of one database says about where it ran. */
interface DatabaseTarget {
  system: DatabaseSystem;
  /** PostgreSQL: the database's name (`db.namespace`). */
  namespace?: string;
  /** PostgreSQL: the server's host and port, as DATABASE_URL names them. */
  address?: string;
  port?: number;
}

/** The target a PostgreSQL URL names (never its user or password). */
export function postgresTarget(databaseUrl: string): DatabaseTarget {
  const url = new URL(databaseUrl);
  return {
    system: 'postgresql',
    ...(url.pathname.length > 1 ? { namespace: decodeURIComponent(url.pathname.slice(1)) } : {}),
    ...(url.hostname ? { address: url.hostname } : {}),
    port: url.port ? Number(url.port) : 5432,
  };
}

function targetAttributes(target: DatabaseTarget): Record<string, string | number> {
  return {
    'db.system.name': target.system,
    ...(target.namespace !== undefined ? { 'db.namespace': target.namespace } : {}),
    ...(target.address !== undefined ? { 'server.address': target.address } : {}),
    ...(target.port !== undefined ? { 'server.port': target.port } : {}),
  };
}

/** `SELECT`, `INSERT` … and the first table named, for the span's name (`SELECT cars`). */
function statementSummary(sql: string): { operation: string; table: string | null } {
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  // Identifiers quoted as Prisma writes them: "public"."cars" (PostgreSQL), `main`.`cars` (SQLite).
  const table = /\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:["`]?\w+["`]?\.)?["`]?(\w+)["`]?/i.exec(sql)?.[1] ?? null;
  return { operation, table };
}

function traced<T>(target: Record<string, string | number>, sql: string, run: () => Promise<T>): Promise<T> {
  if (!trace.getSpan(context.active())) return run();
  const { operation, table } = statementSummary(sql);
  return tracer().startActiveSpan(
    table ? `${operation} ${table}` : operation,
    {
      kind: SpanKind.CLIENT,
      attributes: { ...target, 'db.operation.name': operation, 'db.query.text': sql, ...(table ? { 'db.collection.name': table } : {}) },
    },
    async (span) => {
      try {
        return await run();
      } catch (error) {
        // The database's message may quote values; the span says only that the statement failed.
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the statement failed' });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Runs one SQL statement: `run` sends it to the database. */
export type AroundStatement = <T>(sql: string, run: () => Promise<T>) => Promise<T>;

function wrappedQueries<Q extends Pick<Adapter, 'queryRaw' | 'executeRaw'>>(
  queryable: Q,
  around: AroundStatement,
): Pick<Adapter, 'queryRaw' | 'executeRaw'> {
  return {
    queryRaw: (query: Query) => around(query.sql, () => queryable.queryRaw(query)),
    executeRaw: (query: Query) => around(query.sql, () => queryable.executeRaw(query)),
  };
}

function wrappedAdapter(adapter: Adapter, around: AroundStatement): Adapter {
  const wrapped: Adapter = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    ...wrappedQueries(adapter, around),
    executeScript: (script) => adapter.executeScript(script),
    dispose: () => adapter.dispose(),
    async startTransaction(isolationLevel) {
      const transaction: Transaction = await adapter.startTransaction(isolationLevel);
      return {
        provider: transaction.provider,
        adapterName: transaction.adapterName,
        options: transaction.options,
        ...wrappedQueries(transaction, around),
        commit: () => transaction.commit(),
        rollback: () => transaction.rollback(),
        ...(transaction.createSavepoint ? { createSavepoint: (name: string) => transaction.createSavepoint!(name) } : {}),
        ...(transaction.rollbackToSavepoint ? { rollbackToSavepoint: (name: string) => transaction.rollbackToSavepoint!(name) } : {}),
        ...(transaction.releaseSavepoint ? { releaseSavepoint: (name: string) => transaction.releaseSavepoint!(name) } : {}),
      } as Transaction;
    },
  };
  if (adapter.getConnectionInfo) wrapped.getConnectionInfo = () => adapter.getConnectionInfo!();
  return wrapped;
}

type AdapterFactory = { provider: string; adapterName: string; connect(): Promise<unknown> };

/** The adapter factory whose connections run every statement, in a transaction or not, through `around`. */
export function statementWrappedFactory<F extends AdapterFactory>(factory: F, around: AroundStatement): F {
  return {
    ...factory,
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => wrappedAdapter((await factory.connect()) as Adapter, around),
  } as F;
}

/** The adapter factory whose connections make a span per statement. */
export function tracedAdapterFactory<F extends AdapterFactory>(factory: F, target: DatabaseTarget): F {
  const attributes = targetAttributes(target);
  return statementWrappedFactory(factory, (sql, run) => traced(attributes, sql, run));
}
