// Every setting comes from the environment, with the defaults documented in README.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
  /** Grace period after SIGTERM before open requests are cut. */
  shutdownGraceMs: number;
  /** NODE_ENV=production: introspection needs `read:schema`, errors carry no field suggestions. */
  production: boolean;
  /** Serve GraphiQL (/graphql in a browser) and Swagger UI (/docs). */
  explorers: boolean;
  /** Origins whose web pages may call the API (CORS): exact origins, or ['*'] for any; empty for none. */
  corsOrigins: readonly string[];
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

/**
 * CORS_ORIGINS: comma-separated origins (`https://shop.example.com`), or `*`. Each must be a bare
 * http(s) origin, written as browsers send it in `Origin`, so the comparison is exact; `null` (sent by
 * sandboxed frames and files) is refused, since any page can make its requests carry it.
 */
function corsOrigins(env: NodeJS.ProcessEnv): string[] {
  const entries = (env.CORS_ORIGINS ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.includes('*')) {
    if (entries.length > 1) throw new Error('CORS_ORIGINS must be * alone or a list of origins, not both');
    return ['*'];
  }
  return entries.map((entry) => {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
      throw new Error(`CORS_ORIGINS must list origins such as https://shop.example.com (scheme, host and port only), got "${entry}"`);
    }
    return url.origin;
  });
}

const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || 'file:./data/dealership.db';
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!logLevels.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${logLevels.join(', ')}`);
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
    shutdownGraceMs: integer('SHUTDOWN_GRACE_MS', 10_000, env),
    production: env.NODE_ENV === 'production',
    // The explorers are a development aid; a production deployment opts in with EXPLORERS=on.
    explorers: flag('EXPLORERS', env.NODE_ENV !== 'production', env),
    corsOrigins: corsOrigins(env),
  };
}
