// Reading settings from an environment: each chosen setting checked on its own, so that a bad start
// names every bad setting at once, and the rules of the two modes.
import type { AppMode } from './app.ts';
import { unsetIfEmpty, type SettingDeclaration } from './declare.ts';
import { SETTING_NAMES, SETTINGS, type SettingName, type Settings } from './settings.ts';

// ─── reporting ───

export interface SettingProblem {
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

function describeProblem(setting: SettingName, message: string, env: NodeJS.ProcessEnv): SettingProblem {
  const raw = env[setting];
  const confidential = (SETTINGS[setting] as SettingDeclaration).confidential === true;
  const got = raw !== undefined && raw !== '' && !confidential ? ` (got "${raw}")` : '';
  return { setting, message: `${message}${got}` };
}

const DEVELOPMENT_MODE_HINT = ' (or start in development mode, APP_MODE=development or --dev, for a local demo only)';

/** The mode a start runs in; a bad APP_MODE is reported with the other settings (and means production meanwhile). */
function modeOf(env: NodeJS.ProcessEnv): AppMode {
  return env.APP_MODE?.trim() === 'development' ? 'development' : 'production';
}

/** The text a setting is checked from: the variable, else the default of the mode. */
function textOf(name: SettingName, env: NodeJS.ProcessEnv, mode: AppMode): string | undefined {
  const declaration: SettingDeclaration = SETTINGS[name];
  const raw = env[name];
  const given = declaration.emptyIsAValue ? raw : (unsetIfEmpty(raw) as string | undefined);
  if (given !== undefined) return given;
  return (mode === 'development' ? declaration.developmentDefault : undefined) ?? declaration.default;
}

interface SettingsRead<K extends SettingName> {
  mode: AppMode;
  /** The settings that were checked without a problem. */
  settings: Partial<Pick<Settings, K>>;
  problems: SettingProblem[];
  /** The required settings development mode filled with a public value. */
  developmentDefaults: string[];
}

/** Checks the chosen settings one by one, so that every problem is found, and the mode rules. */
export function readSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): SettingsRead<K> {
  const mode = modeOf(env);
  const settings: Partial<Record<SettingName, unknown>> = {};
  const problems: SettingProblem[] = [];
  const developmentDefaults: string[] = [];
  const chosen = SETTING_NAMES.filter(
    (name) => name === 'APP_MODE' || name === 'NODE_ENV' || (names as readonly SettingName[]).includes(name),
  );
  for (const name of chosen) {
    const declaration: SettingDeclaration = SETTINGS[name];
    if (declaration.required !== undefined && unsetIfEmpty(env[name]) === undefined) {
      if (mode === 'production') {
        problems.push({ setting: name, message: `is required: ${declaration.required}${DEVELOPMENT_MODE_HINT}` });
        continue;
      }
      developmentDefaults.push(name);
    }
    const result = declaration.schema.safeParse(textOf(name, env, mode));
    if (result.success) settings[name] = result.data;
    else for (const issue of result.error.issues) problems.push(describeProblem(name, issue.message, env));
  }
  if (mode === 'development' && env.NODE_ENV === 'production') {
    problems.push({ setting: 'APP_MODE', message: 'development cannot be combined with NODE_ENV=production: remove one of them' });
  }
  // Each value is its own declaration's schema output, which is what Settings says of it.
  return { mode, settings: settings as Partial<Pick<Settings, K>>, problems, developmentDefaults };
}

/** The chosen settings, checked; throws one ConfigError listing every problem. */
export function parseSettings<K extends SettingName>(env: NodeJS.ProcessEnv, names: readonly K[]): Pick<Settings, K> & { mode: AppMode } {
  const read = readSettings(env, names);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  // No problem: every chosen setting was checked and holds its value (or its default).
  return { ...(read.settings as Pick<Settings, K>), mode: read.mode };
}
