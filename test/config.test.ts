// The settings' declaration (SETTINGS in src/config/settings.ts) is the one list of settings: the code reads no
// variable it does not declare, its defaults pass its own checks, docs/configuration.md's table and .env.example
// are what it renders, and every problem is reported at once.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, projectRoot, SETTING_NAMES, SETTINGS, type SettingDeclaration } from '../src/config/index.ts';
import { testSettings } from './support/app.ts';
import { typescriptSources } from './support/source-files.ts';

/** `process.env.NAME`, `env.NAME`, `env['NAME']`: the environment reads a reader can spot in the code. */
const ENV_READ = /\b(?:process\.env|env)(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g;

describe('the settings declaration', () => {
  const sources = typescriptSources('src').map((file) => ({ file, text: readFileSync(path.join(projectRoot, file), 'utf8') }));

  it('declares every variable the code reads from the environment', () => {
    const read = new Map<string, string>();
    for (const { file, text } of sources) for (const match of text.matchAll(ENV_READ)) read.set(match[1] ?? match[2]!, file);
    // The scan finds the reads it must (so an empty result is not a pass by accident).
    expect([...read.keys()]).toEqual(expect.arrayContaining(['APP_MODE', 'NODE_ENV', 'ENV_FILE']));
    const undeclared = [...read].filter(([name]) => !(SETTING_NAMES as string[]).includes(name)).map(([name, file]) => `${name} (${file})`);
    expect(undeclared).toEqual([]);
  });

  it('is read in one place: only src/config/load.ts and the .env loader touch process.env', () => {
    const readers = sources.filter(({ text }) => /process\.env\b/.test(text)).map(({ file }) => file);
    expect(readers.sort()).toEqual(['src/config/env-file.ts', 'src/config/load.ts']);
  });

  it('orders the documentation by SETTING_NAMES, which names each declared setting once', () => {
    expect(new Set(SETTING_NAMES).size).toBe(SETTING_NAMES.length);
    expect([...SETTING_NAMES].sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  it('has defaults that pass their own checks, in both modes', () => {
    for (const name of SETTING_NAMES) {
      const declaration: SettingDeclaration = SETTINGS[name];
      for (const value of [declaration.default, declaration.developmentDefault]) {
        if (value === undefined) continue;
        expect(declaration.schema.safeParse(value).success, `${name}=${value}`).toBe(true);
      }
      expect(declaration.meaning.trim(), name).not.toBe('');
      expect(declaration.meaning, name).not.toContain('\n');
    }
  });

  it('.env.example lists every setting once, and its values are the defaults the service applies', () => {
    const example = readFileSync(path.join(projectRoot, '.env.example'), 'utf8');
    const listed = [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]);
    expect(listed).toEqual(SETTING_NAMES);
    const uncommented = parseEnv(example.replace(/^# ([A-Z][A-Z0-9_]*=)/gm, '$1'));
    // The required settings have no default to show; the test's own values stand in for them.
    const required = {
      PUBLIC_URL: testSettings.PUBLIC_URL,
      SESSION_SIGNING_SECRET: testSettings.SESSION_SIGNING_SECRET,
      SECRETS_ENCRYPTION_KEYS: testSettings.SECRETS_ENCRYPTION_KEYS,
    };
    expect(loadConfig({ ...uncommented, ...required })).toEqual(loadConfig(required));
  });
});

describe('loadConfig', () => {
  function problemsOf(env: NodeJS.ProcessEnv): string[] {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.problems.map((problem) => problem.setting);
      throw error;
    }
    return [];
  }

  it('reports the rules between settings together with every other problem', () => {
    expect(
      problemsOf({
        ...testSettings,
        PORT: 'http',
        HTTP_HEADERS_TIMEOUT_MS: '60000',
        HTTP_REQUEST_TIMEOUT_MS: '1000',
        FILE_STORAGE: 's3',
        GRAPHQL_MAX_COST: '5000',
        RATE_LIMIT_KEY_COST: '10',
        LEAD_EXTRA_SOURCES: '',
      }),
    ).toEqual(['PORT', 'HTTP_HEADERS_TIMEOUT_MS', 'S3_BUCKET', 'RATE_LIMIT_KEY_COST']);
  });

  it("applies development mode's defaults only in development mode", () => {
    expect(loadConfig({ ...testSettings }).seedDemoData).toBe(false);
    const development = loadConfig({ APP_MODE: 'development' });
    expect(development.seedDemoData).toBe(true);
    expect(development.developmentDefaults).toEqual(['PUBLIC_URL', 'SESSION_SIGNING_SECRET', 'SECRETS_ENCRYPTION_KEYS']);
    expect(development.secretsKeyring.current.id).toBe('dev');
  });

  it('takes an empty LEAD_EXTRA_SOURCES as the empty list, and an unset one as the default list', () => {
    expect(loadConfig({ ...testSettings, LEAD_EXTRA_SOURCES: '' }).leadSources.sources).not.toContain('carsales');
    expect(loadConfig({ ...testSettings }).leadSources.sources).toContain('carsales');
  });
});
