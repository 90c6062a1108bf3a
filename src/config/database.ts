import path from 'node:path';
import { projectRoot } from './root.ts';

export type Engine = 'sqlite' | 'postgresql';

export function engineOf(databaseUrl: string): Engine {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return 'postgresql';
  if (databaseUrl.startsWith('file:')) return 'sqlite';
  throw new Error('DATABASE_URL must start with file: (SQLite) or postgresql:// (PostgreSQL)');
}

/** Relative paths are relative to the project, not the cwd. */
export function sqlitePath(databaseUrl: string): string {
  const file = databaseUrl.slice('file:'.length);
  if (file === ':memory:') return file;
  return path.isAbsolute(file) ? file : path.join(projectRoot, file);
}

export function describeDatabase(databaseUrl: string): string {
  if (engineOf(databaseUrl) === 'sqlite') return sqlitePath(databaseUrl);
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
}
