// The service's settings, one module per concern beside this one; this index is what the rest of
// the code imports. Every setting comes from the environment (or the .env file, src/config/env-file.ts) and
// is declared once, with its check, default and meaning; docs/configuration.md's table and
// .env.example are generated from the declarations (src/config/docs.ts). All of them are checked,
// with zod, before anything starts: a bad start names every bad setting at once.
//
// Two modes. By default every secret and the public URL must be set (the service refuses to start
// without them). Development mode (APP_MODE=development, or `--dev` on the command line, which
// `npm start` uses for the demo) fills them with public development values and seeds demo data; the
// service logs a warning that it is not for production.
export { DEFAULT_GRAPHQL_MAX_COST } from './api.ts';
export { DEFAULT_DATABASE_POOL_MAX, describeDatabase, engineOf, sqlitePath, type Engine } from './database.ts';
export type { SettingDeclaration } from './declare.ts';
export { ANONYMOUS_WINDOW_MS, DEFAULT_RATE_LIMITS, type RateLimitSettings } from './rate-limits.ts';
export {
  loadCliTimeoutMs,
  loadConfig,
  loadDatabaseConfig,
  loadSecretsConfig,
  loadSessionSecretConfig,
  processEnvironment,
} from './load.ts';
export { ConfigError } from './read.ts';
export { projectRoot } from './root.ts';
export { SETTING_NAMES, SETTINGS, type SettingName } from './settings.ts';
export type { FileStorageKind, S3Settings } from './storage.ts';
export type { LogFormat, LogLevel, TracingConfig } from './telemetry.ts';
export type { Config } from './types.ts';
