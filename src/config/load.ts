// The one module that reads process.env (besides the .env loader): each setting is checked on its own, so a bad start names every bad one.
import { unsetIfEmpty, type Landed, type SettingDeclaration } from './declare.ts';
import { engineOf, type Engine } from './database.ts';
import { connectionBoundsOf } from './http.ts';
import { leadSourceLists, SETTING_NAMES, SETTINGS, type SettingName, type Settings } from './settings.ts';

type SettingProblem = { setting: string; message: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(problems.map((problem) => `${problem.setting} ${problem.message}`).join('; '));
  }
}

const DEVELOPMENT_MODE_HINT = ' (or start in development mode, APP_MODE=development or --dev, for a local demo only)';

/** The chosen settings (with APP_MODE and NODE_ENV), by name and landed at their fields; the rules between them run on the valid ones. */
function readSettings<K extends SettingName>(
  env: NodeJS.ProcessEnv,
  names: readonly K[],
  problemsBetween: (settings: Partial<Pick<Settings, K>>) => SettingProblem[] = () => [],
) {
  // A bad APP_MODE is reported with the other settings (and means production meanwhile).
  const mode: 'production' | 'development' = env.APP_MODE?.trim() === 'development' ? 'development' : 'production';
  const settings: Partial<Record<SettingName, unknown>> = {};
  const landed: Record<string, unknown> = {};
  const problems: SettingProblem[] = [];
  const developmentDefaults: string[] = [];
  for (const name of SETTING_NAMES) {
    if (name !== 'APP_MODE' && name !== 'NODE_ENV' && !(names as readonly SettingName[]).includes(name)) continue;
    const declaration: SettingDeclaration = SETTINGS[name];
    const raw = env[name];
    if (declaration.required !== undefined && unsetIfEmpty(raw) === undefined) {
      if (mode === 'production') {
        problems.push({ setting: name, message: `is required: ${declaration.required}${DEVELOPMENT_MODE_HINT}` });
        continue;
      }
      developmentDefaults.push(name);
    }
    const given = declaration.emptyIsAValue ? raw : unsetIfEmpty(raw);
    const text = given ?? (mode === 'development' ? declaration.developmentDefault : undefined) ?? declaration.default;
    const result = text === undefined ? { success: true as const, data: undefined } : declaration.schema.safeParse(text);
    if (!result.success) {
      // A confidential value is never repeated.
      const got = raw !== undefined && raw !== '' && !declaration.confidential ? ` (got "${raw}")` : '';
      for (const issue of result.error.issues) problems.push({ setting: name, message: `${issue.message}${got}` });
      continue;
    }
    settings[name] = result.data;
    const [record = '', inRecord] = declaration.field?.split('.') ?? [];
    if (inRecord !== undefined) landed[record] = { ...(landed[record] as object | undefined), [inRecord]: result.data ?? null };
    else if (record !== '') landed[record] = result.data ?? null;
  }
  if (mode === 'development' && env.NODE_ENV === 'production') {
    problems.push({ setting: 'APP_MODE', message: 'development cannot be combined with NODE_ENV=production: remove one of them' });
  }
  problems.push(...problemsBetween(settings as Partial<Pick<Settings, K>>));
  if (problems.length > 0) throw new ConfigError(problems);
  return { mode, settings: settings as Pick<Settings, K>, landed: landed as Landed<Pick<typeof SETTINGS, K>>, developmentDefaults };
}

const redisKeyPrefixOf = (settings: Pick<Settings, 'REDIS_KEY_PREFIX' | 'RATE_LIMIT_REDIS_PREFIX'>): string | null =>
  settings.REDIS_KEY_PREFIX ?? settings.RATE_LIMIT_REDIS_PREFIX ?? null;

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
    resourceAttributes: settings.OTEL_RESOURCE_ATTRIBUTES ?? {},
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

function configOf({ mode, developmentDefaults, settings, landed }: ReturnType<typeof readSettings<SettingName>>) {
  const engine = engineOf(settings.DATABASE_URL);
  const production = settings.NODE_ENV === 'production';
  return {
    ...landed,
    mode,
    developmentDefaults: developmentDefaults as readonly string[],
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
  if (streams === undefined || connections === undefined) return problems;
  const { httpMaxUploads: uploads, httpReservedConnections: reserved } = httpConnectionBounds(settings);
  // Each open stream holds a connection: as many streams as connections would leave none for anything else.
  if (streams >= connections) {
    problems.push({
      setting: 'SUBSCRIPTIONS_PER_INSTANCE',
      message: `must be less than HTTP_MAX_CONNECTIONS (${connections}), so that open streams leave connections for other requests (got "${streams}")`,
    });
  } else if (streams + uploads + reserved > connections) {
    // Streams, uploads and the reserve must fit together, or the reserve would be gone when the other two are full.
    problems.push({
      setting: 'HTTP_RESERVED_CONNECTIONS',
      message: `(${reserved}) + SUBSCRIPTIONS_PER_INSTANCE (${streams}) + HTTP_MAX_UPLOADS (${uploads}) must be at most HTTP_MAX_CONNECTIONS (${connections}): lower one of them, or raise HTTP_MAX_CONNECTIONS`,
    });
  }
  return problems;
}

export function processEnvironment(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return argv.slice(2).includes('--dev') ? { ...env, APP_MODE: 'development' } : env;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return configOf(readSettings(env, SETTING_NAMES, problemsBetweenSettings));
}

export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env) {
  const { settings, landed } = readSettings(env, [
    'DATABASE_URL',
    'REDIS_URL',
    'REDIS_KEY_PREFIX',
    'RATE_LIMIT_REDIS_PREFIX',
    'API_KEY_CACHE_TTL_MS',
  ]);
  return { ...landed, engine: engineOf(settings.DATABASE_URL), redisKeyPrefix: redisKeyPrefixOf(settings) };
}

export function loadCliTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return readSettings(env, ['CLI_TIMEOUT_MS']).landed.cliTimeoutMs;
}

export function loadSecretsConfig(env: NodeJS.ProcessEnv = process.env) {
  const { settings, landed, mode } = readSettings(env, ['DATABASE_URL', 'SECRETS_ENCRYPTION_KEYS']);
  return { ...landed, engine: engineOf(settings.DATABASE_URL), mode };
}

export function loadSessionSecretConfig(env: NodeJS.ProcessEnv = process.env) {
  const { settings, landed } = readSettings(env, ['DATABASE_URL', 'SESSION_SIGNING_SECRET']);
  return { ...landed, engine: engineOf(settings.DATABASE_URL) };
}

/** The declared defaults of some settings, as the loader lands them: a default is written only in its declaration. */
export function settingDefaults<K extends SettingName>(...names: K[]): Landed<Pick<typeof SETTINGS, K>> {
  return readSettings({}, names).landed;
}

export const DEFAULT_RATE_LIMITS: Config['rateLimits'] = settingDefaults(
  ...SETTING_NAMES.filter((name) => (SETTINGS[name] as SettingDeclaration).field?.startsWith('rateLimits.')),
).rateLimits;
