// Every setting is checked before anything starts, so a bad start names every bad setting at once.
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
  settingDefaults,
  type Config,
} from './load.ts';
export { projectRoot } from './root.ts';
export { ANONYMOUS_WINDOW_MS, DEFAULT_GRAPHQL_MAX_COST, OTLP_PROTOCOLS, SETTING_NAMES, SETTINGS, type SettingName } from './settings.ts';

export type RateLimitSettings = Config['rateLimits'];
export type TracingConfig = NonNullable<Config['tracing']>;
export type S3Settings = NonNullable<Config['s3']>;
export type LogLevel = Config['logLevel'];
export type LogFormat = Config['logFormat'];
export type OtlpProtocol = TracingConfig['otlpProtocol'];
