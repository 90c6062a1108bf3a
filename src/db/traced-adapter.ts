// A span per SQL statement (OpenTelemetry's database conventions), only under an active span; the SQL is parameterised and the
// target names no user or password, so no values or secrets reach it. Not @prisma/instrumentation: with driver adapters its span
// has no operation or table, and it brings a second copy of the instrumentation base.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracer } from '../telemetry/tracing.ts';

export type DatabaseTarget = Record<string, string | number>;

export function postgresTarget(databaseUrl: string): DatabaseTarget {
  const url = new URL(databaseUrl);
  return {
    'db.system.name': 'postgresql',
    ...(url.pathname.length > 1 ? { 'db.namespace': decodeURIComponent(url.pathname.slice(1)) } : {}),
    ...(url.hostname ? { 'server.address': url.hostname } : {}),
    'server.port': url.port ? Number(url.port) : 5432,
  };
}

export function tracedStatement<T>(target: DatabaseTarget, sql: string, run: () => Promise<T>): Promise<T> {
  if (!trace.getSpan(context.active())) return run();
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  // For the span's name (`SELECT cars`); identifiers quoted as Prisma writes them: "public"."cars" (PostgreSQL), `main`.`cars` (SQLite).
  const table = /\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:["`]?\w+["`]?\.)?["`]?(\w+)["`]?/i.exec(sql)?.[1] ?? null;
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

export type AroundStatement = <T>(sql: string, run: () => Promise<T>) => Promise<T>;

/** Its adapters and their transactions run each statement through `around`; the rest passes through as it is. */
export function statementWrappedFactory<F extends object>(factory: F, around: AroundStatement): F {
  return new Proxy(factory, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      if (property === 'queryRaw' || property === 'executeRaw')
        return (query: { sql: string }) => around(query.sql, () => method.call(target, query));
      if (property === 'connect' || property === 'startTransaction')
        return async (...args: unknown[]) => statementWrappedFactory((await method.apply(target, args)) as object, around);
      return method.bind(target);
    },
  });
}
