// The loaders: each start (the service, a CLI) checks the settings it needs from the environment,
// each one on its own, so that a bad start names every bad setting at once; then the Config is
// their declared fields (src/config/settings.ts) with the few values derived from several settings.
// This is the one module that reads process.env (besides the .env loader, src/config/env-file.ts).
import { unsetIfEmpty, type Landed, type SettingDeclaration } from './declare.ts';
import { engineOf, type Engine } from './database.ts';
import { connectionBoundsOf } from './http.ts';
import { leadSourceLists, SETTING_NAMES, SETTINGS, type SettingName, type Settings } from './settings.ts';

type AppMode = 'production' | 'development';

// ─── reporting ───

interface SettingProblem {
  /** The environment variable at fault. */
  setting: string;
  /** What is wrong and what to do, in words for the operator. */
  message: string;
}

/** One or more settings are wrong; the message lists every one of them. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(problems.map((problem) => `${problem.setting} ${problem.message}`).join('; '));
  }
}

const DEVELOPMENT_MODE_HINT = ' (or start in development mode, APP_MODE=development or --dev, for a local demo only)';

// ─── reading ───

interface SettingsRead<K extends SettingName> {
  mode: AppMode;
  /** The settings that were checked without a problem. */
  settings: Partial<Pick<Settings, K>>;
  problems: SettingProblem[];
  /** The required settings development mode filled with a public value. */
  developmentDefaults: string[];
}

/** Checks the chosen settings one by one (and the mode's), so that every problem is found, and the mode rules. */
function readSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): SettingsRead<K> {
  // A bad APP_MODE is reported with the other settings (and means production meanwhile).
  const mode: AppMode = env.APP_MODE?.trim() === 'development' ? 'development' : 'production';
  const settings: Partial<Record<SettingName, unknown>> = {};
  const problems: SettingProblem[] = [];
  const developmentDefaults: string[] = [];
  const chosen = SETTING_NAMES.filter(
    (name) => name === 'APP_MODE' || name === 'NODE_ENV' || (names as readonly SettingName[]).includes(name),
  );
  for (const name of chosen) {
    const declaration: SettingDeclaration = SETTINGS[name];
    const raw = env[name];
    const given = declaration.emptyIsAValue ? raw : unsetIfEmpty(raw);
    if (declaration.required !== undefined && unsetIfEmpty(raw) === undefined) {
      if (mode === 'production') {
        problems.push({ setting: name, message: `is required: ${declaration.required}${DEVELOPMENT_MODE_HINT}` });
        continue;
      }
      developmentDefaults.push(name);
    }
    // The text checked: the variable, else the default of the mode; an unset one without a default is left unset.
    const text = given ?? (mode === 'development' ? declaration.developmentDefault : undefined) ?? declaration.default;
    if (text === undefined) {
      settings[name] = undefined;
      continue;
    }
    const result = declaration.schema.safeParse(text);
    if (result.success) settings[name] = result.data;
    else {
      // A confidential value is never repeated.
      const got = raw !== undefined && raw !== '' && !declaration.confidential ? ` (got "${raw}")` : '';
      for (const issue of result.error.issues) problems.push({ setting: name, message: `${issue.message}${got}` });
    }
  }
  if (mode === 'development' && env.NODE_ENV === 'production') {
    problems.push({ setting: 'APP_MODE', message: 'development cannot be combined with NODE_ENV=production: remove one of them' });
  }
  // Each value is its own declaration's schema output, which is what Settings says of it.
  return { mode, settings: settings as Partial<Pick<Settings, K>>, problems, developmentDefaults };
}

/** The chosen settings, checked; throws one ConfigError listing every problem. */
function parseSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): Pick<Settings, K> & { mode: AppMode } {
  const read = readSettings(env, names);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  // No problem: every chosen setting was checked and holds its value (or its default).
  return { ...(read.settings as Pick<Settings, K>), mode: read.mode };
}

/** The Config fields the given settings are declared to land in; an unset one lands as null. */
function land<T extends Partial<Settings>>(settings: T): Landed<Pick<typeof SETTINGS, keyof T & SettingName>> {
  const config: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const { field }: SettingDeclaration = SETTINGS[name];
    if (field === undefined || !(name in settings)) continue;
    const value = (settings as Partial<Settings>)[name] ?? null;
    const [record, inRecord] = field.split('.') as [string, string | undefined];
    if (inRecord === undefined) config[record] = value;
    else config[record] = { ...(config[record] as object | undefined), [inRecord]: value };
  }
  // Each field holds its setting's value, as Landed says.
  return config as Landed<Pick<typeof SETTINGS, keyof T & SettingName>>;
}

// ─── the values derived from several settings ───

const redisKeyPrefixOf = (settings: Pick<Settings, 'REDIS_KEY_PREFIX' | 'RATE_LIMIT_REDIS_PREFIX'>): string | null =>
  settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null;

/** `key=value,key2=value2` (values percent-encoded), as OpenTelemetry's variables write them. */
function keyValueList(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        // Not percent-encoded after all: the text as written.
      }
      return [pair.slice(0, at).trim(), decoded];
    }),
  );
}

/** Traces (src/telemetry/tracing.ts): on when an exporter is chosen, or an OTLP endpoint is given, and the SDK is not disabled. */
function tracingOf(settings: Settings, production: boolean) {
  const otlpUrl =
    settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (settings.OTEL_EXPORTER_OTLP_ENDPOINT ? `${settings.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` : null);
  const exporter = settings.OTEL_TRACES_EXPORTER ?? (otlpUrl ? 'otlp' : 'none');
  if (settings.OTEL_SDK_DISABLED || exporter === 'none') return null;
  return {
    exporter,
    // Where OTLP spans are posted (the exporter also reads OTEL_EXPORTER_OTLP_HEADERS itself).
    otlpUrl,
    otlpProtocol: settings.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? settings.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: settings.OTEL_SERVICE_NAME,
    deploymentEnvironment: settings.DEPLOYMENT_ENVIRONMENT ?? (production ? 'production' : 'development'),
    resourceAttributes: keyValueList(settings.OTEL_RESOURCE_ATTRIBUTES),
    sampler: settings.OTEL_TRACES_SAMPLER,
    samplerRatio: settings.OTEL_TRACES_SAMPLER_ARG,
    batchDelayMs: settings.OTEL_BSP_SCHEDULE_DELAY,
  };
}

/** Where lead attachments go (src/storage/file-storage.ts); credentials come from the AWS SDK's standard chain. */
function storageOf(settings: Settings, engine: Engine) {
  // Several instances share a PostgreSQL database, so there the files go where all of them read;
  // a SQLite file belongs to one process, and so may its files' directory.
  const fileStorage = settings.FILE_STORAGE ?? (engine === 'postgresql' ? 'database' : 'local');
  const s3 =
    fileStorage === 's3' && settings.S3_BUCKET !== undefined
      ? {
          bucket: settings.S3_BUCKET,
          keyPrefix: settings.S3_KEY_PREFIX ?? '',
          region: settings.S3_REGION ?? settings.AWS_REGION ?? 'us-east-1',
          /** null: AWS's own endpoint for the region. */
          endpoint: settings.S3_ENDPOINT ?? null,
          forcePathStyle: settings.S3_FORCE_PATH_STYLE,
        }
      : null;
  return { fileStorage, s3 };
}

/** HTTP_MAX_UPLOADS and HTTP_RESERVED_CONNECTIONS in effect (set, or their share of HTTP_MAX_CONNECTIONS). */
function httpConnectionBounds(settings: Partial<Settings>) {
  const { maxUploads, reservedConnections } = connectionBoundsOf(settings.HTTP_MAX_CONNECTIONS ?? 0, {
    maxUploads: settings.HTTP_MAX_UPLOADS,
    reservedConnections: settings.HTTP_RESERVED_CONNECTIONS,
  });
  return { httpMaxUploads: maxUploads, httpReservedConnections: reservedConnections };
}

/** The configuration the service runs with: every setting's field, and the values derived from several. */
function configOf({ mode, developmentDefaults, ...settings }: Settings & { mode: AppMode; developmentDefaults: readonly string[] }) {
  const engine = engineOf(settings.DATABASE_URL);
  const production = settings.NODE_ENV === 'production';
  return {
    ...land(settings),
    /** development: public development values stand in for missing secrets (never for production). */
    mode,
    /** The settings that fell back to a public development value (development mode only). */
    developmentDefaults,
    engine,
    /** NODE_ENV=production: introspection needs `read:schema`, errors carry no field suggestions. */
    production,
    // Readable lines are for a person at a terminal running the demo; anything else gets JSON.
    logFormat: settings.LOG_FORMAT ?? (mode === 'development' && process.stdout.isTTY === true ? 'pretty' : 'json'),
    tracing: tracingOf(settings, production),
    // readSettings has refused a missing PUBLIC_URL outside development mode.
    publicUrl: settings.PUBLIC_URL ?? `http://localhost:${settings.PORT}`,
    leadSources: leadSourceLists(settings.LEAD_EXTRA_SOURCES, settings.LEAD_EXTRA_MARKETING_SOURCES),
    ...storageOf(settings, engine),
    ...httpConnectionBounds(settings),
    redisKeyPrefix: redisKeyPrefixOf(settings),
    // The explorers are a development aid; a production deployment opts in with EXPLORERS=on.
    explorers: settings.EXPLORERS ?? !production,
  };
}

export type Config = ReturnType<typeof configOf>;

// ─── the rules between settings ───

/**
 * The rules between settings, checked on those that are themselves valid, so that they are reported
 * together with every other problem.
 */
function problemsBetweenSettings(settings: Partial<Settings>): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const {
    HTTP_HEADERS_TIMEOUT_MS: headers,
    HTTP_REQUEST_TIMEOUT_MS: request,
    GRAPHQL_MAX_COST: maxCost,
    RATE_LIMIT_KEY_COST: keyCost,
    SUBSCRIPTIONS_PER_INSTANCE: streams,
    HTTP_MAX_CONNECTIONS: connections,
  } = settings;
  if (headers !== undefined && request !== undefined && headers > request) {
    problems.push({
      setting: 'HTTP_HEADERS_TIMEOUT_MS',
      message: 'must not be greater than HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    });
  }
  if (settings.FILE_STORAGE === 's3' && settings.S3_BUCKET === undefined) {
    problems.push({ setting: 'S3_BUCKET', message: 'is required with FILE_STORAGE=s3: set it to the bucket that keeps lead attachments' });
  }
  // A budget below the cost of one allowed operation would refuse that operation forever.
  if (keyCost !== undefined && maxCost !== undefined && keyCost !== 0 && keyCost < maxCost) {
    problems.push({
      setting: 'RATE_LIMIT_KEY_COST',
      message: `must be 0 (no budget) or at least GRAPHQL_MAX_COST (${maxCost}), the cost one operation may have (got "${keyCost}")`,
    });
  }
  // Each open stream holds a connection: as many streams as connections would leave none for anything else.
  if (streams !== undefined && connections !== undefined && streams >= connections) {
    problems.push({
      setting: 'SUBSCRIPTIONS_PER_INSTANCE',
      message: `must be less than HTTP_MAX_CONNECTIONS (${connections}), so that open streams leave connections for other requests (got "${streams}")`,
    });
  }
  return problems;
}

/**
 * Open subscription streams, uploads in flight and the reserve each hold connections of their own:
 * together they must fit in HTTP_MAX_CONNECTIONS, or the reserve would not be there when the other two
 * are full. (As many streams as connections is its own problem, reported beside the subscriptions.)
 */
function connectionBoundProblems(settings: Partial<Settings>): SettingProblem[] {
  const { HTTP_MAX_CONNECTIONS: connections, SUBSCRIPTIONS_PER_INSTANCE: streams } = settings;
  if (connections === undefined || streams === undefined || streams >= connections) return [];
  const { httpMaxUploads: uploads, httpReservedConnections: reserved } = httpConnectionBounds(settings);
  if (streams + uploads + reserved <= connections) return [];
  return [
    {
      setting: 'HTTP_RESERVED_CONNECTIONS',
      message: `(${reserved}) + SUBSCRIPTIONS_PER_INSTANCE (${streams}) + HTTP_MAX_UPLOADS (${uploads}) must be at most HTTP_MAX_CONNECTIONS (${connections}): lower one of them, or raise HTTP_MAX_CONNECTIONS`,
    },
  ];
}

// ─── the loaders ───

/** The environment of this process, with `--dev` on the command line meaning APP_MODE=development. */
export function processEnvironment(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return argv.slice(2).includes('--dev') ? { ...env, APP_MODE: 'development' } : env;
}

/** Every setting, checked; throws a ConfigError naming each bad or missing one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = readSettings(env, SETTING_NAMES);
  const problems = [...read.problems, ...problemsBetweenSettings(read.settings), ...connectionBoundProblems(read.settings)];
  if (problems.length > 0) throw new ConfigError(problems);
  // No problem: every setting was checked and holds its value (or its default).
  return configOf({ ...(read.settings as Settings), mode: read.mode, developmentDefaults: read.developmentDefaults });
}

/**
 * What the database tools (migrations, the keys CLI) need: DATABASE_URL, and REDIS_URL to announce
 * key changes, with API_KEY_CACHE_TTL_MS to say when instances see one that could not be announced.
 */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env) {
  const settings = parseSettings(env, ['DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX', 'RATE_LIMIT_REDIS_PREFIX', 'API_KEY_CACHE_TTL_MS']);
  return { ...land(settings), engine: engineOf(settings.DATABASE_URL), redisKeyPrefix: redisKeyPrefixOf(settings) };
}

/** CLI_TIMEOUT_MS: how long a CLI may take before it ends with one line and exit code 1. */
export function loadCliTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return land(parseSettings(env, ['CLI_TIMEOUT_MS'])).cliTimeoutMs;
}

/** What the secrets CLI needs: the database and the encryption keys. */
export function loadSecretsConfig(env: NodeJS.ProcessEnv = process.env) {
  const settings = parseSettings(env, ['DATABASE_URL', 'SECRETS_ENCRYPTION_KEYS']);
  return { ...land(settings), engine: engineOf(settings.DATABASE_URL), mode: settings.mode };
}

/** What `secrets record-session-secret` needs: the database and the session signing secret. */
export function loadSessionSecretConfig(env: NodeJS.ProcessEnv = process.env) {
  const settings = parseSettings(env, ['DATABASE_URL', 'SESSION_SIGNING_SECRET']);
  return { ...land(settings), engine: engineOf(settings.DATABASE_URL) };
}

/** The rate limits of an environment that sets none (docs/rate-limits.md, "Rate limits"). */
export const DEFAULT_RATE_LIMITS: Config['rateLimits'] = land(
  parseSettings(
    {},
    SETTING_NAMES.filter((name) => (SETTINGS[name] as SettingDeclaration).field?.startsWith('rateLimits.')),
  ),
).rateLimits;
