// The service's settings; this index is what the rest of the code imports. Every setting comes from
// the environment (or the .env file, src/config/env-file.ts) and is declared once, in
// src/config/settings.ts, with its check, default, meaning and the Config field it lands in; the
// Config type, docs/configuration.md's table and .env.example follow from the declarations. All of
// them are checked, with zod, before anything starts: a bad start names every bad setting at once.
//
// Two modes. By default every secret and the public URL must be set (the service refuses to start
// without them). Development mode (APP_MODE=development, or `--dev` on the command line, which
// `npm start` uses for the demo) fills them with public development values and seeds demo data; the
// service logs a warning that it is not for production.
import type { Config } from './load.ts';

export { describeDatabase, engineOf, sqlitePath, type Engine } from './database.ts';
export type { SettingDeclaration } from './declare.ts';
export {
  ConfigError,
  DEFAULT_RATE_LIMITS,
  loadCliTimeoutMs,
  loadConfig,
  loadDatabaseConfig,
  loadSecretsConfig,
  loadSessionSecretConfig,
  processEnvironment,
  type Config,
} from './load.ts';
export { projectRoot } from './root.ts';
export { ANONYMOUS_WINDOW_MS, DEFAULT_GRAPHQL_MAX_COST, OTLP_PROTOCOLS, SETTING_NAMES, SETTINGS, type SettingName } from './settings.ts';

// The parts of the Config other modules name.
export type RateLimitSettings = Config['rateLimits'];
export type TracingConfig = NonNullable<Config['tracing']>;
export type S3Settings = NonNullable<Config['s3']>;
export type FileStorageKind = Config['fileStorage'];
export type LogLevel = Config['logLevel'];
export type LogFormat = Config['logFormat'];
export type OtlpProtocol = TracingConfig['otlpProtocol'];
