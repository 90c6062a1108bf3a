// One log line naming the setting at fault and what to do, never a stack trace.
import type { Logger } from 'pino';
import { ConfigError, describeDatabase, type Config } from './config/index.ts';
import { createLogger } from './logger.ts';

interface StartupFailure {
  settings: string[];
  message: string;
}

/** Raised around the database's preparation, so its failures are reported against DATABASE_URL. */
export class DatabaseStartupError extends Error {
  override name = 'DatabaseStartupError';
  constructor(
    readonly databaseUrl: string,
    override readonly cause: unknown,
  ) {
    super('the database could not be prepared');
  }
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  return Array.isArray(errors) ? codeOf(errors[0]) : undefined;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.trim() || 'unknown error';
}

function databaseFailure(error: DatabaseStartupError): StartupFailure {
  const where = describeDatabase(error.databaseUrl);
  const code = codeOf(error.cause);
  const reasons: Record<string, string> = {
    ECONNREFUSED: `nothing answers at ${where}: start the database server or fix DATABASE_URL`,
    ENOTFOUND: `the host of ${where} is unknown: fix the host in DATABASE_URL`,
    EAI_AGAIN: `the host of ${where} cannot be resolved now: check DNS or the host in DATABASE_URL`,
    ETIMEDOUT: `${where} did not answer in time: check that the database server runs and is reachable`,
    '28P01': `${where} refused the user or password: fix the credentials in DATABASE_URL`,
    '28000': `${where} refused the connection for this user: fix DATABASE_URL or the server's access rules`,
    '3D000': `the database named in DATABASE_URL does not exist on ${where}: create it (createdb) or fix the name`,
    EACCES: `${where} cannot be created or opened (permission denied): choose a writable path in DATABASE_URL`,
    EROFS: `${where} is on a read-only file system: choose a writable path in DATABASE_URL`,
    ENOTDIR: `${where} cannot be created: a part of its directory is a file: choose another path in DATABASE_URL`,
    EEXIST: `${where} cannot be created: a part of its directory is a file: choose another path in DATABASE_URL`,
    SQLITE_CANTOPEN: `${where} cannot be created or opened: choose a writable path in DATABASE_URL`,
    SQLITE_NOTADB: `${where} is not a SQLite database: point DATABASE_URL at a database file`,
  };
  const reason =
    (code && reasons[code]) ?? `${where} could not be prepared (${firstLine(error.cause)}): check DATABASE_URL and the database server`;
  return { settings: ['DATABASE_URL'], message: `cannot start: DATABASE_URL: ${reason}` };
}

function listenFailure(error: NodeJS.ErrnoException, config: Pick<Config, 'port' | 'host'>): StartupFailure | null {
  if (error.syscall !== 'listen') return null;
  const failures: Record<string, StartupFailure> = {
    EADDRINUSE: {
      settings: ['PORT'],
      message: `cannot start: PORT ${config.port} is already in use on ${config.host}: stop the other process or set PORT to a free port`,
    },
    EACCES: { settings: ['PORT'], message: `cannot start: PORT ${config.port} needs privileges this process lacks: use a port above 1023` },
    EADDRNOTAVAIL: {
      settings: ['HOST'],
      message: `cannot start: HOST ${config.host} is not an address of this machine: set HOST to one (0.0.0.0 for all)`,
    },
  };
  return (error.code && failures[error.code]) || null;
}

export function explainStartupFailure(error: unknown, config?: Pick<Config, 'port' | 'host'>): StartupFailure {
  if (error instanceof ConfigError) {
    return {
      settings: error.problems.map((problem) => problem.setting),
      message: `cannot start: fix these settings: ${error.message}`,
    };
  }
  if (error instanceof DatabaseStartupError) return databaseFailure(error);
  const listen = config && error instanceof Error ? listenFailure(error as NodeJS.ErrnoException, config) : null;
  return listen ?? { settings: [], message: `cannot start: ${firstLine(error)}` };
}

export function failStartup(error: unknown, logger: Logger = createLogger('info'), config?: Pick<Config, 'port' | 'host'>): never {
  const failure = explainStartupFailure(error, config);
  logger.fatal({ settings: failure.settings }, failure.message);
  logger.flush?.();
  process.exit(1);
}

export function warnIfDevelopmentMode(config: Pick<Config, 'mode' | 'developmentDefaults'>, logger: Logger): void {
  if (config.mode !== 'development') return;
  logger.warn(
    { mode: 'development', development_defaults: config.developmentDefaults },
    `DEVELOPMENT MODE, NOT FOR PRODUCTION: ${
      config.developmentDefaults.length > 0
        ? `${config.developmentDefaults.join(', ')} use public development values`
        : 'started with APP_MODE=development or --dev'
    }; demo data may be seeded. Production: leave out --dev and APP_MODE, set PUBLIC_URL, SESSION_SIGNING_SECRET and SECRETS_ENCRYPTION_KEYS`,
  );
}

/** Names the explorers only when on, and the keys CLI only in development mode (the production image has no tsx). */
export function listeningLine(
  config: Pick<Config, 'explorers' | 'mode' | 'engine' | 'publicUrl'>,
  port: number,
): { fields: Record<string, unknown>; msg: string } {
  const served = config.explorers
    ? 'GraphQL at /graphql (GraphiQL in a browser), the REST paths, their OpenAPI document at /openapi.json and Swagger UI at /docs'
    : 'GraphQL at /graphql, the REST paths and their OpenAPI document at /openapi.json (no GraphiQL, no /docs: EXPLORERS=on serves them)';
  const address = config.mode === 'development' ? `http://localhost:${port}` : `port ${port} (public URL ${config.publicUrl})`;
  const hint = config.mode === 'development' ? '; get a key with: npm run --silent keys -- create --name demo --all-permissions' : '';
  return { fields: { port, engine: config.engine, explorers: config.explorers }, msg: `listening on ${address}: ${served}${hint}` };
}
