// A variable already in the environment always wins over the file, so an operator's command line overrides it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError, projectRoot, SETTING_NAMES, SETTINGS } from './index.ts';

export interface EnvFileLoad {
  file: string;
  /** Names only: values can be secrets. */
  settings: string[];
  undeclared: string[];
}

const OFF = 'off';

export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): EnvFileLoad | null {
  const chosen = env.ENV_FILE?.trim() || undefined;
  if (chosen?.toLowerCase() === OFF) return null;
  const file = path.resolve(projectRoot, chosen ?? SETTINGS.ENV_FILE.default);
  if (!existsSync(file)) {
    if (chosen === undefined) return null;
    throw new ConfigError([{ setting: 'ENV_FILE', message: `names a file that does not exist: ${file} (set ENV_FILE=off to read none)` }]);
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError([{ setting: 'ENV_FILE', message: `cannot read ${file} (${code}): fix its permissions or set ENV_FILE=off` }]);
  }
  const settings: string[] = [];
  const undeclared: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (!(SETTING_NAMES as string[]).includes(name)) undeclared.push(name);
    if (env[name] !== undefined) continue;
    env[name] = value;
    settings.push(name);
  }
  return { file, settings, undeclared };
}
