// Every setting comes from the environment, with the defaults documented in README.md.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above `from` holding package.json: the same from src/ (tsx) and from dist/src/ (compiled). */
export function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const projectRoot = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

export type Engine = 'sqlite' | 'postgresql';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  engine: Engine;
  logLevel: LogLevel;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Seed demo data when the database holds no dealership yet. */
  seedDemoData: boolean;
  /** This service's own public origin, used in URLs it hands out (the partner redirect_url). */
  publicUrl: string;
  /** Where the platform's pages live (the partner handoff lands there). */
  platformUrl: string;
  /** HMAC key for the short-lived session values handed to the platform; shared by all instances. */
  sessionSigningSecret: string;
  /** smtp(s)://user:pass@host:port; null: notifications are written to the log instead of sent. */
  smtpUrl: string | null;
  mailFrom: string;
  /** Where lead attachments are stored (the local-directory file storage). */
  fileStorageDir: string;
  /** Largest lead attachment, in bytes (decoded). */
  leadFileMaxBytes: number;
  /** After SIGTERM the process drains and exits within this long; open requests are cut just before. */
  shutdownGraceMs: number;
  /** A client must have sent a request's headers within this long, or its connection is cut (408). */
  httpHeadersTimeoutMs: number;
  /** ... and the whole request, body included, within this long. */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  httpKeepAliveTimeoutMs: number;
  /** Open connections beyond this many are closed as soon as they are accepted. */
  httpMaxConnections: number;
}

/** Development default only: production refuses to start without SESSION_SIGNING_SECRET. */
const DEV_SIGNING_SECRET = 'dev-only-session-signing-secret-change-me';

function integer(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return value;
}

function flag(name: string, fallback: boolean, env: NodeJS.ProcessEnv): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
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

function signingSecret(env: NodeJS.ProcessEnv): string {
  const secret = env.SESSION_SIGNING_SECRET;
  if (secret) {
    if (secret.length < 32) throw new Error('SESSION_SIGNING_SECRET must be at least 32 characters');
    return secret;
  }
  if (env.NODE_ENV === 'production') throw new Error('SESSION_SIGNING_SECRET is required in production');
  return DEV_SIGNING_SECRET;
}

function positiveInteger(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const value = integer(name, fallback, env);
  if (value === 0) throw new Error(`${name} must be greater than 0`);
  return value;
}

const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || 'file:./data/dealership.db';
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!logLevels.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${logLevels.join(', ')}`);
  const httpHeadersTimeoutMs = positiveInteger('HTTP_HEADERS_TIMEOUT_MS', 10_000, env);
  const httpRequestTimeoutMs = positiveInteger('HTTP_REQUEST_TIMEOUT_MS', 30_000, env);
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new Error('HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)');
  }
  return {
    port: integer('PORT', 4000, env),
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    engine: engineOf(databaseUrl),
    logLevel,
    // Lead attachments travel base64-encoded inside the JSON body, so the body limit leaves room for them.
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 10 * 1024 * 1024, env),
    seedDemoData: flag('SEED_DEMO_DATA', env.NODE_ENV !== 'production', env),
    publicUrl: (env.PUBLIC_URL || `http://localhost:${integer('PORT', 4000, env)}`).replace(/\/+$/, ''),
    platformUrl: (env.PLATFORM_URL || 'http://localhost:3000').replace(/\/+$/, ''),
    sessionSigningSecret: signingSecret(env),
    smtpUrl: env.SMTP_URL || null,
    mailFrom: env.MAIL_FROM || 'Dealership Platform <no-reply@dealership.local>',
    fileStorageDir: path.resolve(projectRoot, env.FILE_STORAGE_DIR || 'data/files'),
    leadFileMaxBytes: integer('LEAD_FILE_MAX_BYTES', 5 * 1024 * 1024, env),
    shutdownGraceMs: positiveInteger('SHUTDOWN_GRACE_MS', 10_000, env),
    // Node's own defaults (60 s for headers, 300 s per request) let a slow client hold a connection for minutes.
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: positiveInteger('HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, env),
    httpMaxConnections: positiveInteger('HTTP_MAX_CONNECTIONS', 1_000, env),
  };
}
