// The one module that reads process.env (besides the .env loader): each setting is checked on its own, so a bad start names every bad one.
import { unsetIfEmpty, type Landed, type SettingDeclaration } from './declare.ts';
import { engineOf, type Engine } from './database.ts';
import { connectionBoundsOf } from './http.ts';
import { leadSourceLists, SETTING_NAMES, SETTINGS, type SettingName, type Settings } from './settings.ts';

type AppMode = 'production' | 'development';

interface SettingProblem {
  setting: string;
  message: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(problems.map((problem) => `${problem.setting} ${problem.message}`).join('; '));
  }
}

const DEVELOPMENT_MODE_HINT = ' (or start in development mode, APP_MODE=development or --dev, for a local demo only)';

interface SettingsRead<K extends SettingName> {
  mode: AppMode;
  settings: Partial<Pick<Settings, K>>;
  problems: SettingProblem[];
  developmentDefaults: string[];
}

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
  return { mode, settings: settings as Partial<Pick<Settings, K>>, problems, developmentDefaults };
}

function parseSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): Pick<Settings, K> & { mode: AppMode } {
  const read = readSettings(env, names);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return { ...(read.settings as Pick<Settings, K>), mode: read.mode };
}

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
  return config as Landed<Pick<typeof SETTINGS, keyof T & SettingName>>;
}

const redisKeyPrefixOf = (settings: Pick<Settings, 'REDIS_KEY_PREFIX' | 'RATE_LIMIT_REDIS_PREFIX'>): string | null =>
  settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null;

function keyValueList(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {}
      return [pair.slice(0, at).trim(), decoded];
    }),
  );
}

function tracingOf(settings: Settings, production: boolean) {
  const otlpUrl =
    settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (settings.OTEL_EXPORTER_OTLP_ENDPOINT ? `${settings.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` : null);
  const exporter = settings.OTEL_TRACES_EXPORTER ?? (otlpUrl ? 'otlp' : 'none');
  if (settings.OTEL_SDK_DISABLED || exporter === 'none') return null;
  return {
    exporter,
    otlpUrl,
    otlpProtocol: settings.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? settings.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: settings.OTEL_SERVICE_NAME,
    deploymentEnvironment: settings.DEPLOYMENT_ENVIRONMENT ?? (production ? 'production' : 'development'),
    resourceAttributes: keyValueList(settings.OTEL_RESOURCE_ATTRIBUTES),
  };
}

/** Credentials come from the AWS SDK's standard chain, not from settings. */
function storageOf(settings: Settings, engine: Engine) {
  // Several instances share a PostgreSQL database, so files go where all of them read; a SQLite file belongs to one process.
  const fileStorage = settings.FILE_STORAGE ?? (engine === 'postgresql' ? 'database' : 'local');
  const s3 =
    fileStorage === 's3' && settings.S3_BUCKET !== undefined
      ? {
          bucket: settings.S3_BUCKET,
          keyPrefix: settings.S3_KEY_PREFIX ?? '',
          region: settings.S3_REGION ?? settings.AWS_REGION ?? 'us-east-1',
          endpoint: settings.S3_ENDPOINT ?? null,
          forcePathStyle: settings.S3_FORCE_PATH_STYLE,
        }
      : null;
  return { fileStorage, s3 };
}

function httpConnectionBounds(settings: Partial<Settings>) {
  const { maxUploads, reservedConnections } = connectionBoundsOf(settings.HTTP_MAX_CONNECTIONS ?? 0, {
    maxUploads: settings.HTTP_MAX_UPLOADS,
    reservedConnections: settings.HTTP_RESERVED_CONNECTIONS,
  });
  return { httpMaxUploads: maxUploads, httpReservedConnections: reservedConnections };
}

function configOf({ mode, developmentDefaults, ...settings }: Settings & { mode: AppMode; developmentDefaults: readonly string[] }) {
  const engine = engineOf(settings.DATABASE_URL);
  const production = settings.NODE_ENV === 'production';
  return {
    ...land(settings),
    mode,
    developmentDefaults,
    engine,
    production,
    // Readable lines are for a person at a terminal running the demo; anything else gets JSON.
    logFormat: settings.LOG_FORMAT ?? (mode === 'development' && process.stdout.isTTY === true ? 'pretty' : 'json'),
    tracing: tracingOf(settings, production),
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

/** Checked only on settings that are themselves valid, so they are reported together with every other problem. */
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

/** Streams, uploads and the reserve must fit together, or the reserve would be gone when the other two are full. */
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

export function processEnvironment(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return argv.slice(2).includes('--dev') ? { ...env, APP_MODE: 'development' } : env;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = readSettings(env, SETTING_NAMES);
  const problems = [...read.problems, ...problemsBetweenSettings(read.settings), ...connectionBoundProblems(read.settings)];
  if (problems.length > 0) throw new ConfigError(problems);
  return configOf({ ...(read.settings as Settings), mode: read.mode, developmentDefaults: read.developmentDefaults });
}

export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env) {
  const settings = parseSettings(env, ['DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX', 'RATE_LIMIT_REDIS_PREFIX', 'API_KEY_CACHE_TTL_MS']);
  return { ...land(settings), engine: engineOf(settings.DATABASE_URL), redisKeyPrefix: redisKeyPrefixOf(settings) };
}

export function loadCliTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return land(parseSettings(env, ['CLI_TIMEOUT_MS'])).cliTimeoutMs;
}

export function loadSecretsConfig(env: NodeJS.ProcessEnv = process.env) {
  const settings = parseSettings(env, ['DATABASE_URL', 'SECRETS_ENCRYPTION_KEYS']);
  return { ...land(settings), engine: engineOf(settings.DATABASE_URL), mode: settings.mode };
}

export function loadSessionSecretConfig(env: NodeJS.ProcessEnv = process.env) {
  const settings = parseSettings(env, ['DATABASE_URL', 'SESSION_SIGNING_SECRET']);
  return { ...land(settings), engine: engineOf(settings.DATABASE_URL) };
}

/** The declared defaults of some settings, as the loader lands them: a default is written only in its declaration. */
export function settingDefaults<K extends SettingName>(...names: K[]): Landed<Pick<typeof SETTINGS, K>> {
  return land(parseSettings({}, names) as Partial<Settings>) as unknown as Landed<Pick<typeof SETTINGS, K>>;
}

export const DEFAULT_RATE_LIMITS: Config['rateLimits'] = settingDefaults(
  ...SETTING_NAMES.filter((name) => (SETTINGS[name] as SettingDeclaration).field?.startsWith('rateLimits.')),
).rateLimits;
