// The database: its URL (which also chooses the engine), its pool and its timeouts.
import path from 'node:path';
import { z } from 'zod';
import { optional, positiveWholeNumber, setting, type SettingDeclaration } from './declare.ts';
import { projectRoot } from './root.ts';

export type Engine = 'sqlite' | 'postgresql';

/** The default of DATABASE_POOL_MAX: connections one instance may open to PostgreSQL. */
export const DEFAULT_DATABASE_POOL_MAX = 10;

function databaseUrlProblem(value: string): string | null {
  if (value.startsWith('file:'))
    return value.length > 'file:'.length ? null : 'must name a file after file:, e.g. file:./data/dealership.db';
  if (!/^postgres(ql)?:\/\//.test(value)) {
    return 'must start with file: (SQLite, e.g. file:./data/dealership.db) or postgresql:// (PostgreSQL, e.g. postgresql://user@host:5432/dealership)';
  }
  try {
    const url = new URL(value);
    if (url.hostname === '') return 'must name a host, e.g. postgresql://user@host:5432/dealership';
    if (url.pathname.length <= 1) return 'must name a database, e.g. postgresql://user@host:5432/dealership';
    return null;
  } catch {
    return 'is not a valid URL: check for characters that need %-encoding in the password';
  }
}

export function engineOf(databaseUrl: string): Engine {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return 'postgresql';
  if (databaseUrl.startsWith('file:')) return 'sqlite';
  throw new Error('DATABASE_URL must start with file: (SQLite) or postgresql:// (PostgreSQL)');
}

/** Turns a file: URL into a path; relative paths are relative to the project, not the cwd. */
export function sqlitePath(databaseUrl: string): string {
  const file = databaseUrl.slice('file:'.length);
  if (file === ':memory:') return file;
  return path.isAbsolute(file) ? file : path.join(projectRoot, file);
}

/** Where a database URL points, without its password: safe for logs. */
export function describeDatabase(databaseUrl: string): string {
  if (engineOf(databaseUrl) === 'sqlite') return sqlitePath(databaseUrl);
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

export const DATABASE_SETTINGS = {
  DATABASE_URL: setting({
    schema: optional(
      z
        .string()
        .trim()
        .superRefine((value, context) => {
          const problem = databaseUrlProblem(value);
          if (problem) context.addIssue({ code: 'custom', message: problem });
        }),
    ),
    default: 'file:./data/dealership.db',
    meaning: '`file:` for SQLite (relative to the project), `postgresql://…` for PostgreSQL',
    confidential: true,
  }),
  DATABASE_POOL_MAX: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^\d+$/, 'must be a whole number from 1 to 1000')
        .transform(Number)
        .refine((value) => value >= 1 && value <= 1_000, 'must be a whole number from 1 to 1000'),
    ),
    // pg's own default; see docs/operations.md ("PostgreSQL, Connections") for sizing it against max_connections.
    default: String(DEFAULT_DATABASE_POOL_MAX),
    meaning: 'PostgreSQL: the most connections one instance opens (1 to 1000); see "Several instances"',
  }),
  // A database that does not answer is answered 503 within these, never left to hang a request (docs/errors.md, "Errors").
  DATABASE_STATEMENT_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '5000',
    meaning:
      'the longest one SQL statement may take before the request is answered 503 `unavailable`: PostgreSQL cancels it (`statement_timeout`) and the service gives up on a server that does not answer; SQLite waits this long for a lock another process holds (busy timeout)',
  }),
  CLI_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '30000',
    meaning:
      'the CLIs (`keys`, `outbox`, `secrets`, `db:migrate`, `db:seed`) end with one line and exit code 1 when the database or Redis has not let them finish within this long; on SQLite they wait up to this long for a write lock another process holds',
  }),
  DATABASE_CONNECT_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '2000',
    meaning:
      'PostgreSQL: the longest the service waits to open a connection, or for a free one of its pool, before answering 503 `unavailable`',
  }),
} as const satisfies Record<string, SettingDeclaration>;
